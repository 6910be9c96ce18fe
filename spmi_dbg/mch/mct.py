""".mct table of contents (docs/mch-format.md section 6): read, validate, look up, write.

Layout: "INDX", u32 count, count x 48-byte entries {i64 Offset; i32 Number; char Hash[33]; 3 pad},
"INDX". Numbers strictly increase; superpmi binary-searches them for `-c`. The hash field is opaque
to us: it is copied from a source .mct when there is one and otherwise left all-zero ("unknown"),
never invented.
"""

from __future__ import annotations

import os
import stat
import struct
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from spmi_dbg.atomic import atomic_write_bytes
from spmi_dbg.errors import InputError
from spmi_dbg.mch import pyscan
from spmi_dbg.mch.native import Native, load

ENTRY = struct.Struct("<qi33s3x")
assert ENTRY.size == 48
SENTINEL = b"INDX"
HASH_SIZE = 33
NO_HASH = b"\0" * HASH_SIZE

COLLECTION_SUFFIXES = (".mch", ".mc")


def toc_path_for(mch: str | os.PathLike[str]) -> Path:
    """Where we write the index of a collection: `<file>.mct` appended, as `mcs -toc file.mch`
    writes `file.mch.mct` and as superpmi.py's downloaded collections are stored."""
    p = Path(mch)
    return p.with_name(p.name + ".mct")


def find_toc(mch: str | os.PathLike[str]) -> Path | None:
    """The index paired with a collection, as superpmi looks for it: `file.mch.mct`, then
    `file.mct`."""
    p = Path(mch)
    # "", "." or "/": no file name, so no index beside it (the open refuses the path itself)
    if not p.name:
        return None
    for candidate in (toc_path_for(p), p.with_suffix(".mct")):
        try:
            found = candidate != p and candidate.is_file()
        except OSError:  # too long, not searchable: no index there (the open says what is wrong)
            found = False
        if found:
            return candidate
    return None


def collection_for_toc(toc: str | os.PathLike[str]) -> Path:
    """The collection paired with a .mct given on the command line (`file.mch.mct` -> `file.mch`,
    `file.mct` -> `file.mch` or `file.mc`)."""
    p = Path(toc)
    stripped = p.with_suffix("")
    if stripped.suffix.lower() in COLLECTION_SUFFIXES:
        return stripped
    for suffix in COLLECTION_SUFFIXES:
        candidate = p.with_suffix(suffix)
        if candidate.exists():
            return candidate
    return p.with_suffix(".mch")


class TocEntry(NamedTuple):
    offset: int
    number: int
    hash_field: bytes  # the raw 33 bytes

    @property
    def hash(self) -> str | None:
        """The method hash as stored (32 hex chars), or None when the field is empty (unknown)."""
        text = self.hash_field.split(b"\0", 1)[0].decode("ascii", "replace")
        return text or None


class Toc:
    """A validated .mct. Lookups go through the native library when present (no per-entry Python
    objects for a 300k-entry index); otherwise through the parsed Python list."""

    def __init__(
        self,
        path: Path,
        count: int,
        native: tuple[Native, object] | None,
        entries: list[TocEntry] | None,
    ) -> None:
        self.path = path
        self.count = count
        self._native = native
        self._entries = entries

    def __len__(self) -> int:
        return self.count

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        if self._native is not None:
            nat, handle = self._native
            nat.lib.spmimch_toc_close(handle)
            self._native = None

    def entry(self, i: int) -> TocEntry:
        if self._entries is not None:
            return self._entries[i]
        assert self._native is not None
        nat, handle = self._native
        off = nat.ffi.new("int64_t*")
        num = nat.ffi.new("int32_t*")
        h = nat.ffi.new("char[33]")
        nat.lib.spmimch_toc_entry(handle, i, off, num, h)
        return TocEntry(int(off[0]), int(num[0]), bytes(nat.ffi.buffer(h, HASH_SIZE)))

    def __iter__(self) -> Iterator[TocEntry]:
        for i in range(self.count):
            yield self.entry(i)

    def offsets_and_numbers_raw(self) -> tuple[bytes, bytes]:
        """All offsets (i64 LE) and numbers (i32 LE), packed, from one bulk read of the validated
        file."""
        data = self.path.read_bytes()[8 : 8 + 48 * self.count]
        if not data:
            return b"", b""
        view = memoryview(data)
        return view.cast("q")[0::6].tobytes(), view.cast("i")[2::12].tobytes()

    def offsets_and_numbers(self) -> tuple[list[int], list[int]]:
        offsets, numbers = self.offsets_and_numbers_raw()
        return array("q", offsets).tolist(), array("i", numbers).tolist()

    def all_entries(self) -> list[TocEntry]:
        """Every entry, in one bulk read of the (already validated) file."""
        data = self.path.read_bytes()[8 : 8 + 48 * self.count]
        return [TocEntry(o, n, h) for o, n, h in ENTRY.iter_unpack(data)]

    def find(self, number: int) -> TocEntry | None:
        if self._native is not None:
            nat, handle = self._native
            i = int(nat.lib.spmimch_toc_find(handle, number)) if 0 < number < 2**31 else -1
            return self.entry(i) if i >= 0 else None
        assert self._entries is not None
        lo, hi = 0, len(self._entries)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._entries[mid].number < number:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self._entries) and self._entries[lo].number == number:
            return self._entries[lo]
        return None


