"""Where an output directory goes (a repro bundle, a triage, an in-debugger report), made safe:
checked before any work (it must be a directory this run may write, holding nothing but what
spmi-dbg wrote there before), written by one run at a time (a lock beside it), and built in a
temporary sibling that is renamed into place only when complete, so an interrupted run, a full disk
or a second run never leaves a half output that looks whole."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from spmi_dbg.errors import InputError, printable
from spmi_dbg.tempfiles import is_dead_runs, sweep, temp_file_prefix


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
    into place). An earlier run killed in the middle of a two-step publish left `out` missing and
    its previous content aside: that is put back first, then the dead runs' leftovers swept."""
    parent = out.parent if str(out.parent) else Path(".")
    recover(out)
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
    """Put the complete `staged` directory in place of `out`: at every moment `out` is either the
    old whole or the new whole. An earlier run's output is swapped with the new one in one step
    (renameat2 RENAME_EXCHANGE) where the file system has it, then removed; elsewhere it is moved
    aside first (a kill between the two renames leaves it aside, and the next run's stage() puts it
    back)."""
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir() and not out.is_symlink() and exchange(staged, out):
        shutil.rmtree(staged, ignore_errors=True)  # now the earlier output
        return
    old: Path | None = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=temp_file_prefix(out), dir=parent))
        os.rename(out, old / PREVIOUS)
    try:
        os.rename(staged, out)
    except OSError:
        if old is not None:  # put the old one back: better the earlier whole than nothing
            os.rename(old / PREVIOUS, out)
            shutil.rmtree(old, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


PREVIOUS = "previous"  # an earlier output, moved aside by a two-step publish
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> bool:
    """Swap the names `a` and `b` atomically (Linux renameat2 with RENAME_EXCHANGE); False where the
    C library, the kernel or the file system has no such operation (nothing is changed then)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def recover(out: Path) -> bool:
    """`out`'s earlier content put back when a dead run moved it aside and was killed before the
    new content took its place (True: it was)."""
    if out.exists() or out.is_symlink():
        return False
    parent = out.parent if str(out.parent) else Path(".")
    prefix = f".{out.name}.spmi-tmp-"
    try:
        entries = sorted(os.listdir(parent))
    except OSError:
        return False
    for name in entries:
        aside = parent / name / PREVIOUS
        if name.startswith(prefix) and is_dead_runs(name) and aside.is_dir():
            os.rename(aside, out)
            return True
    return False
