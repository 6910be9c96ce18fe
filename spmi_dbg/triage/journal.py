"""Triage, the partition journal: what a partition's task has accounted for so far, written
atomically under the out directory (`partitions/p<index>.json`) after every replay of the partition,
so that nothing a task learnt is lost when its worker (or the coordinator) dies: the next attempt --
on another worker, or after `--resume`
-- goes on from the last accounted method context. A lock file per partition (`p<index>.lock`,
flock) keeps two attempts from running one partition at once; a journal that says a replay is
running while nobody holds the lock is a replay whose worker died.

Every method context of the partition is accounted once: the numbers up to `accounted` were replayed
(clean, crashed at a recorded crash, failed compile in a segment's output) or are listed in
`not_reached` with the reason."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from spmi_dbg import jsonfacts
from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.failures.output import Failure
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.mch.mclist import MCList
from spmi_dbg.repro.expect import Expectation
from spmi_dbg.triage.plan import TriagePartition
from spmi_dbg.triage.sweep import SweepState

JOURNAL_SCHEMA: Final = 1
# a replay that killed its worker this many times is split (or, one record, given up)
DEATHS_BEFORE_SPLIT = 2


@dataclass(frozen=True)
class Running(JsonFact):
    """The replay in progress: its worker may die in it."""

    from_: int = field(metadata=jsonfacts.key("from"))  # its first number
    to: int  # its last
    compile: str  # its -c list
    by: str  # the worker


@dataclass
class Segment(JsonFact):
    """A replay: its run (PartitionRun.to_json's keys) and where its files are."""

    partition: int
    compile: str
    methods: int
    status: str
    attempts: int
    failures: list[str]  # the debugger's, one per failed attempt
    exit_status: int | None
    signal: str | None
    stops_passed: int
    seconds: float | None
    debugger_startup_seconds: float | None
    notes: list[str]
    collection: str
    by: str  # the worker
    stdout: Path
    stderr: Path
    transcript: Path
    record: Path | None  # its outcome and failure lines (SegmentRecord)
    # read in from the record by with_records; never in the journal itself
    outcome: ReplayOutcome | None = None

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        if self.outcome is None:
            del data["outcome"]
        return data


@dataclass(frozen=True)
class CrashEntry(JsonFact):
    """A crash identified under the debugger."""

    method_context: int
    segment: int  # the replay it ended, 1-based
    expectation: Expectation | None
    method_context_source: str = ""
    bisection: list[dict[str, Any]] = field(default_factory=list)  # Located.bisection
    method_context_rejected: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class NotReached(JsonFact):
    compile: str  # a -c list
    reason: str


@dataclass(frozen=True)
class ToolFailureEntry(JsonFact):
    """A replay whose debugger failed twice: the partition stops there."""

    compile: str
    failures: list[str]  # one per attempt


@dataclass(frozen=True)
class SegmentRecord(JsonFact):
    """A replay's record: its outcome (with the diagnosis) and the failure lines of its accounted
    part."""

    outcome: ReplayOutcome | None
    failures: list[Failure] = field(default_factory=list)
    failed_compiles: list[int] = field(default_factory=list)


@dataclass
class Journal(JsonFact):
    schema: Literal[1] = field(default=JOURNAL_SCHEMA, kw_only=True)  # another is not read
    partition: TriagePartition
    accounted: int = 0  # every number of the partition up to this one is accounted for
    done: bool = False
    running: Running | None = None
    # after a replay killed its worker twice: the next replay ends here
    window_end: int | None = None
    # "<first>-<last>" of a replay -> times its worker died
    deaths: dict[str, int] = field(default_factory=dict)
    segments: list[Segment] = field(default_factory=list)  # every replay
    crashes: list[CrashEntry] = field(default_factory=list)
    # superpmi's own failure lines of a storm's native replays (a segment's are in its record)
    failures: list[Failure] = field(default_factory=list)
    failed_compiles: list[int] = field(default_factory=list)  # numbers with a failed-compile line
    not_reached: list[NotReached] = field(default_factory=list)
    # method contexts that killed their worker twice
    killers: list[int] = field(default_factory=list)
    tool_failures: list[ToolFailureEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    attempts: int = 0  # tasks that worked on this partition
    # the tasks' time on it (worker-seconds), replays, diagnoses and identification
    seconds: float = field(default=0.0, metadata=jsonfacts.digits(3))
    # a crash storm in this partition (triage/sweep.py): the rest is replayed natively, a sample
    # under the debugger; its crashes not diagnosed are here
    storm: SweepState | None = None

    @property
    def crashed(self) -> set[int]:
        """Every crashed number: the crashes identified under the debugger and the storm's crashes
        not diagnosed."""
        out = {c.method_context for c in self.crashes}
        if self.storm is not None:
            for numbers in self.storm.not_diagnosed.values():
                out.update(numbers)
        return out

    def not_diagnosed(self) -> list[tuple[int, str]]:
        """The storm's crashes not diagnosed: (number, signal), in number order."""
        if self.storm is None:
            return []
        # each once, even if a replay after a resume recorded it again
        return sorted(
            {(n, sig) for sig, numbers in self.storm.not_diagnosed.items() for n in numbers}
        )

    @property
    def remaining(self) -> MCList:
        return self.partition.numbers.between(self.accounted + 1, self.partition.numbers.last)

    def mark(self) -> dict[str, Any]:
        """Where the journal is now, for `rewind`: its lists' lengths (they only grow), a copy of
        its dicts, its other fields as they are (the storm's state by reference: a step that
        starts a storm makes a new one)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = (
                len(value)
                if isinstance(value, list)
                else dict(value)
                if isinstance(value, dict)
                else value
            )
        return out

    def rewind(self, mark: dict[str, Any]) -> None:
        """Back to `mark`: what was accounted since is not (a replay whose record could not be
        written is replayed again, never counted without its failure lines)."""
        for name, value in mark.items():
            current = getattr(self, name)
            if isinstance(current, list):
                del current[value:]
            else:
                setattr(self, name, value)

    def give_up(self, reason: str, upto: int | None = None) -> None:
        """The numbers after `accounted` up to `upto` (default: all) are not reached, for
        `reason`."""
        left = self.partition.numbers.between(
            self.accounted + 1, upto or self.partition.numbers.last
        )
        if left.count():
            self.not_reached.append(NotReached(left.spec(), reason))
        self.accounted = left.last if left.count() else self.accounted


def segment_record(directory: Path, index: int, k: int) -> Path:
    """Replay k of partition `index`: its outcome (with the diagnosis) and its accounted failure
    lines, written once when the replay is settled (so the journal, rewritten after every replay,
    stays small)."""
    return segment_dir(directory, index) / f"seg-{k}.json"


def write_record(path: Path, record: SegmentRecord) -> None:
    atomic_write_text(path, json.dumps(record.to_json()) + "\n")


def with_records(journal: Journal) -> Journal:
    """The journal with each replay's record read back in: the segment's `outcome`, and the failure
    lines in `failures`/`failed_compiles` (a record that cannot be read: that replay's outcome is
    None, a note says so)."""
    full = copy.deepcopy(journal)  # the journal itself is left as it is
    seen = set(full.failed_compiles)
    for seg in full.segments:
        if seg.record is None:
            continue
        try:
            record = SegmentRecord.from_json(json.loads(seg.record.read_text(encoding="utf-8")))
        except (OSError, ValueError) as e:
            seg.outcome = None
            full.notes.append(f"{seg.record}: the replay's record cannot be read ({e})")
            continue
        seg.outcome = record.outcome
        full.failures += record.failures
        for n in record.failed_compiles:
            if n not in seen:
                seen.add(n)
                full.failed_compiles.append(n)
    return full


def journal_path(directory: Path, index: int) -> Path:
    return directory / f"p{index}.json"


def segment_dir(directory: Path, index: int) -> Path:
    """Where partition `index`'s replays keep their output and debugger transcripts."""
    return directory / f"p{index}"


def load(directory: Path, partition: TriagePartition) -> Journal:
    """The partition's journal, or a new one. A journal that cannot be read (it is written
    atomically: only a foreign hand can break it) is an error, never silently restarted. Its files
    are found in `directory` as it is now (a moved or copied output directory resumes), and a
    journal that refers to a replay's record that cannot be read starts again: the partition's
    method contexts are replayed, never counted from a record nobody can read (issue 37)."""
    path = journal_path(directory, partition.index)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Journal(partition)
    try:
        journal = Journal.from_json(json.loads(text))
    except (ValueError, SpmiDbgError) as e:
        raise ValueError(f"{path}: not a partition journal of this spmi-dbg ({e})") from None
    if journal.partition != partition:
        raise ValueError(
            f"{path}: the journal of another partition ({journal.partition.to_json()})"
        )
    return _usable(_here(journal, directory))


def read(directory: Path, index: int) -> Journal | None:
    """A journal as it stands (None: none yet, or unreadable), for progress and for the final
    tally; as load() makes it, its files where they are now, restarted when a record is missing
    (read often while a triage runs: a record's presence is checked here, its reading by load())."""
    try:
        journal = Journal.from_json(
            json.loads(journal_path(directory, index).read_text(encoding="utf-8"))
        )
    except (OSError, ValueError, SpmiDbgError):
        return None
    return _usable(_here(journal, directory), parse=False)


def rebased(path: Path, directory: Path, index: int) -> Path:
    """A file a journal names, in `directory` as it is now: from the partition's own directory
    (`p<N>`) on, wherever the output directory was when the journal was written."""
    if not path.is_absolute():
        return directory / path
    own = segment_dir(directory, index).name
    parts = path.parts
    if own in parts:
        at = len(parts) - 1 - parts[::-1].index(own)
        return directory.joinpath(*parts[at:])
    return path


def _here(journal: Journal, directory: Path) -> Journal:
    index = journal.partition.index
    for seg in journal.segments:
        seg.stdout = rebased(seg.stdout, directory, index)
        seg.stderr = rebased(seg.stderr, directory, index)
        seg.transcript = rebased(seg.transcript, directory, index)
        if seg.record is not None:
            seg.record = rebased(seg.record, directory, index)
    return journal


def lost_record(journal: Journal, *, parse: bool = True) -> str | None:
    """The first replay's record the journal refers to that cannot be read (`parse` False: that is
    not there), said; None: all there."""
    for seg in journal.segments:
        if seg.record is None:
            continue
        if not parse:
            if not seg.record.is_file():
                return f"{seg.record}: not found"
            continue
        try:
            SegmentRecord.from_json(json.loads(seg.record.read_text(encoding="utf-8")))
        except (OSError, ValueError, SpmiDbgError) as e:
            return f"{seg.record}: {e}"
    return None


def _usable(journal: Journal, *, parse: bool = True) -> Journal:
    """`journal`, or, when a replay's record it refers to is lost, a new journal of its partition
    that says why (every method context unaccounted again)."""
    lost = lost_record(journal, parse=parse)
    if lost is None:
        return journal
    return Journal(
        journal.partition,
        notes=[
            f"partition {journal.partition.index} replayed again: a replay's record of an earlier "
            f"run cannot be read ({lost})"
        ],
    )


def text(journal: Journal) -> str:
    return json.dumps(journal.to_json()) + "\n"


def save(directory: Path, journal: Journal, as_text: str | None = None) -> None:
    """`as_text`: the journal's `text()`, when the caller has it."""
    atomic_write_text(journal_path(directory, journal.partition.index), as_text or text(journal))


@contextlib.contextmanager
def holding(directory: Path, index: int) -> Iterator[None]:
    """The partition's lock, waited for: an attempt still running elsewhere (a task the scheduler
    gave up on, a killed coordinator's) finishes first, and this one then reads what it wrote."""
    fd = os.open(directory / f"p{index}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
