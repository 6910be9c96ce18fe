#!/usr/bin/env python3
"""Overhead of replaying under the debugger driver when 1 % of the methods raise a first-chance
signal (issue 5): the driver of record (pygdbmi, spmi_dbg.driver.gdb.replay.run_replay: every
SIGSEGV in the JIT hits gdb's conditional catchpoint, whose condition -- the quick check and the
signal policy, in gdb's Python -- notes it and lets gdb pass it on without a stop) vs the same
replay natively.

Collections (x64, seed 1, built once and cached under --dir): --methods method contexts with
`jit-null` (a SIGSEGV inside the JIT that the replay's protected region survives) at every 100th one
(100, 200, ...), and the same collection without injections. Because the ratio depends on how long a
method takes to compile, it is measured at two method sizes (--size-factors, default "1,10"): the
generator's own sizes (median ~75 bytes of IL; the sample JIT compiles ~30,000 of them per second
here, far faster than a real JIT) and 10x larger methods (~5,000 per second per core, the order of a
real clrjit replay).

For each size, in one run (best wall time of --repeat runs each, default 3, interleaved: the machine
is shared):
  - native replay of the faulty and the clean collection;
  - the faulty and the clean collection under run_replay (one gdb, one process, like native);
  - `spmi-dbg repro --workers 1` end to end on the faulty collection (exit 2: no crash) for
    reference;
  - the floor: gdb alone passing the same signals (`handle SIGSEGV nostop noprint pass`, no
    catchpoint, no condition, no driver), which no replay under gdb can beat.
Prints the ratio faulty-under-driver / faulty-native (goal <= 1.1x at method size x10, issue 39),
the floor's ratio and what the driver adds over it, the fixed cost (debugger start), and the
per-stop cost (goal: the driver's own time per passed stop <= 0.25 ms median): from the wall times
((driver faulty - driver clean) - (native faulty - native clean)) / stops, and as the driver times
each stop itself (quick note + resume).

--quick (CI, seconds; not a measurement): --methods 400 --size-factors 1,10 --repeat 1, the same
runs and lines.

Usage: bench/first_chance_overhead.py [--quick] [--methods 60000] [--size-factors 1,10] [--dir
                                      /tmp/spmi-bench] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import USER_ENV as ENV
from _common import cached_collection, common_arguments, figure, native, parse, run_dir

from spmi_dbg import paths
from spmi_dbg.driver.gdb.replay import run_replay
from spmi_dbg.driver.request import ReplayRequest
from spmi_dbg.repro.native import run_native

# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^  faulty under the driver / native = [\d.]+x  \(goal <= 1\.1x at size x10: (met|NOT met)\)",
    r"^  the floor, gdb alone passing the same signals \(no catchpoint, no driver\) / native = "
    r"[\d.]+x: the driver adds",
    r"^  the driver's own time per passed stop, median [\d.]+ ms  \(goal <= 0\.25 ms: (met|NOT "
    r"met)\)$",
]


def collections(directory: Path, methods: int, factor: float) -> tuple[Path, Path, int]:
    faults = list(range(100, methods + 1, 100))  # 1 %
    clean = cached_collection(
        directory / f"fco-clean-{methods}-x{factor:g}.mch",
        methods=methods,
        seed=1,
        arch="x64",
        injections=[],
        size_factor=factor,
    )
    faulty = cached_collection(
        directory / f"fco-faulty-{methods}-x{factor:g}.mch",
        methods=methods,
        seed=1,
        arch="x64",
        injections=[("jit-null", n) for n in faults],
        size_factor=factor,
    )
    return clean, faulty, len(faults)


def cpu() -> float:
    """CPU seconds of this process and of its reaped descendants (gdb reaps the replay): less
    sensitive than wall time to the other tenants of a shared machine."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def time_native(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds)."""
    c0 = cpu()
    r = run_native(argv, timeout=900)
    assert r.signal is None and not r.timed_out, r.to_json()
    return r.seconds, cpu() - c0


