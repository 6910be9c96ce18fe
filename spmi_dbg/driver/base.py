"""The one interface every debugger driver offers the pipeline (repro, triage, demo): replay a
superpmi command under the debugger to its fatal stop, hang or exit, and read a core file
post-mortem. Both return a ReplayOutcome of the same shape whichever debugger drove it; a replay is
asked for by one ReplayRequest (request.py). spmi_dbg.driver.select builds one."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.request import NO_WATCH, ReplayRequest, ReplayWatch


class ReplaySession(Protocol):
    """Several replays in one debugger, one after another (Driver.session)."""

    def run(self, request: ReplayRequest, watch: ReplayWatch = NO_WATCH) -> ReplayOutcome:
        """As Driver.run_replay, in this session's debugger (the request's `transcript`: where the
        debugger's traffic goes from this run on; None: where it went). After a ToolFailure the
        session is `broken`."""
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

    def run_replay(self, request: ReplayRequest, watch: ReplayWatch = NO_WATCH) -> ReplayOutcome:
        """One fresh debugger on the request's argv until a fatal stop, a hang (its `timeout`
        seconds), the replay's exit, or the watch's `cancel`. Every stop passed on is told to the
        watch's `on_stop`. The replay's output goes to the request's `stdout`/`stderr`, the
        debugger's transcript to its `transcript` (which must be named). A debugger that dies or
        stops answering raises ToolFailure."""
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


@dataclass(frozen=True)
class Replays:
    """How a stage's replays are run, passed as one value: the debugger (None: natively only), each
    replay's time limit (--timeout), and the directory their files go to."""

    debugger: Driver | None
    timeout: float
    workdir: Path

    def into(self, name: str) -> Replays:
        """The same replays, their files in a subdirectory of this one."""
        return dataclasses.replace(self, workdir=self.workdir / name)

    @property
    def under(self) -> Driver:
        """The debugger, for a stage that needs one."""
        assert self.debugger is not None, "this stage replays under a debugger"
        return self.debugger
