"""Triage, one partition's task (run by a thread here, or by a dask worker): replay the partition
under one debugger session, and after a fatal stop (or a hang) at method context N identify it and
go on at N+1 in the same session (the inferior is run again: no new debugger per crash), until the
partition is done. After every replay the journal (triage/journal.py) is written, so that a task
that dies loses no work.

A task first checks that what it needs exists where it runs (the program, the JITs, the collection,
the out directory: a cluster's workers need the same paths), and fails with one line naming the
worker and the path."""

from __future__ import annotations

import dataclasses
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from spmi_dbg.analysis.facts import MethodContextFact
from spmi_dbg.driver.base import Driver, ReplaySession
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.pool import Warm
from spmi_dbg.driver.request import ReplayRequest, ReplayWatch
from spmi_dbg.errors import SpmiDbgError, ToolFailure
from spmi_dbg.failures.output import Failure, read_output
from spmi_dbg.mch.mclist import MCList
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.locate import ATTEMPTS, WINNING, identify
from spmi_dbg.repro.models import Located, PartitionRun
from spmi_dbg.repro.native import run_native
from spmi_dbg.triage import journal as journals
from spmi_dbg.triage.journal import (
    DEATHS_BEFORE_SPLIT,
    CrashEntry,
    Journal,
    Running,
    Segment,
    SegmentRecord,
    ToolFailureEntry,
)
from spmi_dbg.triage.plan import TriagePartition
from spmi_dbg.triage.storm import storm_bucket
from spmi_dbg.triage.sweep import MAX_WINDOW, Declared, SweepState

MAX_CRASHES_REASON = "--max-crashes reached: the triage stopped"
KILLER_REASON = "it killed its worker twice: not retried"
SWEEP_SAVE_EVERY = 0.5  # seconds between two journal writes while a storm is swept natively


class MissingOnWorker(SpmiDbgError):
    """A path the task needs does not exist where it runs (one line: the worker and the path; an
    input error)."""


@dataclass(frozen=True)
class TaskSettings:
    """What every partition's task of a triage runs with, passed as one value."""

    debugger: Driver
    timeout: float  # each replay's --timeout
    max_crashes: int  # the crash budget of a task run without one
    diagnose_all: bool = False  # --diagnose-all


@dataclass(frozen=True)
class PartitionTask:
    command: ReproCommand  # on this partition's collection
    partition: TriagePartition
    debugger: Driver
    timeout: float
    directory: str  # the out directory's partitions/ (a shared path on a cluster)
    # the crash budget of a task run without one (the engines share one across their tasks)
    max_crashes: int
    # every crash diagnosed under the debugger, even in a storm (--diagnose-all: no sweep)
    diagnose_all: bool = False
    # the replays get exactly the command's recorded environment (a cluster's worker: the user's
    # whole environment is not there); else the environment this process runs in (the user's run)
    exact_env: bool = False


class Budget(Protocol):
    """Crashes the whole triage may still record (--max-crashes)."""

    @property
    def left(self) -> int: ...

    def take(self) -> bool:
        """One more crash may be recorded (and is counted)."""
        ...


class CrashBudget:
    """The budget the threads of one process share (cluster.ClusterBudget: the tasks of a
    cluster)."""

    def __init__(self, limit: int) -> None:
        self.left = limit
        self.lock = threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True


class SessionCache:
    """One debugger session per worker thread, kept from one partition to the next (the same
    program: a worker's next partition starts no new debugger). The engine closes them when the
    triage ends."""

    def __init__(self) -> None:
        self.sessions: dict[tuple[int, Driver, str], ReplaySession] = {}
        self.lock = threading.Lock()

    def get(self, debugger: Driver, program: str, transcript: Path) -> ReplaySession:
        key = (threading.get_ident(), debugger, program)
        with self.lock:
            session = self.sessions.get(key)
            if session is not None and not session.broken:
                return session
            self.sessions.pop(key, None)
        if session is not None:
            session.close()
        session = debugger.session(transcript)
        with self.lock:
            self.sessions[key] = session
        return session

    def lend(self, debugger: Driver) -> Warm:
        """The idle sessions of `debugger` as a pool (driver/pool.py) that now owns them: a
        triage's bundles verify in the debuggers its partitions left, their symbols read."""
        with self.lock:
            mine = [(k, s) for k, s in self.sessions.items() if k[1] == debugger]
            for k, _ in mine:
                del self.sessions[k]
        for _, s in mine:
            if s.broken:  # out of the cache, so closed here: never lent, never left running
                s.close()
        return Warm(debugger, [(k[2], s) for k, s in mine if not s.broken])

    def close_all(self) -> None:
        with self.lock:
            sessions, self.sessions = list(self.sessions.values()), {}
        for s in sessions:
            s.close()


