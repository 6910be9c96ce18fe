"""What a debugger leaves behind when it dies: its replay keeps running (a tracee whose tracer is
gone is let go), and the debugger may have died before it said the replay's pid. Every debugger of
this tool is started in a session of its own, and its replays stay in that session (they get a
process group of their own, not a session): so the session names them all.

A session's id is its leader's pid, and a pid may be used again once the leader and every member of
its session are gone. So the session is remembered with its leader's start time (`LeaderSession`,
taken when the debugger starts), and only processes that started after it and are in that session
are killed; a leader pid that now names another process (a later start time) kills nothing."""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass


def _stat(pid: int) -> tuple[int, int] | None:
    """(session, start time in clock ticks since boot) of a process; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # after the command name: state, ppid, pgrp, session, ..., starttime (field 22)
            fields = f.read().rpartition(b")")[2].split()
        return int(fields[3]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class LeaderSession:
    leader: int  # the debugger's pid, its session's id
    started: int  # its start time (clock ticks since boot)

    @classmethod
    def of(cls, pid: int) -> LeaderSession | None:
        """The session `pid` leads (taken right after it starts); None if it is already gone."""
        found = _stat(pid)
        return None if found is None else cls(pid, found[1])

    def kill(self) -> None:
        """SIGKILL to every process of the session that started after its leader (none if the
        leader's pid names another process now)."""
        leader = _stat(self.leader)
        if leader is not None and leader[1] != self.started:
            return  # the pid was used again: the session is long gone
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            found = _stat(int(entry))
            if found is not None and found[0] == self.leader and found[1] >= self.started:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(entry), signal.SIGKILL)
