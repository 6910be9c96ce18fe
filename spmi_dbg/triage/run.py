"""Triage, the replay part, as the coordinator sees it: every partition (triage/plan.py) is a task
(triage/task.py) run by an engine (triage/engine.py: threads here; triage/cluster.py: a dask
cluster). A fatal stop (or a hang) at method context N does not end a partition: the crash is
identified (from the stack, else by native bisection) and the partition goes on at N+1 in the same
debugger session. Each task keeps its journal under the out directory (the record that survives
a dead worker, read again only to resume it) and returns it; this module watches the journals on
disk for progress (and --max-crashes) while the tasks run, then makes each partition's facts
(triage/models.py) from the journal its task returned -- from disk only for a partition no task
ran (done before a --resume) or whose task failed."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from spmi_dbg.analysis.policy import PassedStop
from spmi_dbg.failures.output import ReplayOutput
from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.models import PartitionRun
from spmi_dbg.triage import journal as journals
from spmi_dbg.triage.coverage import Counts, counts
from spmi_dbg.triage.engine import Engine, EngineReport, EngineRun
from spmi_dbg.triage.journal import Journal
from spmi_dbg.triage.models import Crash, NotDiagnosed, PartitionFound
from spmi_dbg.triage.plan import TriagePartition
from spmi_dbg.triage.storm import StormWatch
from spmi_dbg.triage.task import CrashBudget, PartitionTask, TaskSettings

POLL = 0.5  # seconds between two looks at the journals (progress, --max-crashes on a cluster)
# until a storm is said: a crash costs ~0.03 s in a gdb session (issue 29), so a 0.5 s look
# would say it a dozen crashes late
STORM_POLL = 0.1


@dataclass
class Tally:
    """Progress over all partitions, from their journals."""

    methods: int  # in all partitions
    accounted: int = 0  # each in one of the four below (triage/coverage.py, the same counting)
    crashes: int = 0
    failed_compile: int = 0
    not_reached: int = 0
    partitions: int = 0
    partitions_done: int = 0
    seconds: float = 0.0
    before: int = 0  # accounted before this run (--resume): not part of its rate

    @property
    def rate(self) -> float:
        return (self.accounted - self.before) / self.seconds if self.seconds > 0 else 0.0

    @property
    def replayed_clean(self) -> int:
        return self.accounted - self.crashes - self.failed_compile - self.not_reached

    def add(self, c: Counts, done: bool) -> None:
        self.accounted += c.accounted
        self.crashes += c.crashed
        self.failed_compile += c.failed_compile
        self.not_reached += sum(c.not_reached.values())
        self.partitions_done += done


class TriageProgress:
    """What a display is told (the default tells nothing)."""

    def started(self, partitions: list[TriagePartition], engine: EngineReport) -> None: ...

    def update(self, tally: Tally) -> None: ...

    def systematic(self, text: str) -> None:
        """A crash storm, said once as soon as it shows (triage/storm.py)."""

    def close(self) -> None: ...


@dataclass
class TriageRun:
    partitions: list[TriagePartition]
    journals: list[Journal]
    engine: EngineReport
    # every replay, partition by partition
    segments: list[PartitionRun] = field(default_factory=list)
    crashes: list[Crash] = field(default_factory=list)
    # the storms' crashes replayed without a debugger
    not_diagnosed: list[NotDiagnosed] = field(default_factory=list)
    # (collection, what a partition printed)
    outputs: list[tuple[str, ReplayOutput]] = field(default_factory=list)
    stopped_early: bool = False  # --max-crashes reached
    # partitions done before this run (--resume): not re-run
    resumed: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> list[tuple[str, PassedStop]]:
        """Every first-chance stop passed on, with its collection's path."""
        collection = {p.index: p.collection for p in self.partitions}
        return [
            (collection[r.partition.index], s)
            for r in self.segments
            if r.outcome
            for s in r.outcome.passed
        ]

    @property
    def tool_failures(self) -> list[dict[str, object]]:
        out: list[dict[str, object]] = [
            t.to_json() | {"partition": j.partition.index}
            for j in self.journals
            for t in j.tool_failures
        ]
        out += [
            {"partition": i, "compile": "", "failures": [why]}
            for i, why in self.engine.task_failures.items()
        ]
        return out


class Tallier:
    """Progress from the journals, each read again only when it changed (a cluster's triage has
    hundreds)."""

    def __init__(self, partitions: list[TriagePartition], directory: Path) -> None:
        self.partitions = partitions
        self.directory = directory
        self.start = time.monotonic()
        # index -> (stat, its counts, done)
        self.seen: dict[int, tuple[tuple[int, int], Counts, bool]] = {}
        self.journals: dict[int, Journal] = {}  # as last read
        self.before = 0
        self.before = self.tally().accounted  # what a resumed triage had done already

    def tally(self) -> Tally:
        t = Tally(
            sum(p.methods for p in self.partitions),
            partitions=len(self.partitions),
            seconds=time.monotonic() - self.start,
            before=self.before,
        )
        for p in self.partitions:
            try:
                st = journals.journal_path(self.directory, p.index).stat()
            except OSError:
                continue
            key = (st.st_mtime_ns, st.st_size)
            known = self.seen.get(p.index)
            if known is None or known[0] != key:
                j = journals.read(self.directory, p.index)
                if j is None:
                    continue
                known = self.seen[p.index] = (key, counts(j), j.done)
                self.journals[p.index] = j
            t.add(known[1], known[2])
        return t

    def final(self, done: list[Journal]) -> Tally:
        """The tally of the triage's end: every journal as the result reads it (the numbers a
        stopped triage did not reach included), as the coverage counts them."""
        t = Tally(
            sum(p.methods for p in self.partitions),
            partitions=len(self.partitions),
            seconds=time.monotonic() - self.start,
            before=self.before,
        )
        for j in done:
            t.add(counts(j), j.done)
        return t

    def done(self) -> list[int]:
        """The partitions whose journals said done at the last tally."""
        return sorted(i for i, known in self.seen.items() if known[2])


