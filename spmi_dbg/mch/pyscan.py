"""Pure-Python collection scanner: the same checks and the same message texts as libspmimch.

Used when the native library is not available and for small in-memory jobs (a single record's
bytes); a test feeds both implementations the same mutated collections and requires identical
results. The rules are documented once, in native/mch/spmimch.h.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Callable
from typing import NamedTuple

from spmi_dbg.errors import format_location

Buffer = bytes | bytearray | memoryview | mmap.mmap

# Status codes (enum spmimch_status).
E_OK = 0
E_IO = 1
E_NOTFILE = 2
E_EMPTY = 3
E_FRAMING = 4
E_PACKET = 5
E_MAP = 6
E_TOC = 7
E_RANGE = 8
E_NOMEM = 9
E_ARG = 10

SCAN_PACKETS = 1
SCAN_RELEASE = 2

# Scan results.
SCAN_MORE = 1
SCAN_DONE = 0
SCAN_STOPPED = -1

_U32 = struct.Struct("<I")


class Problem(NamedTuple):
    """One finding: status code, 1-based method context number (0 = none), byte offset, message.
    (Named tuples, not dataclasses, on the scan path: `mch verify` does not import dataclasses and
    inspect.)"""

    code: int
    record: int
    offset: int
    message: str

    def line(self, path: str) -> str:
        offset = None if self.code in (E_IO, E_NOTFILE, E_EMPTY, E_NOMEM, E_ARG) else self.offset
        return format_location(path, self.record, offset) + self.message


class Stats:
    """Packets (count and map bytes) per id over the records walked."""

    __slots__ = ("packet_bytes", "packet_count", "records")

    def __init__(self) -> None:
        self.packet_count: list[int] = [0] * 256
        self.packet_bytes: list[int] = [0] * 256
        self.records = 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stats) and (
            self.packet_count,
            self.packet_bytes,
            self.records,
        ) == (other.packet_count, other.packet_bytes, other.records)

    def __repr__(self) -> str:
        used = {i: (c, self.packet_bytes[i]) for i, c in enumerate(self.packet_count) if c}
        return f"Stats(records={self.records}, packets={used})"


class PyScanner:
    """Resumable scan over a buffer holding a whole collection (see spmimch_scan)."""

    def __init__(self, data: Buffer) -> None:
        self.data = memoryview(data).cast("B")
        self.size = len(self.data)
        self.reset()

    def reset(self) -> None:
        """Back to the start: nothing scanned, no record framed."""
        self.pos = 0
        self.records: list[tuple[int, int]] = []
        self.stopped = False

    def scan(
        self,
        flags: int,
        budget: int = 0,
        stats: Stats | None = None,
        problems: list[Problem] | None = None,
        max_problems: int = 1 << 30,
    ) -> int:
        sink = problems if problems is not None else []
        start = self.pos
        if self.stopped:
            return SCAN_STOPPED

        def emit(p: Problem) -> None:
            if len(sink) < max_problems:
                sink.append(p)

        while self.pos < self.size:
            if budget and self.pos - start >= budget:
                return SCAN_MORE
            number = len(self.records) + 1
            result = check_framing(self.data, self.pos, number)
            if isinstance(result, Problem):
                emit(result)
                self.stopped = True
                return SCAN_STOPPED
            if flags & SCAN_PACKETS:
                walk_packets(self.data, self.pos, result, number, stats, emit)
            self.records.append((self.pos, result))
            self.pos += result
        return SCAN_DONE


def check_framing(data: memoryview, off: int, number: int) -> int | Problem:
    """Record header, length and end canary of the record at `off`; returns its size or the
    problem."""
    size = len(data)
    remain = size - off
    if remain < 6:
        return Problem(
            E_FRAMING, number, off, f"truncated record header: expected 6 bytes, found {remain}"
        )
    bad = _mark(data, off, b"mc", number, "bad magic")
    if bad is not None:
        return bad
    total: int = _U32.unpack_from(data, off + 2)[0]
    if total + 2 > remain - 6:
        return Problem(
            E_FRAMING,
            number,
            off,
            f"record length {total} runs past end of file: expected {total + 2} more bytes, "
            f"found {remain - 6}",
        )
    end = off + 6 + total
    bad = _mark(data, end, b"42", number, "bad end canary")
    return total + 8 if bad is None else bad


def _mark(data: memoryview, at: int, mark: bytes, number: int, what: str) -> Problem | None:
    """The two bytes `mark` at `at` (a record's magic `mc` or its end canary `42`), else the
    framing problem `what`."""
    if data[at] == mark[0] and data[at + 1] == mark[1]:
        return None
    return Problem(
        E_FRAMING,
        number,
        at,
        f"{what}: expected '{mark.decode()}' ({mark.hex(' ')}), "
        f"found {data[at]:02x} {data[at + 1]:02x}",
    )


def walk_packets(
    data: memoryview,
    off: int,
    record_size: int,
    number: int,
    stats: Stats | None,
    emit: Callable[[Problem], None],
) -> None:
    p = off + 6
    end = off + record_size - 2
    if stats is not None:
        stats.records += 1
    while p < end:
        remain = end - p
        if remain < 5:
            emit(
                Problem(
                    E_PACKET,
                    number,
                    p,
                    f"truncated packet header: expected 5 bytes, found {remain}",
                )
            )
            return
        pid = data[p]
        (size,) = _U32.unpack_from(data, p + 1)
        avail = remain - 5
        if size + 1 > avail:
            emit(
                Problem(
                    E_PACKET,
                    number,
                    p,
                    f"packet {pid} runs past end of record: expected {size + 1} bytes, found "
                    f"{avail}",
                )
            )
            return
        canary = data[p + 5 + size]
        if canary != 0x42:
            emit(
                Problem(
                    E_PACKET,
                    number,
                    p + 5 + size,
                    f"bad canary after packet {pid}: expected 42, found {canary:02x}",
                )
            )
            return
        if stats is not None:
            stats.packet_count[pid] += 1
            stats.packet_bytes[pid] += size
        message = check_map(data, p + 5, size)
        if message is not None:
            emit(Problem(E_MAP, number, p, f"packet {pid}: {message}"))
        p += 6 + size


def check_map(data: memoryview, m: int, size: int) -> str | None:
    """Structure of the serialised map at data[m:m+size]; returns the problem text or None. Only
    what holds in every JIT-EE era is checked, never the item size of one era's agnostic structs
    (docs/mch-format.md 10)."""
    if size < 4:
        return f"map too short: expected at least 4 bytes, found {size}"
    tag = bytes(data[m : m + 4])
    hdr = 4 if tag in (b"LWM1", b"DWM1") else 0
    if size < hdr + 4:
        return f"map too short: expected at least {hdr + 4} bytes, found {size}"
    (n,) = _U32.unpack_from(data, m + hdr)
    if n == 0:
        if size != hdr + 4:
            return f"empty map: expected {hdr + 4} bytes, found {size}"
        return None
    if size < hdr + 8:
        return f"map too short: expected at least {hdr + 8} bytes, found {size}"
    (buflen,) = _U32.unpack_from(data, m + hdr + 4)
    room = size - hdr - 8
    if buflen > room:
        return f"side buffer too long: expected at most {room} bytes, found {buflen}"
    items = room - buflen
    if items % n:
        return f"items do not fill the map: expected a multiple of {n} bytes, found {items}"
    if items == 0:  # every key and value type of every era has at least one byte
        return f"items do not fill the map: expected at least {n} bytes, found 0"
    q = 0
    base = m + size - buflen
    while q < buflen:
        left = buflen - q
        if left < 4:
            return f"side buffer chunk at +{q} runs past the buffer: expected 4 bytes, found {left}"
        (ln,) = _U32.unpack_from(data, base + q)
        if 4 + ln > left:
            return (
                f"side buffer chunk at +{q} runs past the buffer: expected {4 + ln} bytes, "
                f"found {left}"
            )
        q += 4 + ln
    return None


def check_record(data: Buffer, offset: int, number: int, flags: int) -> int | Problem:
    """Check one record at `offset` without scanning the file (see spmimch_check_record)."""
    view = memoryview(data).cast("B")
    if offset >= len(view):
        return Problem(
            E_RANGE,
            number,
            offset,
            f"record offset {offset} is past the end of file: expected less than {len(view)}",
        )
    result: int | Problem = check_framing(view, offset, number)
    if isinstance(result, Problem) or not flags & SCAN_PACKETS:
        return result
    found: list[Problem] = []
    walk_packets(view, offset, result, number, None, found.append)
    return found[0] if found else result
