"""Which JIT made the call that led to a fault outside the JITs (issue 26 item 6): superpmi's null
map met while answering a JIT's call (the 3.1 era's unchecked map), in a real gdb and lldb. With
`-a` the base JIT compiles first: `called by: base JIT (JIT1)`; a single-JIT replay names its JIT
`JIT (JIT1)`, never "base"."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .support.common import DEBUGGERS, Collections
from .support.natives import BASE, DIFF, REPLAY
from .test_debug_diagnosis import gdb_session, lldb_session


@pytest.fixture(scope="module")
def col(cols: Collections) -> Path:
    return cols.get("calling-jit", 30, inject=[("null-map", 12)])


@pytest.mark.parametrize("debugger", DEBUGGERS)
@pytest.mark.parametrize("jits", ["one", "two"])
def test_the_calling_jit_is_named(
    col: Path, debugger: str, jits: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPMI_REPLAY_ERA", "3.1")
    argv = [REPLAY, *(["-a", BASE, DIFF] if jits == "two" else [BASE]), "-c", "12", str(col)]
    session = gdb_session if debugger == "gdb" else lldb_session
    out = session(argv, ["spmi diagnose --json", "spmi why"])
    d = json.loads(next(x for x in out["spmi diagnose --json"].splitlines() if x.startswith("{")))
    assert d["faulting_module"]["role"] == "superpmi (replay host)"
    cj = d["calling_jit"]
    role = "base JIT (JIT1)" if jits == "two" else "JIT (JIT1)"
    assert cj["role"] == role and os.path.samefile(cj["path"], BASE), cj
    assert cj["source"].startswith("object file of frame ") and "Compiler::" in cj["source"]
    assert f"called by: {role}: " in out["spmi why"]
