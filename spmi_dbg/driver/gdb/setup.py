"""gdb set up for a replay or a core: MI settings, the signal table, the extension and its fault
catchpoints, the symbol index cache, separate debug files, a qemu guest's library paths, and the
program's arguments (docs/debugger-notes.md)."""

from __future__ import annotations

import json
import os
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path

from spmi_dbg import shell, stdbuf
from spmi_dbg.driver.gdb.mi import MiChannel, mi_quote
from spmi_dbg.driver.loader import gdbinit_line
from spmi_dbg.driver.qemu import QemuTarget, library_dirs

FAULTS = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE")  # caught by the conditional catchpoint
STOP_SIGNALS = ("SIGABRT",)  # plus SIGTRAP, stopped on by default

# mi-async: gdb keeps reading commands while the replay runs, so -exec-interrupt is heard. The
# *stopped records need no argument values (the analysis reads frames itself): cheaper stops.
_REPLAY_SETTINGS = (
    "-gdb-set mi-async on",
    "-gdb-set pagination off",
    "-gdb-set startup-with-shell on",
    "-gdb-set print frame-info short-location",
    "-gdb-set print frame-arguments none",
    "-gdb-set confirm off",
)
_CORE_SETTINGS = (
    "-gdb-set pagination off",
    "-gdb-set print frame-info short-location",
    "-gdb-set print frame-arguments none",
    "-gdb-set print entry-values no",
    "-gdb-set confirm off",
)


def replay_env() -> dict[str, str]:
    """SHELL=/bin/sh: the replay's redirections (`set args ... > out 2> err`) are POSIX sh
    syntax."""
    return dict(os.environ, SHELL="/bin/sh")


def should_stop(notes: Path, max_passes: int, signo: int, *more: int) -> str:
    """The extension's `$_spmi_should_stop(...)` call (spmi_dbg.ext.gdb.passing): the quick check
    and the signal policy, inside gdb, writing the stops passed on to `notes`."""
    args = ", ".join(str(n) for n in (max_passes, signo, *more))
    return f"$_spmi_should_stop({json.dumps(str(notes))}, {args})"


def for_replay(
    channel: MiChannel,
    program: str,
    notes: Path,
    max_passes: int,
    debug_dirs: tuple[str, ...] = (),
) -> None:
    """A gdb about to run `program`: every signal to the replay unseen but SIGTRAP, SIGABRT and the
    faults, whose catchpoints ask the extension; the symbols found through the index cache and the
    debug directories."""
    for command in _REPLAY_SETTINGS:
        channel.must(command)
    channel.must_console("handle all nostop noprint pass")
    channel.must_console(f"handle {' '.join(STOP_SIGNALS)} stop print pass")
    channel.must_console(gdbinit_line())
    # one catchpoint per signal: the condition is told which (no $_siginfo over qemu)
    for name in FAULTS:
        channel.must_console(f"catch signal {name}")
        channel.must_console(
            f"condition $bpnum {should_stop(notes, max_passes, int(getattr(signal, name)))}"
        )
    symbols(channel, debug_dirs)
    channel.must("-file-exec-and-symbols " + mi_quote(program))


def environment(channel: MiChannel, variables: dict[str, str]) -> None:
    """The replay's environment exactly `variables` (and the line buffering): gdb's inferior
    environment emptied, then set."""
    channel.must_console("unset environment")
    for name, value in variables.items():
        channel.must_console(f"set environment {name}={value}")
    line_buffered(channel)


def line_buffered(channel: MiChannel) -> None:
    """superpmi's stdout whole at a fatal stop (spmi_dbg.stdbuf)."""
    for name, value in stdbuf.line_buffered().items():
        channel.must_console(f"set environment {name}={value}")


def for_core(
    channel: MiChannel,
    program: str | None,
    debug_dirs: tuple[str, ...],
    qemu: QemuTarget | None,
    argv: Sequence[str],
) -> None:
    """A gdb about to open a core of `program` (None: gdb finds it from the core)."""
    for command in _CORE_SETTINGS:
        channel.must(command)
    channel.must_console(gdbinit_line())
    if qemu is not None:
        remote_paths(channel, qemu, argv or [program or ""])
    symbols(channel, debug_dirs)
    if program is not None:
        channel.must("-file-exec-and-symbols " + mi_quote(program))
    # a core keeps no argv gdb tells: the diagnosis reads the command's (its JITs, -c, -target)
    if argv:
        set_args(channel, argv)


def set_args(channel: MiChannel, argv: Sequence[str], redirect: str = "") -> None:
    """The replay's arguments (what the extension's argv() reads), and its redirections."""
    channel.must_console(f"set args {shell.join(list(argv[1:]))}{redirect}")


def redirections(stdout: Path, stderr: Path) -> str:
    return f" > {shell.quote(str(stdout))} 2> {shell.quote(str(stderr))} < /dev/null"


def index_cache_dir() -> str:
    """Where gdb keeps the symbol indexes it builds (one per build-id, checked by gdb): a directory
    of this user's under the temp directory, so every later gdb of this tool (each partition, each
    triage segment, the next run) reads the replay's and the JITs' symbols from the index instead of
    the DWARF."""
    return os.path.join(tempfile.gettempdir(), f"spmi-dbg-gdb-index-{os.getuid()}")


def symbols(channel: MiChannel, debug_dirs: tuple[str, ...]) -> None:
    """The index cache (a gdb older than 13 simply does without it), and where gdb looks for
    separate debug files (by gnu_debuglink, and by build-id under .build-id/)."""
    channel.console(f"set index-cache directory {index_cache_dir()}")
    channel.console("set index-cache enabled on")
    if debug_dirs:
        channel.must_console("set debug-file-directory " + ":".join(debug_dirs))


def remote_paths(channel: MiChannel, qemu: QemuTarget, argv: Sequence[str]) -> None:
    """The guest's libraries from the sysroot; the JITs (absolute host paths) from their own
    directories."""
    dirs = library_dirs(list(argv))
    channel.must_console(f"set sysroot {qemu.sysroot}")
    channel.must_console(f"set solib-search-path {':'.join(dirs)}")
