"""Triage, what the grouping needs of each member's method context -- its name and IL size, which
order a bucket's members (the smallest one is made the repro) -- read from the collections once,
before any grouping: buckets.py and failure_buckets.py group facts already read and open nothing.
After the grouping, each bucket's smallest member's first IL lines (spmi_dbg.method), for triage's
bucket sections."""

from __future__ import annotations

from collections.abc import Iterable

from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch.collection import Collection
from spmi_dbg.method.recorded import Answers
from spmi_dbg.method.view import method_view

# (collection path, method context number) -> (its method's name, its IL size); None: not readable
MethodFacts = dict[tuple[str, int], tuple[str | None, int | None]]
IL_HEAD_LINES = 8  # the first IL lines a bucket section shows of its smallest member


def read_method_facts(members: Iterable[tuple[str, int]]) -> MethodFacts:
    """Each (collection, number)'s name and IL size, each collection opened once."""
    out: MethodFacts = {}
    for collection, numbers in _by_collection(members).items():
        out |= {(collection, n): v for n, v in _read(collection, numbers).items()}
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


def _by_collection(members: Iterable[tuple[str, int]]) -> dict[str, list[int]]:
    wanted: dict[str, set[int]] = {}
    for collection, number in members:
        wanted.setdefault(collection, set()).add(number)
    return {c: sorted(ns) for c, ns in wanted.items()}


def read_il_heads(
    members: Iterable[tuple[str, int]], lines: int = IL_HEAD_LINES
) -> dict[tuple[str, int], list[str]]:
    """Each (collection, number)'s first `lines` IL instructions with the recorded names (a record
    whose compile request is not readable has none), each collection opened once."""
    out: dict[tuple[str, int], list[str]] = {}
    for collection, numbers in _by_collection(members).items():
        try:
            with Collection.open(collection) as col:
                for n in numbers:
                    try:
                        view = method_view(n, Answers.of_packets(col.packets(n)))
                    except (SpmiDbgError, ValueError):
                        continue
                    if view is not None:
                        out[(collection, n)] = [ln.text() for ln in view.lines[:lines]]
        except (SpmiDbgError, OSError):
            continue
    return out
