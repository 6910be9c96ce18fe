"""Errors the tool reports to its user as one line (never a traceback)."""

from __future__ import annotations

import errno
import os

from spmi_dbg import exits


class SpmiDbgError(Exception):
    """An error with a one-line, user-facing message. The CLI prints `str(err)` and exits
    non-zero."""

    exit_code = exits.BAD_INPUT


class UsageError(SpmiDbgError):
    exit_code = exits.USAGE


class ToolFailure(SpmiDbgError):
    """One of the tool's own helpers failed (a debugger died, stopped answering, or its extension
    failed): never to be mistaken for a result about the program being debugged."""

    exit_code = exits.TOOL_FAILURE


class ClusterLost(SpmiDbgError):
    """The dask cluster a run works on went away (its scheduler died or cannot be reached): the
    run is incomplete, its journals whole; `cause` is what distributed said."""

    exit_code = exits.INCOMPLETE

    def __init__(self, address: str, cause: BaseException) -> None:
        said = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
        self.address = address
        self.cause = f"{type(cause).__name__}: {said}" if said else type(cause).__name__
        super().__init__(f"the dask cluster at {address} went away ({self.cause})")


class InputError(SpmiDbgError):
    """Bad input file: the message names the file, record number and byte offset where known."""

    def __init__(
        self, path: str, message: str, *, record: int = 0, offset: int | None = None, code: int = 0
    ) -> None:
        self.path = path
        self.record = record
        self.offset = offset
        self.code = code
        self.detail = message
        super().__init__(format_location(path, record, offset) + message)


def format_location(path: str, record: int = 0, offset: int | None = None) -> str:
    """`file: record N at offset O: ` -- the shared prefix of every problem line."""
    parts = []
    if record:
        parts.append(f"record {record}")
    if offset is not None:
        parts.append(f"offset {offset}")
    return f"{printable(path, limit=1 << 12)}: " + (" at ".join(parts) + ": " if parts else "")


def printable(text: str, limit: int = 200) -> str:
    """`text` safe to show on one terminal line: control characters (escape sequences, newlines) and
    other unprintable characters escaped as in Python literals, backslashes doubled; cut at `limit`
    characters."""
    out = "".join(
        c if c.isprintable() and c != "\\" else c.encode("unicode_escape").decode("ascii")
        for c in text
    )
    return out if len(out) <= limit else out[:limit] + "..."


# what the system says when a run cannot go on writing (a full disk, a quota, an I/O error, a
# read-only or too-small file system): not the tool's fault nor the input's; the run is incomplete
SYSTEM_STOPS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EFBIG})


def is_system_stop(e: BaseException) -> bool:
    return isinstance(e, OSError) and e.errno in SYSTEM_STOPS


def system_stop_said(e: OSError, where: str | None = None) -> str:
    """What the system stopped, in one line: the file (else `where`), the error with its code, and
    the file system it is on (its mount point), e.g. `t/p3.json: Disk quota exceeded (EDQUOT) on
    the file system at /home`."""
    path = str(e.filename) if e.filename else where
    code = errno.errorcode.get(e.errno or 0, str(e.errno))
    said = f"{e.strerror or 'failed'} ({code})"
    mount = mount_point(path) if path else None
    return (
        (f"{printable(path)}: " if path else "")
        + said
        + (f" on the file system at {printable(mount)}" if mount else "")
    )


def mount_point(path: str) -> str | None:
    """The mount point of the file system `path` (or its nearest existing parent) is on."""
    p = os.path.abspath(path)
    try:
        while not os.path.exists(p):
            p = os.path.dirname(p)
        dev = os.stat(p).st_dev
        while p != "/" and os.stat(os.path.dirname(p)).st_dev == dev:
            p = os.path.dirname(p)
    except OSError:
        return None
    return p