def check_inputs(task: PartitionTask, where: str) -> None:
    cmd = task.command
    for path in (
        cmd.program,
        *cmd.jits,
        task.partition.collection,
        task.directory,
        *task.debugger.needed_paths,
    ):
        if not os.path.exists(path):
            raise MissingOnWorker(
                f"worker {where}: {path}: not found (the workers need the same paths as the "
                "coordinator: a shared file system)"
            )


def run_partition(
    task: PartitionTask,
    *,
    where: str | None = None,
    cancel: threading.Event | None = None,
    budget: Budget | None = None,
    sessions: SessionCache | None = None,
) -> Journal:
    """The partition's journal, its segments' records read in, when it is done or when `cancel`
    stopped it: what the coordinator makes the partition's facts from. `sessions`: debugger
    sessions to reuse and leave open (default: one of its own, closed at the end)."""
    where = where or f"{socket.gethostname()} (pid {os.getpid()})"
    check_inputs(task, where)
    directory = Path(task.directory)
    with journals.holding(directory, task.partition.index):
        journal = journals.load(directory, task.partition)
        if journal.done:
            return journals.with_records(journal)
        journal.attempts += 1
        dead = journal.running
        if dead is not None:  # the lock was free: the replay's worker died
            key = f"{dead.from_}-{dead.to}"
            journal.deaths[key] = journal.deaths.get(key, 0) + 1
            journal.notes.append(
                f"the worker replaying -c {dead.compile} ({dead.by}) died; replayed again from "
                f"{dead.from_}"
            )
            journal.running = None
        own = sessions is None
        cache = sessions or SessionCache()
        try:
            _Partition(
                task, journal, where, cancel, budget or CrashBudget(task.max_crashes), cache
            ).run()
        finally:
            if own:
                cache.close_all()
        return journals.with_records(journal)


