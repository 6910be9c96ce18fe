#!/usr/bin/env python3
"""Time to a verified, option-minimized repro of a stress-only JIT assert (issue 14) vs a native
replay up to the assert, in one run.

The scenario: a 200,000-method x64 sample collection with the sample JIT's stress-only assert
(`stress-assert`: `ldc.i4.6; rem`, which asserts only under JitStress=2 with STRESS_FOLD named) at
method context 150,000, and a command with six JIT settings of which two are needed:
  -jitoption JitNoInline=1 -jitoption JitStress=2 -jitoption JitStressRegs=1
  -jitoption "JitStressModeNames=STRESS_MAKE_CSE STRESS_FOLD STRESS_REVERSE_FLAG"
  -jitoption JitMinOpts=0 -jitoption JitDisasmSummary=0
Sizing as in bench/time_to_repro.py: the generator's method size is scaled by --size-factor (default
10) so that the floor is tens of seconds, not a few; the collection is built once and cached under
--dir.

In one run (each once, in this order):
  (a) the floor: native `spmi-replay <six settings> -c 1-150000 base X.mch` (the assert is its last
      method; the replay reports it and exits 1);
  (b) `spmi-dbg repro --failure assert --workers 2 -- spmi-replay <six settings> base X.mch` end to
      end: locate, isolate, option minimization, verification, the -boa stop under gdb, the JIT
      output, the bundle (exit 0, repro.sh with JitStress=2 and JitStressModeNames=STRESS_FOLD
only). Prints (b)/(a) (goal <= 0.67, issue 39), the phases of (b) from its report.json, and the
load average before and after.

--quick (CI, seconds; not a measurement): --methods 2000 --assert-at 1500 --size-factor 1, the same
runs and lines.

Usage: bench/assert_repro.py [--quick] [--methods 200000] [--assert-at 150000] [--size-factor 10]
                             [--dir /tmp/spmi-bench]
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import (
    cached_collection,
    figure,
    load,
    native,
    parse,
    repro_arguments,
    run_dir,
    timed,
    timed_repro,
    warm,
)

from spmi_dbg import paths

SETTINGS = [
    "-jitoption",
    "JitNoInline=1",
    "-jitoption",
    "JitStress=2",
    "-jitoption",
    "JitStressRegs=1",
    "-jitoption",
    "JitStressModeNames=STRESS_MAKE_CSE STRESS_FOLD STRESS_REVERSE_FLAG",
    "-jitoption",
    "JitMinOpts=0",
    "-jitoption",
    "JitDisasmSummary=0",
]
NEEDED = ["JitStress=2", "JitStressModeNames=STRESS_FOLD"]
# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [r"^ratio \(b\)/\(a\) = [\d.]+  \(goal <= 0\.67\)$"]


def collection(directory: Path, methods: int, at: int, factor: float) -> Path:
    return cached_collection(
        directory / f"assert-x64-{methods}-at{at}-x{factor:g}.mch",
        methods=methods,
        seed=1,
        arch="x64",
        injections=[("stress-assert", at)],
        size_factor=factor,
    )


@dataclass(frozen=True)
class Run:
    """The two runs' seconds, (b)'s report.json and the command its repro.sh runs, and the load
    average before and after."""

    t_a: float
    t_b: float
    report: dict[str, Any]
    script: str
    load_before: str
    load_after: str


def floor(a: argparse.Namespace, replay: str, base: str, mch: Path) -> float:
    """(a): the native replay up to the assert, which it reports (exit 1)."""
    t_a, r = timed([replay, *SETTINGS, "-c", f"1-{a.assert_at}", base, str(mch)])
    if r.returncode != 1 or f"ISSUE: <ASSERT> #{a.assert_at} " not in r.stdout:
        raise SystemExit(
            f"(a) did not report the assert ({r.returncode}): {r.stdout[-500:]} {r.stderr[-500:]}"
        )
    return t_a


def measure(a: argparse.Namespace, mch: Path) -> Run:
    """(a) the floor, then (b) `spmi-dbg repro --failure assert` end to end, which must find the
    assert needing only NEEDED."""
    replay, base = native(paths.REPLAY), native(paths.BASE_JIT)
    argv = [replay, *SETTINGS, base, str(mch)]
    load_before = load()
    warm(mch)
    t_a = floor(a, replay, base, mch)
    with run_dir(a.dir) as t:
        bundle = Path(t) / "bundle"
        t_b, report = timed_repro(argv, bundle, a.workers, "--failure", "assert")
        script = (bundle / "repro.sh").read_text().splitlines()[-1]
    load_after = load()
    target = report["target"]
    needed = target["options"]["needed"]
    if needed != NEEDED or target["failure"]["method_context"] != a.assert_at:
        raise SystemExit(f"(b) found {target['failure']['method_context']} needing {needed}")
    return Run(t_a, t_b, report, script, load_before, load_after)


def print_runs(a: argparse.Namespace, mch: Path, run: Run) -> None:
    """The runs' lines and (b)'s phases and partitions, from its report.json."""
    report, t_a, t_b = run.report, run.t_a, run.t_b
    target = report["target"]
    print(
        f"{a.methods} methods (x64, generator size x{a.size_factor:g}, "
        f"{mch.stat().st_size / 1e6:.0f} MB), "
        f"stress-only assert at {a.assert_at}, six JIT settings (two needed); {os.cpu_count()} "
        "CPUs, load "
        f"average {run.load_before} before, {run.load_after} after; one run each"
    )
    print(
        f"  (a) native replay -c 1-{a.assert_at} (the floor)         {t_a:7.2f} s   (reports the "
        "assert, exit 1)"
    )
    print(
        f"  (b) spmi-dbg repro --failure assert --workers {a.workers}   {t_b:7.2f} s   (outcome "
        f"{report['outcome']}, method context {target['failure']['method_context']}, needs "
        f"{' '.join(target['options']['needed'])})"
    )
    print("  (b) in detail, from report.json:")
    for p in report["phases"]:
        print(f"      {p['name']:<18} {p['seconds']:7.2f} s  {p['detail'][:110]}")
    for part in target["partitions"]:
        state = (
            "not replayed"
            if not part.get("started", True)
            else "stopped early"
            if part.get("stopped")
            else f"exit {part['returncode']}"
        )
        print(
            f"      partition {part['partition']} (-c {part['compile']}): {part['seconds']:.2f} s, "
            f"{state}"
        )
    print(f"  repro.sh runs: {run.script}")


def print_ratio(run: Run) -> None:
    """The ratio line and its figure."""
    report, t_a, t_b = run.report, run.t_a, run.t_b
    target = report["target"]
    ratio = t_b / t_a
    print(f"ratio (b)/(a) = {ratio:.2f}  (goal <= 0.67)")
    longest = max((p["seconds"] for p in target["partitions"]), default=0.0)
    why = (
        f"(b) {t_b:.2f} s against the floor's {t_a:.2f} s: "
        + ", ".join(f"{p['name']} {p['seconds']:.2f} s" for p in report["phases"])
        + f"; its longest partition replayed {longest:.2f} s against an even share of the floor "
        f"({t_a / max(1, len(target['partitions'])):.2f} s): replays side by side are slower "
        "than their share"
    )
    figure("assert repro / native to the assert", ratio, "<= 0.67", "x", why)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    repro_arguments(ap, "assert-at")
    a = parse(ap, quick={"methods": 2000, "assert_at": 1500, "size_factor": 1.0})
    mch = collection(a.dir, a.methods, a.assert_at, a.size_factor)
    run = measure(a, mch)
    print_runs(a, mch, run)
    print_ratio(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
