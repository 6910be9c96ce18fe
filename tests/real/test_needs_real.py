"""What a failure needs, on the real 3.1.23 Checked JIT (issue 27 item 3; the CI twin is
tests/test_needs.py): the outcomes observed by hand, switch by switch, for the two asserts of
api.mch, found unattended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..support.pipeline import report, repro, repro_args, validate
from ..support.real import Real

# A real build (SPMI_DBG_REAL_SUPERPMI): the live half of the conformance suite.
pytestmark = pytest.mark.live

OTHERS = ("JitDoAssertionProp", "JitDoCopyProp", "JitDoEarlyProp", "JitDoRangeAnalysis")


def needs(real: Real, tmp_path: Path, setting: str, mc: int) -> dict[str, str]:
    r = repro(
        *repro_args(
            *real.command("-jitoption", setting, "-c", str(mc)),
            out="a",
            options=("--failure", "assert"),
        ),
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep: dict[str, Any] = report(tmp_path / "a")
    validate(rep)
    # the title of an assert's issue is the JIT's line, never a culprit
    assert rep["title"].startswith("Assertion failed '") and "Jit" not in rep["title"]
    assert "needs: gone with " in r.stdout
    return {t["option"]: t["outcome"] for t in rep["needs"]["needs"]}


def test_the_value_numbering_assert_needs_ssa_and_value_numbering(
    real: Real, tmp_path: Path
) -> None:
    got = needs(real, tmp_path, "JitVNMapSelLimit=1", 4)
    assert got["JitDoValueNumber"] == got["JitDoSsa"] == "gone with"
    for still in ("JitDoLoopHoisting", "JitNoCSE", "JitNoInline", *OTHERS):
        assert got[still] == "still fails with", (still, got)
    assert got["JITMinOpts"] == "cannot tell (missing data)"


def test_the_stress_regs_assert_needs_ssa_vn_cse_and_inlining(real: Real, tmp_path: Path) -> None:
    got = needs(real, tmp_path, "JitStressRegs=400", 543)
    for gone in ("JitDoSsa", "JitDoValueNumber", "JitNoCSE", "JitNoInline"):
        assert got[gone] == "gone with", (gone, got)
    for still in ("JitDoLoopHoisting", *OTHERS):
        assert got[still] == "still fails with", (still, got)
    assert got["JITMinOpts"] == "cannot tell (missing data)"
