#!/usr/bin/env python3
"""Cost of one stop passed on (a first-chance fault in the JIT, noted with the quick diagnosis, its
signal delivered): the driver of record (pygdbmi, spmi_dbg.driver.gdb.replay) vs the in-gdb Python
loop (tests.harness.stops.run_gdb_loop), on the same replay.

Two x64 sample collections that differ only in their injections (same seed and size): one clean, one
where 1 % of the methods carry `jit-null` (a SIGSEGV inside the JIT that the replay survives). Each
is replayed natively and under each driver (best of --repeat, interleaved). Per-stop cost = (time
with the faults - time of the clean collection, under the same driver) / stops, minus the native
difference (the replay's own cost of the failing compiles). The pygdbmi driver also times each stop
itself (quick diagnosis + resume).

--quick (CI, seconds; not a measurement): --methods 400 --repeat 1, the same runs and lines.

Usage: bench/stop_cost.py [--quick] [--methods 20000] [--dir /tmp/spmi-bench] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _common import cached_collection, common_arguments, figure, native, parse

from spmi_dbg import paths
from spmi_dbg.driver.gdb.replay import run_replay
from spmi_dbg.driver.request import ReplayRequest
from spmi_dbg.repro.native import run_native
from tests.harness.stops import run_gdb_loop

# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^  per stop, in-gdb  : +-?[\d.]+ ms  \(from the wall-time difference\)$",
    r"^  per stop, pygdbmi : +-?[\d.]+ ms  \(from the wall-time difference\)$",
    r"^  faulty under pygdbmi / native: [\d.]+x$",
]


def collections(methods: int, out: Path) -> tuple[Path, Path, int]:
    faults = list(range(50, methods + 1, 100))  # 1 %
    clean = cached_collection(
        out / f"stops-clean-{methods}.mch", methods=methods, seed=1, arch="x64", injections=[]
    )
    faulty = cached_collection(
        out / f"stops-faulty-{methods}.mch",
        methods=methods,
        seed=1,
        arch="x64",
        injections=[("jit-null", n) for n in faults],
    )
    return clean, faulty, len(faults)


def time_native(argv: list[str]) -> float:
    return run_native(argv, timeout=600).seconds


def time_stops(argv: list[str]) -> tuple[float, int]:
    start = time.monotonic()
    r = run_gdb_loop(argv, timeout=600)
    assert r.outcome == "exited", (r.outcome, r.detail)
    return time.monotonic() - start, len(r.passed)


def time_gdbmi(argv: list[str], tmp: Path) -> tuple[float, int, list[float]]:
    start = time.monotonic()
    o = run_replay(ReplayRequest(tuple(argv), 600, tmp / "out", tmp / "err", tmp / "mi.log"))
    (tmp / "mi.log").unlink()
    assert o.kind == "exited", o
    return time.monotonic() - start, len(o.passed), [p.seconds for p in o.passed]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--methods", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    common_arguments(ap)
    a = parse(ap, quick={"methods": 400, "repeat": 1})
    replay, jit = native(paths.REPLAY), native(paths.BASE_JIT)
    clean, faulty, nfaults = collections(a.methods, a.dir)
    best: dict[str, float] = {}
    stops: dict[str, int] = {}
    own: list[float] = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for _ in range(a.repeat):
            for name, mch in (("clean", clean), ("faulty", faulty)):
                argv = [replay, jit, str(mch)]
                best[f"native-{name}"] = min(best.get(f"native-{name}", 1e9), time_native(argv))
                s, n = time_stops(argv)
                best[f"in-gdb-{name}"] = min(best.get(f"in-gdb-{name}", 1e9), s)
                stops[f"in-gdb-{name}"] = n
                s, n, per = time_gdbmi(argv, tmp)
                best[f"pygdbmi-{name}"] = min(best.get(f"pygdbmi-{name}", 1e9), s)
                stops[f"pygdbmi-{name}"] = n
                if name == "faulty":
                    own += per
    native_extra = best["native-faulty"] - best["native-clean"]
    print(
        f"{a.methods} methods, {nfaults} with a first-chance fault (jit-null); best of {a.repeat}"
    )
    for k in ("native", "in-gdb", "pygdbmi"):
        print(
            f"  {k:8} clean {best[f'{k}-clean']:7.3f} s   faulty {best[f'{k}-faulty']:7.3f} s"
            + (f"   stops passed {stops[f'{k}-faulty']}" if k != "native" else "")
        )
    for k in ("in-gdb", "pygdbmi"):
        n = stops[f"{k}-faulty"]
        per = (best[f"{k}-faulty"] - best[f"{k}-clean"] - native_extra) / n if n else float("nan")
        print(f"  per stop, {k:8}: {per * 1000:6.2f} ms  (from the wall-time difference)")
    if own:
        print(
            f"  per stop, pygdbmi as the driver times it (quick diagnosis + resume): median "
            f"{statistics.median(own) * 1000:.2f} ms, first {own[0] * 1000:.1f} ms (imports), "
            f"p90 {sorted(own)[int(len(own) * 0.9)] * 1000:.2f} ms"
        )
    print(f"  faulty under pygdbmi / native: {best['pygdbmi-faulty'] / best['native-faulty']:.1f}x")
    figure(
        "faulty under pygdbmi / native", best["pygdbmi-faulty"] / best["native-faulty"], None, "x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
