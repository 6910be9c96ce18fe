"""Outputs are written to a temporary file in the destination directory and renamed into place, so a
failure never leaves a partial file behind and an input is never overwritten in place."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: int = 0o644) -> Iterator[BinaryIO]:
    dest = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent or ".")
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
