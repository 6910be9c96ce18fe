"""`Collection`: a SuperPMI .mch/.mc (and its .mct) opened read-only.

The native library (mmap + C scanner) does the work when it is installed; the pure-Python scanner
gives the same results for small jobs or when it is not. Method context numbers are 1-based file
positions, as in superpmi.
"""

from __future__ import annotations

import mmap
import os
import stat
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

from spmi_dbg.atomic import atomic_open, check_output, prepare_destination
from spmi_dbg.errors import InputError
from spmi_dbg.mch import pyscan
from spmi_dbg.mch.context import MethodContextInfo, Packet, decode_method_context, split_packets
from spmi_dbg.mch.mct import Toc, collection_for_toc, find_toc, open_toc, toc_path_for, write_toc
from spmi_dbg.mch.native import Native, load
from spmi_dbg.mch.pyscan import SCAN_DONE, SCAN_MORE, SCAN_PACKETS, SCAN_RELEASE, Problem, Stats

# bytes per scan step: progress granularity, and the most mapped pages kept resident
SCAN_BUDGET = 16 << 20


class RecordRef(NamedTuple):
    number: int
    offset: int
    size: int


def _open_error(path: Path, code: int, message: str) -> InputError:
    return InputError(str(path), message, code=code)


class _NativeBackend:
    def __init__(self, nat: Native, path: Path) -> None:
        self.nat = nat
        ffi, lib = nat.ffi, nat.lib
        err = ffi.new("spmimch_error*")
        handle = lib.spmimch_open(os.fsencode(path), err)
        if handle == ffi.NULL:
            raise _open_error(path, err.code, ffi.string(err.message).decode())
        self.handle: Any = handle
        self.size = int(lib.spmimch_file_size(handle))
        self._data = ffi.buffer(lib.spmimch_data(handle), self.size)
        self._records: Any = None
        self._count = 0

    def scan(
        self,
        flags: int,
        budget: int,
        stats: Stats | None,
        problems: list[Problem],
        max_problems: int,
    ) -> int:
        ffi, lib = self.nat.ffi, self.nat.lib
        cap = max(0, min(max_problems - len(problems), 1024))
        buf = ffi.new("spmimch_error[]", max(cap, 1))
        n = ffi.new("uint32_t*")
        cstats = ffi.new("spmimch_stats*") if stats is not None else ffi.NULL
        rc = int(lib.spmimch_scan(self.handle, flags, budget, cstats, buf, cap, n))
        problems.extend(_problem(ffi, buf[i]) for i in range(min(int(n[0]), cap)))
        if stats is not None:
            for pid in range(256):
                stats.packet_count[pid] += cstats.packet_count[pid]
                stats.packet_bytes[pid] += cstats.packet_bytes[pid]
            stats.records += cstats.records
        self._records = lib.spmimch_records(self.handle)
        self._count = int(lib.spmimch_record_count(self.handle))
        return rc

    def position(self) -> int:
        return int(self.nat.lib.spmimch_scan_position(self.handle))

    def reset(self) -> None:
        self.nat.lib.spmimch_scan_reset(self.handle)
        self._records, self._count = None, 0

    def count(self) -> int:
        return self._count

    def record_at(self, i: int) -> tuple[int, int]:
        r = self._records[i]
        return int(r.offset), int(r.size)

    def table(self) -> memoryview:
        if not self._count:
            return memoryview(array("Q"))
        return memoryview(self.nat.ffi.buffer(self._records, self._count * 16)).cast("B").cast("Q")

    def read(self, offset: int, size: int) -> bytes:
        return bytes(self._data[offset : offset + size])

    def check_record(self, offset: int, number: int, flags: int) -> int | Problem:
        ffi = self.nat.ffi
        err = ffi.new("spmimch_error*")
        size = ffi.new("uint64_t*")
        if self.nat.lib.spmimch_check_record(self.handle, offset, number, flags, size, err) != 0:
            return _problem(ffi, err)
        return int(size[0])

    def write_records(self, ranges: Sequence[tuple[int, int]], out: Path) -> None:
        ffi = self.nat.ffi
        offs = ffi.new("uint64_t[]", [r[0] for r in ranges] or [0])
        sizes = ffi.new("uint64_t[]", [r[1] for r in ranges] or [0])
        err = ffi.new("spmimch_error*")
        _prepare(out)
        if self.nat.lib.spmimch_write_records(
            self.handle, offs, sizes, len(ranges), os.fsencode(out), err
        ):
            raise _native_error(ffi, out, err)

    def close(self) -> None:
        if self.handle is not None:
            self._data = None
            self.nat.lib.spmimch_close(self.handle)
            self.handle = None


