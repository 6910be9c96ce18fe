"""The one place that picks the debugger: gdb (pygdbmi, spmi_dbg.driver.gdbmi), lldb (its SB API in a worker
process, spmi_dbg.driver.lldb_driver), either attached to qemu-user's gdbstub for another architecture's
program (spmi_dbg.driver.qemu). A missing tool is a UsageError naming the Debian package."""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.debugfiles import debugger_dirs
from spmi_dbg.driver import gdbmi, lldb_driver
from spmi_dbg.driver.base import Driver, ReplaySession, StopCallback
from spmi_dbg.driver.lldb_session import LldbUnavailable
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.qemu import DEFAULT_SYSROOTS, QemuTarget
from spmi_dbg.errors import UsageError
from spmi_dbg.tempfiles import temp_dir

DEBUGGERS = ("gdb", "lldb")


@dataclass(frozen=True)
class GdbDriver:
    gdb: str  # the executable: gdb, or gdb-multiarch for a qemu guest
    cwd: str | None = None
    qemu: QemuTarget | None = None
    max_passes: int = 1_000_000  # stops passed on before one is taken as the stop (0: the very first)
    debug_dirs: tuple[str, ...] = ()  # where separate debug files are (debugfiles.debugger_dirs)

    @property
    def name(self) -> str:
        return "gdb-multiarch" if self.qemu is not None else "gdb"

    @property
    def needed_paths(self) -> tuple[str, ...]:
        return tuple(p for p in (self.gdb, self.cwd, *self.debug_dirs) if p)

    def run_replay(self, argv: list[str], *, timeout: float, stdout: Path, stderr: Path, transcript: Path,
                   cancel: threading.Event | None = None, on_stop: StopCallback | None = None,
                   stop_at_break: bool = False, max_passes: int | None = None) -> ReplayOutcome:
        return gdbmi.run_replay(argv, timeout=timeout, stdout=stdout, stderr=stderr, transcript=transcript,
                                gdb=self.gdb, cwd=self.cwd, cancel=cancel, on_stop=on_stop, qemu=self.qemu,
                                max_passes=self.max_passes if max_passes is None else max_passes,
                                debug_dirs=self.debug_dirs, stop_at_break=stop_at_break)

    def session(self, transcript: Path) -> ReplaySession:
        if self.qemu is not None:  # each run attaches to a new gdbstub
            return FreshSession(self, transcript)
        return gdbmi.GdbSession(transcript=transcript, gdb=self.gdb, cwd=self.cwd, max_passes=self.max_passes,
                                debug_dirs=self.debug_dirs)

    def read_core(self, core: Path, program: str, *, transcript: Path, argv: list[str]) -> ReplayOutcome:
        return gdbmi.diagnose_core(core, program, transcript=transcript, gdb=self.gdb, cwd=self.cwd,
                                   qemu=self.qemu, argv=argv, debug_dirs=self.debug_dirs)[0]


@dataclass(frozen=True)
class LldbDriver:
    cwd: str | None = None
    qemu: QemuTarget | None = None
    max_passes: int = 1_000_000
    debug_dirs: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return "lldb"

    @property
    def needed_paths(self) -> tuple[str, ...]:
        return tuple(p for p in (self.cwd, *self.debug_dirs) if p)

    def run_replay(self, argv: list[str], *, timeout: float, stdout: Path, stderr: Path, transcript: Path,
                   cancel: threading.Event | None = None, on_stop: StopCallback | None = None,
                   stop_at_break: bool = False, max_passes: int | None = None) -> ReplayOutcome:
        return lldb_driver.run_replay(argv, timeout=timeout, stdout=stdout, stderr=stderr, transcript=transcript,
                                      cwd=self.cwd, cancel=cancel, on_stop=on_stop, qemu=self.qemu,
                                      max_passes=self.max_passes if max_passes is None else max_passes,
                                      debug_dirs=self.debug_dirs, stop_at_break=stop_at_break)

    def session(self, transcript: Path) -> ReplaySession:
        # lldb runs in a worker process per replay (lldb_driver): a session is a fresh worker each run.
        return FreshSession(self, transcript)

    def read_core(self, core: Path, program: str, *, transcript: Path, argv: list[str]) -> ReplayOutcome:
        return lldb_driver.diagnose_core(core, program, transcript=transcript, cwd=self.cwd, argv=argv,
                                         debug_dirs=self.debug_dirs)[0]


