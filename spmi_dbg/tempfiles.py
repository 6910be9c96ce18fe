"""Temporary files and directories named after the run that made them:
`spmi-<kind>-<host>-<pid>-<random>` (directories under the system's temp directory) and
`.<name>.spmi-tmp-<host>-<pid>-<random>` (a file being written beside its destination, renamed into
place when complete; libspmimch names its own the same way). A run interrupted by SIGINT or SIGTERM
removes its own; one killed outright (SIGKILL, a crash) cannot, so every run first removes the
leftovers of dead runs of this host it finds where it is about to write: a name whose host is this
one and whose pid no longer runs. Nothing of a live run, of another host (a shared file system) or
of another user is touched."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import stat
import tempfile
from pathlib import Path

_LEFTOVER = re.compile(r"spmi-(?:tmp|[a-z]+)-(?P<host>[A-Za-z0-9._]+)-(?P<pid>\d+)-[A-Za-z0-9_]+$")


def host_tag() -> str:
    """This host's name as it appears in temporary names (no dashes: they separate the fields)."""
    return re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"


def run_tag() -> str:
    """`<host>-<pid>`, computed at each call (a forked child has its own)."""
    return f"{host_tag()}-{os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def is_dead_runs(name: str) -> bool:
    """Whether `name` is a temporary name of a run of this host that no longer runs."""
    m = _LEFTOVER.search(name)
    return m is not None and m["host"] == host_tag() and not _alive(int(m["pid"]))


def sweep(directory: str | os.PathLike[str], prefix: str = "") -> list[Path]:
    """Remove the dead runs' temporary files and directories in `directory` whose names start with
    `prefix`; return what was removed. Errors (a race with another sweep, no permission) are
    ignored."""
    removed: list[Path] = []
    uid = os.getuid()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if (
            not entry.name.startswith(prefix)
            or "spmi-" not in entry.name
            or not is_dead_runs(entry.name)
        ):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if st.st_uid != uid:
            continue
        path = Path(entry.path)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        removed.append(path)
    return removed


def temp_dir(kind: str) -> tempfile.TemporaryDirectory[str]:
    """A fresh `spmi-<kind>-<host>-<pid>-*` directory under the system's temp directory (removed
    when the context ends), after the dead runs' leftovers there are removed."""
    sweep(tempfile.gettempdir(), "spmi-")
    return tempfile.TemporaryDirectory(prefix=f"spmi-{kind}-{run_tag()}-")


def temp_file_prefix(destination: Path) -> str:
    """The name prefix of the temporary file written beside `destination`."""
    return f".{destination.name}.spmi-tmp-{run_tag()}-"
