#!/usr/bin/env python3
"""Arm64 under qemu (issue 7): the time to a verified repro when the superpmi process is Linux
Arm64, run under qemu-aarch64 and debugged from this x64 machine with gdb-multiarch, vs the same
pipeline on the x64 build; and the per-stop cost of a debug break (SIGTRAP) passed through qemu's
gdbstub.

Collections (Arm64 target, seed 5, built once and cached under --dir; the Arm64 and x64 builds of
the core replay the same file):
  - seed: --methods method contexts with the seed trigger (`seed-arm64`) at --crash-at; asm diffs
    `-a -target arm64 -bug 91257`;
  - traps: --methods method contexts with a JIT assert (`jit-assert`) at every 100th: with `-boe`
    superpmi executes a debug break (brk) after each failed compile, which the driver absorbs (pc
stepped over brk). In one run (each once, in this order):
  (a) `spmi-dbg repro --workers 2` on the x64 build; (b) the same with `--qemu aarch64` on the Arm64
  build; (n) for scale, one native replay of the seed collection up to the crash, x64 and under qemu
  (no debugger); (t) the traps collection under the gdb driver through qemu, with and without -boe:
      the per-stop cost is the difference divided by the stops.
Prints (b)/(a) and the per-stop cost.

--quick (CI, seconds; not a measurement): --methods 500 --crash-at 300, the same runs and lines.

Usage: bench/arm64_qemu.py [--quick] [--methods 20000] [--crash-at 15000] [--dir /tmp/spmi-bench]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from _common import ROOT, cached_collection, common_arguments, native, parse, run_dir
from _common import USER_ENV as ENV

from spmi_dbg import paths
from spmi_dbg.driver.gdb.replay import run_replay
from spmi_dbg.driver.qemu import QemuTarget
from spmi_dbg.driver.request import ReplayRequest

OPTIONS = ["-a", "-target", "arm64", "-bug", "91257"]
AARCH64 = ROOT / "build" / "aarch64" / "install" / "spmi_dbg" / "_native"
# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^  \(b\)/\(a\) = [\d.]+x$",
    r"^  \(t\) \d+ debug breaks \(-boe\) passed through qemu's gdbstub: .* ms per stop from the "
    r"wall",
]


def collection(directory: Path, name: str, methods: int, injections: list[tuple[str, int]]) -> Path:
    return cached_collection(
        directory / f"arm64q-{name}-{methods}.mch",
        methods=methods,
        seed=5,
        arch="arm64",
        injections=injections,
    )


def repro(args: list[str], out: Path) -> tuple[float, dict[str, object]]:
    start = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "spmi_dbg", "repro", "--workers", "2", "--out", str(out), *args],
        capture_output=True,
        text=True,
        env=ENV,
    )
    took = time.monotonic() - start
    if r.returncode != 0:
        raise SystemExit(
            f"spmi-dbg repro {' '.join(args[:3])} ... exited {r.returncode}: {r.stdout[-800:]}"
        )
    return took, json.loads((out / "report.json").read_text())


def timed(argv: list[str]) -> float:
    start = time.monotonic()
    subprocess.run(argv, capture_output=True)
    return time.monotonic() - start


@dataclass(frozen=True)
class Setup:
    """The arguments, the two builds' (replay, base JIT, diff JIT), the two collections and qemu."""

    a: argparse.Namespace
    x64: list[str]
    arm: list[str]
    seed: Path
    traps: Path
    q: QemuTarget


def setup() -> Setup:
    """The arguments, the builds (the Arm64 one must be there), the collections built (cached)
    and read once."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--methods", type=int, default=20000)
    ap.add_argument("--crash-at", type=int, default=15000)
    common_arguments(ap)
    a = parse(ap, quick={"methods": 500, "crash_at": 300})
    x64 = [native(paths.REPLAY), native(paths.BASE_JIT), native(paths.DIFF_JIT)]
    arm = [
        str(AARCH64 / "bin" / "spmi-replay"),
        str(AARCH64 / "jit" / "libsamplejit_base.so"),
        str(AARCH64 / "jit" / "libsamplejit_diff.so"),
    ]
    if not all(Path(p).is_file() for p in arm):
        raise SystemExit(
            "the Arm64 build is missing: run scripts/build-aarch64.sh (scripts/setup-debian.sh "
            "--test "
            "runs it)"
        )
    seed = collection(a.dir, "seed", a.methods, [("seed-arm64", a.crash_at)])
    traps = collection(
        a.dir, "traps", a.methods, [("jit-assert", n) for n in range(100, a.methods + 1, 100)]
    )
    for mch in (seed, traps):
        subprocess.run(["cat", str(mch)], stdout=subprocess.DEVNULL, check=True)
    return Setup(a, x64, arm, seed, traps, QemuTarget())


def repros(s: Setup, tmp: Path) -> None:
    """(a) and (b): spmi-dbg repro on the x64 build, then under qemu on the Arm64 build."""
    x64, arm = s.x64, s.arm
    ta, ra = repro(["--", x64[0], *OPTIONS, x64[1], x64[2], str(s.seed)], tmp / "x64")
    tb, rb = repro(
        ["--qemu", "aarch64", "--", arm[0], *OPTIONS, arm[1], arm[2], str(s.seed)], tmp / "arm64"
    )
    same = ra["diagnosis"]["bucket"] == rb["diagnosis"]["bucket"]  # type: ignore[index]
    print(
        f"  (a) spmi-dbg repro, x64 build:                 {ta:6.2f} s (method context "
        f"{ra['locate']['method_context']})"
    )  # type: ignore[index]
    print(
        f"  (b) spmi-dbg repro --qemu aarch64, Arm64 build: {tb:6.2f} s (method context "
        f"{rb['locate']['method_context']}, {'same' if same else 'DIFFERENT'} bucket)"
    )  # type: ignore[index]
    print(f"  (b)/(a) = {tb / ta:.2f}x")


def native_replays(s: Setup) -> None:
    """(n): one native replay of the seed collection up to the crash, x64 and under qemu."""
    x64, arm = s.x64, s.arm
    upto = ["-c", f"1-{s.a.crash_at}"]
    nx = timed([x64[0], *OPTIONS, *upto, x64[1], x64[2], str(s.seed)])
    nq = timed([*s.q.prefix(), arm[0], *OPTIONS, *upto, arm[1], arm[2], str(s.seed)])
    print(
        f"  (n) native replay to the crash: x64 {nx:.2f} s, Arm64 under qemu {nq:.2f} s "
        f"({nq / nx:.2f}x)"
    )


def debug_breaks(s: Setup, tmp: Path) -> None:
    """(t): the traps collection under the gdb driver through qemu, with and without -boe."""
    arm = s.arm
    walls = {}
    stops = 0
    for boe in (False, True):
        argv = [arm[0], *(["-boe"] if boe else []), arm[1], str(s.traps)]
        start = time.monotonic()
        o = run_replay(
            ReplayRequest(tuple(argv), 900, tmp / "out", tmp / "err", tmp / "mi.log"),
            gdb="gdb-multiarch",
            qemu=s.q,
        )
        walls[boe] = time.monotonic() - start
        if boe:
            stops = len(o.passed)
            own = sorted(p.seconds for p in o.passed)
        assert o.kind == "exited", o
    per = (walls[True] - walls[False]) / max(stops, 1)
    print(
        f"  (t) {stops} debug breaks (-boe) passed through qemu's gdbstub: {walls[True]:.2f} s "
        "vs "
        f"{walls[False]:.2f} s without -boe: {per * 1000:.1f} ms per stop from the wall times; "
        "as the driver "
        f"times each (quick check + resume): median {own[len(own) // 2] * 1000:.1f} ms"
    )


def main() -> int:
    s = setup()
    print(
        f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"{s.a.methods} Arm64 "
        f"method contexts, the seed at {s.a.crash_at}; {' '.join(s.q.prefix())}"
    )
    with run_dir(s.a.dir) as t:
        tmp = Path(t)
        repros(s, tmp)
        native_replays(s)
        debug_breaks(s, tmp)
    print(f"  load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
