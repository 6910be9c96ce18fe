"""Locate: replay the partitions in parallel, one debugger each, taken in the command's order; the
command's first fatal stop (or hang) wins: a partition's stop wins once every partition before it
has ended without one, and the partitions after a stop are cancelled (`--first-found`: the first
stop in time wins). A debugger that dies or stops answering gets one retry with a fresh
one, then its partition is a tool failure. When the winning diagnosis has no method context number
(no debug info, values optimized out), the partition is bisected natively with `-c` prefixes, and
the result says so."""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from spmi_dbg.analysis.facts import MethodContextFact
from spmi_dbg.analysis.signature import mark_hang
from spmi_dbg.driver.base import Driver, Replays
from spmi_dbg.driver.outcome import PassedStop
from spmi_dbg.driver.request import ReplayRequest, ReplayWatch
from spmi_dbg.errors import SpmiDbgError, ToolFailure
from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.mclist import compress_ranges
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.expect import Expectation, expectation_of
from spmi_dbg.repro.models import Located, PartitionRun
from spmi_dbg.repro.native import NativeRun, run_native

ATTEMPTS = 2  # a fresh debugger once more after a tool failure
WINNING = ("fatal", "hang", "signaled")


class LocateProgress(Protocol):
    def partition_started(self, partition: Partition, attempt: int, stdout: Path) -> None: ...

    def stop_passed(self, partition: Partition, stop: PassedStop) -> None: ...

    def partition_finished(self, partition: Partition, run: PartitionRun) -> None: ...


def locate(
    cmd: ReproCommand,
    partitions: list[Partition],
    replays: Replays,
    *,
    progress: LocateProgress | None = None,
    hints: tuple[int, ...] = (),
    workers: int | None = None,
    first_found: bool = False,
) -> Located:
    """`hints`: method contexts a superpmi.py log names as failing. Those in the selection are
    replayed first, alone, as partition 0 (a few records: seconds); only when none of them crashes
    is the whole selection replayed in partitions."""
    selected = {n for p in partitions for n in p.numbers}
    first = tuple(sorted(set(hints) & selected))

    replay = _Search(
        cmd, replays.under, replays.timeout, replays.workdir, progress, workers, first_found
    ).run

    if not first:
        return replay(partitions)
    hinted = replay([Partition(0, first)])
    spec = compress_ranges(list(first))
    if hinted.winner is not None:
        hinted.notes.append(
            f"the method context(s) the log names as failing (-c {spec}) were replayed first, "
            "alone, and the crash is among them"
        )
        return hinted
    if hinted.tool_failures:
        return hinted
    result = replay(partitions)
    result.runs[:0] = hinted.runs
    result.notes.insert(
        0,
        f"the method context(s) the log names as failing (-c {spec}) were replayed first, "
        "alone, without a crash: then the whole selection",
    )
    return result


@dataclass(frozen=True)
class _Search:
    cmd: ReproCommand
    debugger: Driver
    timeout: float
    workdir: Path
    progress: LocateProgress | None
    workers: int | None
    first_found: bool

    def run(self, partitions: list[Partition]) -> Located:
        """The command's first failure in its own order: a partition's fatal stop wins only once
        every partition before it has ended without one (those after it are cancelled at once). So
        the answer is the method context the command itself dies at, for any number of workers and
        any timing. `first_found`: the first stop in time wins instead, and every other partition is
        cancelled (faster; the result says the answer may not be the command's first crash)."""
        runs = [
            PartitionRun(
                p,
                self.workdir / f"partition-{p.index}.stdout",
                self.workdir / f"partition-{p.index}.stderr",
                self.workdir / f"partition-{p.index}.debugger.log",
            )
            for p in partitions
        ]
        race = _Race(self, runs)
        workers = max(1, min(self.workers or len(runs), len(runs)))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="spmi-locate")
        try:
            futures = [pool.submit(race.work, r) for r in runs]  # taken in the command's order
            for f in futures:
                f.result()
        except BaseException:  # Ctrl-C or a bug: stop every debugger before leaving
            race.stop_all()
            raise
        finally:
            pool.shutdown(wait=True)
        result = Located(runs)
        if race.found:
            # the earliest in the command's order of those that stopped (by default every
            # partition before it ran to its end without one; with --first-found the others were
            # cancelled at the first stop, and an earlier one that had stopped too by then still
            # comes first)
            result.winner = min(race.found, key=lambda r: r.partition.index)
            if self.first_found:
                _say_first_found(result)
            identify(self.cmd, result, timeout=self.timeout, workdir=self.workdir)
        return result


