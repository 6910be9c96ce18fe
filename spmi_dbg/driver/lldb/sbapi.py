"""lldb from outside, through its SB API in this process (docs/debugger-notes.md): the module path
from `lldb-16 -P`, lldb-server from LLVM 16's bin directory; launching a target with its output to
files, resuming with or without the signal, the signal an exited process died of. The worker
(worker.py) drives with these."""

from __future__ import annotations

import os
import re
import shutil
import signal as sig
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from spmi_dbg import stdbuf
from spmi_dbg.errors import SpmiDbgError

EXECUTABLES = ("lldb-16", "lldb")  # looked for on PATH in this order
PACKAGES_HINT = "Debian: apt-get install lldb-16 python3-lldb-16 liblldb-16-dev"
LLDB_SERVER_CANDIDATES = ("/usr/lib/llvm-16/bin/lldb-server",)


class LldbUnavailable(SpmiDbgError):
    pass


def import_lldb() -> ModuleType:
    try:
        import lldb

        found: ModuleType = lldb
        return found
    except ImportError:
        pass
    exe = next((e for e in map(shutil.which, EXECUTABLES) if e is not None), None)
    if exe is None:
        raise LldbUnavailable(f"lldb is not installed ({PACKAGES_HINT})")
    path = subprocess.run([exe, "-P"], capture_output=True, text=True, timeout=30).stdout.strip()
    if not path or not Path(path).is_dir():
        raise LldbUnavailable(
            f"`{exe} -P` did not name lldb's Python module directory ({PACKAGES_HINT})"
        )
    sys.path.append(path)
    try:
        import lldb

        loaded: ModuleType = lldb
        return loaded
    except ImportError as e:
        raise LldbUnavailable(
            f"cannot import lldb's Python module from {path}: {e} ({PACKAGES_HINT})"
        ) from None


def ensure_server() -> None:
    if "LLDB_DEBUGSERVER_PATH" in os.environ:
        return
    for cand in LLDB_SERVER_CANDIDATES:
        if os.path.exists(cand):
            os.environ["LLDB_DEBUGSERVER_PATH"] = cand
            return


def launch(
    lldb: Any,
    target: Any,
    argv: list[str],
    stdout: str,
    stderr: str,
    cwd: str | None,
    environment: dict[str, str] | None = None,
) -> Any:
    """Launch argv[0]'s target with stdin from /dev/null and stdout/stderr to files, ASLR off (as
    gdb), in `environment` (None: lldb's own)."""
    info = lldb.SBLaunchInfo(argv[1:])
    buffering = stdbuf.line_buffered()  # superpmi's stdout whole at a fatal stop
    if buffering or environment is not None:
        env = dict(os.environ if environment is None else environment, **buffering)
        info.SetEnvironmentEntries([f"{k}={v}" for k, v in env.items()], False)
    info.AddOpenFileAction(0, "/dev/null", True, False)
    info.AddOpenFileAction(1, stdout, False, True)
    info.AddOpenFileAction(2, stderr, False, True)
    if cwd:
        info.SetWorkingDirectory(cwd)
    info.SetLaunchFlags(info.GetLaunchFlags() | lldb.eLaunchFlagDisableASLR)
    err = lldb.SBError()
    process = target.Launch(info, err)
    if not err.Success() or not process.IsValid():
        raise SpmiDbgError(f"lldb could not launch {argv[0]}: {err.GetCString()}")
    return process


def death_signal(process: Any, delivered: int | None) -> int | None:
    """The signal an exited process died of, or None for a normal exit. lldb 16 reports death by a
    signal as an exit status equal to the signal number, with no description (the gdb-remote 'X'
    packet's kind is lost): a status equal to the signal the last resume delivered is that signal
    killing the process (superpmi's own exit codes are 0-3, 254, 255; docs/superpmi-conventions.md
    1.2)."""
    status = int(process.GetExitStatus())
    desc = process.GetExitDescription() or ""
    if "signal" in desc.lower():
        return _signal_from(desc)
    if not desc and delivered is not None and status == delivered:
        return status
    return None


def resume(
    process: Any, thread: Any, signo: int | None, *, deliver: bool, step_over_brk: bool
) -> Any:
    """Continue. With deliver, the signal the thread stopped with reaches the program; without, it
    is suppressed for this one resume (a debug break the debugger absorbs; on aarch64 the pc steps
    over brk, which would trap again). Returns Continue's SBError."""
    signals = process.GetUnixSignals()
    if signo is not None and not deliver:
        signals.SetShouldSuppress(signo, True)
        if step_over_brk:
            frame = thread.GetFrameAtIndex(0)
            frame.SetPC(frame.GetPC() + 4)
    err = process.Continue()
    if signo is not None and not deliver:
        signals.SetShouldSuppress(signo, False)
    return err


def _signal_from(text: str) -> int | None:
    m = re.search(r"(SIG[A-Z]+)", text)
    if m and hasattr(sig, m.group(1)):
        return int(getattr(sig, m.group(1)))
    return None
