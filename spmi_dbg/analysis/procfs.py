"""What /proc tells about a live inferior, for the debugger adapters (both read it the same way)."""

from __future__ import annotations


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


def caught_signals(pid: int | None) -> int | None:
    """The SigCgt mask of /proc/PID/status: which signals the process has handlers for."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return int(line.split()[1], 16)
    except OSError:
        return None
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
