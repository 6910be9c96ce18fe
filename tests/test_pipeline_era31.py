"""The CI twins of the live pipeline tests (tests/real/test_pipeline_real.py and the pipeline tests
of tests/real/test_failures_real.py), on the bundled core behaving as 3.1 does (SPMI_REPLAY_ERA=3.1,
tests/test_era31.py): mc->index is the count loaded, a null map kills -O2 and is MISSING at -O0,
stdout is block-buffered, an assert's line has no number, a -p parent says nothing of a dead
worker. The tool is given nothing of the era: it finds out from what the process does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.mch.collection import Collection

from .support.common import Collections
from .support.natives import BASE, REPLAY, REPLAY_O0
from .support.pipeline import (
    assert_null_map,
    report,
    repro,
    repro_args,
    triage,
    validate,
    winner_range,
)

NULL_MAPS = [700, 720, 1000, 1150]
# The era is the core's environment variable: the repro's native runs and repro.sh have a clean
# environment (env -i), so it is named as any variable a replay needs (--env).
ERA = ("--env", "SPMI_REPLAY_ERA")
ASSERTS = [503]


@pytest.fixture(autouse=True)
def era31(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPMI_REPLAY_ERA", "3.1")


@pytest.fixture(scope="module")
def col(cols: Collections) -> Path:
    """1,200 method contexts: four records without the GetMethodSig map the JIT asks for (a
    Release-JIT collection replayed by a Checked JIT, 09) and an assert under JitStress=2."""
    return cols.get(
        "pipeline-era31",
        1200,
        inject=[*(("null-map", n) for n in NULL_MAPS), ("stress-assert", ASSERTS[0])],
    )


def crashes_alone(program: str, col: Path, numbers: list[int]) -> list[int]:
    out = []
    for n in numbers:
        r = subprocess.run([program, "-c", str(n), BASE, str(col)], capture_output=True, timeout=60)
        if r.returncode < 0:
            out.append(n)
    return out


@pytest.mark.parametrize("debugger", ["gdb", "lldb"])
def test_null_map_crash_from_a_range_not_starting_at_1(
    col: Path, tmp_path: Path, debugger: str
) -> None:
    """Twin of test_pipeline_real's: -c 700-1200 dies at its first record; 3.1's mc->index there is
    1 (the count loaded) and is not believed: the number comes from the compile's mcIndex, checked
    against the -c list and the record's IL size."""
    r = repro(
        *repro_args(
            REPLAY, "-c", "700-1200", BASE, str(col), out="b", workers=2, verify_runs=2, options=ERA
        ),
        cwd=tmp_path,
        debugger=debugger,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    validate(rep)
    loc = rep["locate"]
    _, first = winner_range(rep)
    # the winning partition dies at its first null map: 700, or 1000 in the second (951-1200)
    n = loc["method_context"]
    assert n in NULL_MAPS and n >= first, loc
    assert not loc["method_context_source"].startswith("mc->index"), loc
    d = rep["diagnosis"]
    assert d["method_context"]["number"] == n
    assert_null_map(d, "MethodContext", "GetMethodSig")
    with Collection.open(col) as c:
        assert (tmp_path / "b" / "repro.mch").read_bytes() == c.record(n)
    assert "reproduced death by SIGSEGV (100%, accepted)" in r.stdout, r.stdout


def triage_json(tmp_path: Path, program: str, col: Path) -> dict[str, Any]:
    r = triage(
        *repro_args(
            program,
            BASE,
            str(col),
            out="t",
            workers=2,
            options=(*ERA, "--partition-methods", "300"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode in (0, 2), r.stdout + r.stderr
    data: dict[str, Any] = json.loads((tmp_path / "t" / "triage.json").read_text())
    validate(data, "triage-3.json")
    return data


def test_triage_crashes_are_those_that_crash_alone(col: Path, tmp_path: Path) -> None:
    """Twin of the JitStress triage: every null-map record is a crash, each with its number from
    the stack (mc->index rejected), each crashing alone; every method context accounted for once."""
    data = triage_json(tmp_path, REPLAY, col)
    crashes = sorted(c["method_context"] for c in data["crashes"])
    assert crashes == NULL_MAPS
    assert crashes_alone(REPLAY, col, crashes) == crashes
    assert all(not c["method_context_source"].startswith("mc->index") for c in data["crashes"])
    (cov,) = data["coverage"]
    assert cov["method_contexts"] == 1200 and cov["crashed"] == 4 and cov["not_reached"] == 0
    assert (
        cov["replayed_clean"] + cov["crashed"] + cov["failed_compile"] + cov["not_reached"] == 1200
    )
    assert all("GetMethodSig" in b["signature"] for b in data["buckets"])


def test_triage_on_the_o0_core_reports_missing(col: Path, tmp_path: Path) -> None:
    """Twin of the -O0 triage: the same source at -O0 keeps GetIndex's check: no crash, MISSING
    'There is no such LWM' for each null-map record."""
    data = triage_json(tmp_path, REPLAY_O0, col)
    assert data["crashes"] == []
    (cov,) = data["coverage"]
    assert cov["crashed"] == 0 and cov["not_reached"] == 0 and cov["method_contexts"] == 1200
    missing = sorted(
        {
            int(str(m).rsplit(":", 1)[-1])
            for f in data["failure_buckets"]
            if f["kind"] == "missing" and "no such LWM" in f["title"]
            for m in f["method_contexts"]
        }
    )
    assert missing == NULL_MAPS


def test_repro_of_a_31_assert_keeps_only_the_setting_it_needs(col: Path, tmp_path: Path) -> None:
    """Twin of test_failures_real's: the assert's ISSUE line has no number; it is paired with its
    failed compile by IL size; the options it does not need are dropped."""
    r = repro(
        *repro_args(
            REPLAY,
            "-jitoption",
            "JitStress=2",
            "-jitoption",
            "JitStressModeNames=STRESS_FOLD",
            "-jitoption",
            "JitDisasmSummary=1",
            "-c",
            "400-600",
            BASE,
            str(col),
            out="a",
            options=(*ERA, "--failure", "assert"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "a")
    validate(rep)
    f = rep["target"]["failure"]
    assert (f["kind"], f["method_context"]) == ("assert", ASSERTS[0])
    assert "#" not in f["line"].split(" - ")[0]
    assert (
        "paired with the ISSUE: <ASSERT> line by its IL size"
        in rep["locate"]["method_context_source"]
    )
    assert set(rep["target"]["options"]["needed"]) == {
        "JitStress=2",
        "JitStressModeNames=STRESS_FOLD",
    }
    # the era does not matter to this assert: the variable is dropped from the repro, and named
    assert rep["target"]["options"]["dropped"] == [
        "JitDisasmSummary=1",
        "SPMI_REPLAY_ERA=3.1 from the environment",
    ]
    with Collection.open(col) as c:
        assert (tmp_path / "a" / "repro.mch").read_bytes() == c.record(ASSERTS[0])


def test_a_crash_p_hid_is_found(col: Path, tmp_path: Path) -> None:
    """Twin of test_failures_real's: the -p parent exits 1 with a summary short of the collection
    and no word of a crash; repro drops -p and finds it."""
    parent = subprocess.run([REPLAY, "-p", "2", BASE, str(col)], capture_output=True, text=True)
    assert parent.returncode == 1 and "SIGSEGV" not in parent.stdout + parent.stderr
    r = repro(*repro_args(REPLAY, "-p", "2", BASE, str(col), out="p", options=ERA), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "p")
    assert rep["outcome"] == "verified" and rep["diagnosis"]["signal"]["name"] == "SIGSEGV"
    assert rep["diagnosis"]["null_map"]["member"] == "GetMethodSig"
    assert any(n.startswith("dropped `-p 2`") for n in rep["command"]["notes"])
    assert "dotnet/runtime#56506" in [b["id"] for b in rep["known_bugs"]]


def test_from_log_of_a_31_p_run(col: Path, tmp_path: Path) -> None:
    """Twin of test_failures_real's: a 3.1 superpmi.py log (`Starting SuperPMI replay.`, `Invoking:`
    and superpmi's output) of a -p run that lost a worker and said nothing of it."""
    argv = [REPLAY, "-p", "2", BASE, str(col)]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1
    loaded = int(run.stdout.split("\nLoaded ")[1].split()[0])
    assert loaded < 1200
    log = tmp_path / "superpmi.log"
    log.write_text(
        "\n".join(
            [
                "Starting SuperPMI replay.",
                "",
                f"Temp Location: {tmp_path / 'gone'}",
                "",
                f"Invoking: {' '.join(argv)}",
                *run.stdout.splitlines(),
                *run.stderr.splitlines(),
            ]
        )
        + "\n"
    )
    r = repro(*ERA, "--from-log", str(log), "--out", "b", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert rep["outcome"] == "verified" and rep["diagnosis"]["null_map"]["member"] == "GetMethodSig"
    hid = [n for n in rep["command"]["notes"] if n.startswith("-p hid a crash: ")]
    assert hid and f"counts {loaded} of 1,200 method contexts" in hid[0], rep["command"]["notes"]
