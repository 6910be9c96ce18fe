"""Every thread's stack (spmi_dbg.analysis.stacks) in real gdb and lldb on the real superpmi, which
has a thread of its PAL beside the replay's: read at the Checked JIT's null-map crash on
api-reljit.mch (a stop that comes at the same place every run) by the command the gdb driver sends
at a hang and by the lldb worker's call. One fresh debugger per test."""

from __future__ import annotations

import json

import pytest

from spmi_dbg.analysis.stacks import ThreadStack
from spmi_dbg.driver.gdb.ask import STACKS_COMMAND

from ..support.real import Real
from .test_debugger_real import _null_map_argv, _session

# A real build (SPMI_DBG_REAL_SUPERPMI): the live half of the conformance suite.
pytestmark = pytest.mark.live

LLDB_STACKS = (
    "script from spmi_dbg.analysis.stacks import stacks_line; "
    "from spmi_dbg.ext.lldb.view import LldbProcess; "
    "print(stacks_line(LldbProcess(lldb.target)))"
)
# the PAL's synchronization manager's thread, innermost of its frames of superpmi's own
PAL_WORKER = [
    "CorUnix::CPalSynchronizationManager::ReadBytesFromProcessPipe",
    "CorUnix::CPalSynchronizationManager::ReadCmdFromProcessPipe",
    "CorUnix::CPalSynchronizationManager::WorkerThread",
    "CorUnix::CPalThread::ThreadEntry",
]


def _concrete(stack: ThreadStack) -> list[str]:
    return [f.function for f in stack.frames if not f.inlined]


@pytest.mark.parametrize("debugger", ["gdb", "lldb"])
def test_every_threads_stack_of_the_real_superpmi(real: Real, debugger: str) -> None:
    command = STACKS_COMMAND if debugger == "gdb" else LLDB_STACKS
    said = _session(debugger, _null_map_argv(real), [command])[command]
    line = next(ln for ln in reversed(said.splitlines()) if ln.startswith('{"threads"'))
    stacks = [ThreadStack.from_json(t) for t in json.loads(line)["threads"]]
    assert len(stacks) >= 2 and [t.id for t in stacks] == list(range(1, len(stacks) + 1))
    assert all(t.name == "superpmi" and t.target_id.startswith("LWP ") for t in stacks)
    main, others = stacks[0], stacks[1:]
    assert "main" in _concrete(main) and "MethodContext::repGetMethodSig" in _concrete(main)
    # another thread's frames, read though the stop's thread is the selected one (gdb finds a frame
    # again only in the selected thread)
    pal = [t for t in others if PAL_WORKER[-1] in _concrete(t)]
    assert len(pal) == 1, [_concrete(t) for t in others]
    names = _concrete(pal[0])
    start = names.index(PAL_WORKER[0])
    assert names[start : start + len(PAL_WORKER)] == PAL_WORKER
    assert all(f.pc > 0 and f.module for f in pal[0].frames[start : start + len(PAL_WORKER)])