def replay_partitions(
    commands: dict[str, ReproCommand],
    partitions: list[TriagePartition],
    directory: Path,
    *,
    engine: Engine,
    settings: TaskSettings,
    progress: TriageProgress | None = None,
    names: dict[str, str],
) -> TriageRun:
    """Run every unfinished partition's task, then read all the journals back."""
    max_crashes = settings.max_crashes
    show = progress or TriageProgress()
    # what a resumed triage had done already: done partitions, crashes
    tallier = Tallier(partitions, directory)
    resumed = tallier.done()
    budget = CrashBudget(max_crashes - tallier.tally().crashes)
    cancel = threading.Event()
    if budget.left <= 0:
        cancel.set()
    tasks = [
        PartitionTask(
            commands[p.collection],
            p,
            settings.debugger,
            settings.timeout,
            str(directory),
            max_crashes,
            settings.diagnose_all,
        )
        for p in partitions
        if p.index not in resumed
    ]
    watch = _Watch(tallier, show, cancel, max_crashes)
    ran = EngineRun(engine.report())
    show.started(partitions, ran.report)
    with watch:
        ran = engine.run(tasks, cancel, budget) if tasks else ran
    # a storm the watcher had no look at before the end (a quick triage) is said all the same
    watch.look()
    result = TriageRun(partitions, [], ran.report, resumed=resumed, notes=list(watch.said))
    result.stopped_early = cancel.is_set() or budget.left <= 0
    for p in partitions:
        j = _ended(ran.journals.get(p.index), directory, p, ran.report, result.stopped_early)
        found = PartitionFound.of(j, names[p.collection])
        result.journals.append(j)
        result.segments += found.runs
        result.crashes += found.crashes
        result.not_diagnosed += found.not_diagnosed
        result.outputs.append((p.collection, found.output))
    result.crashes.sort(key=lambda c: (c.collection, c.number))
    result.not_diagnosed.sort(key=lambda c: (c.collection, c.number))
    show.update(tallier.final(result.journals))  # the last progress line: the coverage's count
    return result


class _Watch:
    """What the coordinator looks at while the tasks run, in a thread of its own: the progress line
    every POLL seconds, the storm every STORM_POLL seconds until it is said; a spent --max-crashes
    stops the tasks still replaying."""

    def __init__(
        self, tallier: Tallier, show: TriageProgress, cancel: threading.Event, max_crashes: int
    ) -> None:
        self.tallier, self.show, self.cancel, self.max_crashes = tallier, show, cancel, max_crashes
        self.storm = StormWatch()
        self.said: list[str] = []
        self.finished = threading.Event()
        self.thread = threading.Thread(target=self._run, name="spmi-triage-progress", daemon=True)

    def __enter__(self) -> _Watch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.finished.set()
        self.thread.join()

    def _run(self) -> None:
        shown = time.monotonic()
        while not self.finished.wait(STORM_POLL if self.storm.said is None else POLL):
            t = self.tallier.tally()
            if time.monotonic() - shown >= POLL or self.storm.said is not None:
                self.show.update(t)
                shown = time.monotonic()
            self.look(t)
            # the budget is spent: the tasks still replaying stop at once
            if t.crashes >= self.max_crashes:
                self.cancel.set()

    def look(self, t: Tally | None = None) -> None:
        """The storm, said once it is one."""
        t = self.tallier.tally() if t is None else t
        line = self.storm.check(t.accounted, list(self.tallier.journals.values()))
        if line is not None:
            self.said.append(line)
            self.show.systematic(line)


def _ended(
    returned: Journal | None,
    directory: Path,
    p: TriagePartition,
    report: EngineReport,
    stopped_early: bool,
) -> Journal:
    """A partition's journal at the triage's end: the one its task returned, else (done before a
    --resume, or its task failed) the one on disk, with its records; one that did not finish says
    why."""
    if returned is not None:
        j = returned
    else:
        read = journals.read(directory, p.index)
        j = journals.with_records(read) if read is not None else Journal(p)
    if not j.done:
        why = report.task_failures.get(p.index)
        reason = (
            f"the partition's task failed: {why}"
            if why
            else "--max-crashes reached: the triage stopped"
            if stopped_early
            else "the partition did not finish"
        )
        j.give_up(reason)
    return j
