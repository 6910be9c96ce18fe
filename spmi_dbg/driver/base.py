"""The one interface every debugger driver offers the pipeline (repro, triage, demo): replay a
superpmi command under the debugger to its fatal stop, hang or exit, and read a core file
post-mortem. Both return a ReplayOutcome of the same shape whichever debugger drove it.
spmi_dbg.driver.select builds one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from spmi_dbg.analysis.policy import PassedStop
from spmi_dbg.driver.outcome import ReplayOutcome

StopCallback = Callable[[PassedStop], None]


class ReplaySession(Protocol):
    """Several replays in one debugger, one after another (Driver.session)."""

    def run(
        self,
        argv: list[str],
        *,
        timeout: float,
        stdout: Path,
        stderr: Path,
        cancel: threading.Event | None = None,
        on_stop: StopCallback | None = None,
        stop_at_break: bool = False,
        transcript: Path | None = None,
    ) -> ReplayOutcome:
        """As Driver.run_replay, in this session's debugger (`transcript`: where the debugger's
        traffic goes from this run on; default: where it went). After a ToolFailure the session is
        `broken`."""
        ...

    @property
    def broken(self) -> bool:
        """True once the debugger failed (or a run was cancelled): close it and open another."""
        ...

    def close(self) -> None: ...


class Driver(Protocol):
    @property
    def name(self) -> str:
        """What the reports call the debugger: gdb, gdb-multiarch, lldb."""
        ...

    def run_replay(
        self,
        argv: list[str],
        *,
        timeout: float,
        stdout: Path,
        stderr: Path,
        transcript: Path,
        cancel: threading.Event | None = None,
        on_stop: StopCallback | None = None,
        stop_at_break: bool = False,
        max_passes: int | None = None,
    ) -> ReplayOutcome:
        """One fresh debugger on argv until a fatal stop, a hang (`timeout` seconds), the replay's
        exit, or `cancel`. `stop_at_break`: the first debug break is the stop too (a run with
        -boa/-boe meant to stop in the JIT's assert or at the failed compile); `max_passes`: stops
        passed on before one is taken as the stop (0: the very first, e.g. the first-chance fault of
        a failed compile; default: the driver's own). Every stop passed on is told to `on_stop`. The
        replay's output goes to `stdout`/`stderr`, the debugger's transcript to `transcript`. A
        debugger that dies or stops answering raises ToolFailure."""
        ...

    @property
    def needed_paths(self) -> tuple[str, ...]:
        """The files and directories it needs where it runs (the debugger, its working directory,
        the debug directories): what a cluster's worker checks before a task."""
        ...

    def session(self, transcript: Path) -> ReplaySession:
        """A debugger for several replays of the same program, one after another (triage's resume
        after a crash: no new debugger per crash where the debugger can run its inferior again). The
        caller closes it."""
        ...

    def read_core(
        self, core: Path, program: str, *, transcript: Path, argv: list[str]
    ) -> ReplayOutcome:
        """Post-mortem: the full diagnosis of `core`, a core file of `program` run as `argv` (kind
        "fatal")."""
        ...
