"""`--debugger lldb`: the Driver (base.py) over spmi_dbg.driver.lldb.replay (its SB API in a worker
process per replay), native or attached to a qemu-user guest's gdbstub."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from spmi_dbg.driver.base import ReplaySession
from spmi_dbg.driver.fresh import FreshSession
from spmi_dbg.driver.lldb import replay
from spmi_dbg.driver.lldb.sbapi import LldbUnavailable
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.qemu import QemuTarget
from spmi_dbg.driver.request import NO_WATCH, DebuggerSetup, ReplayRequest, ReplayWatch
from spmi_dbg.errors import UsageError


@dataclass(frozen=True)
class LldbDriver:
    config: DebuggerSetup = field(default_factory=DebuggerSetup)
    qemu: QemuTarget | None = None

    @classmethod
    def picked(
        cls, *, gdb: str | None, qemu: QemuTarget | None, config: DebuggerSetup
    ) -> LldbDriver:
        """For `--debugger lldb` (`gdb`, --gdb PATH, is gdb's alone)."""
        try:
            replay.check_available()
        except LldbUnavailable as e:
            raise UsageError(f"--debugger lldb: {e}") from None
        return cls(config, qemu)

    @property
    def name(self) -> str:
        return "lldb"

    @property
    def needed_paths(self) -> tuple[str, ...]:
        return self.config.paths()

    def run_replay(self, request: ReplayRequest, watch: ReplayWatch = NO_WATCH) -> ReplayOutcome:
        return replay.run_replay(request, watch, config=self.config, qemu=self.qemu)

    def session(self, transcript: Path) -> ReplaySession:
        # lldb runs in a worker process per replay (replay.py): a session is a fresh worker each
        # run.
        return FreshSession(self, transcript)

    def read_core(
        self, core: Path, program: str, *, transcript: Path, argv: list[str]
    ) -> ReplayOutcome:
        return replay.diagnose_core(
            core, program, transcript=transcript, config=self.config, argv=argv
        )[0]
