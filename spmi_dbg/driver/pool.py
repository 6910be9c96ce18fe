"""Warm debuggers for a pipeline's replays (issue 39 item 4): a repro's locate, its verification and
its experiments each asked for a fresh debugger, and on the real 3.1.23 build a fresh gdb costs
~0.25 s to start and ~0.4 s more to read the shared libraries' and the Checked JIT's symbols, more
than a small crash's whole replay. `Warm` is the Driver the pipeline uses instead: a replay of a
program runs in an idle session of that program if one is left by an earlier replay (the next
partition of a worker, the verification after the locate), else in a new session that then stays
for the next. Sessions run their replays exactly as the triage's do (GdbSession: a rerun of the
inferior, the symbols read once); a session that broke or whose run was cancelled is closed, never
reused. `close()` ends every session (the pipeline does, before its working directory goes). A
triage hands its partitions' idle debuggers to its bundles' pool (triage/task.py SessionCache.lend):
a bundle's verification replays in a debugger that has its program's symbols read already.

A request that names its own `max_passes` gets a fresh debugger as before: a session's limit is
set when it starts."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from spmi_dbg.driver.base import Driver, ReplaySession
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.request import NO_WATCH, ReplayRequest, ReplayWatch


class Warm:
    """A Driver whose replays reuse idle sessions of the same program (see the module)."""

    def __init__(self, driver: Driver, idle: Iterable[tuple[str, ReplaySession]] = ()) -> None:
        """`idle`: sessions an earlier run left (program, session), now this pool's to reuse and
        close (a triage's partitions' debuggers, for its bundles)."""
        self.driver = driver
        self._idle: dict[str, list[ReplaySession]] = {}
        self._all: list[ReplaySession] = []
        for program, session in idle:
            self._idle.setdefault(program, []).append(session)
            self._all.append(session)
        self._lock = threading.Lock()
        self._closed = False
        self.reused = 0  # replays that ran in a session an earlier replay left

    def __reduce__(self) -> tuple[type[Warm], tuple[Driver]]:
        """Sent elsewhere (a cluster's worker) it is the plain driver again: sessions stay here."""
        return (Warm, (self.driver,))

    @property
    def name(self) -> str:
        return self.driver.name

    @property
    def needed_paths(self) -> tuple[str, ...]:
        return self.driver.needed_paths

    def session(self, transcript: Path) -> ReplaySession:
        return self.driver.session(transcript)

    def read_core(
        self, core: Path, program: str, *, transcript: Path, argv: list[str]
    ) -> ReplayOutcome:
        return self.driver.read_core(core, program, transcript=transcript, argv=argv)

    def run_replay(self, request: ReplayRequest, watch: ReplayWatch = NO_WATCH) -> ReplayOutcome:
        if request.max_passes is not None or request.transcript is None or self._closed:
            return self.driver.run_replay(request, watch)
        session = self._take(request.program, request.transcript)
        try:
            outcome = session.run(request, watch)
        except BaseException:
            self._drop(session)
            raise
        if session.broken:
            self._drop(session)
        else:
            with self._lock:
                self._idle.setdefault(request.program, []).append(session)
        return outcome

    def _take(self, program: str, transcript: Path) -> ReplaySession:
        with self._lock:
            idle = self._idle.get(program)
            if idle:
                self.reused += 1
                return idle.pop()
        session = self.driver.session(transcript)
        with self._lock:
            self._all.append(session)
        return session

    def _drop(self, session: ReplaySession) -> None:
        with self._lock:
            if session in self._all:
                self._all.remove(session)
        session.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True  # a replay asked after this gets a fresh debugger
            sessions, self._all, self._idle = self._all, [], {}
        for s in sessions:
            s.close()

    def __enter__(self) -> Warm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
