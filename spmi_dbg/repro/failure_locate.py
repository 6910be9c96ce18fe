"""Locate and verify a compile-failure target (`--failure assert|error|missing|any[:TEXT]`):
superpmi reports these itself (docs/superpmi-conventions.md 1.1), so both are native replays read
for its failure lines, no debugger. Locate runs the partitions in parallel and takes the first
matching failure in method context order; verify replays the isolated repro K times and accepts it
when at least half of the runs report the same failure (same assert expression and place, same
exception message) for its method context; with no run (--verify-runs 0) nothing is accepted."""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.driver.base import Replays
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.failures.output import Failure, NameOf, ReplayOutput, is_failure_line, parse_output
from spmi_dbg.failures.target import FailureTarget, first_match, no_such_failure
from spmi_dbg.mch.collection import Collection
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.failure_run import reproduces, run_for_failures
from spmi_dbg.repro.native import NativeRun, run_native

ACCEPT_RATE = 0.5


@dataclass
class FailureRun:
    partition: Partition
    run: NativeRun
    failures: list[Failure]
    stdout: Path
    stderr: Path
    started: bool = True  # False: not replayed (an earlier partition had the failure first)

    def to_json(self) -> dict[str, Any]:
        return {
            "partition": self.partition.index,
            "compile": self.partition.spec,
            "failures": len(self.failures),
            "started": self.started,
            **self.run.to_json(),
        }


@dataclass
class FailureLocated:
    target: FailureTarget
    runs: list[FailureRun]
    failure: Failure | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def seen(self) -> list[Failure]:
        return [f for r in self.runs for f in r.failures]

    def no_such_failure(self) -> str:
        return no_such_failure(self.target, self.seen)

    def crashed(self) -> FailureRun | None:
        """The first partition, in the command's order, whose replay was killed by a signal (not
        stopped by us, not a hang)."""
        return next(
            (
                r
                for r in sorted(self.runs, key=lambda r: r.partition.index)
                if r.started and not r.run.stopped and not r.run.timed_out and r.run.signal
            ),
            None,
        )

    def run_of(self, method_context: int) -> FailureRun | None:
        """The partition run that replayed this method context (partitions are ordered ranges)."""
        return next(
            (r for r in self.runs if r.partition.first <= method_context <= r.partition.last), None
        )


def locate_failure(
    cmd: ReproCommand,
    partitions: list[Partition],
    target: FailureTarget,
    *,
    timeout: float,
    workdir: Path,
    workers: int | None = None,
) -> FailureLocated:
    """The partitions replayed natively in order, `workers` at a time (default: all at once), each
    one's output read as it comes (POLL seconds): a partition that shows a matching failure stops
    there (what follows it cannot come first), the partitions after it stop or are not started, and
    the answer is the first match of the first partition that has one once every partition before it
    has ended. A superpmi whose output is block-buffered shows its failures only at exit: then each
    partition runs to its end, with the same answer."""
    state = _Race()
    name_of = record_names(cmd.input)

    def one(i: int, p: Partition) -> FailureRun:
        name = f"partition-{p.index}"
        out, err = workdir / f"{name}.stdout", workdir / f"{name}.stderr"
        argv = cmd.native_argv(p.spec)
        if state.should_stop(i):  # an earlier partition has a match: this one cannot come first
            return FailureRun(
                p,
                NativeRun(argv, None, None, False, 0.0, stopped=True),
                [],
                out,
                err,
                started=False,
            )
        reader = _OutputReader(out, err, name_of)

        def stop_now() -> bool:
            if reader.poll(target):
                state.matched(i)
            return state.should_stop(i)

        run = run_native(argv, timeout=timeout, stdout=out, stderr=err, poll=(POLL, stop_now))
        failures = reader.final()
        # also when it ended before any look at its output
        if first_match(failures, target) is not None:
            state.matched(i)
        return FailureRun(p, run, failures, out, err)

    with ThreadPoolExecutor(
        max_workers=max(1, min(workers or len(partitions), len(partitions)))
    ) as pool:
        runs = list(pool.map(lambda ip: one(*ip), enumerate(partitions)))
    located = FailureLocated(target, runs)
    # partitions are contiguous and in order: the first match of the first is the first overall
    for r in runs:
        located.failure = first_match(r.failures, target)
        if located.failure is not None:
            break
    located.notes += _run_notes(runs)
    return located


def _run_notes(runs: list[FailureRun]) -> list[str]:
    """What the partitions not replayed, stopped early or not finished mean for the answer."""
    notes = []
    skipped = [r.partition.index for r in runs if not r.started]
    if skipped:
        notes.append(
            f"{len(skipped)} partition(s) after the one with the failure were not replayed"
        )
    for r in runs:
        if r.started and r.run.stopped:
            notes.append(
                f"partition {r.partition.index} (-c {r.partition.spec}) was stopped early: "
                "its own or an earlier partition's failure comes first"
            )
        elif r.run.signal is not None or r.run.timed_out:
            notes.append(
                f"partition {r.partition.index} (-c {r.partition.spec}) did not finish "
                f"({r.run.describe()}): failures after that point were not seen"
            )
    return notes


