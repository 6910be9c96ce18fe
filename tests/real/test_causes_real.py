"""Causes on the real superpmi 3.1.23 (issue 27 item 1; the CI twin is the tape
tests/fixtures/tapes/checked-on-release, replayed by tests/real/test_tapes.py): the Checked JIT on
the collection recorded with the Release JIT is said to be the setup, in the summary, report.json
and report.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support.pipeline import report, repro, repro_args, validate
from ..support.real import Real

# A real build (SPMI_DBG_REAL_SUPERPMI): the live half of the conformance suite.
pytestmark = pytest.mark.live


def test_the_checked_jit_on_a_release_collection_is_the_setup(real: Real, tmp_path: Path) -> None:
    r = repro(
        *repro_args(*real.command("-c", "2000-2010", mch=real.api_reljit), out="b", verify_runs=1),
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


def test_jit_stress_needs_data_the_collection_never_recorded(real: Real, tmp_path: Path) -> None:
    """`-jitoption JitStress=1` on api.mch: the crash at 4 needs the setting, GetGSCookie was never
    recorded, and without the setting the record replays clean."""
    r = repro(
        *repro_args(
            *real.command(
                "-jitoption", "JitStress=1", "-jitoption", "JitDisasmSummary=1", "-c", "1-10"
            ),
            out="s",
            verify_runs=1,
        ),
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "s")
    validate(rep)
    (cause,) = [c for c in rep["causes"] if c["kind"] == "option-needs-unrecorded-data"]
    assert "JitStress=1" in cause["evidence"][0] and "GetGSCookie" in cause["evidence"][1]
    assert "exit status 0" in cause["evidence"][2]
    assert "why: option-needs-unrecorded-data: JitStress=1 makes the JIT ask for data" in r.stdout


def test_a_jit_of_another_jit_ee_version_is_said(real: Real, tmp_path: Path) -> None:
    """Transcript 11's JIT: one bit flipped in the first of the 72 copies of the Checked JIT's
    JITEEVersionIdentifier (file offset 0x362150 in the reference build)."""
    data = bytearray(real.jit_checked.read_bytes())
    guid = bytes(data[0x362150:0x362160])
    assert data.count(guid) == 72, "not the reference build's JIT: the identifier is elsewhere"
    data[0x362150] ^= 0x01
    jit = tmp_path / "guid.so"
    jit.write_bytes(bytes(data))
    r = repro(
        *repro_args(str(real.superpmi), "-c", "1-10", str(jit), str(real.api), out="v"),
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 3, r.stdout + r.stderr
    rep = report(tmp_path / "v")
    (cause,) = rep["causes"]
    assert cause["kind"] == "jit-ee-version-mismatch"
    assert "Jit Compiler has wrong version identifier" in cause["evidence"][0]
    assert "why: jit-ee-version-mismatch: " in r.stdout


def test_a_storm_is_said_with_its_cause_before_the_20th_crash(real: Real, tmp_path: Path) -> None:
    """`triage -- superpmi libclrjit_checked.so api-reljit.mch`: nearly every method context
    crashes in one bucket; the triage says so, with the cause, while it runs."""
    import re

    from ..support.pipeline import triage

    r = triage(
        *repro_args(*real.command(mch=real.api_reljit), out="t", options=("--max-crashes", "40")),
        cwd=tmp_path,
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("triage: systematic: ")]
    m = re.match(
        r"triage: systematic: (\d+)% of the (\d+) method contexts replayed so far crash in one ",
        line,
    )
    assert m, line
    crashed_when_said = round(int(m.group(1)) * int(m.group(2)) / 100)
    assert crashed_when_said < 20, line
    assert line.endswith(
        "checked-jit-on-release-collection: the collection was recorded with a Release JIT: "
        "replay it with a Release JIT, or recollect it with a Checked JIT"
    )
    assert "why: checked-jit-on-release-collection: " in r.stdout


def test_the_storm_is_swept_and_each_crash_not_diagnosed_is_a_native_crash(
    real: Real, tmp_path: Path
) -> None:
    """Issue 27 item 2 (the CI twin: tests/test_triage_storm.py): the Checked JIT on api-reljit.mch,
    the first 800 method contexts: after each partition's storm the rest is replayed without a
    debugger but for a sample; every crash counted is one (a sample of the crashes not diagnosed is
    replayed alone by the test: each dies of SIGSEGV), and the triage diagnosed few of them."""
    import json
    import os
    import subprocess

    from ..support.pipeline import triage

    r = triage(
        *repro_args(
            *real.command("-c", "1-800", mch=real.api_reljit),
            out="t",
            verify_runs=1,
            options=("--max-crashes", "100000"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    validate(data, "triage-3.json")
    diagnosed = [c["method_context"] for c in data["crashes"]]
    swept = [int(m.rsplit(":", 1)[1]) for g in data["not_diagnosed"] for m in g["method_contexts"]]
    assert {g["signal"] for g in data["not_diagnosed"]} == {"SIGSEGV"}
    assert len(swept) > 4 * len(diagnosed), (len(swept), len(diagnosed))
    assert not set(swept) & set(diagnosed)
    (cov,) = data["coverage"]
    assert cov["crashed"] == len(swept) + len(diagnosed) and cov["not_reached"] == 0
    assert cov["replayed_clean"] + cov["crashed"] + cov["failed_compile"] == 800
    env = dict(os.environ, LD_LIBRARY_PATH=str(real.bin))
    for n in swept[:: max(1, len(swept) // 20)]:
        p = subprocess.run(
            [str(real.superpmi), "-c", str(n), str(real.jit_checked), str(real.api_reljit)],
            capture_output=True,
            env=env,
            timeout=60,
        )
        assert p.returncode == -11, (n, p.returncode)
    assert "why: checked-jit-on-release-collection: " in r.stdout
