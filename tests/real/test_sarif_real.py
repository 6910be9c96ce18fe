"""SARIF a CI can upload, on the real 3.1.23 build (issue 38, live): a triage that finds no crash
has no `error` result, and two triages of the same command give the same rules and fingerprints
(code scanning keeps each alert the same alert)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..support.pipeline import repro_args, triage, validate_sarif
from ..support.real import Real
from ..support.sarif_check import converted

pytestmark = pytest.mark.live

JIT_STRESS = ("-jitoption", "JitStress=1")


def _sarif(real: Real, cwd: Path, out: str, *options: str) -> dict[str, Any]:
    r = triage(
        *repro_args(
            *real.command(*options),
            out=out,
            workers=2,
            verify_runs=1,
            options=("--failure", "crash"),
        ),
        cwd=cwd,
    )
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    return validate_sarif(cwd / out / "triage.sarif")


def test_a_triage_without_a_crash_has_no_error_result(real: Real, tmp_path: Path) -> None:
    sarif = _sarif(real, tmp_path, "t", "-c", "1-400")
    (run,) = sarif["runs"]
    assert run["invocations"][0]["executionSuccessful"]
    assert not [x for x in run["results"] if x["level"] == "error"], run["results"][:3]
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    assert data["found"]["crash"]["count"] == 0
    converted([tmp_path / "t" / "triage.sarif"], tmp_path / "cc")


def test_two_triages_of_one_command_give_the_same_fingerprints(real: Real, tmp_path: Path) -> None:
    def prints(sarif: dict[str, Any]) -> set[tuple[str, str]]:
        return {
            (x["ruleId"], x["partialFingerprints"]["spmiDbgBucket/v1"])
            for x in sarif["runs"][0]["results"]
        }

    first = _sarif(real, tmp_path, "one", *JIT_STRESS, "-c", "1-1200")
    (tmp_path / "again").mkdir()
    second = _sarif(real, tmp_path / "again", "two", *JIT_STRESS, "-c", "1-1200")
    assert prints(first) == prints(second)
    assert any(x["level"] == "error" for x in first["runs"][0]["results"])
