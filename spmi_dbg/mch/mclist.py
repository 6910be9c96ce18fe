"""superpmi's `-c` method context lists (MCList::processArgAsMCL, docs/superpmi-conventions.md section 1).

An argument made only of digits, `-` and `,` is a list of numbers and ranges (`20`, `20,25,30`, `10-99`,
`5,10-99,101`); anything else must be a file ending in `.mcl` holding one number per line (the first
number on each line; superpmi writes `%d\\r\\n`). Lists start at 1 and strictly increase.
The error texts are superpmi's.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

from spmi_dbg.errors import UsageError

_RANGE_CHARS = re.compile(r"[0-9,\-]*")
_LEADING_NUMBER = re.compile(r"\s*(\d+)")


class MCListError(UsageError):
    pass


def _invalid(arg: str) -> MCListError:
    return MCListError(f"Arg '{arg}' is invalid, needed method context list.")


def parse_mclist(arg: str) -> list[int]:
    """Parse a `-c` argument into a strictly increasing list of 1-based method context numbers."""
    if _RANGE_CHARS.fullmatch(arg):
        numbers = _parse_ranges(arg)
    elif arg.lower().endswith(".mcl"):
        numbers = read_mcl(arg)
    else:
        raise _invalid(arg)
    if not numbers:
        raise _invalid(arg)
    check_sorted(numbers)
    return numbers


def _parse_ranges(arg: str) -> list[int]:
    out: list[int] = []
    for token in arg.split(","):
        if not token:
            continue
        lo, dash, hi = token.partition("-")
        if not lo.isdigit() or (dash and not hi.isdigit()):
            raise _invalid(arg)
        if dash:
            a, b = int(lo), int(hi)
            if a >= b:
                raise _invalid(arg)
            out.extend(range(a, b + 1))
        else:
            out.append(int(lo))
    return out


def check_sorted(numbers: list[int]) -> None:
    if numbers and numbers[0] < 1:
        raise MCListError("MCL list needs to start from 1!")
    for prev, cur in itertools.pairwise(numbers):
        if prev >= cur:
            raise MCListError(f"MCL list must be increasing.. found {prev} -> {cur}")


def read_mcl(path: str | os.PathLike[str]) -> list[int]:
    try:
        text = Path(path).read_bytes().decode("ascii", "replace")
    except OSError as e:
        raise MCListError(f"{path}: cannot read method context list: {e.strerror}") from None
    out: list[int] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _LEADING_NUMBER.match(line)
        if m is None:
            raise MCListError(f"{path}: expected a method context number on each line, found '{line.strip()}'")
        out.append(int(m.group(1)))
    return out


def format_mcl(numbers: list[int]) -> bytes:
    """The bytes superpmi writes for a `-f` list: one `%d\\r\\n` per number."""
    return b"".join(b"%d\r\n" % n for n in numbers)


def compress_ranges(numbers: list[int]) -> str:
    """The shortest `-c` argument for a sorted list (`1-3,7,9-12`)."""
    parts: list[str] = []
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        parts.append(str(numbers[i]) if i == j else f"{numbers[i]}-{numbers[j]}")
        i = j + 1
    return ",".join(parts)