class _Race:
    """The partitions' replays under the debugger, each in a thread of the pool: a fatal stop
    cancels the partitions after it (with first_found, every other one)."""

    def __init__(self, search: _Search, runs: list[PartitionRun]) -> None:
        self.search, self.runs = search, runs
        self.lock = threading.Lock()
        self.cancels = {id(r): threading.Event() for r in runs}
        self.stopping = threading.Event()  # Ctrl-C or a bug: every partition stops
        self.found: list[PartitionRun] = []  # partitions that stopped fatally, in that order

    def cancelled(self, run: PartitionRun) -> bool:
        return self.cancels[id(run)].is_set() or self.stopping.is_set()

    def work(self, run: PartitionRun) -> None:
        p, progress, search = run.partition, self.search.progress, self.search
        while run.attempts < ATTEMPTS and not self.cancelled(run):
            run.attempts += 1
            if progress is not None:
                progress.partition_started(p, run.attempts, run.stdout)
            request = ReplayRequest(
                tuple(search.cmd.argv(p.spec)),
                search.timeout,
                run.stdout,
                run.stderr,
                run.transcript,
            )
            on_stop = (lambda s: progress.stop_passed(p, s)) if progress else None
            try:
                outcome = search.debugger.run_replay(
                    request, ReplayWatch(self.cancels[id(run)], on_stop)
                )
            except ToolFailure as e:
                run.failures.append(str(e))
                continue
            run.outcome = outcome
            if outcome.kind in WINNING:
                self._won(run)
            break
        if progress is not None:
            progress.partition_finished(p, run)

    def _won(self, run: PartitionRun) -> None:
        with self.lock:
            self.found.append(run)
            for other in self.runs:
                later = other.partition.index > run.partition.index
                if other is not run and (self.search.first_found or later):
                    self.cancels[id(other)].set()

    def stop_all(self) -> None:
        self.stopping.set()
        for e in self.cancels.values():
            e.set()


def _say_first_found(result: Located) -> None:
    """--first-found: what the earlier partitions had done when the first stop in time won."""
    assert result.winner is not None
    earlier = [r for r in result.runs if r.partition.index < result.winner.partition.index]
    unfinished = [r for r in earlier if r.outcome is None or r.outcome.kind == "cancelled"]
    if not unfinished:
        return
    parts = ", ".join(
        f"partition {r.partition.index} (-c {r.partition.spec}) was cancelled" for r in unfinished
    )
    result.first_found = (
        "--first-found: the first stop in time won, so this may not be the command's first "
        f"crash: {parts} before it ended"
    )


def locate_core(
    cmd: ReproCommand,
    partitions: list[Partition],
    core: Path,
    debugger: Driver,
    *,
    timeout: float,
    workdir: Path,
) -> Located:
    """Post-mortem: the core file's diagnosis is the fatal stop of one partition holding the whole
    selection (the native bisection, if the core cannot tell the method context, and a minimization
    run over it)."""
    whole = Partition(1, tuple(n for p in partitions for n in p.numbers))
    run = PartitionRun(
        whole, workdir / "core.stdout", workdir / "core.stderr", workdir / "core.debugger.log"
    )
    run.stdout.write_bytes(b"")
    run.stderr.write_bytes(b"")
    result = Located([run])
    run.attempts = 1
    run.outcome = debugger.read_core(core, cmd.program, transcript=run.transcript, argv=cmd.argv())
    result.winner = run
    identify(cmd, result, timeout=timeout, workdir=workdir)
    d = run.outcome.diagnosis
    fact = d.method_context if d is not None else None
    if d is not None and fact is not None and fact.number and not fact.name:
        named = _with_names(dataclasses.replace(fact, input=fact.input or cmd.input), cmd.input)
        run.outcome = dataclasses.replace(
            run.outcome, diagnosis=dataclasses.replace(d, method_context=named)
        )
    result.notes.append(
        f"post-mortem: the fatal stop is the core file {core}; the method context was read "
        "from it, then the repro is replayed live"
    )
    return result


