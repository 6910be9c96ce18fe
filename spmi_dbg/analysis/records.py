"""The collection a stopped superpmi replays, as evidence: how many method contexts it has, and a
record's identity (IL size, method name) to check a method context number against (mcnumber.py).
Framed once per version of the file in a debugger's process (a triage's session diagnoses one
crash after another in the same collection); a collection that cannot be read is a note, never an
error of the diagnosis."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Protocol

from spmi_dbg.analysis.mcnumber import RecordIdentity
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch.collection import Collection


class Records(Protocol):
    """What the diagnosis asks of the collection: CollectionRecords, or a tape's record of it."""

    path: str
    problem: str | None

    @property
    def count(self) -> int | None: ...

    def identity(self, n: int) -> RecordIdentity | None: ...

    def close(self) -> None: ...


OpenRecords = Callable[[str], Records]


_OPEN_KEPT = 2
# (path, device, inode, size, mtime) -> the collection, framed by its first count: kept open for the
# next diagnosis in this process, at most _OPEN_KEPT of them
_open: OrderedDict[tuple[str, int, int, int, int], Collection] = OrderedDict()


_open_lock = threading.Lock()


def _collection(path: str) -> Collection:
    st = os.stat(path)
    key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _open_lock:
        col = _open.get(key)
        if col is None:
            col = Collection.open(path)
            _open[key] = col
            while len(_open) > _OPEN_KEPT:
                _open.popitem(last=False)[1].close()
        _open.move_to_end(key)
        return col


class CollectionRecords(AbstractContextManager["CollectionRecords"]):
    def __init__(self, path: str) -> None:
        self.path = path
        self.problem: str | None = None
        self._col: Collection | None = None
        self._cache: dict[int, RecordIdentity | None] = {}
        try:
            self._col = _collection(path)
        except (SpmiDbgError, OSError, ValueError) as e:
            self.problem = f"the collection {path} was not read: {e}"

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._col = None  # kept open for the next diagnosis (_open)

    @property
    def count(self) -> int | None:
        return len(self._col) if self._col is not None else None

    def identity(self, n: int) -> RecordIdentity | None:
        if self._col is None or not 1 <= n <= len(self._col):
            return None
        if n not in self._cache:
            try:
                mc = self._col.method_context(n)
                note = mc.name_note
                self._cache[n] = (
                    RecordIdentity(mc.il_size, None, f"record {n}: {note} ({mc.name})")
                    if note
                    else RecordIdentity(mc.il_size, mc.name)
                )
            except (SpmiDbgError, OSError, ValueError) as e:
                self.problem = f"record {n} of {self.path} was not read: {e}"
                self._cache[n] = None
        return self._cache[n]
