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
