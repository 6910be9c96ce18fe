"""What /proc tells about a live inferior, for the debugger adapters (both read it the same way)."""

from __future__ import annotations

import os


def cmdline(pid: int | None) -> list[str] | None:
    """The inferior's argv from /proc/PID/cmdline (None for a core file or a finished process)."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            parts = f.read().split(b"\0")
    except OSError:
        return None
    return [p.decode(errors="replace") for p in parts if p] or None


_cmdlines: dict[tuple[int, int], list[str]] = {}


def cmdline_cached(pid: int | None) -> list[str] | None:
    """cmdline(pid), read once per process (keyed by pid and start time: a pid can be reused)."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            started = int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return cmdline(pid)
    key = (pid, started)
    if key not in _cmdlines:
        argv = cmdline(pid)
        if argv is None:
            return None
        _cmdlines[key] = argv
    return list(_cmdlines[key])


_status: list[tuple[int, int]] = []  # (pid, descriptor): the one process being replayed


def _read_status(pid: int) -> bytes | None:
    """/proc/PID/status, read through a descriptor kept open for the last pid asked (a read at
    offset 0 makes the kernel write it anew: it is read at every stop a replay passes on). The
    descriptor of a process that is gone reads ESRCH, even when its pid is taken again: then it is
    opened afresh."""
    for _ in range(2):
        if not _status or _status[0][0] != pid:
            while _status:
                os.close(_status.pop()[1])
            try:
                _status.append((pid, os.open(f"/proc/{pid}/status", os.O_RDONLY | os.O_CLOEXEC)))
            except OSError:
                return None
        try:
            return os.pread(_status[0][1], 16384, 0)
        except OSError:
            os.close(_status.pop()[1])
    return None


def caught_signals(pid: int | None) -> int | None:
    """The SigCgt mask of /proc/PID/status: which signals the process has handlers for, as of now
    (read afresh at every call: a handler that declines a fault restores the default action)."""
    if not pid:
        return None
    text = _read_status(pid)
    if text is None:
        return None
    at = text.find(b"\nSigCgt:")
    if at < 0:
        return None
    try:
        return int(text[at + 8 : text.index(b"\n", at + 8)], 16)
    except ValueError:
        return None


def thread_name(pid: int | None, tid: int) -> str | None:
    """A thread's name from /proc/PID/task/TID/comm (what gdb shows as its name; None when not
    readable)."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/task/{tid}/comm", encoding="utf-8", errors="replace") as f:
            return f.read().rstrip("\n") or None
    except OSError:
        return None