def time_driver(argv: list[str], tmp: Path) -> tuple[float, float, float, list[float]]:
    """(wall seconds, CPU seconds (driver + gdb + replay), debugger start-up seconds, per-stop
    seconds as the driver times them)."""
    start, c0 = time.monotonic(), cpu()
    o = run_replay(ReplayRequest(tuple(argv), 900, tmp / "out", tmp / "err", tmp / "mi.log"))
    elapsed, used = time.monotonic() - start, cpu() - c0
    (tmp / "mi.log").unlink()
    assert o.kind == "exited", o
    return elapsed, used, o.startup_seconds, [p.seconds for p in o.passed]


def time_repro(argv: list[str], tmp: Path) -> float:
    tmp.mkdir(exist_ok=True)
    start = time.monotonic()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "spmi_dbg",
            "repro",
            "--workers",
            "1",
            "--out",
            str(tmp / f"bundle-{time.monotonic_ns()}"),
            "--",
            *argv,
        ],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=tmp,
    )
    elapsed = time.monotonic() - start
    if r.returncode != 2:
        raise SystemExit(
            f"spmi-dbg repro exited {r.returncode} (expected 2, no crash): {r.stdout[-1500:]}"
        )
    return elapsed


def time_floor(argv: list[str]) -> float:
    """gdb alone passing the same signals (`handle SIGSEGV nostop noprint pass`, no catchpoint, no
    condition, no driver): the floor of any replay under gdb (wall seconds, start included)."""
    start = time.monotonic()
    gdb = ["gdb", "-nx", "-batch", "-ex", "handle SIGSEGV nostop noprint pass", "-ex", "run"]
    r = subprocess.run(
        [*gdb, "--args", *argv],
        capture_output=True,
        env=ENV,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-500:]
    return time.monotonic() - start


class _Runs:
    """The best wall and CPU time of each run, the debugger's start-up times, the driver's own
    per-stop times."""

    def __init__(self) -> None:
        self.best: dict[str, float] = {}
        self.startup: list[float] = []
        self.own: list[float] = []

    def keep(self, key: str, value: float) -> None:
        self.best[key] = min(self.best.get(key, float("inf")), value)


def run_all(runs: _Runs, a: argparse.Namespace, argvs: dict[str, list[str]], faulty: Path) -> None:
    """Each run --repeat times, interleaved (the machine is shared)."""
    with run_dir(a.dir) as t:
        tmp = Path(t)
        for _ in range(a.repeat):
            for name, argv in argvs.items():
                w, c = time_native(argv)
                runs.keep(f"native-{name}", w)
                runs.keep(f"native-cpu-{name}", c)
                s, c, up, per = time_driver(argv, tmp)
                runs.keep(f"driver-{name}", s)
                runs.keep(f"driver-cpu-{name}", c)
                runs.startup.append(up)
                if name == "faulty":
                    runs.own = per
            runs.keep("floor", time_floor(argvs["faulty"]))
            runs.keep("repro", time_repro(argvs["faulty"], tmp / "repro"))


def report_stops(runs: _Runs, factor: float) -> None:
    b, own = runs.best, runs.own
    nf, dr = b["native-faulty"], b["driver-faulty"]
    wall = ((dr - b["driver-clean"]) - (nf - b["native-clean"])) / len(own)
    print(
        f"  per stop, from the wall times: {wall * 1000:.2f} ms;  as the driver times it "
        f"(quick note + resume): median {statistics.median(own) * 1000:.2f} ms, p90 "
        f"{sorted(own)[int(len(own) * 0.9)] * 1000:.2f} ms, first {own[0] * 1000:.1f} ms"
    )
    med = statistics.median(own)
    figure(
        f"first-chance x{factor:g}: the driver's own time per passed stop",
        med * 1000,
        "<= 0.25",
        "ms",
        f"p90 {sorted(own)[int(len(own) * 0.9)] * 1000:.2f} ms, first {own[0] * 1000:.1f} ms; what "
        "is timed is the stop's quick note through gdb's Python API (frame 0, its module, "
        "$_siginfo) and the resume",
    )
    print(
        f"  the driver's own time per passed stop, median {med * 1000:.2f} ms  (goal <= 0.25 ms: "
        f"{'met' if med <= 0.00025 else 'NOT met'})"
    )


