"""Triage's facts, apart from the stages that make them: a crash found in a partition (Crash), a
storm's crash replayed without a debugger (NotDiagnosed), and what one partition found
(PartitionFound), made in one place from the partition's journal -- the journal its task returned,
or, for a partition no task ran in this triage (done before a --resume) or whose task failed, the
one on disk. The coordinator never reads a journal a task handed back, and groups only facts read
already (triage/buckets.py)."""

from __future__ import annotations

from dataclasses import dataclass

from spmi_dbg.analysis.signature import bucket_key
from spmi_dbg.failures.output import Failure, ReplayOutput
from spmi_dbg.mch.mclist import parse_mclist
from spmi_dbg.repro.command import Partition
from spmi_dbg.repro.models import Located, PartitionRun
from spmi_dbg.triage.journal import Journal, Segment

__all__ = ["Crash", "NotDiagnosed", "PartitionFound"]


@dataclass(frozen=True)
class Crash:
    """One fatal stop (or hang): its run (the segment that ended there) and what was identified of
    it."""

    located: Located  # winner = the segment's run; method_context and expectation identified
    collection: str  # its collection's path
    member: str  # `<collection name>:<number>`

    @property
    def run(self) -> PartitionRun:
        assert self.located.winner is not None
        return self.located.winner

    @property
    def number(self) -> int:
        assert self.located.method_context is not None
        return self.located.method_context

    @property
    def bucket(self) -> str:
        e = self.located.expectation
        return e.bucket_key if e is not None else bucket_key(None, "crash", None)


@dataclass(frozen=True)
class NotDiagnosed:
    """A crash of a storm's sweep (triage/sweep.py): its number and signal from its native
    replay, not diagnosed."""

    collection: str
    number: int
    signal: str
    storm: str  # the bucket of the storm that swept it
    member: str  # `<collection name>:<number>`


@dataclass(frozen=True)
class PartitionFound:
    """One partition's replays, crashes and superpmi's own output, from its journal."""

    journal: Journal
    runs: list[PartitionRun]  # its segments, in order
    crashes: list[Crash]
    not_diagnosed: list[NotDiagnosed]
    output: ReplayOutput  # superpmi's failure lines and failed compiles of its accounted part

    @property
    def collection(self) -> str:
        return self.journal.partition.collection

    @classmethod
    def of(cls, journal: Journal, name: str) -> PartitionFound:
        """`journal` with its segments' records read in; `name`: its collection's member prefix."""
        p = journal.partition
        runs = [_run(p.index, s) for s in journal.segments]
        crashes = [
            Crash(
                Located(
                    [runs[c.segment - 1]],
                    winner=runs[c.segment - 1],
                    expectation=c.expectation,
                    method_context=c.method_context,
                    method_context_source=c.method_context_source,
                    method_context_rejected=list(c.method_context_rejected),
                    bisection=list(c.bisection),
                    notes=list(c.notes),
                ),
                p.collection,
                f"{name}:{c.method_context}",
            )
            for c in journal.crashes
        ]
        storm = journal.storm.bucket if journal.storm is not None else ""
        swept = [
            NotDiagnosed(p.collection, n, sig, storm, f"{name}:{n}")
            for n, sig in journal.not_diagnosed()
        ]
        failed = [Failure("error", n, "", "") for n in journal.failed_compiles]
        return cls(journal, runs, crashes, swept, ReplayOutput(list(journal.failures), failed))


def _run(index: int, s: Segment) -> PartitionRun:
    """A segment as the replay it was (its -c list is the journal's form of its numbers)."""
    return PartitionRun(
        Partition(index, tuple(parse_mclist(s.compile))),
        s.stdout,
        s.stderr,
        s.transcript,
        outcome=s.outcome,
        attempts=s.attempts,
        failures=list(s.failures),
    )
