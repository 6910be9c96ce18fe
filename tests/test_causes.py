"""Causes (spmi_dbg.analysis.causes): a cause is stated with all of its evidence and never without.
The real stop of a Checked JIT on a Release collection is a tape (tests/real/test_tapes.py); here
the seed's asm-diffs case on the bundled core in a real gdb, and each piece of evidence of the
Checked-on-Release case taken away in turn."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from spmi_dbg.analysis.causes import causes_of
from spmi_dbg.analysis.facts import Diagnosis, FrameInfo, Handling, HandlingKind, MethodContextFact
from spmi_dbg.analysis.nullmap import NullMap

from .support.common import Collections, seed_collection
from .support.natives import BASE, REPLAY, SEED_COMMAND
from .test_debug_diagnosis import gdb_session


def diagnosed(argv: list[str]) -> dict[str, object]:
    out = gdb_session(argv, ["spmi diagnose --json"])
    line = next(x for x in out["spmi diagnose --json"].splitlines() if x.startswith("{"))
    data: dict[str, object] = json.loads(line)
    return data


def test_the_seed_is_superpmis_near_differ_not_the_jits(cols: Collections) -> None:
    d = diagnosed([*SEED_COMMAND, str(seed_collection(cols))])
    causes = d["causes"]
    assert isinstance(causes, list) and [c["kind"] for c in causes] == [
        "asm-diffs-without-compile-method"
    ]
    assert "NearDiffer::compare" in causes[0]["evidence"][1]
    assert "dotnet/runtime#91783" in causes[0]["advice"]


def test_a_null_map_the_jit_asks_for_in_its_importer_has_no_cause(
    cols: Collections, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 3.1 era's null map on a collection whose names are recorded, asked by the importer: not a
    Checked JIT on a Release collection (no evidence for it), so no cause."""
    monkeypatch.setenv("SPMI_REPLAY_ERA", "3.1")
    mch = cols.get("causes-null-map", 30, inject=[("null-map", 12)])
    d = diagnosed([REPLAY, "-c", "12", BASE, str(mch)])
    assert d["null_map"] and d["causes"] == []


def _stop(name_note: str | None, query: str, member: str = "GetMethodSig") -> Diagnosis:
    frames = [
        "LightWeightMap<DLDL, Agnostic_CORINFO_SIG_INFO>::Get",
        "MethodContext::repGetMethodSig",
        "Compiler::eeGetMethodSig",
        query,
        "Compiler::compCompile",
        "JitInstance::CompileMethod",
    ]
    return Diagnosis(
        schema=1,
        debugger="recorded",
        arch="x86_64",
        signal=None,
        handling=Handling(HandlingKind.FATAL, "", ""),
        faulting_module=None,
        method_context=MethodContextFact(2000, "mcIndex", name_note=name_note),
        null_map=NullMap("MethodContext", member, "LightWeightMap<...>", 76, member, "", "", ""),
        instruction=None,
        assertion=None,
        frames=[FrameInfo(i, f, None, None, None, False) for i, f in enumerate(frames)],
    )


NOTE = "record 2000: method name not recorded: superpmi's placeholder"


@pytest.mark.unit
def test_every_piece_of_evidence_is_needed() -> None:
    full = _stop(NOTE, "Compiler::eeGetMethodFullName")
    (cause,) = causes_of(full)
    assert cause.kind == "checked-jit-on-release-collection" and len(cause.evidence) == 3
    assert causes_of(_stop(None, "Compiler::eeGetMethodFullName")) == []  # the name is recorded
    assert causes_of(_stop(NOTE, "Compiler::impImportCall")) == []  # not a DEBUG name query
    assert causes_of(dataclasses.replace(full, null_map=None)) == []  # no null map
    assert causes_of(dataclasses.replace(full, method_context=None)) == []


@pytest.mark.unit
def test_a_jit_of_another_jit_ee_version_from_what_superpmi_printed() -> None:
    """Transcript 11 (the real 3.1.23 superpmi refusing a JIT whose version identifier differs):
    its stderr and exit status are the evidence; 11b (a JIT that is not there, also 254) is not."""
    from spmi_dbg.repro.setup_causes import version_mismatch

    from .support.real import reference

    ref = reference()
    wrong = ref.transcript("11-wrong-version-identifier")
    cause = version_mismatch(wrong.rc, wrong.stderr.splitlines(), ["guid.so"])
    assert cause is not None and cause.kind == "jit-ee-version-mismatch"
    assert cause.evidence[0] == "superpmi said: ERROR: Jit Compiler has wrong version identifier"
    missing = ref.transcript("11b-jit-file-missing")
    assert (
        missing.rc == 254 and version_mismatch(missing.rc, missing.stderr.splitlines(), []) is None
    )


@pytest.mark.unit
def test_an_option_that_needs_unrecorded_data_needs_all_its_evidence() -> None:
    from spmi_dbg.repro.jitoptions import JitSetting, OptionMinimization
    from spmi_dbg.repro.native import NativeRun
    from spmi_dbg.repro.setup_causes import needs_unrecorded_data

    stress = JitSetting("-jitoption", False, "JitStress", "1")
    m = OptionMinimization([stress], [stress])
    d = _stop(None, "Compiler::compCompile", member="GetGSCookie")
    clean = NativeRun(["superpmi"], 0, None, False, 0.1)
    cause = needs_unrecorded_data(d, m, clean)
    assert cause is not None and cause.kind == "option-needs-unrecorded-data"
    assert cause.advice.startswith("JitStress=1 makes the JIT ask for data")
    assert needs_unrecorded_data(d, OptionMinimization([stress], []), clean) is None
    assert needs_unrecorded_data(d, m, NativeRun(["superpmi"], 3, None, False, 0.1)) is None
    assert needs_unrecorded_data(dataclasses.replace(d, null_map=None), m, clean) is None


def test_asm_diffs_with_one_jit_on_a_collection_without_compile_results(
    cols: Collections, tmp_path: Path
) -> None:
    """`-a` with one JIT compares with the compile results stored in the collection; the sample
    collections hold none: superpmi says so for every method context, and repro says why (no
    crash, exit 2)."""
    from .support.pipeline import report, repro, repro_args

    mch = cols.get("causes-no-cr", 20)
    r = repro(*repro_args(REPLAY, "-a", BASE, str(mch), out="d"), cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    (cause,) = report(tmp_path / "d")["causes"]
    assert cause["kind"] == "diff-needs-compile-results"
    assert "for 20 of 20 method contexts" in cause["evidence"][1]
    assert "why: diff-needs-compile-results: this collection holds no compile results" in r.stdout