class _Partition:
    def __init__(
        self,
        task: PartitionTask,
        journal: Journal,
        where: str,
        cancel: threading.Event | None,
        budget: Budget,
        sessions: SessionCache,
    ) -> None:
        self.task = task
        self.journal = journal
        self.where = where
        self.cancel = cancel or threading.Event()
        self.budget = budget
        self.directory = Path(task.directory)
        self.files = journals.segment_dir(self.directory, task.partition.index)
        self.files.mkdir(exist_ok=True)
        self.sessions = sessions
        self._sweep = journal.storm if journal.storm is not None and not task.diagnose_all else None
        self._saved: str | None = None  # the journal's text as last written by this task

    def run(self) -> None:
        start = saved = time.monotonic()
        try:
            while not self.journal.done:
                if self.cancel.is_set():
                    return
                native = self.step()
                now = time.monotonic()
                self.journal.seconds += now - start
                start = now
                # a native replay cannot kill the worker: its accounting may wait a little (a task
                # killed meanwhile replays it again)
                if not native or now - saved >= SWEEP_SAVE_EVERY:
                    self.save()
                    saved = now
        finally:
            # cancelled, or an error: nothing of this replay is accounted
            self.journal.running = None
            self.save()

    def save(self) -> None:
        """The journal written, unless it is what was last written (the save after the loop
        then writes nothing: a disk failing at the end does not fail a partition that is done)."""
        if self._sweep is not None:
            self.journal.storm = self._sweep
        text = journals.text(self.journal)
        if text != self._saved:
            journals.save(self.directory, self.journal, text)
            self._saved = text

    def window(self) -> MCList | None:
        """The next replay's numbers: the rest of the partition, or (after deaths) a part of it;
        None when the next record is a worker killer now given up on."""
        j = self.journal
        rest = j.remaining
        if j.window_end is not None:
            rest = rest.between(rest.first, j.window_end)
        while j.deaths.get(f"{rest.first}-{rest.last}", 0) >= DEATHS_BEFORE_SPLIT:
            if rest.count() == 1:
                j.killers.append(rest.first)
                j.give_up(KILLER_REASON, rest.first)
                j.window_end = None
                return None
            numbers = list(rest) if rest.count() < 64 else None
            middle = numbers[len(numbers) // 2 - 1] if numbers else _middle(rest)
            rest = rest.between(rest.first, middle)
            j.window_end = middle
        return rest

    def step(self) -> bool:
        """One replay; True when it ran natively (a storm's sweep)."""
        j = self.journal
        if not j.remaining.count():
            j.done = True
            return False
        window = self.window()
        if window is None:
            return False
        sweep = self._sweep
        if sweep is not None:
            if not sweep.under_debugger(window.first):
                self.native_step(sweep, sweep.native_window(window))
                return True
            # the slot's sample: up to the slot's end (a crash ends it sooner)
            nxt = sweep.next_slot_start(window.first)
            until = sweep.debugger_until
            if until is not None and window.first <= until:
                window = window.between(window.first, until)
            elif nxt is not None and nxt - 1 >= window.first:
                window = window.between(window.first, nxt - 1)
        self.debugger_step(window)
        if sweep is not None:
            sweep.sampled_at(window.first)
            if sweep.debugger_until is not None and j.accounted >= sweep.debugger_until:
                sweep.debugger_until = None
        return False

    def debugger_step(self, window: MCList) -> None:
        j = self.journal
        spec = window.spec()
        j.running = Running(window.first, window.last, spec, self.where)
        self.save()
        k = len(j.segments) + 1
        run = PartitionRun(
            Partition(self.task.partition.index, tuple(window)),
            self.files / f"seg-{k}.stdout",
            self.files / f"seg-{k}.stderr",
            self.files / f"seg-{k}.debugger.log",
        )
        self.replay(run, spec)
        j.running = None
        if j.window_end is not None and window.last == j.window_end:
            # the part the deaths left is through (or resumed after a crash): one window again
            j.window_end = None
        mark, sweep = j.mark(), self._sweep
        try:
            upto = self.settle(run, window, spec, k)
            record = journals.segment_record(self.directory, self.task.partition.index, k)
            failures, failed = _accepted(run, upto)
            journals.write_record(record, SegmentRecord(run.outcome, failures, failed))
        except BaseException:
            # its record not written (a failing disk): nothing of the replay is accounted, so
            # that a resume replays it again rather than count its failures as clean
            j.rewind(mark)
            self._sweep = sweep
            raise
        j.segments.append(_segment(run, self.task.partition, self.where, record))

    def settle(self, run: PartitionRun, window: MCList, spec: str, k: int) -> int | None:
        """What the replay's end means for the journal; returns the last method context whose
        failure lines count (None: none of them, the replay is not accounted)."""
        j = self.journal
        outcome = run.outcome
        if outcome is None:  # the debugger failed twice: the partition cannot go on
            j.tool_failures.append(ToolFailureEntry(spec, list(run.failures)))
            j.give_up(
                f"the debugger failed: {run.failures[-1] if run.failures else 'no reason given'}"
            )
            j.done = True
            return None
        # nothing of it is accounted: a resumed triage replays it again
        if outcome.kind == "cancelled":
            return None
        if outcome.kind not in WINNING:  # ran to the end of the window
            j.accounted = window.last
            return window.last
        located = Located([run], winner=run)
        identify(self.task.command, located, timeout=self.task.timeout, workdir=self.files)
        if located.method_context not in window:
            if window.count() > 1:
                self.halve(located, window, spec)
                return None
            _only_one(located, window.first, spec)
        assert located.method_context is not None
        if not self.budget.take():
            j.give_up(MAX_CRASHES_REASON)
            j.done = True
            return located.method_context
        j.crashes.append(_crash(located, k))
        j.accounted = located.method_context
        self.watch_storm()
        if self.budget.left <= 0:
            self.cancel.set()
            j.give_up(MAX_CRASHES_REASON)
            j.done = True
        return located.method_context

    def watch_storm(self) -> None:
        """A storm in this partition's own crashes starts its sweep (triage/sweep.py)."""
        j = self.journal
        if self._sweep is not None or self.task.diagnose_all:
            return
        p = j.partition
        accounted = p.numbers.between(p.numbers.first, j.accounted).count()
        found = storm_bucket(j.crashes, accounted)
        rest = j.remaining
        if found is None or not rest.count():
            return
        self._sweep = SweepState.start(found[0], rest, Declared(found[1], accounted))
        j.notes.append(
            f"partition {p.index}: {found[1]} of its {accounted} method contexts replayed so far "
            f"crashed in bucket {found[0]}: a storm; from {rest.first} on, replayed without a "
            f"debugger but for a sample of {len(self._sweep.slots)} (--diagnose-all diagnoses "
            "every crash)"
        )

    def native_step(self, sweep: SweepState, window: MCList) -> None:
        """One native replay of a storm's sweep."""
        j = self.journal
        spec = window.spec()
        run = run_native(
            self.task.command.native_argv(spec),
            timeout=self.task.timeout,
            stdout=self.files / "sweep.stdout",
            stderr=self.files / "sweep.stderr",
        )
        sweep.native_replays += 1
        sweep.native_seconds += run.seconds
        if run.timed_out:  # a hang: the debugger replays this window and diagnoses it
            sweep.debugger_until = window.last
            sweep.window = 1
            return
        if run.signal is not None and window.count() > 1:
            sweep.window = 1  # which one crashed is not established: one by one
            return
        upto = window.last
        crashed = run.signal is not None
        if crashed:
            if not self.budget.take():
                j.give_up(MAX_CRASHES_REASON)
                j.done = True
                return
            sweep.crashed(window.first, str(run.signal))
        else:
            sweep.window = min(2 * sweep.window, MAX_WINDOW)
        output = read_output(self.files / "sweep.stdout", self.files / "sweep.stderr")
        j.failures += [f for f in output.failures if f.method_context <= upto]
        known = set(j.failed_compiles)
        j.failed_compiles += sorted(
            {f.method_context for f in output.failed_compiles if f.method_context <= upto} - known
        )
        j.accounted = upto
        if crashed and self.budget.left <= 0:
            self.cancel.set()
            j.give_up(MAX_CRASHES_REASON)
            j.done = True

    def halve(self, located: Located, window: MCList, spec: str) -> None:
        """A crash whose method context is not established: nothing of the replay is accounted (no
        method context of it counts as replayed, clean or not); its first half is replayed next,
        then the rest, so each crash is cornered in a replay of one method context, which
        establishes it. Never skipped, never guessed."""
        j = self.journal
        numbers = list(window) if window.count() < 64 else None
        middle = numbers[len(numbers) // 2 - 1] if numbers else _middle(window)
        j.window_end = middle
        why = "; ".join(located.notes) or "no established number"
        if located.method_context is not None:
            why = f"the number found, {located.method_context}, is not in the replay's -c {spec}"
        j.notes.append(
            f"partition {self.task.partition.index}: a crash in -c {spec} whose method context is "
            f"not established ({why}): -c {window.between(window.first, middle).spec()} is "
            "replayed next, then the rest"
        )
        return None

    def replay(self, run: PartitionRun, spec: str) -> None:
        """One replay in the session; a debugger that fails gets one more try in a fresh session."""
        argv = self.task.command.argv(spec)
        while run.attempts < ATTEMPTS and not self.cancel.is_set():
            run.attempts += 1
            session = self.sessions.get(self.task.debugger, argv[0], run.transcript)
            try:
                run.outcome = session.run(
                    ReplayRequest(
                        tuple(argv),
                        self.task.timeout,
                        run.stdout,
                        run.stderr,
                        run.transcript,
                        env=self.task.command.replay_env() if self.task.exact_env else None,
                    ),
                    ReplayWatch(self.cancel),
                )
                return
            except ToolFailure as e:
                run.failures.append(str(e))
        if run.outcome is None and not run.failures:
            run.outcome = ReplayOutcome("cancelled")


def _middle(numbers: MCList) -> int:
    """The number halfway through a list of ranges, without listing it."""
    return numbers.nth(max(numbers.count() // 2, 1) - 1)


def _accepted(run: PartitionRun, upto: int | None) -> tuple[list[Failure], list[int]]:
    """The failure lines of the replay's accounted part (method contexts up to `upto`): each
    replayed method context's lines once, however often its replay was interrupted before."""
    if upto is None:
        return [], []
    output = read_output(run.stdout, run.stderr)
    return (
        [f for f in output.failures if f.method_context <= upto],
        sorted({f.method_context for f in output.failed_compiles if f.method_context <= upto}),
    )


def _segment(run: PartitionRun, partition: TriagePartition, where: str, record: Path) -> Segment:
    """The journal's line for a replay (its outcome and failure lines are in `record`, written
    once): the run's JSON and where its files are."""
    return Segment.from_json(
        run.summary()
        | {
            "partition": partition.index,
            "collection": partition.collection,
            "by": where,
            "stdout": str(run.stdout),
            "stderr": str(run.stderr),
            "transcript": str(run.transcript),
            "record": str(record),
        }
    )


def _only_one(located: Located, number: int, spec: str) -> None:
    """A replay of a single method context crashed: the crash is that method context's."""
    located.method_context = number
    located.method_context_source = (
        f"the only method context of the replay -c {spec} (the stack gave no established number)"
    )
    d, winner = located.diagnosis, located.winner
    if d is not None and winner is not None and winner.outcome is not None:
        fact = MethodContextFact(
            number, located.method_context_source, rejected=list(located.method_context_rejected)
        )
        # the driver's diagnosis stays as it gave it: the winner's outcome is a new one
        winner.outcome = dataclasses.replace(
            winner.outcome, diagnosis=dataclasses.replace(d, method_context=fact)
        )


def _crash(located: Located, segment: int) -> CrashEntry:
    assert located.method_context is not None
    return CrashEntry(
        located.method_context,
        segment,
        located.expectation,
        located.method_context_source,
        list(located.bisection),
        list(located.method_context_rejected),
        list(located.notes),
    )
