"""The command line the pipelines share: the parser of `spmi-dbg repro`, `triage` and `bisect`; the
replay's inputs and the debugger's options (repro and triage); and the pipelines' exit statuses for
usage errors and our own errors (spmi_dbg.exits: 3 usage or input, 4 the debugger failed; 2 means
"no crash" there). Every pipeline's parser (demo's and recheck's too) is a spmi_dbg.usage.Parser
made with `usage_status=PIPELINE_USAGE`."""

from __future__ import annotations

import argparse
import errno
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spmi_dbg import exits
from spmi_dbg.driver.registry import DEFAULT, NAMES
from spmi_dbg.errors import (
    ClusterLost,
    SpmiDbgError,
    ToolFailure,
    is_system_stop,
    printable,
    system_stop_said,
)
from spmi_dbg.usage import Parser, count_option, number_option, repeated_option

PIPELINE_USAGE = exits.PIPELINE_INPUT  # a pipeline's usage error: 3, never 2 ("no crash")


def add_pipeline_parser(
    sub: Any,
    name: str,
    run: Callable[[argparse.Namespace], int],
    *,
    help: str,
    usage: str,
    epilog: str,
) -> Parser:
    """`spmi-dbg NAME`'s parser, which runs `run`: a pipeline's usage status, and the epilog (exit
    statuses, examples) printed as written."""
    p: Parser = sub.add_parser(
        name,
        help=help,
        usage=usage,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage_status=PIPELINE_USAGE,
    )
    p.set_defaults(func=run)
    return p


def add_replay_arguments(p: Parser, *, collections: bool = False) -> None:
    """The inputs and debugger options `spmi-dbg repro` and `spmi-dbg triage` share (`collections`:
    --mch is repeatable and takes directories, for triage)."""
    _command_arguments(p, collections)
    _debugger_arguments(p)
    _replay_arguments(p)
    _bundle_arguments(p)


def _command_arguments(p: Parser, collections: bool) -> None:
    """The superpmi command: after --, or in parts, or from a log that names it."""
    p.add_argument(
        "command", nargs=argparse.REMAINDER, help="the superpmi (or spmi-replay) command line"
    )
    if collections:
        repeated_option(
            p,
            "--mch",
            metavar="PATH",
            help="a collection, or a directory standing for all its *.mch (as superpmi.py's "
            "-mch_files); repeatable. The command after -- then names no collection",
        )
    else:
        p.add_argument(
            "--mch", metavar="FILE", help="the collection (instead of a full command after --)"
        )
    p.add_argument("--jit", metavar="SO", help="the JIT (the diff JIT when --base-jit is given)")
    p.add_argument("--base-jit", metavar="SO", help="the base JIT (JIT1) for asm diffs")
    p.add_argument(
        "--superpmi", metavar="PROG", help="superpmi to run (default: the bundled spmi-replay)"
    )
    p.add_argument("--target", metavar="ARCH", help="superpmi -target")
    repeated_option(
        p,
        "--jitoption",
        metavar="K=V",
        help="superpmi -jitoption (both JITs in asm diffs); repeatable",
    )
    p.add_argument(
        "--from-log",
        metavar="LOG",
        type=Path,
        help="take the failing superpmi command from a superpmi.py log (superpmi.N.log)",
    )


def _debugger_arguments(p: Parser) -> None:
    """Which debugger replays, and a guest's emulator."""
    p.add_argument(
        "--debugger", choices=NAMES, default=DEFAULT, help=f"debugger to replay under ({DEFAULT})"
    )
    p.add_argument(
        "--gdb",
        metavar="PATH",
        help="the gdb executable (default: gdb on PATH; gdb-multiarch with --qemu)",
    )
    p.add_argument(
        "--qemu",
        choices=("aarch64",),
        metavar="ARCH",
        help="the superpmi command is an ARCH Linux program: run it under qemu-ARCH (qemu-user) "
        "and debug it with gdb-multiarch through qemu's gdbstub",
    )
    p.add_argument(
        "--sysroot",
        metavar="DIR",
        help="the guest's libraries for --qemu (default /usr/aarch64-linux-gnu, "
        "Debian's cross libraries)",
    )


def _replay_arguments(p: Parser) -> None:
    """How the replays run: in parallel, timed, verified; where separate debug files are."""
    count_option(
        p,
        "--workers",
        default=os.cpu_count() or 1,
        help="partitions replayed in parallel, one debugger each (default: CPU count)",
    )
    number_option(
        p,
        "--timeout",
        default=1800.0,
        help="seconds a partition may take before it is a hang (default 1800; a verification run "
        "of the repro gets at most 60)",
    )
    count_option(
        p,
        "--verify-runs",
        default=3,
        metavar="K",
        minimum=0,
        help="native replays of the repro to verify it (default 3; plus one under the debugger)",
    )
    repeated_option(
        p,
        "--debug-dir",
        metavar="DIR",
        help="where separate debug files are (the <file>.dbg a stripped build names in its "
        "gnu_debuglink, a .build-id/ tree, or a flat directory of .dbg files); repeatable",
    )