POLL = 0.2  # seconds between looks at the partitions' output


def record_names(collection: str | Path) -> NameOf:
    """A method context's name from the collection (None where it has none or cannot be read): what
    pairs a 3.1 assert with its failed compile when two asserts share an IL size
    (spmi_dbg.failures.output)."""
    lock = threading.Lock()
    cache: dict[int, str | None] = {}

    def name_of(number: int) -> str | None:
        with lock:
            if number not in cache:
                try:
                    with Collection.open(collection) as col:
                        cache[number] = col.method_context(number).name
                except (SpmiDbgError, OSError, ValueError):
                    cache[number] = None
            return cache[number]

    return name_of


class _Race:
    """Which partitions may stop: the first one with a match (its later output is not needed), and
    every one after it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.first_match: int | None = None

    def matched(self, i: int) -> None:
        with self.lock:
            if self.first_match is None or i < self.first_match:
                self.first_match = i

    def should_stop(self, i: int) -> bool:
        """Partition i's failures after its first match, and every later partition's, cannot be the
        first."""
        with self.lock:
            return self.first_match is not None and i >= self.first_match


class _OutputReader:
    """A running replay's failures: each look reads only what its output files gained since the last
    one and keeps only the lines that can name a failure, so a long replay's output is read once,
    not once per look. stdout and stderr stay apart (docs/superpmi-conventions.md 1.1): a 3.1
    assert's ERROR lines arrive long before its ISSUE line, so a match counts only once no failure
    up to it still awaits its ISSUE line."""

    def __init__(self, stdout: Path, stderr: Path, name_of: NameOf | None = None) -> None:
        self.streams = [_Stream(stdout), _Stream(stderr)]
        self.name_of = name_of
        self.output = ReplayOutput([], [])

    @property
    def failures(self) -> list[Failure]:
        return self.output.failures

    def poll(self, target: FailureTarget) -> bool:
        # every stream read, not only up to the first that grew
        if any([s.read() for s in self.streams]):
            self.output = parse_output(self.streams[0].lines, self.streams[1].lines)
        match = first_match(self.output.failures, target)
        return match is not None and self.output.settled(match)

    def final(self) -> list[Failure]:
        for s in self.streams:
            s.read(final=True)
        self.output = parse_output(
            self.streams[0].lines, self.streams[1].lines, name_of=self.name_of
        )
        return self.output.failures


class _Stream:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""  # the start of a line not yet ended
        self.lines: list[str] = []  # the failure lines so far

    def read(self, final: bool = False) -> bool:
        """Read what was added; True when a failure line came with it."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return False
        self.offset += len(data)
        chunks = (self.partial + data).split(b"\n")
        self.partial = b"" if final else chunks.pop()
        new = [
            line
            for c in chunks
            if is_failure_line(line := c.decode("utf-8", "replace").rstrip("\r"))
        ]
        self.lines += new
        return bool(new)


@dataclass
class FailureVerification:
    failure: Failure
    runs: list[NativeRun] = field(default_factory=list)
    matched: list[bool] = field(default_factory=list)

    @property
    def reproduced(self) -> int:
        return sum(self.matched)

    @property
    def rate(self) -> float:
        return self.reproduced / len(self.runs) if self.runs else 0.0

    @property
    def accepted(self) -> bool:
        return bool(self.runs) and self.reproduced >= math.ceil(ACCEPT_RATE * len(self.runs))

    def summary(self) -> str:
        if not self.runs:
            return (
                "no native run (--verify-runs 0): not verified (a repro is verified by native "
                "replays)"
            )
        verdict = "accepted" if self.accepted else "not accepted"
        return (
            f"{self.reproduced}/{len(self.runs)} runs reported the same {self.failure.kind} "
            f"({verdict})"
        )

    def to_json(self) -> dict[str, Any]:
        """The shape of a crash's verification (report.json "verification"), the failure's key as
        its bucket."""
        return {
            "expected": {
                "kind": self.failure.kind,
                "signal": None,
                "bucket": None,
                "failure": self.failure.key,
            },
            "native_runs": [
                r.to_json() | {"reproduced": m}
                for r, m in zip(self.runs, self.matched, strict=True)
            ],
            "debugger_run": None,
            "debugger_failures": [],
            "reproduced": self.reproduced,
            "runs": len(self.runs),
            "rate": round(self.rate, 4),
            "accepted": self.accepted,
            "notes": [],
            "summary": self.summary(),
        }


def verify_failure(
    cmd: ReproCommand,
    mch: Path,
    failure: Failure,
    replays: Replays,
    *,
    runs: int,
    number_in_repro: int = 1,
    label: str = "verify",
) -> FailureVerification:
    """Replay `mch` (the repro: the failing record is `number_in_repro` there) `runs` times
    natively (`replays`' debugger is not used)."""
    out = FailureVerification(failure)
    for i in range(1, runs + 1):
        run, failures = run_for_failures(
            cmd.native_argv(None, mch),
            timeout=replays.timeout,
            workdir=replays.workdir,
            name=f"{label}-{i}",
        )
        out.runs.append(run)
        out.matched.append(reproduces(failures, failure.key, number_in_repro))
    return out
