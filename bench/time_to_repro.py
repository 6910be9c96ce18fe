#!/usr/bin/env python3
"""Time to a verified repro (issue 5): `spmi-dbg repro --workers 2` on the seed scenario vs the
native floor and vs the naive way (the whole command under one gdb).

The scenario: a 200,000-method Arm64 sample collection with the seed trigger (`seed-arm64`) at
method context 150,000, replayed as asm diffs, `-a -target arm64 -bug 91257`, base + diff sample
JITs: the replay dies at 150,000 (SIGSEGV in the near differ).

Sizing: the sample generator's methods (median ~75 bytes of IL) replay 150,000 in about 4 s here,
too short for the fixed costs not to hide the scaling. The generator has no size option, so this
script scales the generator's target method size by --size-factor (default 10: median ~450 bytes of
IL, ~4.5 KB records, a ~0.9 GB collection) for this collection only, which makes the floor (a) about
30 s on this machine. Built once and cached under --dir.

In one run (each once, in this order):
  (a) the floor: native `spmi-replay -a -target arm64 -bug 91257 -c 1-150000 base diff X.mch` (it
      dies of the SIGSEGV at its last method);
  (b) `spmi-dbg repro --workers 2 -- spmi-replay -a -target arm64 -bug 91257 base diff X.mch` end to
      end (exit 0: repro found and verified); its phases and each partition's debugger start-up are
      taken from the bundle's report.json;
  (c) the naive way: `gdb -batch -ex run --args spmi-replay ... X.mch` (all 200,000 methods, one
      process, one gdb), which stops at the crash and exits.
Prints (b)/(a) (goal <= 0.75) and (b)/(c) (goal <= 0.6), and the load average before and after.

--quick (CI, seconds; not a measurement): --methods 2000 --crash-at 1500 --size-factor 1, the same
runs and lines.

Usage: bench/time_to_repro.py [--quick] [--methods 200000] [--crash-at 150000] [--size-factor 10]
                              [--dir /tmp/spmi-bench]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import (
    cached_collection,
    figure,
    load,
    native,
    parse,
    partition_ran,
    repro_arguments,
    run_dir,
    timed,
    timed_repro,
    warm,
)

from spmi_dbg import paths

# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^\(b\)/\(a\) = [\d.]+  \(goal <= 0\.75: (met|NOT met)\)$",
    r"^\(b\)/\(c\) = [\d.]+  \(goal <= 0\.6: (met|NOT met)\)$",
]


def collection(directory: Path, methods: int, crash_at: int, factor: float) -> Path:
    return cached_collection(
        directory / f"ttr-arm64-{methods}-at{crash_at}-x{factor:g}.mch",
        methods=methods,
        seed=1,
        arch="arm64",
        injections=[("seed-arm64", crash_at)],
        size_factor=factor,
    )


@dataclass(frozen=True)
class Run:
    """The three runs' seconds, (b)'s report.json, whether (c) stopped at the SIGSEGV, and the load
    average before and after."""

    t_a: float
    t_b: float
    t_c: float
    report: dict[str, Any]
    naive_stopped: bool
    load_before: str
    load_after: str


def floor(a: argparse.Namespace, replay: str, opts: list[str], jits: list[str], mch: Path) -> float:
    """(a): the native replay up to the crash, which dies there."""
    t_a, r = timed([replay, *opts, "-c", f"1-{a.crash_at}", *jits, str(mch)])
    if r.returncode != -signal.SIGSEGV:  # the range ends with the crashing method: it dies there
        raise SystemExit(
            f"(a) did not die of SIGSEGV ({r.returncode}): {r.stdout[-500:]} {r.stderr[-500:]}"
        )
    return t_a


def measure(a: argparse.Namespace, gdb: str, mch: Path) -> Run:
    """(a) the floor, (b) `spmi-dbg repro` end to end, (c) the whole command under one gdb."""
    replay, base, diff = native(paths.REPLAY), native(paths.BASE_JIT), native(paths.DIFF_JIT)
    opts = ["-a", "-target", "arm64", "-bug", "91257"]
    argv = [replay, *opts, base, diff, str(mch)]
    load_before = load()
    warm(mch)
    t_a = floor(a, replay, opts, [base, diff], mch)
    with run_dir(a.dir) as t:
        t_b, report = timed_repro(argv, Path(t) / "bundle", a.workers)
    t_c, r = timed([gdb, "-nx", "-batch", "-ex", "run", "--args", *argv])
    naive_stopped = "SIGSEGV" in r.stdout + r.stderr
    return Run(t_a, t_b, t_c, report, naive_stopped, load_before, load_after=load())


def print_runs(a: argparse.Namespace, mch: Path, run: Run) -> None:
    """The runs' lines and (b) in detail: its phases, partitions and verification."""
    report, located = run.report, run.report["locate"]
    print(
        f"{a.methods} methods (Arm64, generator size x{a.size_factor:g}, "
        f"{mch.stat().st_size / 1e6:.0f} MB), "
        f"seed trigger at {a.crash_at}; -a -target arm64 -bug 91257, base + diff sample JITs; "
        f"{os.cpu_count()} CPUs, load average {run.load_before} before, {run.load_after} after; "
        "one run each"
    )
    print(
        f"  (a) native replay -c 1-{a.crash_at} (the floor)      {run.t_a:7.2f} s   (dies at "
        f"{a.crash_at}: SIGSEGV)"
    )
    print(
        f"  (b) spmi-dbg repro --workers {a.workers} end to end        {run.t_b:7.2f} s   "
        f"(outcome {report['outcome']}, method context {located['method_context']} "
        f"from {located['method_context_source'] or '?'})"
    )
    print(
        f"  (c) gdb -batch -ex run --args <the whole command>  {run.t_c:7.2f} s   "
        f"({'stopped at the SIGSEGV' if run.naive_stopped else 'did NOT report a SIGSEGV'})"
    )
    print("  (b) in detail, from report.json:")
    print(
        f"      pipeline total {report['seconds']:.2f} s; process start, argument parsing and "
        "writing the "
        f"bundle/report outside the phases {run.t_b - report['seconds']:.2f} s"
    )
    for p in report["phases"]:
        print(f"      phase {p['name']:18s} {p['seconds']:7.2f} s  {p['status']}")
    for p in located["partitions"]:
        print(
            f"      partition {p['partition']} ({p['compile']}, {p['methods']} methods): "
            f"{p['status']}, {partition_ran(p)}"
        )
    v = report.get("verification") or report.get("verification_single_record") or {}
    if v:
        d = v.get("debugger_run") or {}
        native_runs = ", ".join(f"{r.get('seconds', 0):.2f}" for r in v.get("native_runs", []))
        print(
            f"      verification: reproduced {v['reproduced']}/{v['runs']}; native runs "
            f"[{native_runs}] s, "
            f"under the debugger {d.get('seconds', 0):.2f} s"
        )


