#!/usr/bin/env python3
"""Collection scan throughput, single-record extraction latency, and peak RSS (issue: foundation).

Builds (once, cached) a ~1 GiB collection of ~300k real-format method contexts, then in one run:
  - reads it once with `cat > /dev/null` (warm cache): the floor;
  - runs `spmi-dbg mch verify` and `spmi-dbg mch info` end to end: goal ratio to cat <= 2.0;
  - extracts one record by number with a .mct present: goal < 20 ms (API and CLI reported
  separately);
  - extracts one record without a .mct (one header hop per record, no payload reads);
  - peak RSS of each command (goal < 100 MB, independent of the file size).

Each time is the best of --repeat runs (default 3; the single-record extraction, of --repeat + 2).

--quick (CI, seconds; not a measurement): --gib 0.01 --repeat 1, the same runs and lines.

Usage: bench/mch_scan.py [--quick] [--gib 1.0] [--repeat 3] [--dir /tmp/spmi-bench]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _common import USER_ENV as ENV
from _common import cached, common_arguments, figure, parse, run_dir

from spmi_dbg.mch.collection import Collection, write_index_file
from spmi_dbg.sample.synth import method_context

# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^mch verify +[\d.]+ s  ratio to cat +[\d.]+  \(goal <= 2\.0\)$",
    r"^mch info +[\d.]+ s  ratio to cat +[\d.]+  \(goal <= 2\.0\)$",
    r"^extract 1 record, with \.mct   API +[\d.]+ ms \(goal < 20 ms\)",
    r"^peak RSS \(MiB\): verify \d+, info \d+, ",
]


def build(path: Path, target_bytes: int) -> int:
    """A pool of distinct method contexts written round-robin (real format, ~3.5 KB each) up to the
    size."""
    rng = random.Random(42)
    pool = [
        method_context(rng, n, mean_il=120, inlinees=6, with_compile_result=True)
        for n in range(1, 4001)
    ]
    entries = []
    pos = 0
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        i = 0
        while pos < target_bytes:
            rec = pool[i % len(pool)]
            f.write(rec)
            entries.append((pos, i + 1, None))
            pos += len(rec)
            i += 1
    os.replace(tmp, path)
    write_index_file(path.with_name(path.name + ".mct"), entries)
    return len(entries)


def timed(cmd: list[str], repeat: int = 3) -> float:
    """Best wall time of `repeat` runs."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
        elapsed = time.perf_counter() - t
        if r.returncode:
            raise SystemExit(f"{cmd} failed: {r.stderr.decode()}")
        best = min(best, elapsed)
    return best


_RSS_PROBE = (
    "import resource, subprocess, sys; "
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
    "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def peak_rss(cmd: list[str]) -> int:
    """Peak RSS (KiB) of one run of cmd. Measured from a small parent process: a child forked from
    this benchmark (which holds the generated data) would report this process's RSS from before its
    exec."""
    out = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE, *cmd],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
    )
    rc, rss = out.stdout.split()
    if rc != "0":
        raise SystemExit(f"{cmd} failed with status {rc}")
    return int(rss)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--gib", type=float, default=1.0, help="collection size in GiB (default 1.0)")
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs of each timed command, the best counts"
    )
    common_arguments(ap)
    args = parse(ap, quick={"gib": 0.01, "repeat": 1})
    with run_dir(args.dir) as t:
        measure(args, Path(t))


def measure(args: argparse.Namespace, work: Path) -> None:
    """The measures, with the cached collection and `work` for the outputs (removed after)."""
    mch = cached(
        args.dir / f"scan-{args.gib:g}g.mch", lambda p: build(p, int(args.gib * (1 << 30))), ".mct"
    )
    repeat = args.repeat
    spmi = [sys.executable, "-m", "spmi_dbg"]
    size = mch.stat().st_size

    subprocess.run(["cat", str(mch)], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
    # and the bytecode cache
    subprocess.run([*spmi, "--help"], stdout=subprocess.DEVNULL, check=True, env=ENV)
    t_cat = timed(["sh", "-c", f"cat '{mch}' > /dev/null"], repeat)
    t_verify = timed([*spmi, "mch", "verify", str(mch)], repeat)
    t_info = timed([*spmi, "mch", "info", str(mch)], repeat)
    t_startup = timed([sys.executable, "-c", "import spmi_dbg.cli"], repeat + 2)

    with Collection.open(mch) as col:
        count = len(col)
    target = count * 3 // 4

    # Extraction with the index: API (open + locate + write) and CLI end to end.
    out = work / "one.mch"
    best_api = float("inf")
    for _ in range(repeat + 2):
        t = time.perf_counter()
        with Collection.open(mch) as col:
            col.extract([target], out)
        best_api = min(best_api, time.perf_counter() - t)
    t_extract_cli = timed(
        [*spmi, "mch", "extract", "-c", str(target), str(mch), str(out)], repeat + 2
    )

    # Without the index: the collection under a name with no .mct beside it (a hard link, no copy;
    # in `work`, so that it never outlives the cached collection).
    bare = work / "bare" / mch.name
    bare.parent.mkdir(exist_ok=True)
    try:
        os.link(mch, bare)
    except OSError:
        shutil.copyfile(mch, bare)
    best_noidx = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        with Collection.open(bare) as col:
            col.extract([target], out)
        best_noidx = min(best_noidx, time.perf_counter() - t)

    rss_verify = peak_rss([*spmi, "mch", "verify", str(mch)])
    rss_info = peak_rss([*spmi, "mch", "info", str(mch)])
    rss_extract = peak_rss([*spmi, "mch", "extract", "-c", str(target), str(bare), str(out)])
    rss_python = peak_rss([sys.executable, "-c", "import spmi_dbg.cli"])

    gib = size / (1 << 30)
    print(
        f"collection: {count} method contexts, {size} bytes ({gib:.2f} GiB), mean record "
        f"{size / count:.0f} B"
    )
    print(f"cat > /dev/null (warm)        {t_cat:7.3f} s  ({gib / t_cat:5.2f} GiB/s)")
    print(
        f"mch verify                    {t_verify:7.3f} s  ratio to cat {t_verify / t_cat:5.2f}  "
        "(goal <= 2.0)"
    )
    print(
        f"mch info                      {t_info:7.3f} s  ratio to cat {t_info / t_cat:5.2f}  (goal "
        "<= 2.0)"
    )
    print(f"  (python + spmi_dbg startup  {t_startup:7.3f} s, included in the CLI times)")
    figure("mch verify / cat", t_verify / t_cat, "<= 2.0", "x")
    figure("mch info / cat", t_info / t_cat, "<= 2.0", "x")
    figure("extract 1 record (API, with .mct)", best_api * 1000, "< 20", "ms")
    print(
        f"extract 1 record, with .mct   API {best_api * 1000:7.2f} ms (goal < 20 ms);"
        f" CLI end to end {t_extract_cli * 1000:7.1f} ms"
    )
    print(
        f"extract 1 record, no .mct     API {best_noidx * 1000:7.2f} ms (header hops over {count} "
        "records)"
    )
    print(
        f"peak RSS (MiB): verify {rss_verify / 1024:.0f}, info {rss_info / 1024:.0f}, "
        f"extract without index {rss_extract / 1024:.0f}, bare python+import "
        f"{rss_python / 1024:.0f}"
        "  (goal < 100, independent of size)"
    )


if __name__ == "__main__":
    main()
