"""Triage, the compile failures superpmi reports itself (spmi_dbg.failures): JIT asserts by
expression and place, failed compiles by exception message, missing data by message; each group a
bucket with its members and its smallest member by IL size (the one a repro is made from, as
superpmi.py orders its assertion summary, dotnet/runtime#95978). Read from every segment's own
output: the replay went on past them."""

from __future__ import annotations

from dataclasses import dataclass

from spmi_dbg.failures.output import Failure, FailureKind, ReplayOutput, bucket_name
from spmi_dbg.triage.method_facts import MethodFacts


@dataclass
class FailureMember:
    number: int
    name: str | None
    il_size: int | None
    failure: Failure
    collection: str = ""  # its collection's path
    member: str = ""  # `<collection>:<number>`


@dataclass
class FailureBucket:
    key: str  # the bucket's name: <kind>-<10 hex digits of the failure's key>
    failure_key: str  # Failure.key: what its members share
    members: list[FailureMember]

    @property
    def kind(self) -> FailureKind:
        return self.members[0].failure.kind

    @property
    def smallest(self) -> FailureMember:
        return min(self.members, key=lambda m: (m.il_size is None, m.il_size or 0, m.number))

    @property
    def title(self) -> str:
        f = self.smallest.failure
        if f.kind == "assert":
            return f"Assertion failed '{f.message}' ({f.file}:{f.source_line})"
        if f.kind == "error":
            return f"failed compile: {f.message}"
        return f"missing data: {f.message}"


def failed_members(outputs: list[tuple[str, ReplayOutput]]) -> list[tuple[str, int]]:
    """(collection, number) of every failure line: the method contexts bucket_failures needs the
    facts of."""
    return [(collection, f.method_context) for collection, out in outputs for f in out.failures]


def bucket_failures(
    outputs: list[tuple[str, ReplayOutput]], names: dict[str, str], facts: MethodFacts
) -> list[FailureBucket]:
    """One table across collections: buckets in order of size (then of their first member); members
    in collection then method context order, each once. `outputs`: (collection, a partition's parsed
    output); `names`: each collection's member prefix; `facts`: the members' names and IL sizes,
    read before (triage/method_facts.py)."""
    seen: dict[tuple[str, str, int], Failure] = {}
    for collection, out in outputs:
        for f in out.failures:  # with -a, JIT1's and JIT2's lines are one failure
            seen.setdefault((f.key, collection, f.method_context), f)
    order = list(names)
    groups: dict[str, list[FailureMember]] = {}
    for (key, collection, number), f in sorted(
        seen.items(), key=lambda kv: (order.index(kv[0][1]) if kv[0][1] in order else 0, kv[0][2])
    ):
        name, il = facts.get((collection, number), (None, None))
        groups.setdefault(key, []).append(
            FailureMember(
                number, name, il, f, collection, f"{names.get(collection, collection)}:{number}"
            )
        )
    buckets = [
        FailureBucket(bucket_name(members[0].failure.kind, key), key, members)
        for key, members in groups.items()
    ]
    return sorted(buckets, key=lambda b: (-len(b.members), b.members[0].member))