def report_ratio(runs: _Runs, factor: float) -> None:
    b = runs.best
    nf, dr, floor = b["native-faulty"], b["driver-faulty"], b["floor"]
    ratio = dr / nf
    figure(
        f"first-chance x{factor:g}: faulty under the driver / native",
        ratio,
        "<= 1.1" if factor >= 10 else None,
        "x",
        f"gdb alone passing the same signals (no catchpoint, no driver) is {floor / nf:.2f}x "
        f"native in this run: the driver adds {(dr - floor) / nf * 100:.0f} % of native over gdb's "
        "own floor",
    )
    figure(
        f"first-chance x{factor:g}: gdb alone passing the signals / native", floor / nf, None, "x"
    )
    goal = f"(goal <= 1.1x at size x10: {'met' if ratio <= 1.1 else 'NOT met'})"
    shown = f"  faulty under the driver / native = {ratio:.2f}x  {goal if factor >= 10 else ''}"
    print(shown.rstrip())
    print(
        f"  the floor, gdb alone passing the same signals (no catchpoint, no driver) / native = "
        f"{floor / nf:.2f}x: the driver adds {(dr - floor) / nf * 100:.0f} % of native over it"
        f" ({(dr - floor) * 1000 / max(len(runs.own), 1):.2f} ms per stop, start included); "
        f"without the debugger start: {(dr - statistics.median(runs.startup)) / nf:.2f}x"
    )
    cn, cd = b["native-cpu-faulty"], b["driver-cpu-faulty"]
    per_cpu = ((cd - b["driver-cpu-clean"]) - (cn - b["native-cpu-clean"])) / max(len(runs.own), 1)
    print(
        f"  in CPU time (driver + gdb + replay vs the replay): faulty {cd:.2f} s vs {cn:.2f} s = "
        f"{cd / cn:.2f}x; clean {b['driver-cpu-clean']:.2f} s vs {b['native-cpu-clean']:.2f} s "
        f"(fixed cost); {per_cpu * 1000:.2f} ms CPU per stop"
    )


def measure(factor: float, a: argparse.Namespace, replay: str, jit: str) -> None:
    clean, faulty, nfaults = collections(a.dir, a.methods, factor)
    for mch in (clean, faulty):  # warm the page cache
        subprocess.run(["cat", str(mch)], stdout=subprocess.DEVNULL, check=True)
    runs = _Runs()
    argvs = {name: [replay, jit, str(mch)] for name, mch in (("clean", clean), ("faulty", faulty))}
    run_all(runs, a, argvs, faulty)
    b = runs.best
    nf, dr = b["native-faulty"], b["driver-faulty"]
    print(
        f"{a.methods} x64 methods, generator size x{factor:g} ({faulty.stat().st_size / 1e6:.0f} "
        f"MB), {nfaults} with a first-chance SIGSEGV (jit-null at every 100th); "
        f"{'one run each' if a.repeat == 1 else f'best of {a.repeat}'}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(
        f"  native       clean {b['native-clean']:7.2f} s   faulty {nf:7.2f} s   "
        f"({a.methods / nf:,.0f} methods/s)"
    )
    print(
        f"  run_replay   clean {b['driver-clean']:7.2f} s   faulty {dr:7.2f} s   stops passed "
        f"{len(runs.own)}; debugger start {statistics.median(runs.startup):.2f} s"
    )
    print(
        f"  spmi-dbg repro --workers 1 on the faulty collection, end to end (no crash, exit 2): "
        f"{b['repro']:.2f} s ({b['repro'] / nf:.2f}x native)"
    )
    if runs.own:
        report_stops(runs, factor)
    report_ratio(runs, factor)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--methods", type=int, default=60000)
    ap.add_argument("--size-factors", default="1,10")
    ap.add_argument("--repeat", type=int, default=3)
    common_arguments(ap)
    a = parse(ap, quick={"methods": 400, "repeat": 1})
    replay, jit = native(paths.REPLAY), native(paths.BASE_JIT)
    print(
        f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at "
        "the start"
    )
    for factor in (float(f) for f in a.size_factors.split(",")):
        measure(factor, a, replay, jit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
