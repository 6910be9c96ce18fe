"""Where an output directory goes (a repro bundle, a triage, an in-debugger report), made safe:
checked before any work (it must be a directory this run may write, holding nothing but what
spmi-dbg wrote there before), written by one run at a time (a lock beside it), and built in a
temporary sibling that is renamed into place only when complete, so an interrupted run, a full disk
or a second run never leaves a half output that looks whole."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from spmi_dbg.errors import InputError, printable
from spmi_dbg.tempfiles import sweep, temp_file_prefix


def _foreign(directory: Path, ours: Iterable[str], subdirs: str | None = None) -> list[str]:
    allowed = set(ours)
    out = []
    for entry in sorted(os.listdir(directory)):
        if entry in allowed or (
            subdirs is not None and entry.startswith(subdirs) and (directory / entry).is_dir()
        ):
            continue
        # our own temporary names (tempfiles.py)
        if ".spmi-tmp-" in entry or entry.endswith(".spmi-lock"):
            continue
        out.append(entry)
    return out


def check_out_dir(
    out: Path, *, ours: Iterable[str], subdirs: str | None = None, option: str = "--out"
) -> None:
    """Before any replay: `out` is a new name in a writable directory, or a directory this run may
    write that holds only what spmi-dbg writes there (`ours`, and `subdirs*` directories: an earlier
    run's output, replaced when this run's is complete)."""
    shown = printable(str(out))
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise InputError(
            shown,
            f"{option} must name a directory; this is {'a link' if out.is_symlink() else 'a file'}",
        )
    if out.exists():
        foreign = _foreign(out, ours, subdirs)
        if foreign:
            listed = ", ".join(printable(f) for f in foreign[:5]) + (
                " ..." if len(foreign) > 5 else ""
            )
            raise InputError(
                shown,
                f"{option} holds files spmi-dbg did not write ({listed}): refusing to replace "
                "it; name a new or empty directory",
            )
        if not os.access(out, os.W_OK | os.X_OK):
            raise InputError(shown, f"{option} is not writable")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(shown, f"{option}'s directory {printable(str(parent))} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(
            shown,
            f"{option}'s directory {printable(str(parent))} is not writable (the bundle is "
            "built beside it and renamed into place)",
        )


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """One run per output directory: a lock file beside it, held while the run lasts. A second run
    is refused at once (InputError), never left to mix its files with the first's."""
    parent = out.parent if str(out.parent) else Path(".")
    lock = parent / f".{out.name}.spmi-lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise InputError(
            str(out), f"cannot lock it ({printable(str(lock))}: {e.strerror})"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)  # the holder's lock file stays: it is the holder's
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise InputError(
                str(out),
                "another spmi-dbg run is writing this directory: wait for it "
                "or choose another --out",
            ) from None
        raise InputError(str(out), f"cannot lock it: {e.strerror}") from None
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)


def stage(out: Path) -> Path:
    """A fresh temporary sibling of `out` to build the new content in (same file system: renamed
    into place)."""
    parent = out.parent if str(out.parent) else Path(".")
    sweep(parent, ".")
    staged = Path(tempfile.mkdtemp(prefix=temp_file_prefix(out), dir=parent))
    # as mkdir would have made it (mkdtemp's is private to this user)
    os.chmod(staged, 0o777 & ~_umask())
    return staged


def _umask() -> int:
    """The process's umask, read without changing it (os.umask sets it, racing other threads)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def publish(staged: Path, out: Path) -> None:
    """Put the complete `staged` directory in place of `out` (an earlier run's output is moved aside
    first and removed after): at every moment `out` is either the old whole or the new whole."""
    parent = out.parent if str(out.parent) else Path(".")
    old: Path | None = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=temp_file_prefix(out), dir=parent))
        os.rename(out, old / "previous")
    try:
        os.rename(staged, out)
    except OSError:
        if old is not None:  # put the old one back: better the earlier whole than nothing
            os.rename(old / "previous", out)
            shutil.rmtree(old, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
