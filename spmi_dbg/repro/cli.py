"""`spmi-dbg repro [options] -- <superpmi argv>`: its parser, and the run with progress and summary.
Exit statuses (spmi_dbg.exits): 0 verified, 1 crash found but not verified, 2 no crash, 3 usage or
input error, 4 the debugger itself failed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spmi_dbg import exits
from spmi_dbg.repro.arguments import add_pipeline_parser, add_replay_arguments, pipeline_errors
from spmi_dbg.usage import Parser

if TYPE_CHECKING:  # the pipeline is imported when a command runs, not when the parser is built
    from spmi_dbg.repro.result import ReproOptions, ReproResult

EPILOG = """exit status: 0 repro found and verified, 1 crash (or failure) found but not verified,
2 no crash (no such failure), 3 usage or input error, 4 the debugger failed (it died or stopped
answering, twice).

examples:
  spmi-dbg repro --from-log superpmi.4.log
  spmi-dbg repro --failure assert -- superpmi -jitoption JitStress=2 \\
      -jitoption JitStressModeNames="A B" clrjit.so x.mch
  spmi-dbg repro --core core.12345 -- superpmi -a -target arm64 \\
      base/libclrjit.so diff/libclrjit.so libraries.mch
  spmi-dbg repro -- superpmi -a -target arm64 base/libclrjit.so diff/libclrjit.so libraries.mch
  spmi-dbg repro --mch libraries.mch --base-jit base/libclrjit.so --jit diff/libclrjit.so \\
      -- -a -target arm64
  spmi-dbg repro --qemu aarch64 -- arm64/superpmi -a \\
      arm64/base/libclrjit.so arm64/diff/libclrjit.so libraries.mch"""


def add_parsers(sub: Any) -> None:
    p = add_pipeline_parser(
        sub,
        "repro",
        run,
        help="find the method context superpmi crashes on and write a verified repro bundle",
        usage="spmi-dbg repro [options] -- SUPERPMI_ARGV...  |  spmi-dbg repro --mch X --jit J "
        "[options] [-- SUPERPMI_OPTIONS...]  |  spmi-dbg repro --from-log LOG [options]  |  "
        "spmi-dbg repro --core CORE [options] [-- SUPERPMI_ARGV...]",
        epilog=EPILOG,
    )
    add_replay_arguments(p)
    _repro_arguments(p)


def _repro_arguments(p: Parser) -> None:
    """repro's own: a core file, the failure to reproduce, the bundle, the needs, which crash."""
    p.add_argument(
        "--core",
        metavar="CORE",
        type=Path,
        help="post-mortem: diagnose this core file of the crashed superpmi, then isolate and "
        "verify live (the command after --, or the one the core names when it is complete)",
    )
    p.add_argument(
        "--failure",
        metavar="KIND[:TEXT]",
        default="crash",
        help="what to reproduce: crash (default: a crash or hang, found under the debugger), or a "
        "failure superpmi reports itself: assert (ISSUE: <ASSERT>), error (a failed compile), "
        "missing (MISSING:), any; :TEXT picks the first whose line contains TEXT. The "
        "-jitoption/-jit2option settings are minimized to those the failure needs",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help="bundle directory "
        "(default: spmi-repro-<bucket>, or spmi-repro-<kind>-<method context>)",
    )
    needs = p.add_mutually_exclusive_group()
    needs.add_argument(
        "--needs",
        dest="needs",
        action="store_const",
        const="on",
        default="auto",
        help="try the JIT's optimization switches (JitDoSsa=0, JitNoCSE=1, ..., MinOpts) on the "
        "verified repro, one replay each, and say which make the failure go away (default: for "
        "asserts and faults in a JIT)",
    )
    needs.add_argument(
        "--no-needs", dest="needs", action="store_const", const="off", help="do not try them"
    )
    p.add_argument(
        "--first-found",
        action="store_true",
        help="take the first crash found in time instead of the command's first (by default a "
        "partition's crash wins only once every earlier partition ended without one): faster, "
        "and the result says how far the earlier partitions got",
    )


def run(args: argparse.Namespace) -> int:
    # The run's modules are imported when the command runs: every spmi-dbg command but `mch`
    # builds this parser, and importing the pipeline, its options and the display would cost
    # each of them ~70 ms.
    from spmi_dbg.repro.options import options

    return pipeline_errors("repro", lambda: int(execute(options(args)).exit_code))


def execute(
    opts: ReproOptions, *, extra_rows: Callable[[ReproResult], list[tuple[str, str]]] | None = None
) -> ReproResult:
    """Run the pipeline with progress on a terminal, then print the summary (a panel on a terminal,
    plain `key: value` lines when piped). `extra_rows(result)` adds rows of context after the
    pipeline's own."""
    from rich.console import Console

    from spmi_dbg.repro.display import TerminalProgress, print_summary
    from spmi_dbg.repro.pipeline import run_repro

    interactive = sys.stderr.isatty()
    progress = TerminalProgress(Console(stderr=True), opts.debugger_name) if interactive else None
    try:
        result = run_repro(opts, progress)
    finally:
        if progress is not None:
            progress.close()
    print_summary(
        result,
        Console(soft_wrap=True)
        if interactive
        else Console(soft_wrap=True, no_color=True, highlight=False),
        rich_panel=interactive and sys.stdout.isatty(),
        extra=extra_rows(result) if extra_rows is not None else None,
    )
    if result.exit_code == exits.INCOMPLETE and result.bundle_error:
        print(
            f"spmi-dbg repro: error: {result.bundle_error}; nothing half-written is left in its "
            "place; once there is room (or the disk is sound), run it again",
            file=sys.stderr,
        )
    return result
