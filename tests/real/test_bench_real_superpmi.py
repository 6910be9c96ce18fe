"""bench/real_superpmi.py --quick on the real superpmi: every phase runs, prints its ratio lines,
and finds what the native runs found (no timing is asserted). Its figures belong to the README, not
to this test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..support.common import ROOT
from ..support.real import ENV, Real

# A real build (SPMI_DBG_REAL_SUPERPMI): the live half of the conformance suite.
pytestmark = pytest.mark.live

RATIOS = [
    r"^repro time / native replay time to the crash \(shallow, -c 2000-2010 on api-reljit\.mch\): "
    r"[\d.]+  \(no goal",
    r"^repro time / native replay time to the crash \(deep\): [\d.]+  \(goal <= 0\.75: (met|NOT "
    r"met)\)$",
    r"^efficiency native loop / triage: [\d.]+  ",
    r"^repro time / native replay time to the crash \(user scale, \d+ method contexts\): [\d.]+  "
    r"\(goal <= 0\.6: (met|NOT met)\)$",
    r"^  cold \(empty gdb index cache\): spmi-dbg repro [\d.]+ s wall, ",
    r"^cost per extra crash: -?[\d.]+ s  \(goal <= 0\.04: (met|NOT met); ",
    r"^mch verify / mcs -integ: [\d.]+  \(goal <= 0\.33: (met|NOT met)\)$",
    r"^mch verify / cat: [\d.]+$",
]


def test_quick_mode_measures_every_phase(real: Real, tmp_path: Path) -> None:
    cache, cwd = tmp_path / "cache", tmp_path / "cwd"
    cwd.mkdir()
    env = {**os.environ, ENV: str(real.root)}
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "real_superpmi.py"), "--quick", "--dir", str(cache)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=280,
    )
    out = r.stdout
    assert r.returncode == 0, out + r.stderr
    for pattern in RATIOS:
        assert re.search(pattern, out, re.M), f"no line matching {pattern!r} in:\n{out}"
    # api.mch 1-60 with JitStress=1 dies natively at 4, 32 and 56 (superpmi -v d, line-buffered)
    assert "3 native crash(es) (first 4, last 56)" in out
    assert "crashes: triage 3, native loop 3; the crash-free triage 0" in out
    # shallow: its partitions race (the first crash in time wins), so only the crash kind is certain
    assert "outcome verified" in out and "MethodContext::repGetMethodSig" in out
    assert "outcome verified, method context 56 (" in out and "MethodContext::repGetGSCookie" in out
    assert "spmi-dbg mch verify FAILED" not in out
    # it writes only under --dir, in a temporary directory it removes
    assert os.listdir(cwd) == []
    assert os.listdir(cache) == []
