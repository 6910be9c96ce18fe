"""Triage, the grouping: crashes by bucket (analysis' signature), each with its members and the
smallest one by IL size (the one to repro first, as superpmi.py's assertion summary also orders
them, dotnet/runtime#95978); the first-chance stops passed on, by signal and frame; and what
superpmi reported itself in its output (docs/superpmi-conventions.md 1.1): JIT asserts by their
text, missing data by its message, failed compiles."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.analysis.policy import PassedStop
from spmi_dbg.failures.output import ReplayOutput
from spmi_dbg.triage.method_facts import MethodFacts
from spmi_dbg.triage.models import Crash

MAX_LISTED = 100  # method context numbers listed per group


@dataclass
class Member:
    number: int
    name: str | None
    il_size: int | None
    crash: Crash

    @property
    def member(self) -> str:
        """`<collection>:<number>`."""
        return self.crash.member


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


def bucket_crashes(crashes: list[Crash], facts: MethodFacts) -> list[Bucket]:
    """One bucket table across collections: buckets in order of size (then of their first member);
    members in collection, then method context order. `facts`: the members' names and IL sizes,
    read before (triage/method_facts.py)."""
    groups: dict[str, list[Member]] = defaultdict(list)
    for c in crashes:  # in (collection, number) order
        name, il = facts.get((c.collection, c.number), (None, None))
        groups[c.bucket].append(Member(c.number, name, il, c))
    return sorted(
        (Bucket(k, v) for k, v in groups.items()),
        key=lambda b: (-len(b.members), b.members[0].member),
    )


@dataclass
class Group:
    key: str
    count: int = 0

    method_contexts: list[str] = field(default_factory=list)  # members, `<collection>:<number>`
    detail: dict[str, Any] = field(default_factory=dict)

    def add(self, member: str | None) -> None:
        self.count += 1
        if (
            member is not None
            and member not in self.method_contexts
            and len(self.method_contexts) < MAX_LISTED
        ):
            self.method_contexts.append(member)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "count": self.count,
            "method_contexts": self.method_contexts,
        } | self.detail


def first_chance(passed: list[tuple[str, PassedStop]]) -> list[Group]:
    """`passed`: (the collection's member prefix, the stop)."""
    groups: dict[str, Group] = {}
    for name, s in passed:
        key = f"{s.signal} {s.kind} in {s.frame}"
        g = groups.setdefault(
            key, Group(key, detail={"signal": s.signal, "kind": s.kind, "frame": s.frame})
        )
        g.add(f"{name}:{s.method_context}" if s.method_context is not None else None)
    return sorted(groups.values(), key=lambda g: -g.count)


def reported_by_superpmi(outputs: list[tuple[str, ReplayOutput]]) -> dict[str, list[Group]]:
    """Asserts (by expression and place), missing data (by message, numbers normalised), failed
    compiles (each method context with a failed-compile line, an assert's too); from each
    partition's parsed output, given with its collection's member prefix."""
    asserts: dict[str, Group] = {}
    missing: dict[str, Group] = {}
    failed = Group("failed to load and compile correctly")
    for name, out in outputs:
        for f in out.failures:
            if f.kind == "assert":
                key = f"{f.message} ({f.file}:{f.source_line})"
                asserts.setdefault(
                    key,
                    Group(key, detail={"expr": f.message, "file": f.file, "line": f.source_line}),
                ).add(f"{name}:{f.method_context}")
            elif f.kind == "missing":
                key = f.key.removeprefix("missing: ")
                missing.setdefault(key, Group(key, detail={"message": f.message})).add(
                    f"{name}:{f.method_context}"
                )
        for f in out.failed_compiles:
            failed.add(f"{name}:{f.method_context}")
    return {
        "asserts": sorted(asserts.values(), key=lambda g: -g.count),
        "missing": sorted(missing.values(), key=lambda g: -g.count),
        "failed_compiles": [failed] if failed.count else [],
    }
