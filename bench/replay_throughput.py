#!/usr/bin/env python3
"""Replay throughput of spmi-replay (issue 3): methods per second on a 200k-method sample
collection, one process vs `-p 2`, and the cost of the protected regions around the JIT call.

In one run:
  - builds (once, cached) a 200,000-method sample collection with `spmi_dbg.sample` (x64, seed 1);
  - replays it with the installed spmi-replay and the base JIT, sequentially and with `-p 2`
    (best wall time of --repeat runs each, interleaved): methods/s and the -p 2 speed-up;
  - builds a second spmi-replay with the protected regions compiled out (CMake option
    SPMI_REPLAY_PROTECTED_REGIONS=OFF, used only here) and replays the same collection with it:
    the ratio is the cost of the regions (a sigsetjmp and a frame push/pop per region: one around
    each compile, one per runWithErrorTrap call the JIT makes).
Wall times are what a user waits for; CPU times (user + sys of the replay processes) are printed
too, and the protected-region ratio is taken from them, because on a shared machine they are far
less noisy.

The build directory of the second spmi-replay is kept in --dir with the collections (rebuilt
incrementally at each run, so it follows the sources).

--quick (CI, seconds once the second spmi-replay is built; not a measurement): --methods 2000
--repeat 1, the same runs and lines.

Usage: bench/replay_throughput.py [--quick] [--methods 200000] [--dir /tmp/spmi-bench] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import time
from pathlib import Path

from _common import CACHE, ROOT, cached_collection, common_arguments, figure, native, parse, run_dir

from spmi_dbg import paths

# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^-p 2 speed-up over 1 process \(wall\): [\d.]+x$",
    r"^protected regions: CPU time ratio with/without = [\d.]+ ",
]


def collection(directory: Path, methods: int) -> Path:
    return cached_collection(directory / f"replay-{methods}.mch", methods=methods, seed=1)


def unprotected_replay(directory: Path) -> str:
    """spmi-replay built from the same sources with SPMI_REPLAY_PROTECTED_REGIONS=OFF."""
    bdir = directory / "replay-noprot-build"
    CACHE.use(bdir)
    cfg = [
        "cmake",
        "-S",
        str(ROOT / "native"),
        "-B",
        str(bdir),
        "-DSPMI_PYTHON_BINDINGS=OFF",
        "-DSPMI_REPLAY_PROTECTED_REGIONS=OFF",
        "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
    ]
    t = time.perf_counter()
    subprocess.run(cfg, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(
        ["cmake", "--build", str(bdir), "--target", "spmi-replay", "--parallel"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    print(
        f"spmi-replay without protected regions: {bdir} built (incrementally) in "
        f"{time.perf_counter() - t:.1f} s"
    )
    CACHE.bound()
    return str(bdir / "replay" / "spmi-replay")


def cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run(cmd: list[str], methods: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its workers)."""
    t, c = time.perf_counter(), cpu_children()
    r = subprocess.run(cmd, capture_output=True, text=True)
    elapsed, cpu = time.perf_counter() - t, cpu_children() - c
    expected = f"Loaded {methods}  Jitted {methods}  FailedCompile 0 Excluded 0 Missing 0"
    if r.returncode != 0 or expected not in r.stdout:
        raise SystemExit(
            f"{' '.join(cmd)} failed ({r.returncode}): {r.stdout[-500:]} {r.stderr[-500:]}"
        )
    return elapsed, cpu


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--methods", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    common_arguments(ap)
    args = parse(ap, quick={"methods": 2000, "repeat": 1})
    mch = collection(args.dir, args.methods)
    replay, jit = native(paths.REPLAY), native(paths.BASE_JIT)
    noprot = unprotected_replay(args.dir)
    with run_dir(args.dir) as t:
        os.environ["TMPDIR"] = t  # the -p workers' files
        return measure(args, mch, replay, jit, noprot)


def measure(args: argparse.Namespace, mch: Path, replay: str, jit: str, noprot: str) -> int:

    variants = {
        "1 process": [replay, "-v", "n", jit, str(mch)],
        "-p 2": [replay, "-v", "n", "-p", "2", jit, str(mch)],
        "1 process, no protected regions": [noprot, "-v", "n", jit, str(mch)],
    }
    wall = dict.fromkeys(variants, float("inf"))
    cpu = dict.fromkeys(variants, float("inf"))
    run(variants["1 process"], args.methods)  # warm the page cache
    for _ in range(args.repeat):
        for name, cmd in variants.items():
            w, c = run(cmd, args.methods)
            wall[name], cpu[name] = min(wall[name], w), min(cpu[name], c)

    n = args.methods
    print(
        f"collection: {n} methods, {mch.stat().st_size / 1e6:.0f} MB, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}; best of {args.repeat} runs"
    )
    for name in variants:
        print(
            f"  {name:34s} wall {wall[name]:6.2f} s {n / wall[name]:9,.0f} methods/s   CPU "
            f"{cpu[name]:6.2f} s"
        )
    print(f"-p 2 speed-up over 1 process (wall): {wall['1 process'] / wall['-p 2']:.2f}x")
    figure("-p 2 speed-up over 1 process", wall["1 process"] / wall["-p 2"], None, "x")
    base, off = cpu["1 process"], cpu["1 process, no protected regions"]
    print(
        "protected regions: CPU time ratio with/without = "
        f"{base / off if off else float('nan'):.3f} "
        f"({(base - off) / n * 1e9:+.0f} ns per method)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
