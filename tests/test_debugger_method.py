"""`spmi il` and `spmi callees` at a stop, in a real gdb and a real lldb (issue 41 item 4): the
method context being replayed, read from its collection, the instruction the JIT is importing
marked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .support.common import DEBUGGERS, Collections
from .support.diagnosis import require
from .support.natives import BASE, REPLAY
from .test_debug_diagnosis import gdb_session, lldb_session

ASSERT_AT = 20  # jit-assert: the importer asserts on `shl` by -1 (spmi_dbg/sample/inject.py)
COMMANDS = ["spmi il", "spmi il --json", "spmi callees", "spmi callees --il"]


@pytest.fixture(scope="module")
def sessions(
    cols: Collections, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, str]]:
    """Each debugger stopped at the assert's debug break (-boa), the commands' outputs; `spmi
    report` writes its bundle to the directory under the key `report`."""
    mch = cols.get("debugger-method", 60, inject=[("jit-assert", ASSERT_AT)])
    argv = [str(REPLAY), "-boa", "-c", str(ASSERT_AT), str(BASE), str(mch)]
    out = {}
    for debugger in DEBUGGERS:
        require(debugger)
        run = gdb_session if debugger == "gdb" else lldb_session
        bundle = tmp_path_factory.mktemp(debugger) / "r"
        out[debugger] = run(argv, [*COMMANDS, f"spmi report {bundle}"]) | {"report": str(bundle)}
    return out


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_report_holds_the_method(sessions: dict[str, dict[str, str]], debugger: str) -> None:
    md = (Path(sessions[debugger]["report"]) / "report.md").read_text()
    assert "#### The method" in md and f"Method context {ASSERT_AT}: " in md
    (marked,) = [ln for ln in md.splitlines() if ln.endswith("// <-- the JIT was here")]
    assert "  shl" in marked and "`spmi-dbg mch il --callees repro.mch 1`" in md


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_il_marks_the_instruction_being_imported(
    sessions: dict[str, dict[str, str]], debugger: str
) -> None:
    text = sessions[debugger]["spmi il"]
    assert text.startswith(f"// method context {ASSERT_AT}: "), text
    (marked,) = [ln for ln in text.splitlines() if ln.endswith("// <-- the JIT was here")]
    assert "  shl" in marked
    assert "// the JIT is importing the statement at IL_" in text
    assert "(Compiler::impCurStmtOffs)" in text and "// JIT flags: " in text


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_il_json_is_report_jsons_method(
    sessions: dict[str, dict[str, str]], debugger: str
) -> None:
    data = json.loads(sessions[debugger]["spmi il --json"])
    assert data["method_context"] == ASSERT_AT and data["marked"] is not None
    (line,) = [ln for ln in data["lines"] if ln["offset"] == data["marked"]]
    assert line["text"].split()[1] == "shl"


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_callees(sessions: dict[str, dict[str, str]], debugger: str) -> None:
    """The sample collections record each call's token and no callee's body: one line per called
    method, the body said not asked for; `--il` adds no IL where no body was given."""
    s = sessions[debugger]
    calls = [ln for ln in s["spmi il"].splitlines() if ln.split()[1:2] == ["call"]]
    lines = s["spmi callees"].splitlines()
    assert lines[0] == f"// callees the JIT looked at in method context {ASSERT_AT}: {len(calls)}"
    assert calls and all(
        ln.endswith("body not asked for; inlining not asked") for ln in lines[1:]
    ), lines
    assert s["spmi callees --il"] == s["spmi callees"]


def test_the_debuggers_agree(sessions: dict[str, dict[str, str]]) -> None:
    assert sorted(sessions) == ["gdb", "lldb"]
    assert sessions["gdb"]["spmi il"] == sessions["lldb"]["spmi il"]
    assert sessions["gdb"]["spmi callees"] == sessions["lldb"]["spmi callees"]
