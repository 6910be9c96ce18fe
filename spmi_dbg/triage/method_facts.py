"""Triage, what the grouping needs of each member's method context -- its name and IL size, which
order a bucket's members (the smallest one is made the repro) -- read from the collections once,
before any grouping: buckets.py and failure_buckets.py group facts already read and open nothing."""

from __future__ import annotations

from collections.abc import Iterable

from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch.collection import Collection

# (collection path, method context number) -> (its method's name, its IL size); None: not readable
MethodFacts = dict[tuple[str, int], tuple[str | None, int | None]]


def read_method_facts(members: Iterable[tuple[str, int]]) -> MethodFacts:
    """Each (collection, number)'s name and IL size, each collection opened once."""
    wanted: dict[str, set[int]] = {}
    for collection, number in members:
        wanted.setdefault(collection, set()).add(number)
    out: MethodFacts = {}
    for collection, numbers in wanted.items():
        out |= {(collection, n): v for n, v in _read(collection, sorted(numbers)).items()}
    return out


def _read(collection: str, numbers: list[int]) -> dict[int, tuple[str | None, int | None]]:
    out: dict[int, tuple[str | None, int | None]] = {}
    try:
        with Collection.open(collection) as col:
            for n in numbers:
                try:
                    mc = col.method_context(n)
                    out[n] = (mc.name, mc.il_size)
                except (SpmiDbgError, ValueError):
                    out[n] = (None, None)
    except (SpmiDbgError, OSError):
        pass
    return out
