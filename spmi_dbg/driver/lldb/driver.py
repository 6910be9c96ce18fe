"""`--debugger lldb`: the Driver (base.py) over spmi_dbg.driver.lldb.replay (its SB API in a worker
process per replay), native or attached to a qemu-user guest's gdbstub."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.driver.base import ReplaySession, StopCallback
from spmi_dbg.driver.fresh import FreshSession
from spmi_dbg.driver.lldb import replay
from spmi_dbg.driver.lldb.sbapi import LldbUnavailable
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.qemu import QemuTarget
from spmi_dbg.errors import UsageError


@dataclass(frozen=True)
class LldbDriver:
    cwd: str | None = None
    qemu: QemuTarget | None = None
    max_passes: int = 1_000_000
    debug_dirs: tuple[str, ...] = ()

    @classmethod
    def picked(
        cls,
        *,
        gdb: str | None,
        qemu: QemuTarget | None,
        cwd: str | None,
        debug_dirs: tuple[str, ...],
    ) -> LldbDriver:
        """For `--debugger lldb` (`gdb`, --gdb PATH, is gdb's alone)."""
        try:
            replay.check_available()
        except LldbUnavailable as e:
            raise UsageError(f"--debugger lldb: {e}") from None
        return cls(cwd, qemu, debug_dirs=debug_dirs)

    @property
    def name(self) -> str:
        return "lldb"

    @property
    def needed_paths(self) -> tuple[str, ...]:
        return tuple(p for p in (self.cwd, *self.debug_dirs) if p)

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
            cwd=self.cwd,
            cancel=cancel,
            on_stop=on_stop,
            qemu=self.qemu,
            max_passes=self.max_passes if max_passes is None else max_passes,
            debug_dirs=self.debug_dirs,
            stop_at_break=stop_at_break,
        )

    def session(self, transcript: Path) -> ReplaySession:
        # lldb runs in a worker process per replay (replay.py): a session is a fresh worker each
        # run.
        return FreshSession(self, transcript)

    def read_core(
        self, core: Path, program: str, *, transcript: Path, argv: list[str]
    ) -> ReplayOutcome:
        return replay.diagnose_core(
            core,
            program,
            transcript=transcript,
            cwd=self.cwd,
            argv=argv,
            debug_dirs=self.debug_dirs,
        )[0]
