"""`--debugger gdb`: the Driver (base.py) over spmi_dbg.driver.gdb.replay, native or attached to a
qemu-user guest's gdbstub (gdb-multiarch)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from spmi_dbg.driver.base import ReplaySession
from spmi_dbg.driver.fresh import FreshSession
from spmi_dbg.driver.gdb.core import diagnose_core
from spmi_dbg.driver.gdb.replay import run_replay
from spmi_dbg.driver.gdb.session import GdbSession
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.qemu import QemuTarget
from spmi_dbg.driver.request import NO_WATCH, DebuggerSetup, ReplayRequest, ReplayWatch
from spmi_dbg.errors import UsageError


@dataclass(frozen=True)
class GdbDriver:
    gdb: str  # the executable: gdb, or gdb-multiarch for a qemu guest
    config: DebuggerSetup = field(default_factory=DebuggerSetup)
    qemu: QemuTarget | None = None

    @classmethod
    def picked(
        cls, *, gdb: str | None, qemu: QemuTarget | None, config: DebuggerSetup
    ) -> GdbDriver:
        """For `--debugger gdb` (`gdb`: --gdb PATH)."""
        return cls(find_gdb(gdb, qemu), config, qemu)

    @property
    def name(self) -> str:
        return "gdb-multiarch" if self.qemu is not None else "gdb"

    @property
    def needed_paths(self) -> tuple[str, ...]:
        return self.config.paths(self.gdb)

    def run_replay(self, request: ReplayRequest, watch: ReplayWatch = NO_WATCH) -> ReplayOutcome:
        return run_replay(request, watch, gdb=self.gdb, config=self.config, qemu=self.qemu)

    def session(self, transcript: Path) -> ReplaySession:
        if self.qemu is not None:  # each run attaches to a new gdbstub
            return FreshSession(self, transcript)
        return GdbSession(transcript, gdb=self.gdb, config=self.config)

    def read_core(
        self, core: Path, program: str, *, transcript: Path, argv: list[str]
    ) -> ReplayOutcome:
        return diagnose_core(
            core,
            program,
            transcript=transcript,
            gdb=self.gdb,
            config=self.config,
            qemu=self.qemu,
            argv=argv,
        )[0]


def find_gdb(name: str | None, qemu: QemuTarget | None = None) -> str:
    wanted = name or ("gdb-multiarch" if qemu is not None else "gdb")
    found = shutil.which(wanted)
    if found is None:
        package = "gdb-multiarch" if qemu is not None else "gdb"
        raise UsageError(
            f"{wanted} not found: {package} is needed to replay under a debugger (Debian: apt-get "
            f"install {package}), or name it with --gdb PATH"
        )
    return found
