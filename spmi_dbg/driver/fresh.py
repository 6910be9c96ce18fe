"""A session whose every run is a fresh debugger: lldb's worker per replay, a qemu guest's new
gdbstub (the ReplaySession of base.py for the drivers that cannot run their inferior again in the
same debugger)."""

from __future__ import annotations

import threading
from pathlib import Path

from spmi_dbg.driver.base import Driver, StopCallback
from spmi_dbg.driver.outcome import ReplayOutcome


class FreshSession:
    """A session whose every run is a fresh debugger (lldb's worker per replay; a qemu guest's new
    gdbstub)."""

    def __init__(self, driver: Driver, transcript: Path) -> None:
        self.driver = driver
        self.transcript = transcript
        self.broken = False

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
        self.transcript = transcript or self.transcript
        return self.driver.run_replay(
            argv,
            timeout=timeout,
            stdout=stdout,
            stderr=stderr,
            transcript=self.transcript,
            cancel=cancel,
            on_stop=on_stop,
            stop_at_break=stop_at_break,
        )

    def close(self) -> None:
        pass
