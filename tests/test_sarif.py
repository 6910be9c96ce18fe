"""report.sarif, triage.sarif and recheck.sarif as a CI takes them (issue 28 item 6, issue 38
item 1): SARIF 2.1.0 against the OASIS schema (tests/schemas/), with what code scanning requires
(tests/support/sarif_check.py) and through sarif-tools' converters. A result is a failure found: a
run that found nothing has none; every result has a location and a fingerprint from its bucket,
the same for the same bug whatever the machine, collection or run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.failures.output import bucket_name, same_key, source_tail
from spmi_dbg.report.sarif import FINGERPRINT, source_uri

from .support.common import Collections
from .support.natives import BASE, REPLAY
from .support.pipeline import report, repro, repro_args, triage, validate_sarif
from .support.sarif_check import converted


def _only(sarif: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    (run,) = sarif["runs"]
    return run, run["results"]


def test_a_crash_repro_s_sarif_names_its_bucket_and_faulting_source(
    cols: Collections, tmp_path: Path
) -> None:
    r = repro(
        *repro_args(REPLAY, "-bug", "56506", BASE, str(cols.mixed()), out="c", verify_runs=1),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    run, (result,) = _only(validate_sarif(tmp_path / "c" / "report.sarif"))
    rep = report(tmp_path / "c")
    (rule,) = run["tool"]["driver"]["rules"]
    bucket = rep["verification"]["expected"]["bucket"]
    assert rule["id"] == result["ruleId"] == bucket
    assert result["partialFingerprints"] == {FINGERPRINT: bucket}
    assert (result["kind"], result["level"]) == ("fail", "error")
    held = f"{Path(rep['command']['input']).name}:{rep['locate']['method_context']}"
    assert f"Repro (repro.mch holds {held}): `{rep['repro_command']}`" in result["message"]["text"]
    (loc,) = result["locations"]
    frame = next(f for f in rep["diagnosis"]["frames"] if f.get("file") and f.get("line"))
    physical = loc["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == Path(frame["file"]).resolve().as_uri()
    assert physical["region"]["startLine"] == frame["line"]
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]


def test_an_assert_repro_s_sarif_is_at_the_assert_s_source_line(
    cols: Collections, tmp_path: Path
) -> None:
    r = repro(
        *repro_args(
            REPLAY, BASE, str(cols.mixed()), out="a", verify_runs=1, options=("--failure", "assert")
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    _, (result,) = _only(validate_sarif(tmp_path / "a" / "report.sarif"))
    failure = report(tmp_path / "a")["target"]["failure"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"].endswith(Path(failure["file"]).name)
    assert physical["region"]["startLine"] == failure["source_line"]
    # the rule is the failure's bucket, as triage names it
    assert result["ruleId"] == bucket_name("assert", failure["key"])


def test_a_run_that_found_nothing_has_no_result_and_an_input_error_is_a_notification(
    cols: Collections, tmp_path: Path
) -> None:
    """No crash: an empty `results`, the invocation successful. An input the replay refuses: no
    result either, the invocation unsuccessful with the error as its notification. A CI that
    uploads either fails on nothing."""
    clean = repro(*repro_args(REPLAY, BASE, str(cols.clean()), out="n"), cwd=tmp_path)
    assert clean.returncode == 2, clean.stdout + clean.stderr
    run, results = _only(validate_sarif(tmp_path / "n" / "report.sarif"))
    assert results == [] and run["tool"]["driver"]["rules"] == []
    (inv,) = run["invocations"]
    assert inv["executionSuccessful"] and inv["exitCode"] == 2
    assert [n["level"] for n in inv["toolExecutionNotifications"]] == ["note"]
    bad = tmp_path / "libbad.so"
    bad.write_text("not a shared library\n")
    refused = repro(*repro_args(REPLAY, str(bad), str(cols.clean()), out="e"), cwd=tmp_path)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    run, results = _only(validate_sarif(tmp_path / "e" / "report.sarif"))
    (inv,) = run["invocations"]
    assert results == [] and not inv["executionSuccessful"] and inv["exitCode"] == 3
    (note,) = inv["toolExecutionNotifications"]
    assert note["level"] == "error" and "JitFailedToInit" in note["message"]["text"]
    assert (
        converted(
            [tmp_path / "n" / "report.sarif", tmp_path / "e" / "report.sarif"], tmp_path / "cc"
        )
        == []
    )


def _triage_sarif(mch: Path, cwd: Path, out: str) -> tuple[dict[str, Any], dict[str, Any]]:
    r = triage(
        *repro_args(
            REPLAY,
            "-bug",
            "56506",
            BASE,
            str(mch),
            out=out,
            verify_runs=1,
            options=("--failure", "crash,assert"),
        ),
        cwd=cwd,
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    data = json.loads((cwd / out / "triage.json").read_text())
    return validate_sarif(cwd / out / "triage.sarif"), data


def test_a_triage_s_sarif_has_a_rule_per_bucket_and_a_result_per_member(
    cols: Collections, tmp_path: Path
) -> None:
    """A result per member; only the member its bundle's repro.mch holds says "repro.mch holds",
    the others name that member; levels by kind; converters see exactly the failing results."""
    sarif, data = _triage_sarif(cols.mixed(), tmp_path, "t")
    buckets = [*data["buckets"], *data["failure_buckets"]]
    run, results = _only(sarif)
    assert [x["id"] for x in run["tool"]["driver"]["rules"]] == [b["bucket"] for b in buckets]
    members = [(b["bucket"], m) for b in buckets for m in b["method_contexts"]]
    got = [(x["ruleId"], x["properties"]["method_context"]) for x in results]
    assert got == members
    levels = {"crash": "error", "assert": "error", "error": "warning", "missing": "note"}
    for b in buckets:
        mine = [x for x in results if x["ruleId"] == b["bucket"]]
        assert {x["level"] for x in mine} == {levels[b.get("kind", "crash")]}
        assert all(x["partialFingerprints"] == {FINGERPRINT: b["bucket"]} for x in mine)
        rep = b["repro"]
        if not rep:
            continue
        held = b["smallest"]["member"]
        for x in mine:
            text = x["message"]["text"]
            m = x["properties"]["method_context"]
            assert ("repro.mch holds " + m in text) == (m == held), text
            if m != held:
                assert f"Same bucket as {held}, whose repro is in {rep['bundle']}" in text
    converted([tmp_path / "t" / "triage.sarif"], tmp_path / "cc")


def test_fingerprints_are_the_same_for_the_same_bugs_elsewhere(
    cols: Collections, tmp_path: Path
) -> None:
    """The same collection at another path, triaged from another directory: the same rules and
    the same fingerprints (what code scanning matches alerts by)."""
    first, _ = _triage_sarif(cols.mixed(), tmp_path, "one")
    elsewhere = tmp_path / "other machine"
    elsewhere.mkdir()
    for suffix in ("", ".mct"):
        shutil.copyfile(f"{cols.mixed()}{suffix}", elsewhere / f"copy.mch{suffix}")
    second, _ = _triage_sarif(elsewhere / "copy.mch", elsewhere, "two")

    def prints(sarif: dict[str, Any]) -> list[tuple[str, str]]:
        return sorted(
            {(x["ruleId"], x["partialFingerprints"][FINGERPRINT]) for x in _only(sarif)[1]}
        )

    assert prints(first) == prints(second) and prints(first)


def test_a_failure_assert_triage_counts_the_same_everywhere(
    cols: Collections, tmp_path: Path
) -> None:
    """Issue 38 item 2: asserts found are counted in the headline, triage.md's title,
    triage.json's `found` and SARIF's results alike (never "0 bucket(s)" beside the asserts)."""
    r = triage(
        *repro_args(
            REPLAY, BASE, str(cols.mixed()), out="t", verify_runs=1, options=("--failure", "assert")
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    found = data["found"]
    asserts = [b for b in data["failure_buckets"] if b["kind"] == "assert"]
    assert (
        found["assert"]
        == {
            "buckets": len(asserts),
            "count": sum(b["count"] for b in asserts),
        }
        and found["assert"]["count"] >= 1
    )
    said = (
        f"{found['crash']['buckets']} crash bucket(s), {found['crash']['count']} crash(es); "
        f"{found['assert']['buckets']} assert bucket(s), {found['assert']['count']} assert(s)"
    )
    (result_line,) = [x for x in r.stdout.splitlines() if x.startswith("result: ")]
    assert result_line.startswith(f"result: {said}"), result_line
    title = (tmp_path / "t" / "triage.md").read_text().splitlines()[0]
    assert title.startswith(f"# spmi-dbg triage: {said}"), title
    results = _only(validate_sarif(tmp_path / "t" / "triage.sarif"))[1]
    by_rule = {b["bucket"]: b["kind"] for b in data["failure_buckets"]}
    sarif_asserts = [x for x in results if by_rule.get(x["ruleId"]) == "assert"]
    assert len(sarif_asserts) == found["assert"]["count"]
    assert len({x["ruleId"] for x in sarif_asserts}) == found["assert"]["buckets"]


@pytest.mark.unit
def test_an_assert_s_bucket_is_the_same_on_every_checkout() -> None:
    """The key of an assert names its file by its repository tail: a CI's checkout path, an
    official build's /_/ and a developer's home give one bucket; a key written before (the full
    path) is still the same failure."""
    for path in (
        "/__w/1/s/src/coreclr/jit/importer.cpp",
        "/home/me/runtime/src/coreclr/jit/importer.cpp",
        "/_/src/src/jit/importer.cpp",
    ):
        assert source_tail(path) == "jit/importer.cpp"
    assert source_tail("/x/superpmi/superpmi-shared/methodcontext.cpp") == (
        "superpmi/superpmi-shared/methodcontext.cpp"
    )
    assert source_tail("gentree.cpp") == "gentree.cpp"
    old = "assert: x > 0 (/home/me/runtime/src/coreclr/jit/importer.cpp:203)"
    new = "assert: x > 0 (jit/importer.cpp:203)"
    assert same_key(old, new) and not same_key(old, new.replace("203", "204"))
    assert bucket_name("assert", old) == bucket_name("assert", new)


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
