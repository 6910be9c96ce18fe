"""A session whose every run is a fresh debugger: lldb's worker per replay, a qemu guest's new
gdbstub (the ReplaySession of base.py for the drivers that cannot run their inferior again in the
same debugger)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from spmi_dbg.driver.base import Driver
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.request import NO_WATCH, ReplayRequest, ReplayWatch


class FreshSession:
    def __init__(self, driver: Driver, transcript: Path) -> None:
        self.driver = driver
        self.transcript = transcript
        self.broken = False

    def run(self, request: ReplayRequest, watch: ReplayWatch = NO_WATCH) -> ReplayOutcome:
        self.transcript = request.transcript or self.transcript
        return self.driver.run_replay(replace(request, transcript=self.transcript), watch)

    def close(self) -> None:
        pass
