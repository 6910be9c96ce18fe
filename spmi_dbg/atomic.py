"""Outputs are written to a temporary file in the destination directory and renamed into place, so a
failure never leaves a partial file behind and an input is never overwritten in place. Before any
work, an output that would destroy something is refused (`check_output`): an input, an input's
index, a link to either, or anything but a regular file or a new name (a device such as /dev/null, a
FIFO, a directory)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from spmi_dbg.errors import InputError, printable
from spmi_dbg.tempfiles import sweep, temp_file_prefix

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_output(
    path: str | os.PathLike[str],
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    what: str = "output",
) -> Path:
    """`path` as an output that destroys nothing, else a UsageError naming it: it must be a new name
    in an existing directory, or a regular file that is none of `inputs` (compared by device and
    inode, so a symbolic or hard link to an input is refused too). Returns `path`. InputError (one
    line naming it)."""
    out = Path(path)
    shown = printable(str(out))
    try:
        st = os.stat(out)  # through a link: what would be replaced in effect
    except FileNotFoundError:
        parent = out.parent
        if not parent.is_dir():
            raise InputError(
                shown, f"the {what}'s directory {printable(str(parent))} does not exist"
            ) from None
        return out
    except OSError as e:
        raise InputError(shown, f"cannot use as the {what}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            shown,
            f"is {_kind(st.st_mode)}, not a regular file: refusing to overwrite it with the {what}",
        )
    for source in inputs:
        try:
            same = os.path.samestat(st, os.stat(source))
        except OSError:
            continue
        if same:
            link = " (through a link)" if Path(source).absolute() != out.absolute() else ""
            raise InputError(
                shown,
                f"is the input {printable(str(source))}{link}: refusing to overwrite it with "
                f"the {what}",
            )
    return out


def prepare_destination(dest: Path) -> Path:
    """Before a temporary file is written beside `dest` (here or by libspmimch): refuse a
    destination that is not a regular file (the last line of defence: never rename over a device),
    and remove the dead runs' temporary files in its directory. Returns the directory."""
    with contextlib.suppress(FileNotFoundError):
        st = os.stat(dest)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"{dest} is {_kind(st.st_mode)}, not a regular file")
    directory = dest.parent if str(dest.parent) else Path(".")
    sweep(directory, ".")
    return directory


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: int = 0o644) -> Iterator[BinaryIO]:
    dest = Path(path)
    directory = prepare_destination(dest)
    fd, tmp = tempfile.mkstemp(prefix=temp_file_prefix(dest), dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, mode: int = 0o644) -> None:
    with atomic_open(path, mode) as f:
        f.write(data)


def atomic_write_text(path: str | os.PathLike[str], text: str, mode: int = 0o644) -> None:
    atomic_write_bytes(path, text.encode(), mode)
