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
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch.mclist import MCList
from spmi_dbg.triage.plan import TriagePartition

JOURNAL_SCHEMA = 1
# a replay that killed its worker this many times is split (or, one record, given up)
DEATHS_BEFORE_SPLIT = 2


@dataclass
class Journal:
    partition: TriagePartition
    accounted: int = 0  # every number of the partition up to this one is accounted for
    done: bool = False
    running: dict[str, Any] | None = None  # the replay in progress: {"from", "to", "by"}
    # after a replay killed its worker twice: the next replay ends here
    window_end: int | None = None
    # "<first>-<last>" of a replay -> times its worker died
    deaths: dict[str, int] = field(default_factory=dict)
    # every replay: compile list, files, outcome
    segments: list[dict[str, Any]] = field(default_factory=list)
    # identified crashes: number, segment, expectation
    crashes: list[dict[str, Any]] = field(default_factory=list)
    # superpmi's own failure lines (Failure.to_json)
    failures: list[dict[str, Any]] = field(default_factory=list)
    failed_compiles: list[int] = field(default_factory=list)  # numbers with a failed-compile line
    # {"compile": spec, "reason": why}
    not_reached: list[dict[str, str]] = field(default_factory=list)
    # method contexts that killed their worker twice
    killers: list[int] = field(default_factory=list)
    tool_failures: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    attempts: int = 0  # tasks that worked on this partition
    # the tasks' time on it (worker-seconds), replays, diagnoses and identification
    seconds: float = 0.0
    # a crash storm in this partition (triage/sweep.py): the rest is replayed natively, a sample
    # under the debugger; its crashes not diagnosed are here (SweepState.to_json)
    storm: dict[str, Any] | None = None

    @property
    def crashed(self) -> set[int]:
        """Every crashed number: the crashes identified under the debugger and the storm's crashes
        not diagnosed."""
        out = {int(c["method_context"]) for c in self.crashes}
        if self.storm is not None:
            for numbers in (self.storm.get("not_diagnosed") or {}).values():
                out.update(int(n) for n in numbers)
        return out

    def not_diagnosed(self) -> list[tuple[int, str]]:
        """The storm's crashes not diagnosed: (number, signal), in number order."""
        if self.storm is None:
            return []
        return sorted(
            (int(n), str(sig))
            for sig, numbers in (self.storm.get("not_diagnosed") or {}).items()
            for n in numbers
        )

    @property
    def remaining(self) -> MCList:
        return self.partition.numbers.between(self.accounted + 1, self.partition.numbers.last)

    def give_up(self, reason: str, upto: int | None = None) -> None:
        """The numbers after `accounted` up to `upto` (default: all) are not reached, for
        `reason`."""
        left = self.partition.numbers.between(
            self.accounted + 1, upto or self.partition.numbers.last
        )
        if left.count():
            self.not_reached.append({"compile": left.spec(), "reason": reason})
        self.accounted = left.last if left.count() else self.accounted

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": JOURNAL_SCHEMA,
            "partition": self.partition.to_json(),
            "accounted": self.accounted,
            "done": self.done,
            "running": self.running,
            "window_end": self.window_end,
            "deaths": self.deaths,
            "segments": self.segments,
            "crashes": self.crashes,
            "failures": self.failures,
            "failed_compiles": self.failed_compiles,
            "not_reached": self.not_reached,
            "killers": self.killers,
            "tool_failures": self.tool_failures,
            "notes": self.notes,
            "attempts": self.attempts,
            "seconds": round(self.seconds, 3),
            "storm": self.storm,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Journal:
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("schema") != JOURNAL_SCHEMA:
            raise ValueError(f"journal schema {data.get('schema')!r}, expected {JOURNAL_SCHEMA}")
        return cls(
            TriagePartition.from_json(data["partition"]),
            int(data["accounted"]),
            bool(data["done"]),
            data.get("running"),
            data.get("window_end"),
            dict(data.get("deaths") or {}),
            list(data.get("segments") or []),
            list(data.get("crashes") or []),
            list(data.get("failures") or []),
            [int(n) for n in data.get("failed_compiles") or []],
            list(data.get("not_reached") or []),
            [int(n) for n in data.get("killers") or []],
            list(data.get("tool_failures") or []),
            list(data.get("notes") or []),
            int(data.get("attempts") or 0),
            float(data.get("seconds") or 0.0),
            data.get("storm"),
        )


def segment_record(directory: Path, index: int, k: int) -> Path:
    """Replay k of partition `index`: its outcome (with the diagnosis) and its accounted failure
    lines, written once when the replay is settled (so the journal, rewritten after every replay,
    stays small)."""
    return segment_dir(directory, index) / f"seg-{k}.json"


def write_record(path: Path, record: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(record) + "\n")


def with_records(journal: Journal) -> Journal:
    """The journal with each replay's record read back in: the segment's `outcome`, and the failure
    lines in `failures`/`failed_compiles` (a record that cannot be read: that replay's outcome is
    None, a note says so)."""
    # the journal itself is left as it is
    full = Journal.from_json(copy.deepcopy(journal.to_json()))
    seen = set(full.failed_compiles)
    for seg in full.segments:
        path = seg.get("record")
        if not path:
            continue
        try:
            record = json.loads(Path(path).read_text(encoding="utf-8"))
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as e:
            seg["outcome"] = None
            full.notes.append(f"{path}: the replay's record cannot be read ({e})")
            continue
        seg["outcome"] = record.get("outcome")
        full.failures += list(record.get("failures") or [])
        for n in record.get("failed_compiles") or []:
            if int(n) not in seen:
                seen.add(int(n))
                full.failed_compiles.append(int(n))
    return full


def journal_path(directory: Path, index: int) -> Path:
    return directory / f"p{index}.json"


def segment_dir(directory: Path, index: int) -> Path:
    """Where partition `index`'s replays keep their output and debugger transcripts."""
    return directory / f"p{index}"


def load(directory: Path, partition: TriagePartition) -> Journal:
    """The partition's journal, or a new one. A journal that cannot be read (it is written
    atomically: only a foreign hand can break it) is an error, never silently restarted."""
    path = journal_path(directory, partition.index)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Journal(partition)
    try:
        journal = Journal.from_json(json.loads(text))
    except (ValueError, KeyError, TypeError, AttributeError, SpmiDbgError) as e:
        raise ValueError(f"{path}: not a partition journal of this spmi-dbg ({e})") from None
    if journal.partition != partition:
        raise ValueError(
            f"{path}: the journal of another partition ({journal.partition.to_json()})"
        )
    return journal


def read(directory: Path, index: int) -> Journal | None:
    """A journal as it stands (None: none yet, or unreadable), for progress and for the final
    tally."""
    try:
        return Journal.from_json(
            json.loads(journal_path(directory, index).read_text(encoding="utf-8"))
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError, SpmiDbgError):
        return None


def save(directory: Path, journal: Journal) -> None:
    atomic_write_text(
        journal_path(directory, journal.partition.index), json.dumps(journal.to_json()) + "\n"
    )


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
