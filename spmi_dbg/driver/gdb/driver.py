"""`--debugger gdb`: the Driver (base.py) over spmi_dbg.driver.gdb.replay, native or attached to a
qemu-user guest's gdbstub (gdb-multiarch)."""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.driver.base import ReplaySession, StopCallback
from spmi_dbg.driver.fresh import FreshSession
from spmi_dbg.driver.gdb import replay
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.qemu import QemuTarget
from spmi_dbg.errors import UsageError


@dataclass(frozen=True)
class GdbDriver:
    gdb: str  # the executable: gdb, or gdb-multiarch for a qemu guest
    cwd: str | None = None
    qemu: QemuTarget | None = None
    # stops passed on before one is taken as the stop (0: the very first)
    max_passes: int = 1_000_000
    debug_dirs: tuple[str, ...] = ()  # where separate debug files are (debugfiles.debugger_dirs)

    @classmethod
    def picked(
        cls,
        *,
        gdb: str | None,
        qemu: QemuTarget | None,
        cwd: str | None,
        debug_dirs: tuple[str, ...],
    ) -> GdbDriver:
        """For `--debugger gdb` (`gdb`: --gdb PATH)."""
        return cls(find_gdb(gdb, qemu), cwd, qemu, debug_dirs=debug_dirs)

    @property
    def name(self) -> str:
        return "gdb-multiarch" if self.qemu is not None else "gdb"

    @property
    def needed_paths(self) -> tuple[str, ...]:
        return tuple(p for p in (self.gdb, self.cwd, *self.debug_dirs) if p)

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
        return replay.run_replay(
            argv,
            timeout=timeout,
            stdout=stdout,
            stderr=stderr,
            transcript=transcript,
            gdb=self.gdb,
            cwd=self.cwd,
            cancel=cancel,
            on_stop=on_stop,
            qemu=self.qemu,
            max_passes=self.max_passes if max_passes is None else max_passes,
            debug_dirs=self.debug_dirs,
            stop_at_break=stop_at_break,
        )

    def session(self, transcript: Path) -> ReplaySession:
        if self.qemu is not None:  # each run attaches to a new gdbstub
            return FreshSession(self, transcript)
        return replay.GdbSession(
            transcript=transcript,
            gdb=self.gdb,
            cwd=self.cwd,
            max_passes=self.max_passes,
            debug_dirs=self.debug_dirs,
        )

    def read_core(
        self, core: Path, program: str, *, transcript: Path, argv: list[str]
    ) -> ReplayOutcome:
        return replay.diagnose_core(
            core,
            program,
            transcript=transcript,
            gdb=self.gdb,
            cwd=self.cwd,
            qemu=self.qemu,
            argv=argv,
            debug_dirs=self.debug_dirs,
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