def print_ratios(run: Run) -> None:
    """(b)/(a) and (b)/(c), and their figures."""
    t_a, t_b, t_c = run.t_a, run.t_b, run.t_c
    ba, bc = t_b / t_a, t_b / t_c
    print(f"(b)/(a) = {ba:.2f}  (goal <= 0.75: {'met' if ba <= 0.75 else 'NOT met'})")
    print(f"(b)/(c) = {bc:.2f}  (goal <= 0.6: {'met' if bc <= 0.6 else 'NOT met'})")
    spent = f"(b) {t_b:.2f} s: " + ", ".join(
        f"{p['name']} {p['seconds']:.2f} s" for p in run.report["phases"]
    )
    figure("time to repro / native floor (b)/(a)", ba, "<= 0.75", "x", f"{spent}; (a) {t_a:.2f} s")
    figure(
        "time to repro / one gdb over the command (b)/(c)",
        bc,
        "<= 0.6",
        "x",
        f"{spent}; (c) {t_c:.2f} s",
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    repro_arguments(ap, "crash-at")
    a = parse(ap, quick={"methods": 2000, "crash_at": 1500, "size_factor": 1.0})
    gdb = shutil.which("gdb")
    if gdb is None:
        raise SystemExit("gdb is not on PATH")
    mch = collection(a.dir, a.methods, a.crash_at, a.size_factor)
    run = measure(a, gdb, mch)
    print_runs(a, mch, run)
    print_ratios(run)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
