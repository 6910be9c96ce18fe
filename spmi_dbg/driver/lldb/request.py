"""What the lldb driver asks of its worker process: one JSON line on the worker's stdin, the JSON
form (spmi_dbg.jsonfacts) of a WorkerRequest: a replay (the driver's ReplayRequest, as it is) or a
core file, with the driver's set-up and, for a qemu guest, the gdbstub to attach to."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.driver.request import DebuggerSetup, ReplayRequest
from spmi_dbg.jsonfacts import JsonFact


@dataclass(frozen=True)
class GuestLink(JsonFact):
    """A qemu-user guest waiting under its gdbstub (spmi_dbg.driver.qemu started it)."""

    port: int
    sysroot: str
    dirs: tuple[str, ...]  # where the guest's JITs are (absolute host paths)
    pid: int  # qemu's: SIGINT to it reaches the guest


@dataclass(frozen=True)
class WorkerRequest(JsonFact):
    transcript: Path  # where the worker's log goes
    config: DebuggerSetup
    replay: ReplayRequest | None = None  # a replay, or else a core file:
    core: Path | None = None
    program: str | None = None  # the core's program
    argv: tuple[str, ...] = ()  # the command the core's program ran
    guest: GuestLink | None = None

    @property
    def run(self) -> ReplayRequest:
        if self.replay is None:
            raise ValueError("a core file's request has no replay")
        return self.replay
