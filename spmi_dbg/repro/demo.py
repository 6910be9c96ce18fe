"""`spmi-dbg demo`: the seed bug (dotnet/runtime#91257) end to end, on bundled binaries. It builds a
sample Arm64 collection with the seed trigger deep inside, then runs `spmi-dbg repro` on the
parallel asm-diff command superpmi.py would have run:

    spmi-replay -a -target arm64 -bug 91257 -p libsamplejit_base.so libsamplejit_diff.so big.mch

and prints the repro summary with a few lines of context. Exit status as `spmi-dbg repro`'s."""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spmi_dbg import paths, shell
from spmi_dbg.driver.request import DebuggerSetup
from spmi_dbg.errors import UsageError
from spmi_dbg.repro.arguments import PIPELINE_USAGE, pipeline_errors
from spmi_dbg.usage import count_option, this_program

if TYPE_CHECKING:  # imported when the demo runs (_run)
    from spmi_dbg.repro.result import ReproResult
    from spmi_dbg.sample.build import BuildResult

DEFAULT_METHODS = 200_000
DEFAULT_AT = 150_000
DEFAULT_OUT = "spmi-dbg-demo"
SEED = 1
OPTIONS = ["-a", "-target", "arm64", "-bug", "91257"]
COLLECTION = "big.mch"
BUNDLE = "repro"


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="build a sample Arm64 collection with the seed crash deep inside and run "
        "spmi-dbg repro on its parallel asm-diff command",
        description="Builds OUT/big.mch (sample Arm64 methods, the seed bug dotnet/runtime#91257 "
        "at method context --at), runs `spmi-dbg repro` on `spmi-replay -a -target "
        "arm64 -bug 91257 -p libsamplejit_base.so libsamplejit_diff.so big.mch` (the "
        "bundled binaries) and writes the repro bundle to OUT/repro.",
        usage_status=PIPELINE_USAGE,
    )
    count_option(
        p,
        "--methods",
        default=DEFAULT_METHODS,
        help=f"method contexts in the collection (default {DEFAULT_METHODS:,})",
    )
    count_option(
        p,
        "--at",
        metavar="K",
        help=f"method context of the seed trigger (default {DEFAULT_AT:,}, or 3/4 of --methods "
        "when that is smaller)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path(DEFAULT_OUT),
        metavar="DIR",
        help=f"directory for the collection and the bundle (default {DEFAULT_OUT})",
    )
    count_option(
        p,
        "--workers",
        default=os.cpu_count() or 1,
        metavar="W",
        help="partitions replayed in parallel, one gdb each (default: CPU count)",
    )
    p.set_defaults(func=run)


def size_text(size: int) -> str:
    """Bytes for a person: `243 MB`, `57 KB` below 1 MB (never `0 MB`), `512 bytes` below 1 KB
    (decimal units)."""
    if round(size / 1e3) >= 1000:
        return f"{size / 1e6:,.0f} MB"
    if size >= 1000:
        return f"{size / 1e3:,.0f} KB"
    return f"{size} bytes"


def run(args: argparse.Namespace) -> int:
    at = args.at if args.at is not None else min(DEFAULT_AT, max(1, args.methods * 3 // 4))
    return pipeline_errors("demo", lambda: _run(args, at))


def _native(relative: str) -> str:
    found = paths.native_file(relative)
    if found is None:
        raise UsageError(
            f"the bundled {relative} is not installed (reinstall spmi-dbg: pip install -e .)"
        )
    return str(found)


def _run(args: argparse.Namespace, at: int) -> int:
    # Imported when the demo runs, not when each spmi-dbg command builds its parser (cli.run).
    from spmi_dbg.driver.select import GdbDriver
    from spmi_dbg.repro import command
    from spmi_dbg.repro.cli import execute
    from spmi_dbg.repro.result import ReproOptions
    from spmi_dbg.sample.build import SampleSpec, build

    if at > args.methods:
        raise UsageError(f"--at {at} is beyond the collection (--methods {args.methods})")
    gdb = shutil.which("gdb")
    if gdb is None:
        raise UsageError("gdb not found: the demo replays under gdb (Debian: apt-get install gdb)")
    replay, base, diff = _native(paths.REPLAY), _native(paths.BASE_JIT), _native(paths.DIFF_JIT)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    mch = out / COLLECTION
    argv = [replay, *OPTIONS, "-p", base, diff, str(mch)]
    print(
        f"building {mch}: {args.methods:,} sample Arm64 method contexts, the seed bug "
        f"(dotnet/runtime#91257) at {at:,} ...",
        flush=True,
    )
    spec = SampleSpec(args.methods, SEED, arch="arm64", injections=[("seed-arm64", at)])
    built = build(mch, spec)
    # The line runs as printed (from this directory): the bundled binaries by their full paths,
    # every word quoted.
    repro = ["repro", "--workers", str(args.workers), "--out", str(out / BUNDLE), "--", *argv]
    print("running " + shell.join([*this_program(), *repro]), flush=True)
    start = time.monotonic()
    opts = ReproOptions(
        command=command.from_argv(argv),
        debugger=GdbDriver(gdb, DebuggerSetup(cwd=os.getcwd())),
        out=out / BUNDLE,
        workers=args.workers,
    )

    def context(result: ReproResult) -> list[tuple[str, str]]:
        return _context(mch, built, at, base, diff, result, time.monotonic() - start)

    result = execute(opts, extra_rows=context)
    return int(result.exit_code)


def _context(
    mch: Path,
    built: BuildResult,
    at: int,
    base: str,
    diff: str,
    result: ReproResult,
    repro_s: float,
) -> list[tuple[str, str]]:
    """The demo's own rows under the report's summary: the collection, the command, the time."""
    shown = " ".join(["spmi-replay", *OPTIONS, "-p", Path(base).name, Path(diff).name, COLLECTION])
    return [
        (
            "collection",
            f"{mch}: {built.count:,} sample Arm64 method contexts ({size_text(built.size)}), "
            f"the seed trigger at {at:,}; the base and diff sample JITs stand in for "
            "libclrjit.so, spmi-replay for superpmi",
        ),
        (
            "command",
            f"{shown}: `-p` dropped (a crash in a -p worker is invisible to a debugger on the "
            f"parent); {len(result.partitions)} -c range(s) replayed under gdb instead",
        ),
        (
            "took",
            f"{built.seconds:.1f} s to build the collection + {repro_s:.1f} s for spmi-dbg repro",
        ),
    ]
