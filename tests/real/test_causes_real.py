"""Causes on the real superpmi 3.1.23 (issue 27 item 1; the CI twin is the tape
tests/fixtures/tapes/checked-on-release, replayed by tests/real/test_tapes.py): the Checked JIT on
the collection recorded with the Release JIT is said to be the setup, in the summary, report.json
and report.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support.pipeline import report, repro, validate
from ..support.real import Real

# A real build (SPMI_DBG_REAL_SUPERPMI): the live half of the conformance suite.
pytestmark = pytest.mark.live


def test_the_checked_jit_on_a_release_collection_is_the_setup(real: Real, tmp_path: Path) -> None:
    r = repro(
        "--verify-runs",
        "1",
        "--out",
        "b",
        "--",
        str(real.superpmi),
        "-c",
        "2000-2010",
        str(real.jit_checked),
        str(real.api_reljit),
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    validate(rep)
    kinds = [c["kind"] for c in rep["diagnosis"]["causes"]]
    assert kinds == ["checked-jit-on-release-collection"]
    assert (
        "why: checked-jit-on-release-collection: the collection was recorded with a Release "
        in (r.stdout)
    )
    md = (tmp_path / "b" / "report.md").read_text()
    assert "- why: `checked-jit-on-release-collection`: " in md and " (evidence: " in md
    assert "Why: the collection was recorded with a Release JIT" in rep["issue"]["description"]
