"""Every thread's stack at a stop (a hang's interrupt), read from the view the same way under gdb
and lldb: `thread_stacks(process)`. The gdb driver runs it in gdb's Python (`stacks_line`: one JSON
line, read back with ThreadStack.from_json), the lldb worker over its LldbProcess; report.json's
`locate.hang_threads` is their JSON form."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from spmi_dbg.analysis import procfs
from spmi_dbg.analysis.frames import short_name
from spmi_dbg.analysis.view import Process, Thread
from spmi_dbg.jsonfacts import JsonFact

STACK_FRAMES = 64  # per thread
SOURCE = "the debugger's threads and frames (analysis/view.py)"


@dataclass
class StackFrame(JsonFact):
    level: int  # 0 = innermost, inlined frames counted (as gdb's `bt` numbers them)
    function: str  # without parameters (frames.short_name); "??" when the debugger names none
    pc: int
    file: str | None = None
    line: int | None = None
    module: str | None = None  # the object file the pc is in
    inlined: bool = False


@dataclass
class ThreadStack(JsonFact):
    # 1-based: the process's main thread first, then by LWP (the order gdb numbers threads in)
    id: int
    target_id: str  # "LWP 1234": the thread's id in the operating system (gdb's target id says it)
    frames: list[StackFrame] = field(default_factory=list)
    # from /proc/PID/task/TID/comm; None when /proc does not have the process (a remote target)
    name: str | None = None
    source: str = SOURCE


def thread_stacks(process: Process, limit: int = STACK_FRAMES) -> list[ThreadStack]:
    """Each thread's innermost `limit` frames, the main thread (tid = pid) first, the others by
    tid."""
    pid = process.pid
    threads = sorted(process.threads(), key=lambda t: (t.tid != pid, t.tid))
    return [_stack(i, t, pid, limit) for i, t in enumerate(threads, 1)]


def _stack(number: int, thread: Thread, pid: int | None, limit: int) -> ThreadStack:
    frames = [
        StackFrame(level, short_name(f.function), f.pc, f.file, f.line, f.module, f.inlined)
        for level, f in enumerate(thread.frames(limit))
    ]
    return ThreadStack(number, f"LWP {thread.tid}", frames, procfs.thread_name(pid, thread.tid))


def stacks_line(process: Process, limit: int = STACK_FRAMES) -> str:
    """thread_stacks as one JSON line, `{"threads": [...]}`: what the gdb driver reads from gdb's
    console."""
    return json.dumps({"threads": [s.to_json() for s in thread_stacks(process, limit)]})
