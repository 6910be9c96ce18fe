#!/usr/bin/env python3
"""Triage cost per crash (issue 6): `spmi-dbg triage --workers 2` on a 50,000-method Arm64 sample
collection with 1, 10 and 100 crashing method contexts (`seed-arm64`, spread evenly; asm diffs `-a
-target arm64 -bug 91257`: each dies in the near differ). All crashes fall in one bucket, so each
run builds one repro bundle: the runs differ only in how many crashes the partitions resume after.

A crash should cost a constant (a fresh debugger, the diagnosis, the identification, the resume at
N+1), not a re-replay from the start. Prints, from one run of each (in this order: 1, 10, 100
crashes):
  - the wall time of each triage and of its replay part (triage.json `replay_seconds`);
  - the slope: seconds per additional crash, between 1 and 10 and between 10 and 100 crashes (equal
    slopes: a constant cost per crash);
  - the ratio of each run to the single-crash run;
  - for scale, one native replay of the whole clean collection (the floor of any triage of it).

--quick (CI, seconds; not a measurement): --methods 1000 --crashes 1,3, the same runs and lines.

Usage: bench/triage_scaling.py [--quick] [--methods 50000] [--crashes 1,10,100] [--dir
/tmp/spmi-bench]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _common import USER_ENV as ENV
from _common import (
    cached_collection,
    common_arguments,
    figure,
    load,
    native,
    parse,
    run_dir,
    warm,
)

from spmi_dbg import paths

OPTIONS = ["-a", "-target", "arm64", "-bug", "91257"]
# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^  slope \d+ -> \d+ crashes: -?[\d.]+ s per additional crash$",
    r"^  \d+ crashes / 1 crash: [\d.]+x$",
]


def collection(directory: Path, methods: int, crashes: int) -> Path:
    step = methods // (crashes + 1)
    at = [step * (i + 1) for i in range(crashes)]
    return cached_collection(
        directory / f"triage-arm64-{methods}-{crashes}crashes.mch",
        methods=methods,
        seed=3,
        arch="arm64",
        injections=[("seed-arm64", n) for n in at],
    )


def floor(clean: Path) -> None:
    """For scale: one native replay of the whole clean collection."""
    replay, base, diff = native(paths.REPLAY), native(paths.BASE_JIT), native(paths.DIFF_JIT)
    start = time.monotonic()
    r = subprocess.run([replay, *OPTIONS, base, diff, str(clean)], capture_output=True)
    floor = time.monotonic() - start
    print(
        f"  native replay of the clean collection (one process): {floor:.2f} s (exit "
        f"{r.returncode})"
    )


def triage(mch: Path, out: Path, crashes: int) -> float:
    """`spmi-dbg triage --workers 2` of the collection with `crashes` crashes: its wall seconds
    (exit unless it found them all)."""
    replay, base, diff = native(paths.REPLAY), native(paths.BASE_JIT), native(paths.DIFF_JIT)
    start = time.monotonic()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "spmi_dbg",
            "triage",
            "--workers",
            "2",
            "--out",
            str(out),
            "--",
            replay,
            *OPTIONS,
            base,
            diff,
            str(mch),
        ],
        capture_output=True,
        text=True,
        env=ENV,
    )
    wall = time.monotonic() - start
    data = json.loads((out / "triage.json").read_text())
    found = len(data["crashes"])
    if found != crashes or r.returncode != 0:
        raise SystemExit(
            f"triage of {crashes} crash(es) found {found}, exit {r.returncode}: {r.stdout[-800:]}"
        )
    print(
        f"  {crashes:4d} crash(es): {wall:7.2f} s  (replay {data['replay_seconds']:.2f} s, "
        f"{len(data['buckets'])} bucket, {len(data['segments'])} debugger runs)"
    )
    return wall


def slopes(counts: list[int], walls: dict[int, float]) -> None:
    """The seconds per additional crash between each two runs, and each run against the first."""
    for lo, hi in itertools.pairwise(counts):
        slope = (walls[hi] - walls[lo]) / (hi - lo)
        print(f"  slope {lo} -> {hi} crashes: {slope:.3f} s per additional crash")
        figure(
            f"triage: s per additional crash ({lo} -> {hi} crashes)",
            slope,
            "<= 0.04",
            "s",
            f"{walls[lo]:.2f} s with {lo} crash(es), {walls[hi]:.2f} s with {hi}",
        )
    for k in counts[1:]:
        print(f"  {k} crashes / 1 crash: {walls[k] / walls[counts[0]]:.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--methods", type=int, default=50000)
    ap.add_argument("--crashes", default="1,10,100")
    common_arguments(ap)
    a = parse(ap, quick={"methods": 1000, "crashes": "1,3"})
    counts = [int(x) for x in a.crashes.split(",")]
    cols = {k: collection(a.dir, a.methods, k) for k in counts}
    clean = collection(a.dir, a.methods, 0)
    print(
        f"{os.cpu_count()} CPUs, load average {load()}; {a.methods} Arm64 "
        f"method contexts, `{' '.join(OPTIONS)}`, 2 workers, --verify-runs 3"
    )
    for mch in [clean, *cols.values()]:
        warm(mch)
    floor(clean)
    with run_dir(a.dir) as t:
        walls = {k: triage(cols[k], Path(t) / f"triage-{k}", k) for k in counts}
    slopes(counts, walls)
    print(f"  load average at the end {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
