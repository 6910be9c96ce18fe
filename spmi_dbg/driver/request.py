"""What a replay under a debugger is asked for, one value through every driver:

- ReplayRequest: the replay itself (argv, hang timeout, where its output goes, where the debugger's
  traffic goes, which stops to take). Data, the same for gdb and lldb; it crosses to the lldb
  worker as its JSON form (spmi_dbg.jsonfacts). A new replay option is a field here, read where a
  driver acts on it.
- ReplayWatch: how the caller hears of the stops passed on and stops a run (not data: a callback
  and an event, never sent anywhere).
- DebuggerSetup: where and how a driver's debugger runs, the same for each of its replays."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from spmi_dbg.analysis.policy import PassedStop
from spmi_dbg.jsonfacts import JsonFact

StopCallback = Callable[[PassedStop], None]

REQUEST_TIMEOUT = 30.0  # any single request to the debugger
MAX_PASSES = 1_000_000  # stops passed on before one is taken as the stop: no limit in practice


@dataclass(frozen=True)
class ReplayRequest(JsonFact):
    argv: tuple[str, ...]  # superpmi's command, argv[0] the program
    timeout: float  # seconds the replay may run before it is a hang
    stdout: Path  # where the replay's output goes
    stderr: Path
    # the debugger's transcript; in a session, None: where the session's went so far
    transcript: Path | None = None
    # the first debug break is the stop too (a run with -boa/-boe meant to stop in the JIT's
    # assert or at the failed compile)
    stop_at_break: bool = False
    # stops passed on before one is taken as the stop (0: the very first, e.g. the first-chance
    # fault of a failed compile); None: the driver's own (DebuggerSetup.max_passes)
    max_passes: int | None = None
    # the replay's environment, exactly: `NAME=VALUE` each, with PATH and HOME from the tool's own
    # unless named (as `env -i PATH HOME ...` runs natively); None: the debugger's own environment
    env: tuple[str, ...] | None = None

    def environment(self) -> dict[str, str]:
        """The variables the replay runs with (the debugger's tool variables aside)."""
        if self.env is None:
            return dict(os.environ)
        out = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
        for kv in self.env:
            name, _, value = kv.partition("=")
            out[name] = value
        return out

    @property
    def program(self) -> str:
        return self.argv[0]

    def log(self) -> Path:
        """The transcript, which a run of its own (not a session's) must name."""
        if self.transcript is None:
            raise ValueError("a replay outside a session needs its transcript")
        return self.transcript


@dataclass(frozen=True)
class ReplayWatch:
    cancel: threading.Event | None = None  # set: the run ends, "cancelled"
    on_stop: StopCallback | None = None  # told every stop passed on, as it is passed


NO_WATCH = ReplayWatch()


@dataclass(frozen=True)
class DebuggerSetup(JsonFact):
    cwd: str | None = None  # the debugger's (and so the replay's) working directory
    max_passes: int = MAX_PASSES
    debug_dirs: tuple[str, ...] = ()  # where separate debug files are (debugfiles.debugger_dirs)
    request_timeout: float = REQUEST_TIMEOUT

    def paths(self, *more: str | None) -> tuple[str, ...]:
        """The files and directories the debugger needs where it runs (a cluster's worker checks
        them before a task)."""
        return tuple(p for p in (*more, self.cwd, *self.debug_dirs) if p)

    def for_request(self, request: ReplayRequest) -> DebuggerSetup:
        """The set-up of a run of `request` (its own max_passes, if it names one)."""
        if request.max_passes is None or request.max_passes == self.max_passes:
            return self
        return replace(self, max_passes=request.max_passes)


DEFAULT_SETUP = DebuggerSetup()
