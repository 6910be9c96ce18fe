"""Triage, the grouping: crashes by bucket (analysis' signature), each with its members and the smallest one by
IL size (the one to repro first, as superpmi.py's assertion summary also orders them, dotnet/runtime#95978);
the first-chance stops passed on, by signal and frame; and what superpmi reported itself in its output
(docs/superpmi-conventions.md 1.1): JIT asserts by their text, missing data by its message, failed compiles."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.analysis.policy import PassedStop
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch.collection import Collection
from spmi_dbg.repro.locate import PartitionRun
from spmi_dbg.triage.run import Crash

MAX_LISTED = 100  # method context numbers listed per group

_ASSERT = re.compile(r"^ISSUE: <ASSERT> #(\d+) (.*?) \((\d+)\) - Assertion failed '(.*)' in '(.*?)'")
_MISSING = re.compile(r"^MISSING: Method context (\d+) failed to replay: (.*)$")
_FAILED = re.compile(r"^ERROR: (?:main )?[Mm]ethod (\d+) of size \d+ failed to load and compile correctly")


@dataclass
class Member:
    number: int
    name: str | None
    il_size: int | None
    crash: Crash


@dataclass
class Bucket:
    key: str
    members: list[Member]

    @property
    def first(self) -> Crash:
        return self.members[0].crash

    @property
    def diagnosis(self) -> Diagnosis | None:
        return self.smallest.crash.located.diagnosis

    @property
    def smallest(self) -> Member:
        return min(self.members, key=lambda m: (m.il_size is None, m.il_size or 0, m.number))

    @property
    def kind(self) -> str:
        e = self.first.located.expectation
        return e.kind if e else "crash"

    @property
    def signal(self) -> str | None:
        e = self.first.located.expectation
        return e.signal if e else None


def bucket_crashes(crashes: list[Crash], collection: str) -> list[Bucket]:
    """Buckets in order of size (then of their first member); members in method context order."""
    names = names_of(collection, [c.number for c in crashes])
    groups: dict[str, list[Member]] = defaultdict(list)
    for c in sorted(crashes, key=lambda c: c.number):
        name, il = names.get(c.number, (None, None))
        groups[c.bucket].append(Member(c.number, name, il, c))
    return sorted((Bucket(k, v) for k, v in groups.items()), key=lambda b: (-len(b.members), b.members[0].number))


def names_of(collection: str, numbers: list[int]) -> dict[int, tuple[str | None, int | None]]:
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


@dataclass
class Group:
    key: str
    count: int = 0
    method_contexts: list[int] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    def add(self, number: int | None) -> None:
        self.count += 1
        if number is not None and number not in self.method_contexts and len(self.method_contexts) < MAX_LISTED:
            self.method_contexts.append(number)

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "count": self.count, "method_contexts": sorted(self.method_contexts)} | self.detail


def first_chance(passed: list[tuple[int, PassedStop]]) -> list[Group]:
    groups: dict[str, Group] = {}
    for _, s in passed:
        key = f"{s.signal} {s.kind} in {s.frame}"
        g = groups.setdefault(key, Group(key, detail={"signal": s.signal, "kind": s.kind, "frame": s.frame}))
        g.add(s.method_context)
    return sorted(groups.values(), key=lambda g: -g.count)


def reported_by_superpmi(segments: list[PartitionRun]) -> dict[str, list[Group]]:
    """Asserts (by expression and place), missing data (by message, numbers normalised), failed compiles."""
    asserts: dict[str, Group] = {}
    missing: dict[str, Group] = {}
    failed = Group("failed to load and compile correctly")
    for run in segments:
        for line in _lines(run.stdout) + _lines(run.stderr):
            m = _ASSERT.match(line)
            if m:
                key = f"{m.group(4)} ({m.group(2)}:{m.group(3)})"
                asserts.setdefault(key, Group(key, detail={"expr": m.group(4), "file": m.group(2),
                                                           "line": int(m.group(3))})).add(int(m.group(1)))
                continue
            m = _MISSING.match(line)
            if m:
                key = re.sub(r"\b(0x)?[0-9a-fA-F]{6,}\b", "N", m.group(2))
                missing.setdefault(key, Group(key, detail={"message": m.group(2)})).add(int(m.group(1)))
                continue
            m = _FAILED.match(line)
            if m:
                failed.add(int(m.group(1)))
    return {"asserts": sorted(asserts.values(), key=lambda g: -g.count),
            "missing": sorted(missing.values(), key=lambda g: -g.count),
            "failed_compiles": [failed] if failed.count else []}


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []
