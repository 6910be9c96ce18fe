"""The tapes of real stops (tests/fixtures/tapes/, tests/support/tapes.py), replayed in CI: each was
recorded at a stop of the real superpmi 3.1.23 in a real gdb or lldb, and `spmi-dbg why --json TAPE`
must give the diagnosis recorded with it, without the debugger, the build or the collection. What
each stop must say is checked too, so a committed expectation cannot drift into nonsense:
tests/real/test_tapes_real.py re-records them where a real build is present."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from ..support.common import run_cli
from ..support.tapes import STOPS, Stop, load_expected, without_debugger

BY_NAME = {s.name: s for s in STOPS}


def replayed(stop: Stop) -> dict[str, Any]:
    assert stop.tape.is_file() and stop.expected.is_file(), stop.name
    r = run_cli("why", "--json", str(stop.tape))
    assert r.returncode == 0, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


@pytest.mark.parametrize("stop", STOPS, ids=[s.name for s in STOPS])
def test_the_tape_gives_the_recorded_diagnosis(stop: Stop) -> None:
    d = replayed(stop)
    assert without_debugger(d) == without_debugger(load_expected(stop))
    assert d["debugger"].startswith("tape of " + ("gdb" if stop.debugger == "gdb" else "lldb"))
    assert stop.tape.stat().st_size < 64 * 1024  # what the diagnosis read, only


@pytest.mark.parametrize("name", ["o2-null-map-gdb", "o2-null-map-lldb"])
def test_the_o2_null_map_crash(name: str) -> None:
    """15a: SIGSEGV in LightWeightMap::Get (this=0x0) <- MethodContext::repGetGSCookie, mcIndex 4;
    the -O2 main's locals are optimized out, 3.1's mc->index is 1 (the count loaded): the number is
    the compile's mcIndex, checked against the -c list and the record's IL size twice."""
    d = replayed(BY_NAME[name])
    assert d["signal"]["name"] == "SIGSEGV" and d["signal"]["near_null"]
    assert d["handling"]["kind"] == "fatal"
    nm = d["null_map"]
    assert (nm["owner_type"], nm["member"]) == ("MethodContext", "GetGSCookie")
    mc = d["method_context"]
    assert mc["number"] == 4 and mc["source"].startswith("mcIndex argument")
    assert mc["name"] == "Dictionary`2:.ctor" and mc["il_size"] == 96
    assert sum(c.startswith("record 4's IL size 96") for c in mc["checks"]) == 2
    assert d["faulting_module"]["role"] == "superpmi (replay host)"
    assert [f["function"] for f in d["frames"][:3]] == [
        "LightWeightMap<unsigned int, MethodContext::DLDL>::GetIndex",
        "LightWeightMap<unsigned int, MethodContext::DLDL>::Get",
        "MethodContext::repGetGSCookie",
    ]


@pytest.mark.parametrize("name", ["o2-boa-assert", "o0-boa-assert"])
def test_an_assert_under_boa(name: str) -> None:
    """15e: SIGTRAP in DebugBreakorAV <- MyICJI::doAssert <- assertAbort; the assert of 06, the
    JIT's state at it (3.1's previousCompletedPhase: the linear scan)."""
    d = replayed(BY_NAME[name])
    assert d["signal"]["name"] == "SIGTRAP"
    a = d["assertion"]
    assert (a["file"], a["line"]) == ("/_/src/src/jit/gentree.cpp", 6080)
    assert d["folded"][:2] == ["DebugBreakorAV", "MyICJI::doAssert"]
    assert d["method_context"]["number"] == 543
    j = d["jit"]
    assert j["method"] == "StringBuilder:AppendFormatHelper(ref,ref,struct):ref:this"
    assert j["phase"] == "PHASE_LINEAR_SCAN"


def test_a_null_map_during_the_jits_morph_names_the_phase() -> None:
    """13g: JITMinOpts=1 at 481: the map is superpmi's, the call the JIT's, during its morph."""
    d = replayed(BY_NAME["jit-state-minopts"])
    assert d["null_map"]["member"] == "GetSystemVAmd64PassStructInRegisterDescriptor"
    assert d["method_context"]["number"] == 481
    j = d["jit"]
    assert j["method"] == "Marshal:CopyToNative(ref,int,long,int)"
    assert j["phase"].startswith("PHASE_MORPH")


def test_a_stripped_superpmi_names_frames_by_module_and_offset() -> None:
    """No symbols in superpmi: its frames are `superpmi+0x...` (the JIT keeps its own); the method
    context is not in the stack (the pipeline bisects natively): the diagnosis says so."""
    d = replayed(BY_NAME["stripped-null-map"])
    assert d["signal"]["name"] == "SIGSEGV"
    assert re.fullmatch(r"superpmi\+0x[0-9a-f]+", d["frames"][0]["function"])
    assert d["method_context"] is None
    assert any(n.startswith("method context not found in the stack") for n in d["notes"])
    assert "Compiler::compCompile" in [f["function"] for f in d["frames"]]


def test_a_checked_jit_on_a_release_collection_is_the_setup() -> None:
    """15c: the cause is stated with its three pieces of evidence: the record has no name (the
    recording JIT never asked), the query is a DEBUG JIT's name query, superpmi has no map."""
    d = replayed(BY_NAME["checked-on-release"])
    assert d["method_context"]["number"] == 2000 and d["null_map"]["member"] == "GetMethodSig"
    (cause,) = d["causes"]
    assert cause["kind"] == "checked-jit-on-release-collection"
    assert len(cause["evidence"]) == 3
    assert "hackishMethodName" in cause["evidence"][0]
    assert "Compiler::eeGetMethodFullName" in cause["evidence"][1]
    assert "GetMethodSig" in cause["evidence"][2]
    assert cause["advice"].startswith("the collection was recorded with a Release JIT")
    r = run_cli("why", str(BY_NAME["checked-on-release"].tape))
    assert "why: checked-jit-on-release-collection: " in r.stdout


@pytest.mark.parametrize("name", [s.name for s in STOPS if s.name != "checked-on-release"])
def test_no_cause_without_its_evidence(name: str) -> None:
    """The other real stops are JIT stress and asserts on the collection of their own JIT: no cause
    is claimed for them."""
    assert replayed(BY_NAME[name])["causes"] == []
