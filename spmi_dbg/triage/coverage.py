"""Triage, the accounting: every selected method context of every collection exactly once -- crashed
(a recorded crash; or, in a storm's sweep, a native replay of it alone killed by a signal: crashed,
not diagnosed), failed compile (a failure line in superpmi's output: an assert, a failed
compile, missing data), not reached (with the reason: --max-crashes, a worker killer, an
unidentified crash, the debugger failing), else replayed clean -- from the partitions' journals."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.mch.mclist import parse_mclist
from spmi_dbg.triage.journal import Journal, NotReached


@dataclass(frozen=True)
class Counts:
    """One journal's accounting (what the progress lines, the summary and the coverage all say)."""

    accounted: int  # every number up to the journal's `accounted`
    crashed: int
    failed_compile: int
    not_reached: dict[str, int]  # reason -> count
    not_diagnosed: int = 0  # of `crashed`: a storm's, replayed without a debugger

    @property
    def replayed_clean(self) -> int:
        return self.accounted - self.crashed - self.failed_compile - sum(self.not_reached.values())


def counts(j: Journal) -> Counts:
    """How `j`'s accounted method contexts are accounted for: each exactly once."""
    p = j.partition
    accounted = p.numbers.between(p.numbers.first, j.accounted).count() if j.accounted else 0
    crashed = j.crashed
    failed = ({f.method_context for f in j.failures} | set(j.failed_compiles)) - crashed
    seen = crashed | failed
    not_reached: dict[str, int] = {}
    for entry in j.not_reached:
        numbers = parse_mclist(entry.compile)
        count = numbers.count() - sum(1 for n in seen if n in numbers)
        not_reached[entry.reason] = not_reached.get(entry.reason, 0) + count
    return Counts(accounted, len(crashed), len(failed), not_reached, len(j.not_diagnosed()))


@dataclass
class Coverage:
    collection: str
    name: str
    method_contexts: int = 0  # selected
    crashed: int = 0
    not_diagnosed: int = 0  # of `crashed`: a storm's, replayed without a debugger
    failed_compile: int = 0
    not_reached: dict[str, int] = field(default_factory=dict)  # reason -> count
    not_reached_lists: list[NotReached] = field(default_factory=list)
    killers: list[int] = field(default_factory=list)
    partitions: int = 0

    @property
    def replayed_clean(self) -> int:
        return (
            self.method_contexts
            - self.crashed
            - self.failed_compile
            - sum(self.not_reached.values())
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.name,
            "path": self.collection,
            "partitions": self.partitions,
            "method_contexts": self.method_contexts,
            "replayed_clean": self.replayed_clean,
            "crashed": self.crashed,
            "not_diagnosed": self.not_diagnosed,
            "failed_compile": self.failed_compile,
            "not_reached": sum(self.not_reached.values()),
            "not_reached_reasons": [
                {"reason": r, "count": n} for r, n in sorted(self.not_reached.items())
            ],
            "not_reached_lists": [n.to_json() for n in self.not_reached_lists[:100]],
            "worker_killers": self.killers,
        }


def coverage(journals: list[Journal], names: dict[str, str]) -> list[Coverage]:
    """Per collection, in the order of `names`."""
    out = {c: Coverage(c, n) for c, n in names.items()}
    by: dict[str, list[Journal]] = defaultdict(list)
    for j in journals:
        by[j.partition.collection].append(j)
    for collection, js in by.items():
        cov = out.setdefault(collection, Coverage(collection, Path(collection).name))
        for j in js:
            cov.partitions += 1
            cov.method_contexts += j.partition.methods
            c = counts(j)
            cov.crashed += c.crashed
            cov.not_diagnosed += c.not_diagnosed
            cov.failed_compile += c.failed_compile
            for reason, n in c.not_reached.items():
                cov.not_reached[reason] = cov.not_reached.get(reason, 0) + n
            cov.not_reached_lists += j.not_reached
            cov.killers += j.killers
    return list(out.values())
