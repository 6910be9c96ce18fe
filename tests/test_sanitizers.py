"""libspmimch under AddressSanitizer + UndefinedBehaviorSanitizer on a corpus of mutated collections
and indexes (the same mutations as the property tests). Built from native/ with
-DSPMI_SANITIZE=ON."""

from __future__ import annotations

import os
import random
import re
import struct
import subprocess
from pathlib import Path

from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.mct import build_toc_bytes
from spmi_dbg.sample.synth import synthetic_collection

from .support.mutations import mutate
from .support.real import reference

ROOT = Path(__file__).resolve().parent.parent


def _corpus(dest: Path, count: int) -> list[Path]:
    records = list(synthetic_collection(8, 11, with_compile_result=True, inlinees=2))
    base = b"".join(records)
    offsets, pos = [], 0
    for r in records:
        offsets.append(pos)
        pos += len(r)
    toc = build_toc_bytes([(o, i + 1, None) for i, o in enumerate(offsets)])
    rng = random.Random(1234)
    files = []
    for i in range(count):
        p = dest / f"case{i}.mch"
        p.write_bytes(mutate(base, rng, rng.randrange(1, 5)) if i % 10 else base)
        if i % 3 == 0:  # with an index, itself sometimes mutated
            (dest / f"case{i}.mch.mct").write_bytes(mutate(toc, rng, 1) if i % 2 else toc)
        files.append(p)
    return files


def test_asan_ubsan_on_mutated_corpus(mchcheck_asan: Path, tmp_path: Path) -> None:
    files = _corpus(tmp_path, 400)
    env = dict(
        os.environ,
        ASAN_OPTIONS="abort_on_error=0:exitcode=99:detect_leaks=1",
        UBSAN_OPTIONS="halt_on_error=1:exitcode=98:print_stacktrace=1",
        TMPDIR=str(tmp_path),
    )
    r = subprocess.run(
        [str(mchcheck_asan), *map(str, files)], capture_output=True, text=True, env=env, timeout=600
    )
    out = r.stdout + r.stderr
    assert "AddressSanitizer" not in out and "runtime error" not in out, out[-4000:]
    assert r.returncode == 0, out[-4000:]
    summaries = [ln for ln in r.stdout.splitlines() if " records=" in ln]
    assert len(summaries) == len(files)
    # the clean files (every tenth) scan fully with no problems
    assert all("records=8 problems=0 status=0" in s for s in summaries[::10])


def test_the_native_verifier_under_asan_leaks_nothing(mchcheck_asan: Path, tmp_path: Path) -> None:
    """Issue 30 item 4: spmi-mch-verify, which every `spmi-dbg mch verify` execs, built in the same
    sanitized build and run over the same corpus with leak checking on (LeakSanitizer exits 23)."""
    verify = next(p for p in mchcheck_asan.parent.parent.rglob("spmi-mch-verify") if p.is_file())
    env = dict(
        os.environ,
        ASAN_OPTIONS="abort_on_error=0:exitcode=99:detect_leaks=1",
        UBSAN_OPTIONS="halt_on_error=1:exitcode=98:print_stacktrace=1",
    )
    for f in _corpus(tmp_path, 60):
        r = subprocess.run(
            [str(verify), "--max-problems", "100", "--", str(f)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        out = r.stdout + r.stderr
        assert "Sanitizer" not in out and "runtime error" not in out, out[-4000:]
        assert r.returncode in (0, 1), (f, r.returncode, out[-2000:])


def test_the_parallel_packet_walk_under_tsan(mchcheck_tsan: Path, tmp_path: Path) -> None:
    """Issue 30 item 4: the two-thread packet walk (windows of 1 MiB and more on 2 CPUs or more,
    spmimch.c scan_parallel) under ThreadSanitizer, over the real api.mch and mutants of its first
    2.5 MB; mchcheck also checks that the whole scan agrees with one in small budgets (walked
    sequentially)."""
    if (os.cpu_count() or 1) < 2:
        raise AssertionError("the parallel walk needs 2 CPUs: this machine has one")
    ref = reference()
    data = ref.api.read_bytes()
    with Collection.open(ref.api) as col:
        end = next(o for o in col.record_offsets() if o >= 2_500_000)  # a record boundary
    base = data[:end]
    rng = random.Random(30)
    files = [ref.api]
    for i in range(12):
        p = tmp_path / f"big{i}.mch"
        p.write_bytes(mutate(base, rng, rng.randrange(1, 4)) if i else base)
        files.append(p)
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1:exitcode=97", TMPDIR=str(tmp_path))
    r = subprocess.run(
        [str(mchcheck_tsan), *map(str, files)], capture_output=True, text=True, env=env, timeout=900
    )
    out = r.stdout + r.stderr
    assert "ThreadSanitizer" not in out and "internal check failed" not in out, out[-4000:]
    assert r.returncode == 0, out[-4000:]
    assert len([ln for ln in r.stdout.splitlines() if " records=" in ln]) == len(files)


FUZZ_SECONDS = 30  # in CI: enough to keep a regression out; longer runs are for a bench-like script


def test_the_readers_under_libfuzzer(fuzz_spmimch: Path, tmp_path: Path) -> None:
    """Issue 30 item 4: a coverage-guided fuzz run of the readers (native/mch/fuzz_spmimch.c, ASan
    and UBSan too) from a seed corpus of real 3.1.23 records and their index, for FUZZ_SECONDS: no
    crash, no leak, no sanitizer report."""
    ref = reference()
    data = ref.api.read_bytes()
    with Collection.open(ref.api) as col:
        offsets = [*col.record_offsets(), len(data)]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for k, (first, last) in enumerate([(1, 3), (10, 12), (543, 543), (2000, 2002)]):
        lo, hi = offsets[first - 1], offsets[last]
        blob = data[lo:hi]
        (corpus / f"mch{k}").write_bytes(b"\0" + blob)
        toc = build_toc_bytes([(offsets[i] - lo, i + 1, None) for i in range(first - 1, last)])
        (corpus / f"mct{k}").write_bytes(b"\1" + struct.pack("<I", len(blob)) + toc)
    r = subprocess.run(
        [
            str(fuzz_spmimch),
            f"-max_total_time={FUZZ_SECONDS}",
            "-rss_limit_mb=2048",
            "-print_final_stats=1",
            str(corpus),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=FUZZ_SECONDS + 120,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "ERROR: " not in out and "runtime error" not in out, out[-4000:]
    assert re.search(r"stat::number_of_executed_units: *[1-9]", out), out[-2000:]