def _bundle_arguments(p: Parser) -> None:
    """What the written files and the native replays carry of this machine."""
    p.add_argument(
        "--redact",
        action="store_true",
        help="replace the home directory, user name and host name in the written files",
    )
    add_env_arguments(p)


def add_env_arguments(p: Parser) -> None:
    """--env NAME and --env-all: the variables of this environment a replay gets (repro, triage,
    bisect's command form)."""
    repeated_option(
        p,
        "--env",
        metavar="NAME",
        help="a variable of this environment the replay needs besides those recorded anyway "
        "(DOTNET_*, COMPlus_*, LD_LIBRARY_PATH, LD_PRELOAD, LD_BIND_NOW, SuperPMI*); repeatable. "
        "Every replay after the first and repro.sh get these and nothing else (env -i, plus PATH "
        "and HOME)",
    )
    p.add_argument(
        "--env-all",
        action="store_true",
        help="record every variable of this environment but the shell's own "
        "(PWD, SHLVL, TERM, ...)",
    )


def pipeline_errors(
    name: str, body: Callable[[], int], *, resumable: Callable[[], bool] = lambda: True
) -> int:
    """`body`, with our errors as one line on stderr: 4 for the debugger failing, 3 for usage and
    input, 5 for a run the system stopped (a full disk, an I/O error: issue 37). `resumable()`:
    whether the run got far enough for triage's --resume (else the line says to run it again)."""
    try:
        return body()
    except ToolFailure as e:
        print(f"spmi-dbg {name}: error: {e}", file=sys.stderr)
        return exits.TOOL_FAILURE
    except ClusterLost as e:
        print(f"spmi-dbg {name}: error: {cluster_lost(name, e, resumable())}", file=sys.stderr)
        return exits.INCOMPLETE
    except SpmiDbgError as e:
        print(f"spmi-dbg {name}: error: {e}", file=sys.stderr)
        return exits.PIPELINE_INPUT
    except OSError as e:
        if not is_system_stop(e):
            raise
        print(f"spmi-dbg {name}: error: {system_stop(name, e, resumable())}", file=sys.stderr)
        return exits.INCOMPLETE
    except Exception as e:  # a lost dask cluster: distributed's own errors, not imported here
        if not type(e).__module__.startswith("distributed"):
            raise
        print(f"spmi-dbg {name}: error: {cluster_lost(name, e, resumable())}", file=sys.stderr)
        return exits.INCOMPLETE


def _given(name: str) -> list[str]:
    """This invocation's arguments after the command's name."""
    return sys.argv[2:] if sys.argv[1:2] == [name] else []


def resume_hint(name: str, resumable: bool = True) -> str:
    """How to go on: triage's --resume (the journals make it exact), else a new run (`resumable`:
    False when the run stopped before it had anything to resume)."""
    given = _given(name)
    if name == "triage" and given:
        if resumable:
            return "resume: " + shlex.join(
                ["spmi-dbg", name, *([] if "--resume" in given else ["--resume"]), *given]
            )
        return "run it again: " + shlex.join(["spmi-dbg", name, *_without_resume(given)])
    return "run it again"


def _without_resume(given: list[str]) -> list[str]:
    at = given.index("--") if "--" in given else len(given)
    return [a for a in given[:at] if a != "--resume"] + given[at:]


def cluster_lost(name: str, e: Exception, resumable: bool = True) -> str:
    """The one line of a run whose dask cluster went away."""
    if not isinstance(e, ClusterLost):
        given = _given(name)
        at = given[given.index("--scheduler") + 1] if "--scheduler" in given[:-1] else "?"
        e = ClusterLost(at, e)
    return (
        f"the dask cluster at {printable(e.address)} went away ({printable(e.cause)}): "
        f"the journals hold everything done so far; restart the cluster and "
        f"{resume_hint(name, resumable)}"
    )


def system_stop(name: str, e: OSError, resumable: bool = True) -> str:
    """The one line of a run the system stopped: what failed, where, and how to go on."""
    given = _given(name)
    out = given[given.index("--out") + 1] if "--out" in given[:-1] else None
    room = e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
    return (
        f"{system_stop_said(e, out)}: the run stopped before its end; what it wrote is kept; "
        f"{'make room' if room else 'once the disk is sound'} and {resume_hint(name, resumable)}"
    )