def open_toc(path: str | os.PathLike[str], mch_size: int, *, backend: str = "auto") -> Toc:
    p = Path(path)
    nat = load() if backend != "python" else None
    if nat is not None:
        err = nat.ffi.new("spmimch_error*")
        handle = nat.lib.spmimch_toc_open(str(p).encode(), mch_size, err)
        if handle == nat.ffi.NULL:
            raise _error(p, err.code, err.record, err.offset, nat.ffi.string(err.message).decode())
        return Toc(p, int(nat.lib.spmimch_toc_count(handle)), (nat, handle), None)
    return _open_toc_py(p, mch_size)


def _error(p: Path, code: int, record: int, offset: int, message: str) -> InputError:
    problem = pyscan.Problem(code, record, offset, message)
    where_offset = None if code in (pyscan.E_IO, pyscan.E_NOTFILE) else offset
    return InputError(str(p), problem.message, record=record, offset=where_offset, code=code)


def _open_toc_py(p: Path, mch_size: int) -> Toc:
    """The pure-Python reader: the same checks, in the same order, with the C reader's messages
    and offsets (spmimch.c)."""
    data = _toc_bytes(p)
    count = _toc_count(p, data)
    entries: list[TocEntry] = []
    for i in range(count):
        pos = 8 + 48 * i
        entry = TocEntry(*ENTRY.unpack_from(data, pos))
        _check_entry(p, i, pos, entry, entries[-1] if entries else None, mch_size)
        entries.append(entry)
    return Toc(p, count, None, entries)


def _toc_bytes(p: Path) -> bytes:
    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a special file"
            raise _error(
                p,
                pyscan.E_NOTFILE,
                0,
                0,
                f"not a regular file: expected a .mct index, found {kind}",
            )
        return p.read_bytes()
    except OSError as e:
        raise _error(p, pyscan.E_IO, 0, 0, f"cannot open: {e.strerror}") from None


def _toc_count(p: Path, data: bytes) -> int:
    """The entry count, once the sentinels and the size agree with it."""
    if len(data) < 8:
        raise _error(
            p,
            pyscan.E_TOC,
            0,
            0,
            f"missing the starting sentinel/length: expected at least 8 bytes, found {len(data)}",
        )
    if data[:4] != SENTINEL:
        found = " ".join(f"{b:02x}" for b in data[:4])
        raise _error(
            p,
            pyscan.E_TOC,
            0,
            0,
            f"missing the starting sentinel/length: expected 'INDX', found {found}",
        )
    (count,) = struct.unpack_from("<I", data, 4)
    need = 8 + 48 * count + 4
    # the offsets the C reader reports (spmimch.c): where the file ends, where it should have
    if len(data) < need:
        said = f"truncated: expected {need} bytes for {count} entries, found {len(data)}"
        raise _error(p, pyscan.E_TOC, 0, len(data), said)
    if len(data) > need:
        said = f"unexpected size: expected {need} bytes for {count} entries, found {len(data)}"
        raise _error(p, pyscan.E_TOC, 0, need, said)
    if data[need - 4 : need] != SENTINEL:
        found = " ".join(f"{b:02x}" for b in data[need - 4 : need])
        said = f"missing the ending sentinel: expected 'INDX', found {found}"
        raise _error(p, pyscan.E_TOC, 0, need - 4, said)
    return int(count)


def _check_entry(
    p: Path, i: int, pos: int, entry: TocEntry, prev: TocEntry | None, mch_size: int
) -> None:
    off, num = entry.offset, entry.number
    last = max(mch_size - 8, 0)
    said = None
    if num < 1:
        said, num = f"entry {i}: expected a method context number >= 1, found {num}", 0
    elif prev is not None and num <= prev.number:
        said = f"not sorted: expected numbers to increase, found {num} after {prev.number}"
    elif off < 0:
        said = f"entry {i}: negative offset: expected 0 to {last}, found {off}"
    # records are in file order: a later number lies further on
    elif prev is not None and off <= prev.offset:
        said = (
            f"entry {i}: offsets out of order: expected more than {prev.offset} (entry "
            f"{i - 1}'s), found {off}"
        )
    elif off + 8 > mch_size:
        said = (
            f"entry {i}: offset past the end of the collection: expected at most {last}, "
            f"found {off}"
        )
    if said is not None:
        raise _error(p, pyscan.E_TOC, num, pos, said)


def build_toc_bytes(entries: Sequence[tuple[int, int, bytes | None]]) -> bytes:
    """Serialise (offset, number, hash33-or-None) entries; padding bytes are zero."""
    out = [SENTINEL, struct.pack("<I", len(entries))]
    prev = 0
    for off, num, h in entries:
        if num < 1 or num <= prev:
            raise ValueError(f"not sorted: expected numbers to increase, found {num} after {prev}")
        prev = num
        out.append(ENTRY.pack(off, num, (h or NO_HASH)[:HASH_SIZE].ljust(HASH_SIZE, b"\0")))
    out.append(SENTINEL)
    return b"".join(out)


def write_toc(
    path: str | os.PathLike[str], entries: Sequence[tuple[int, int, bytes | None]]
) -> None:
    atomic_write_bytes(path, build_toc_bytes(entries))
