#!/usr/bin/env python3
"""A longer fuzz run of the collection readers (issue 30 item 4: CI runs the target for 30 s,
tests/test_sanitizers.py; this is the bench-like script for longer runs). Builds
native/mch/fuzz_spmimch.c with clang-16 and libFuzzer (ASan + UBSan, -DSPMI_FUZZ=ON) into --dir,
seeds it from the real 3.1.23 collections (a few runs of api.mch records and their index, each
prefixed with the target's selector byte) when ../shared's reference is unpacked, else from a
sample collection, and runs it for --seconds.

Prints, from one run: the inputs executed and their rate, the corpus grown (new units kept), the
peak memory libFuzzer reports, and the findings: crashes, leaks, timeouts or sanitizer reports
(each is a file crash-*/leak-*/timeout-* in the run directory, which is kept when there is one).
Exit 1 when there is a finding.

--quick (CI; not a measurement): --seconds 5, the same build and lines.

Usage: bench/fuzz_readers.py [--quick] [--seconds 600] [--dir /tmp/spmi-bench]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, common_arguments, parse

from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.mct import build_toc_bytes
from spmi_dbg.sample.synth import synthetic_collection

# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^  executed: \d+ inputs in [\d.]+ s \(\d+ per second\), \d+ new unit\(s\) kept, peak "
    r"\d+ MB$",
    r"^  findings: \d+ \((none|[\w, -]+)\)$",
]
SEEDS = [(1, 3), (10, 12), (543, 543), (2000, 2002)]


def build(directory: Path) -> Path:
    clang = shutil.which("clang-16")
    if clang is None:
        raise SystemExit("clang-16 not found (scripts/setup-debian.sh --test installs it)")
    env = dict(os.environ, CC=clang, CXX=clang.replace("clang", "clang++"))
    for step in (
        [
            "cmake", "-S", str(ROOT / "native"), "-B", str(directory), "-DSPMI_FUZZ=ON",
            "-DSPMI_PYTHON_BINDINGS=OFF", "-DCMAKE_BUILD_TYPE=Debug",
        ],
        ["cmake", "--build", str(directory), "--target", "fuzz_spmimch", "-j2"],
    ):  # fmt: skip
        subprocess.run(step, check=True, capture_output=True, env=env)
    return next(p for p in directory.rglob("fuzz_spmimch") if p.is_file())


def seed(corpus: Path, tmp: Path) -> str:
    """The seed corpus; what it was made from."""
    real = ROOT / ".real-superpmi" / "3.1.23" / "collections" / "api.mch"
    if real.is_file():
        source, ranges = real, SEEDS
    else:
        source = tmp / "sample.mch"
        source.write_bytes(b"".join(synthetic_collection(8, 11, with_compile_result=True)))
        ranges = [(1, 3), (4, 8)]
    data = source.read_bytes()
    with Collection.open(source) as col:
        offsets = [*col.record_offsets(), len(data)]
    for k, (first, last) in enumerate(ranges):
        lo, hi = offsets[first - 1], offsets[last]
        blob = data[lo:hi]
        (corpus / f"mch{k}").write_bytes(b"\0" + blob)
        toc = build_toc_bytes([(offsets[i] - lo, i + 1, None) for i in range(first - 1, last)])
        (corpus / f"mct{k}").write_bytes(b"\1" + struct.pack("<I", len(blob)) + toc)
    return f"{source.name} records {', '.join(f'{a}-{b}' for a, b in ranges)} and their index"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seconds", type=int, default=600)
    common_arguments(ap)
    a = parse(ap, quick={"seconds": 5})
    target = build(a.dir / "fuzz-build")
    run = Path(tempfile.mkdtemp(prefix="tmpfuzz-", dir=a.dir))
    corpus = run / "corpus"
    corpus.mkdir()
    what = seed(corpus, run)
    print(f"{os.cpu_count()} CPUs; seeds: {what}; {a.seconds} s")
    r = subprocess.run(
        [
            str(target), f"-max_total_time={a.seconds}", "-rss_limit_mb=2048",
            "-print_final_stats=1", str(corpus),
        ],
        capture_output=True, text=True, cwd=run, timeout=a.seconds + 300,
    )  # fmt: skip
    out = r.stdout + r.stderr

    def stat(name: str) -> int:
        m = re.search(rf"stat::{name}: *(\d+)", out)
        return int(m.group(1)) if m else 0

    runs = stat("number_of_executed_units")
    secs = max(1, a.seconds)
    print(
        f"  executed: {runs} inputs in {secs:.1f} s ({runs // secs} per second), "
        f"{stat('new_units_added')} new unit(s) kept, peak {stat('peak_rss_mb')} MB"
    )
    found = sorted(p.name for p in run.iterdir() if re.match(r"(crash|leak|timeout|oom)-", p.name))
    reported = r.returncode != 0 or "ERROR: " in out
    n = len(found) or int(reported)
    print(f"  findings: {n} ({', '.join(found) or ('a sanitizer report' if reported else 'none')})")
    if n:
        print(f"  kept: {run}")
        print(out[-3000:])
        return 1
    shutil.rmtree(run, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