class FreshSession:
    """A session whose every run is a fresh debugger (lldb's worker per replay; a qemu guest's new gdbstub)."""

    def __init__(self, driver: Driver, transcript: Path) -> None:
        self.driver = driver
        self.transcript = transcript
        self.broken = False

    def run(self, argv: list[str], *, timeout: float, stdout: Path, stderr: Path,
            cancel: threading.Event | None = None, on_stop: StopCallback | None = None,
            stop_at_break: bool = False, transcript: Path | None = None) -> ReplayOutcome:
        self.transcript = transcript or self.transcript
        return self.driver.run_replay(argv, timeout=timeout, stdout=stdout, stderr=stderr, transcript=self.transcript,
                                      cancel=cancel, on_stop=on_stop, stop_at_break=stop_at_break)

    def close(self) -> None:
        pass


def qemu_target(arch: str, sysroot: str | None) -> QemuTarget:
    """A qemu-user guest of `arch` with its libraries under `sysroot` (default Debian's cross libraries)."""
    target = QemuTarget(arch, sysroot or DEFAULT_SYSROOTS[arch])
    if shutil.which(target.emulator) is None:
        raise UsageError(f"{target.emulator} not found: --qemu needs qemu-user (Debian: apt-get install qemu-user)")
    if not Path(target.sysroot, "lib").is_dir():
        raise UsageError(f"--sysroot {target.sysroot}: no lib/ directory there (Debian's cross libraries: apt-get "
                         f"install libc6-{'arm64' if target.arch == 'aarch64' else target.arch}-cross)")
    return target


def pick(debugger: str, *, gdb: str | None = None, qemu: QemuTarget | None = None, cwd: str | None = None,
         debug_dirs: tuple[str, ...] = ()) -> Driver:
    """The driver for `--debugger NAME` (`--gdb PATH` names gdb's executable; `qemu` a guest to attach to;
    `debug_dirs` the checked `--debug-dir`s)."""
    dirs = debugger_dirs(debug_dirs)
    if debugger == "lldb":
        try:
            lldb_driver.check_available()
        except LldbUnavailable as e:
            raise UsageError(f"--debugger lldb: {e}") from None
        return LldbDriver(cwd, qemu, debug_dirs=dirs)
    if debugger != "gdb":
        raise UsageError(f"--debugger {debugger}: expected one of {', '.join(DEBUGGERS)}")
    return GdbDriver(find_gdb(gdb, qemu), cwd, qemu, debug_dirs=dirs)


def find_gdb(name: str | None, qemu: QemuTarget | None = None) -> str:
    wanted = name or ("gdb-multiarch" if qemu is not None else "gdb")
    found = shutil.which(wanted)
    if found is None:
        package = "gdb-multiarch" if qemu is not None else "gdb"
        raise UsageError(f"{wanted} not found: {package} is needed to replay under a debugger (Debian: apt-get "
                         f"install {package}), or name it with --gdb PATH")
    return found


def command_of_core(core: Path, gdb_name: str | None = None) -> str | None:
    """The command line a core file names ("Core was generated by `...`"; the kernel keeps 80 characters), as
    gdb reads it (lldb does not tell it)."""
    wanted = gdb_name or "gdb"
    gdb = shutil.which(wanted)
    if gdb is None:
        raise UsageError(f"{wanted} not found: gdb is needed to read the core file (Debian: apt-get install gdb)")
    with temp_dir("core") as tmp:
        return gdbmi.diagnose_core(core, None, transcript=Path(tmp) / "gdb.log", gdb=gdb, cwd=os.getcwd())[1]
