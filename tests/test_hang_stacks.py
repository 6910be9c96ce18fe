"""A hang's thread stacks (spmi_dbg.analysis.stacks) are one typed fact, read from the view by one
function under gdb (in gdb's Python, asked by the MI driver) and lldb (in the worker): the same
shape and the same concrete frames whichever debugger interrupted the replay. Real gdb and lldb, a
fresh one per run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spmi_dbg.analysis.stacks import StackFrame, ThreadStack
from spmi_dbg.driver.gdb.replay import run_replay as gdb_replay
from spmi_dbg.driver.lldb.replay import run_replay as lldb_replay
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.request import ReplayRequest

from .support.common import DEBUGGERS, Collections
from .support.natives import BASE, REPLAY

RUNNERS = {"gdb": gdb_replay, "lldb": lldb_replay}
HUNG_IN = "Compiler::optCanonicalizeLoops"


def hang(cols: Collections, tmp_path: Path, debugger: str) -> ReplayOutcome:
    mch = str(cols.get("stacks-hang", 60, inject=[("hang", 30)]))
    out = tmp_path / debugger
    out.mkdir()
    o = RUNNERS[debugger](
        ReplayRequest((REPLAY, BASE, mch), 1.5, out / "out", out / "err", out / "transcript.log")
    )
    assert o.kind == "hang" and o.method_context == 30, (o.kind, o.notes)
    return o


def concrete(stack: ThreadStack) -> list[str]:
    """The concrete (not inlined) frames from the hung function out to main: gdb and lldb do not
    show the same inline frames, nor interrupt the loop at the same instruction, and gdb's
    backtrace ends at main."""
    names = [f.function for f in stack.frames if not f.inlined]
    return names[names.index(HUNG_IN) : names.index("main") + 1]


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_a_hang_has_every_threads_stack_as_a_fact(
    cols: Collections, tmp_path: Path, debugger: str
) -> None:
    o = hang(cols, tmp_path, debugger)
    assert o.threads and all(type(t) is ThreadStack for t in o.threads)
    assert [t.id for t in o.threads] == list(range(1, len(o.threads) + 1))
    main = o.threads[0]
    assert main.target_id.startswith("LWP ") and int(main.target_id[4:]) > 0
    assert main.name == Path(REPLAY).name[:15]  # the kernel's comm: the program's name, 15 at most
    assert all(type(f) is StackFrame for f in main.frames)
    assert [f.level for f in main.frames] == list(range(len(main.frames)))
    assert HUNG_IN in [f.function for f in main.frames[:2]]
    hung = next(f for f in main.frames if f.function == HUNG_IN)
    assert hung.pc > 0 and hung.module == str(Path(BASE).resolve()) and hung.file and hung.line
    # a line is a line or not known (lldb's LLDB_INVALID_LINE_NUMBER is not one)
    assert all(f.line is None or 0 < f.line < 1 << 31 for t in o.threads for f in t.frames)
    assert ReplayOutcome.from_json(json.loads(json.dumps(o.to_json()))) == o


def test_gdb_and_lldb_give_the_same_stacks(cols: Collections, tmp_path: Path) -> None:
    g, lo = (hang(cols, tmp_path, d) for d in ("gdb", "lldb"))
    assert [(t.id, t.name) for t in g.threads] == [(t.id, t.name) for t in lo.threads]
    assert concrete(g.threads[0]) == concrete(lo.threads[0])
    assert len(concrete(g.threads[0])) >= 3  # the hung function, its callers (JIT, superpmi), main
    keys = {tuple(t.to_json()) for o in (g, lo) for t in o.threads}
    frame_keys = {tuple(f.to_json()) for o in (g, lo) for t in o.threads for f in t.frames}
    assert keys == {tuple(ThreadStack(1, "LWP 1").to_json())}
    assert frame_keys == {tuple(StackFrame(0, "f", 1).to_json())}
