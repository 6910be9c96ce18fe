"""What a debugger leaves behind when it dies: its replay keeps running (a tracee whose tracer is
gone is let go), and the debugger may have died before it said the replay's pid. Every debugger of
this tool is started in a session of its own, and its replays stay in that session (they get a
process group of their own, not a session): so the session names them all."""

from __future__ import annotations

import contextlib
import os
import signal


def session_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # after the command name: state, ppid, pgrp, session
            return int(f.read().rpartition(b")")[2].split()[3])
    except (OSError, ValueError, IndexError):
        return None


def kill_session(sid: int) -> None:
    """SIGKILL to every process of session `sid` (the session leader's pid: the debugger's)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and session_of(int(entry)) == sid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry), signal.SIGKILL)
