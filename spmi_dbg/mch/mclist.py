"""superpmi's `-c` method context lists (MCList::processArgAsMCL, docs/superpmi-conventions.md
section 1).

An argument made only of digits, `-` and `,` is a list of numbers and ranges (`20`, `20,25,30`,
`10-99`, `5,10-99,101`); anything else must be a file ending in `.mcl` holding one number per line
(the first number on each line; superpmi writes `%d\\r\\n`). Lists start at 1 and strictly increase.
The error texts are superpmi's.

A list is kept as its ranges, never as a list of numbers: `-c 1-99999999999999999999` costs two
integers, and whoever walks it stops at the end of the collection (`within`), so memory is bounded
by the collection.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from spmi_dbg.errors import UsageError, printable

_RANGE_CHARS = re.compile(r"[0-9,\-]*")
_LEADING_NUMBER = re.compile(rb"\s*(\d+)")
MAX_MCL_BYTES = 256 << 20  # a .mcl of every method context of the largest collections is ~40 MB
# digits of a number read from untrusted text, checked before it is converted (Python refuses more
# than 4,300 with a ValueError): a 64-bit number has 20, a method context number fits in 10
MAX_DIGITS = 20


class MCListError(UsageError):
    pass


def _number(text: str, where: Callable[[], str]) -> int:
    """A run of digits as an int, at most MAX_DIGITS of them (leading zeros aside); `where` says
    where it was read, asked only when it is refused."""
    digits = text.lstrip("0")
    if len(digits) > MAX_DIGITS:
        raise MCListError(
            f"{where()}: a number of {len(digits)} digits, expected a method context number of at "
            f"most {MAX_DIGITS} digits"
        )
    return int(digits or "0")


def _invalid(arg: str) -> MCListError:
    return MCListError(f"Arg '{printable(arg)}' is invalid, needed method context list.")


@dataclass(frozen=True)
class MCList:
    """A strictly increasing list of 1-based method context numbers, as inclusive ranges."""

    ranges: tuple[tuple[int, int], ...]

    def __iter__(self) -> Iterator[int]:
        for lo, hi in self.ranges:
            yield from range(lo, hi + 1)

    def __contains__(self, number: object) -> bool:
        return isinstance(number, int) and any(lo <= number <= hi for lo, hi in self.ranges)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MCList):
            return self.ranges == other.ranges
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return MCList.of(other) == self if _increasing(other) else False
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.ranges)

    @property
    def first(self) -> int:
        return self.ranges[0][0]

    @property
    def last(self) -> int:
        return self.ranges[-1][1]

    def count(self) -> int:
        """How many numbers the list names (arithmetic: nothing is materialised)."""
        return sum(hi - lo + 1 for lo, hi in self.ranges)

    def within(self, count: int) -> MCList:
        """The numbers that exist in a collection of `count` method contexts (superpmi stops at its
        end)."""
        return MCList(tuple((lo, min(hi, count)) for lo, hi in self.ranges if lo <= count))

    def nth(self, index: int) -> int:
        """The number at 0-based `index`, without listing the numbers (past the end: the last)."""
        for lo, hi in self.ranges:
            if index <= hi - lo:
                return lo + index
            index -= hi - lo + 1
        return self.last

    def between(self, lo: int, hi: int) -> MCList:
        """The numbers of the list from `lo` to `hi`, both included."""
        return MCList(
            tuple((max(a, lo), min(b, hi)) for a, b in self.ranges if b >= lo and a <= hi)
        )

    def spec(self) -> str:
        """The shortest `-c` argument for it (`1-3,7,9-12`)."""
        return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in self.ranges)

    @classmethod
    def of(cls, numbers: Sequence[int] | Iterator[int]) -> MCList:
        """The list of these numbers (sorted, increasing), merged into ranges."""
        ranges: list[tuple[int, int]] = []
        for n in numbers:
            if ranges and n == ranges[-1][1] + 1:
                ranges[-1] = (ranges[-1][0], n)
            else:
                ranges.append((n, n))
        return cls(tuple(ranges))


def _increasing(numbers: Sequence[object]) -> bool:
    ints = [n for n in numbers if isinstance(n, int)]
    return len(ints) == len(numbers) and all(a < b for a, b in itertools.pairwise(ints))


def parse_mclist(arg: str) -> MCList:
    """Parse a `-c` argument into a strictly increasing list of 1-based method context numbers."""
    if _RANGE_CHARS.fullmatch(arg):
        numbers = _parse_ranges(arg)
    elif arg.lower().endswith(".mcl"):
        numbers = read_mcl(arg)
    else:
        raise _invalid(arg)
    if not numbers.ranges:
        raise _invalid(arg)
    return numbers


class _Builder:
    """Ranges appended in order, checked as superpmi checks the numbers (start at 1, strictly
    increase)."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []

    def add(self, lo: int, hi: int) -> None:
        if not self.ranges and lo < 1:
            raise MCListError("MCL list needs to start from 1!")
        if self.ranges:
            prev = self.ranges[-1][1]
            if prev >= lo:
                raise MCListError(f"MCL list must be increasing.. found {prev} -> {lo}")
            if prev + 1 == lo:
                self.ranges[-1] = (self.ranges[-1][0], hi)
                return
        self.ranges.append((lo, hi))

    def done(self) -> MCList:
        return MCList(tuple(self.ranges))


def _parse_ranges(arg: str) -> MCList:
    out = _Builder()

    def where() -> str:  # escaped and cut only when a number is refused
        return f"-c {printable(arg, limit=60)}"

    for token in arg.split(","):
        if not token:
            continue
        lo, dash, hi = token.partition("-")
        if not lo.isdigit() or (dash and not hi.isdigit()):
            raise _invalid(arg)
        if dash:
            a, b = _number(lo, where), _number(hi, where)
            if a >= b:
                raise _invalid(arg)
            out.add(a, b)
        else:
            n = _number(lo, where)
            out.add(n, n)
    return out.done()


def read_mcl(path: str | os.PathLike[str]) -> MCList:
    """A `.mcl` file: a regular file of at most MAX_MCL_BYTES (a FIFO, a device or a huge sparse
    file is refused before anything is read); bad content is shown escaped."""
    shown = printable(str(path))
    try:
        # a FIFO with no writer must not hang the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise MCListError(f"{shown}: cannot read method context list: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise MCListError(f"{shown}: cannot read method context list: not a regular file")
        if st.st_size > MAX_MCL_BYTES:
            raise MCListError(
                f"{shown}: cannot read method context list: {st.st_size} bytes, expected at most "
                f"{MAX_MCL_BYTES} (one number per line)"
            )
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_MCL_BYTES + 1)
    except OSError as e:
        raise MCListError(f"{shown}: cannot read method context list: {e.strerror}") from None
    finally:
        os.close(fd)
    out = _Builder()
    for k, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        m = _LEADING_NUMBER.match(line)
        if m is None:
            raise MCListError(
                f"{shown}: line {k}: expected a method context number on each line, found "
                f"'{printable(line.strip().decode('utf-8', 'replace'), limit=80)}'"
            )
        n = _number(m.group(1).decode("ascii"), functools.partial("{}: line {}".format, shown, k))
        out.add(n, n)
    return out.done()


def format_mcl(numbers: Sequence[int] | MCList) -> bytes:
    """The bytes superpmi writes for a `-f` list: one `%d\\r\\n` per number."""
    return b"".join(b"%d\r\n" % n for n in numbers)


def compress_ranges(numbers: Sequence[int]) -> str:
    """The shortest `-c` argument for a sorted list (`1-3,7,9-12`)."""
    return MCList.of(numbers).spec()