def identify(cmd: ReproCommand, result: Located, *, timeout: float, workdir: Path) -> None:
    """The winner's method context: from its diagnosis, else by native bisection of its
    partition."""
    assert result.winner is not None and result.winner.outcome is not None
    outcome = result.winner.outcome
    if outcome.kind == "hang" and outcome.diagnosis is not None:
        # the driver's facts stay as it gave them: the winner's outcome is a new one
        outcome = dataclasses.replace(outcome, diagnosis=mark_hang(outcome.diagnosis))
        result.winner.outcome = outcome
    result.expectation = expectation_of(outcome)
    mc = outcome.diagnosis.method_context if outcome.diagnosis is not None else None
    if outcome.diagnosis is not None:
        result.method_context_rejected = list(
            mc.rejected if mc is not None else outcome.diagnosis.method_context_rejected
        )
    if mc is not None and mc.number:
        result.method_context = mc.number
        result.method_context_source = mc.source or "the debugger"
        return
    why = (
        "the diagnosis has no method context number"
        if outcome.diagnosis
        else "the replay died with no stop to diagnose"
    )
    found, runs = bisect(
        cmd, result.winner.partition, result.expectation, timeout=timeout, workdir=workdir
    )
    result.bisection = [r.to_json() | {"compile": r.argv[r.argv.index("-c") + 1]} for r in runs]
    if found is None:
        result.notes.append(
            f"{why}, and native bisection of partition {result.winner.partition.index} found no "
            f"prefix showing {result.expectation.describe()}"
        )
        return
    result.method_context = found
    result.method_context_source = (
        f"native bisection with -c ranges over partition {result.winner.partition.index} "
        f"({len(runs)} runs), because {why}"
    )
    if outcome.diagnosis is not None:
        fact = MethodContextFact(
            found,
            result.method_context_source,
            input=cmd.input,
            rejected=list(result.method_context_rejected),
        )
        result.winner.outcome = dataclasses.replace(
            outcome,
            diagnosis=dataclasses.replace(
                outcome.diagnosis, method_context=_with_names(fact, cmd.input)
            ),
        )


def _with_names(fact: MethodContextFact, path: str) -> MethodContextFact:
    """The fact with the record's method name and IL size, when the collection gives them."""
    try:
        with Collection.open(path) as col:
            info = col.method_context(fact.number)
    except (SpmiDbgError, OSError):
        return fact
    # a placeholder is no name
    return dataclasses.replace(
        fact, name=None if info.name_note else info.name, il_size=info.il_size
    )


def bisect(
    cmd: ReproCommand, partition: Partition, expected: Expectation, *, timeout: float, workdir: Path
) -> tuple[int | None, list[NativeRun]]:
    """The shortest prefix of the partition whose native replay fails as expected; its last
    record."""
    numbers = list(partition.numbers)
    runs: list[NativeRun] = []

    def fails(k: int) -> bool:
        run = run_native(
            cmd.native_argv(compress_ranges(numbers[:k])),
            timeout=timeout,
            stdout=workdir / "bisect.stdout",
            stderr=workdir / "bisect.stderr",
        )
        runs.append(run)
        return run.matches(expected)

    if not fails(len(numbers)):
        return None, runs
    lo, hi = 1, len(numbers)
    while lo < hi:
        mid = (lo + hi) // 2
        if fails(mid):
            hi = mid
        else:
            lo = mid + 1
    return numbers[hi - 1], runs
