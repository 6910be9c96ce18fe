"""Issue 28 item 6: report.sarif, triage.sarif and recheck.sarif are SARIF 2.1.0 (validated against
the OASIS schema shipped in tests/schemas/): one rule per bucket, one result per failure, located at
an assert's JIT source line or the faulting frame's source, the repro command in the message."""

from __future__ import annotations

from pathlib import Path

import pytest

from spmi_dbg.report.sarif import source_uri

from .support.common import Collections
from .support.natives import BASE, REPLAY
from .support.pipeline import report, repro, triage, validate_sarif


def test_a_crash_repro_s_sarif_names_its_bucket_and_faulting_source(
    cols: Collections, tmp_path: Path
) -> None:
    r = repro(
        "--verify-runs", "1", "--out", "c", "--", REPLAY, "-bug", "56506", BASE,
        str(cols.mixed()), cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    sarif = validate_sarif(tmp_path / "c" / "report.sarif")
    rep = report(tmp_path / "c")
    (run,) = sarif["runs"]
    (rule,) = run["tool"]["driver"]["rules"]
    (result,) = run["results"]
    assert rule["id"] == result["ruleId"] == rep["verification"]["expected"]["bucket"]
    assert f"Repro: `{rep['repro_command']}`" in result["message"]["text"]
    (loc,) = result["locations"]
    frame = next(f for f in rep["diagnosis"]["frames"] if f.get("file") and f.get("line"))
    physical = loc["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == Path(frame["file"]).resolve().as_uri()
    assert physical["region"]["startLine"] == frame["line"]


def test_an_assert_repro_s_sarif_is_at_the_assert_s_source_line(
    cols: Collections, tmp_path: Path
) -> None:
    r = repro(
        "--failure", "assert", "--verify-runs", "1", "--out", "a", "--", REPLAY, BASE,
        str(cols.mixed()), cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    sarif = validate_sarif(tmp_path / "a" / "report.sarif")
    failure = report(tmp_path / "a")["target"]["failure"]
    (result,) = sarif["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"].endswith(Path(failure["file"]).name)
    assert physical["region"]["startLine"] == failure["source_line"]


def test_a_triage_s_sarif_has_a_rule_per_bucket_and_a_result_per_member(
    cols: Collections, tmp_path: Path
) -> None:
    import json

    r = triage(
        "--verify-runs", "1", "--out", "t", "--", REPLAY, "-bug", "56506", BASE,
        str(cols.mixed()), cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stdout + r.stderr
    sarif = validate_sarif(tmp_path / "t" / "triage.sarif")
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    buckets = [*data["buckets"], *data["failure_buckets"]]
    (run,) = sarif["runs"]
    assert [x["id"] for x in run["tool"]["driver"]["rules"]] == [b["bucket"] for b in buckets]
    members = [(b["bucket"], m) for b in buckets for m in b["method_contexts"]]
    got = [(x["ruleId"], x["properties"]["method_context"]) for x in run["results"]]
    assert got == members


@pytest.mark.unit
def test_official_build_paths_are_repository_relative() -> None:
    assert source_uri("/_/src/src/jit/gentree.cpp") == ("src/jit/gentree.cpp", True)
    assert source_uri("/_/src/coreclr/jit/morph.cpp") == ("src/coreclr/jit/morph.cpp", True)
    assert source_uri(
        "/_/src/src/ToolBox/superpmi/superpmi/../superpmi-shared/lightweightmap.h"
    ) == ("src/ToolBox/superpmi/superpmi-shared/lightweightmap.h", True)
    assert source_uri("/home/me/runtime/src/coreclr/jit/x.cpp") == (
        "file:///home/me/runtime/src/coreclr/jit/x.cpp",
        False,
    )
