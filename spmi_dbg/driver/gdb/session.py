"""One gdb for several replays of the same program (a ReplaySession, driver/base.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import IO

from spmi_dbg.driver.gdb import setup
from spmi_dbg.driver.gdb.loop import MiRun, RunRules, StopNotes
from spmi_dbg.driver.gdb.mi import MiChannel
from spmi_dbg.driver.gdb.solibs import SymbolsOnce
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.request import NO_WATCH, DebuggerSetup, ReplayRequest, ReplayWatch
from spmi_dbg.errors import ToolFailure


def _append(path: Path) -> IO[str]:
    return open(path, "a", encoding="utf-8", errors="replace")


class GdbSession:
    """One gdb for several replays of the same program (triage: after a crash at N the partition
    goes on at N+1 in the same gdb: the inferior is killed and run again with the next `-c`), so a
    further crash costs neither a gdb start nor the symbol loading, only the replay's own start. The
    catchpoints, the signal table and the notes file are set up once, at the first run. Not for a
    qemu guest (each run is a new gdbstub to attach to).

    A ToolFailure leaves the session broken (`broken`): the caller closes it and opens another."""

    def __init__(self, transcript: Path, *, gdb: str = "gdb", config: DebuggerSetup) -> None:
        self.config = config
        self.program: str | None = None
        # the replays' environment as last set (None: gdb's own, which it started with)
        self._env: tuple[str, ...] | None = None
        # a stopped replay left by the last run (fatal, hang, cancelled)
        self.inferior: int | None = None
        self.broken = False
        self.runs = 0
        # the shared libraries' symbols, read once for the session's runs (solibs.py)
        self.symbols = SymbolsOnce()
        self._log = _append(transcript)
        try:
            self._notes = StopNotes.beside(transcript)
        except BaseException:
            self._log.close()
            raise
        try:
            self.channel = MiChannel(
                gdb,
                self._log,
                cwd=config.cwd,
                env=setup.replay_env(),
                request_timeout=config.request_timeout,
            )
        except BaseException:
            self._notes.close()
            self._log.close()
            raise

    def run(self, request: ReplayRequest, watch: ReplayWatch = NO_WATCH) -> ReplayOutcome:
        """As Driver.run_replay, in this session's gdb (the request's `transcript`: where this run's
        MI traffic goes from now on)."""
        if self.broken:
            raise ToolFailure("the gdb session broke in an earlier run")
        if request.max_passes not in (None, self.config.max_passes):
            raise ValueError("a gdb session's max_passes is set when it starts")
        if request.transcript is not None:
            log = _append(request.transcript)
            self.channel.transcript, old = log, self._log
            self._log = log
            old.close()
        run = MiRun(
            self.channel,
            watch,
            self._notes,
            RunRules(self.config.max_passes, request.stop_at_break),
            before_diagnose=lambda: self.symbols.check(self.channel),
        )
        try:
            self._prepare(request)
            self.runs += 1
            outcome = run.until_outcome(request.timeout, "-exec-run")
            if outcome.kind in ("fatal", "hang"):  # stopped: gdb loaded every library's symbols
                self.symbols.learn(self.channel)
        except BaseException:
            self.broken = True
            self.inferior = run.inferior
            raise
        self.inferior = run.inferior if outcome.kind in ("fatal", "hang") else None
        # the replay still runs: this session ends with it (close kills it)
        if outcome.kind == "cancelled":
            self.inferior, self.broken = run.inferior, True
        return outcome

    def _prepare(self, request: ReplayRequest) -> None:
        """gdb set up at the first run; the last run's replay gone; this run's arguments."""
        if self.program is None:
            setup.for_replay(
                self.channel,
                request.program,
                self._notes.path,
                self.config.max_passes,
                self.config.debug_dirs,
            )
            setup.line_buffered(self.channel)
            self.program = request.program
        elif request.program != self.program:
            raise ToolFailure(f"a gdb session of {self.program} cannot run {request.program}")
        if request.env != self._env:
            setup.environment(self.channel, request.environment())
            self._env = request.env
        self._kill()
        setup.set_args(
            self.channel, request.argv, setup.redirections(request.stdout, request.stderr)
        )
        self.symbols.apply(self.channel)

    def _kill(self) -> None:
        """The stopped replay of the last run goes before the next starts (gdb's `kill`, then its
        exit event)."""
        if self.inferior is None:
            return
        self.channel.must_console("kill")
        deadline = time.monotonic() + self.channel.request_timeout
        while time.monotonic() < deadline:
            event = self.channel.next_event(0.05)
            if event is not None and event.get("message") == "thread-group-exited":
                break
        else:
            raise ToolFailure(
                f"gdb did not end the stopped replay (pid {self.inferior}) within "
                f"{self.channel.request_timeout:g} s of `kill`"
            )
        self.channel.events.clear()
        self.inferior = None

    def close(self) -> None:
        try:
            self.channel.close(self.inferior)
        finally:
            self._notes.close()
            self._log.close()

    def __enter__(self) -> GdbSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
