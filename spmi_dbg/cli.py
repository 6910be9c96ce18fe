"""Command line: argument parsing and dispatch only. Features live in their own packages. Every
parser is a spmi_dbg.usage.Parser: a usage error names its own command, prints its usage and exits
with its status."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Sequence

from spmi_dbg import __version__, exits
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch import commands as mch_commands
from spmi_dbg.method import commands as method_commands
from spmi_dbg.usage import Parser, leaf


def build_parser(command: str | None = None) -> Parser:
    """All commands' parsers; with `command` "mch" only the collection tools' (they then start
    without importing the debugger, replay, report and triage layers: `spmi-dbg mch verify` is timed
    against `mcs -integ`)."""
    # No COMMAND, or an unknown one: 3, as a pipeline's usage error (the line may have been meant
    # for `repro` or `triage`, where 2 means "no crash"); each command's own usage errors exit with
    # its own status.
    parser = Parser(
        prog="spmi-dbg",
        description="Find, explain and reproduce SuperPMI crashes.",
        usage_status=exits.PIPELINE_INPUT,
    )
    parser.add_argument("--version", action="version", version=f"spmi-dbg {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    method_commands.add_verbs(mch_commands.add_parsers(sub))
    if command == "mch":
        return parser
    # Imported here, not at module level (start-up): the other commands' modules cost `spmi-dbg mch
    # ...` ~170 ms.
    from spmi_dbg.bisect import cli as bisect_cli
    from spmi_dbg.commands import tape_cli
    from spmi_dbg.driver import launch
    from spmi_dbg.recheck import cli as recheck_cli
    from spmi_dbg.report import cli as report_cli
    from spmi_dbg.repro import cli as repro_cli
    from spmi_dbg.repro import demo
    from spmi_dbg.sample import commands as sample_commands
    from spmi_dbg.triage import cli as triage_cli

    sample_commands.add_parsers(sub)
    launch.add_parsers(sub)
    repro_cli.add_parsers(sub)
    triage_cli.add_parsers(sub)
    report_cli.add_parsers(sub)
    bisect_cli.add_parsers(sub)
    recheck_cli.add_parsers(sub)
    tape_cli.add_parsers(sub)
    demo.add_parsers(sub)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: every `finally` runs (debuggers killed, temporary files
    removed)."""


def _terminate(signo: int, frame: object) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser("mch" if given[:1] == ["mch"] else None)
    try:
        args = parser.parse_args(given)
    except SystemExit as e:  # a usage error (its status is the command's), --help or --version
        return e.code if isinstance(e.code, int) else 0 if e.code is None else exits.USAGE
    # `spmi-dbg mch info`: every line below names the command it is about
    prog = leaf(args, parser).prog
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        return int(args.func(args))
    except SpmiDbgError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return e.exit_code
    except Terminated:
        print(f"{prog}: terminated", file=sys.stderr)
        return exits.TERMINATED
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return exits.INTERRUPTED
    except BrokenPipeError:
        # `spmi-dbg mch list big.mch | head`: the reader went away; not an error.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