class _PyBackend(pyscan.PyScanner):
    """The pure-Python scanner over the file mapped read-only: its scan, position, records and
    reset are the scanner's own."""

    def __init__(self, path: Path) -> None:
        try:
            st = path.stat()
        except OSError as e:
            raise _open_error(path, pyscan.E_IO, f"cannot open: {e.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a special file"
            raise _open_error(
                path,
                pyscan.E_NOTFILE,
                f"not a regular file: expected a .mch/.mc collection, found {kind}",
            )
        if st.st_size == 0:
            raise _open_error(
                path, pyscan.E_EMPTY, "empty file: expected at least one method context record"
            )
        try:
            with open(path, "rb") as f:
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as e:
            raise _open_error(path, pyscan.E_IO, f"cannot open: {e.strerror}") from None
        super().__init__(self._map)

    def position(self) -> int:
        return self.pos

    def count(self) -> int:
        return len(self.records)

    def record_at(self, i: int) -> tuple[int, int]:
        return self.records[i]

    def table(self) -> memoryview:
        return memoryview(array("Q", [v for r in self.records for v in r]))

    def read(self, offset: int, size: int) -> bytes:
        return self._map[offset : offset + size]

    def check_record(self, offset: int, number: int, flags: int) -> int | Problem:
        return pyscan.check_record(self._map, offset, number, flags)

    def write_records(self, ranges: Sequence[tuple[int, int]], out: Path) -> None:
        for off, size in ranges:
            if off + size > self.size:
                raise InputError(
                    str(out),
                    f"record range {off}+{size} is past the end of file: "
                    f"expected at most {self.size}",
                    code=pyscan.E_RANGE,
                )
        try:
            with atomic_open(out) as f:
                for off, size in ranges:
                    f.write(self._map[off : off + size])
        except OSError as e:
            raise _write_error(out, e) from None

    def close(self) -> None:
        self.data.release()
        self._map.close()


# the two backends: the same methods, the same answers (a test compares them on mutated files)
_Backend = _NativeBackend | _PyBackend


def _problem(ffi: Any, err: Any) -> Problem:
    """A libspmimch error (spmimch_error) as the Python scanner's Problem."""
    return Problem(
        int(err.code), int(err.record), int(err.offset), ffi.string(err.message).decode()
    )


def _native_error(ffi: Any, out: Path, err: Any) -> InputError:
    return InputError(str(out), ffi.string(err.message).decode(), code=int(err.code))


def _write_error(out: Path, e: OSError) -> InputError:
    return InputError(str(out), f"cannot write {out}: {e.strerror}", code=pyscan.E_IO)


def _prepare(out: Path) -> None:
    """`out`'s directory made and its place checked (atomic.prepare_destination) before libspmimch
    writes it; an InputError when it cannot be written."""
    try:
        prepare_destination(out)
    except OSError as e:
        raise _write_error(out, e) from None


ProgressFn = Callable[[int, int], None]  # (bytes done, total bytes)


class Collection(AbstractContextManager["Collection"]):
    """A collection opened read-only. Use as a context manager, or call close()."""

    def __init__(self, path: Path, backend: _Backend, toc: Toc | None) -> None:
        self.path = path
        self._backend = backend
        self.toc = toc
        self._framed = False
        self._break: Problem | None = None  # the framing error a framing-only scan stopped at

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, backend: str = "auto", use_toc: bool = True
    ) -> Collection:
        """Open a `.mch`/`.mc` (finding its `.mct` as superpmi does) or a `.mct` (opening its pair).
        `backend` is "auto" (native when installed), "native" or "python"."""
        p = Path(path)
        if p.suffix.lower() == ".mct":
            toc_path: Path | None = p
            p = collection_for_toc(p)
        else:
            toc_path = find_toc(p) if use_toc else None
        be: _Backend
        nat = load() if backend != "python" else None
        if backend == "native" and nat is None:
            raise InputError(
                str(p), "the native library libspmimch is not installed (reinstall spmi-dbg)"
            )
        be = _NativeBackend(nat, p) if nat is not None else _PyBackend(p)
        try:
            toc = open_toc(toc_path, be.size, backend=backend) if toc_path is not None else None
        except BaseException:
            be.close()
            raise
        return cls(p, be, toc)

    @property
    def backend_name(self) -> str:
        return "native" if isinstance(self._backend, _NativeBackend) else "python"

    def close(self) -> None:
        if self.toc is not None:
            self.toc.close()
        self._backend.close()

    def __exit__(
        self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def size(self) -> int:
        return self._backend.size

    # ------------------------------------------------------------------ scanning
    def scan(
        self,
        *,
        packets: bool = False,
        stats: Stats | None = None,
        problems: list[Problem] | None = None,
        max_problems: int = 1000,
        progress: ProgressFn | None = None,
    ) -> int:
        """Scan the whole file (framing; with packets=True also packets and maps). Returns the final
        scan status (pyscan.SCAN_DONE or SCAN_STOPPED). Without `problems`, the first problem raises
        InputError."""
        sink: list[Problem] = [] if problems is None else problems
        if self._backend.position() or self._backend.count():
            self._backend.reset()
            self._framed = False
        self._break = None
        flags = SCAN_RELEASE | (SCAN_PACKETS if packets else 0)
        while True:
            rc = self._backend.scan(flags, SCAN_BUDGET, stats, sink, max_problems)
            if progress is not None:
                progress(self._backend.position(), self.size)
            if problems is None and sink:
                raise self._input_error(sink[0])
            if rc != SCAN_MORE:
                break
        if rc == SCAN_DONE:
            self._framed = True
        return rc

    def _input_error(self, p: Problem) -> InputError:
        return InputError(str(self.path), p.message, record=p.record, offset=p.offset, code=p.code)

    def _ensure_framed(self) -> None:
        if self._framed:
            return
        problems: list[Problem] = []
        if self.scan(problems=problems, max_problems=1) != SCAN_DONE:
            if problems:
                raise self._input_error(problems[0])
            raise InputError(
                str(self.path), "the collection's framing is broken (see `spmi-dbg mch verify`)"
            )

    def _frame_until_break(self) -> Problem | None:
        """Frame the records as far as the file allows (once); the framing error that stopped it, or
        None. Records before a framing error can still be read and copied (as `mcs -copy` copies
        them)."""
        if self._framed:
            return None
        if self._break is None:
            problems: list[Problem] = []
            if self.scan(problems=problems, max_problems=1) == SCAN_DONE:
                return None
            self._break = (
                problems[0]
                if problems
                else Problem(
                    pyscan.E_FRAMING,
                    0,
                    self._backend.position(),
                    "the collection's framing is broken (see `spmi-dbg mch verify`)",
                )
            )
        return self._break

    def __len__(self) -> int:
        self._ensure_framed()
        return self._backend.count()

    def __iter__(self) -> Iterator[RecordRef]:
        self._ensure_framed()
        for i in range(self._backend.count()):
            off, size = self._backend.record_at(i)
            yield RecordRef(i + 1, off, size)

    def record_offsets(self) -> list[int]:
        """Offsets of all records, in order (one bulk copy of the record table)."""
        self._ensure_framed()
        return self._backend.table()[0::2].tolist()

    def record_offsets_raw(self) -> bytes:
        """Offsets of all records as packed u64 LE (compares byte-for-byte with an index's
        offsets)."""
        self._ensure_framed()
        return self._backend.table()[0::2].tobytes()

    def record_size_range(self) -> tuple[int, int]:
        """(smallest, largest) record size, without a Python object per record."""
        self._ensure_framed()
        sizes = self._backend.table()[1::2]
        return (min(sizes), max(sizes)) if len(sizes) else (0, 0)

    # ------------------------------------------------------------------ records
    def locate(self, number: int) -> RecordRef:
        """Where method context `number` is. With a .mct, one index lookup and a check of that
        record's framing (no scan of the file); without, one header hop per record up to the end."""
        if number < 1:
            raise InputError(
                str(self.path), f"method context {number} does not exist: numbers start at 1"
            )
        if self.toc is not None and not self._framed:
            entry = self.toc.find(number)
            if entry is None:
                raise InputError(
                    str(self.toc.path),
                    f"method context {number} is not in the index ({self.toc.count} entries)",
                )
            res = self._backend.check_record(entry.offset, number, 0)
            if isinstance(res, Problem):
                raise InputError(
                    str(self.path),
                    f"{res.message} (the index {self.toc.path.name} points here; "
                    "it may be stale: rebuild it with `spmi-dbg mch index`)",
                    record=number,
                    offset=res.offset,
                    code=res.code,
                )
            return RecordRef(number, entry.offset, res)
        broken = self._frame_until_break()
        if broken is not None and number > self._backend.count():
            raise self._input_error(broken)
        if number > self._backend.count():
            raise InputError(
                str(self.path),
                f"method context {number} does not exist: the collection has "
                f"{self._backend.count()}",
            )
        off, size = self._backend.record_at(number - 1)
        return RecordRef(number, off, size)

    def record(self, number: int) -> bytes:
        """The bytes of one record, `m` through `42`: a valid single-method `.mc` as they are."""
        ref = self.locate(number)
        return self._backend.read(ref.offset, ref.size)

    def packets(self, number: int) -> list[Packet]:
        ref = self._checked(number)
        return split_packets(self._backend.read(ref.offset, ref.size), ref.offset)

    def _checked(self, number: int) -> RecordRef:
        """Where method context `number` is, with its packets' framing checked (a record is copied
        only whole: a bad canary inside it is an InputError, not a corrupt copy)."""
        ref = self.locate(number)
        problem = self._backend.check_record(ref.offset, number, SCAN_PACKETS)
        if isinstance(problem, Problem):
            raise self._input_error(problem)
        return ref

    def method_context(self, number: int) -> MethodContextInfo:
        ref = self._checked(number)
        return decode_method_context(number, ref.offset, self._backend.read(ref.offset, ref.size))

    # ------------------------------------------------------------------ writing
    def inputs(self) -> list[Path]:
        """The files this collection is read from: the collection and every index superpmi would
        pair with it (an output must be none of them)."""
        return [
            self.path,
            toc_path_for(self.path),
            self.path.with_suffix(".mct"),
            *([self.toc.path] if self.toc is not None else []),
        ]

    def extract(
        self, numbers: Iterable[int], out: str | os.PathLike[str], *, write_index: bool = True
    ) -> Path:
        """Copy the listed records byte-for-byte, in order, to `out` (and its .mct). Returns the
        .mct path. Hashes in the new .mct come from this collection's .mct when it has one, else
        stay unknown."""
        out_path = Path(out)
        toc_out = toc_path_for(out_path)
        inputs = self.inputs()
        check_output(out_path, inputs=inputs, what="collection")
        if write_index:
            check_output(toc_out, inputs=inputs, what="collection's index")
        refs = [self._checked(n) for n in numbers]
        self._backend.write_records([(r.offset, r.size) for r in refs], out_path)
        if write_index:
            entries: list[tuple[int, int, bytes | None]] = []
            pos = 0
            for i, r in enumerate(refs):
                src = self.toc.find(r.number) if self.toc is not None else None
                entries.append((pos, i + 1, src.hash_field if src is not None else None))
                pos += r.size
            write_index_file(toc_out, entries)
        return toc_out


def record_sizes(collection: str) -> list[int]:
    """Each method context's record size in bytes, in number order (from the .mct's offsets when
    there is one, else a scan of the record headers): the replay cost a partition is sized by."""
    with Collection.open(collection) as col:
        end = col.size
        if col.toc is not None:
            offsets = col.toc.offsets_and_numbers()[0]
        else:
            offsets = col.record_offsets()
    return [b - a for a, b in zip(offsets, [*offsets[1:], end], strict=True)]


def write_index_file(path: Path, entries: Sequence[tuple[int, int, bytes | None]]) -> None:
    """Write a .mct through libspmimch when installed, else in Python (same bytes)."""
    nat = load()
    if nat is None:
        write_toc(path, entries)
        return
    ffi = nat.ffi
    n = len(entries)
    offs = ffi.new("int64_t[]", [e[0] for e in entries] or [0])
    nums = ffi.new("int32_t[]", [e[1] for e in entries] or [0])
    hashes = ffi.new(
        "char[]", b"".join((e[2] or b"\0" * 33)[:33].ljust(33, b"\0") for e in entries) or b"\0"
    )
    err = ffi.new("spmimch_error*")
    _prepare(Path(path))
    if nat.lib.spmimch_toc_write(os.fsencode(path), n, offs, nums, hashes, err):
        raise _native_error(ffi, path, err)
