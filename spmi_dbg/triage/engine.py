"""Triage, where the partitions' tasks run: on this machine (threads, one debugger each: the
default), or as tasks of an existing dask.distributed cluster (`--scheduler`, triage/cluster.py).
Both run the same task (triage/task.py), which writes its journal under the out directory; the
coordinator reads the journals.

Measured (bench/triage_scale.py): an embedded dask LocalCluster costs its start (two worker
processes, 0.36 to 0.51 s here) and a round trip per task, and its worker processes share the CPUs
with the replays, for nothing threads do not already give on one machine (each partition's work is a
debugger and its replay, in processes of their own): the local engine is plain threads."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from spmi_dbg.driver.pool import Warm
from spmi_dbg.errors import SpmiDbgError, is_system_stop, system_stop_said
from spmi_dbg.failures.output import Failure
from spmi_dbg.repro.models import Located
from spmi_dbg.repro.pipeline import run_repro
from spmi_dbg.repro.result import ReproOptions, ReproResult
from spmi_dbg.triage.journal import Journal
from spmi_dbg.triage.task import (
    CrashBudget,
    MissingOnWorker,
    PartitionTask,
    SessionCache,
    run_partition,
)


@dataclass
class EngineReport:
    """What the engine says of the run beyond the journals."""

    name: str  # local | dask
    workers: int  # threads that ran tasks
    address: str | None = None  # the scheduler
    dashboard: str | None = None
    task_failures: dict[int, str] = field(default_factory=dict)  # partition -> why its task failed
    # of task_failures: those the system stopped (a full disk): a resume goes on exactly
    system_stops: set[int] = field(default_factory=set)
    resubmitted: dict[int, int] = field(default_factory=dict)  # partition -> tasks submitted again
    # bucket -> the worker that built its bundle
    bundle_workers: dict[str, str] = field(default_factory=dict)

    def failed(self, partition: int, e: Exception) -> None:
        """Partition `partition`'s task failed with `e` (a system stop said as one)."""
        if is_system_stop(e):
            assert isinstance(e, OSError)
            self.task_failures[partition] = system_stop_said(e)
            self.system_stops.add(partition)
        else:
            self.task_failures[partition] = f"{type(e).__name__}: {e}"


@dataclass
class EngineRun:
    """What the engine's run of the tasks gives the coordinator."""

    report: EngineReport
    # partition -> the journal its task returned (a task that failed returned none: its journal on
    # disk holds what it did)
    journals: dict[int, Journal] = field(default_factory=dict)


@dataclass(frozen=True)
class BundleJob:
    """One bucket's repro bundle: the repro pipeline from isolate on, for its smallest member."""

    key: str
    options: ReproOptions  # out: the bundle's directory
    located: Located | None = None  # a crash
    failure: Failure | None = None  # a compile failure superpmi reported

    def run(self, debuggers: Warm | None = None) -> ReproResult:
        """`debuggers`: warm sessions to replay in (the caller closes them)."""
        return run_repro(
            self.options, located=self.located, failure=self.failure, debuggers=debuggers
        )


class Engine(Protocol):
    @property
    def workers(self) -> int:
        """How many partitions run at once (for the plan's partition size)."""
        ...

    def report(self) -> EngineReport:
        """What runs the tasks (before they run: for the progress display)."""
        ...

    def run(
        self, tasks: list[PartitionTask], cancel: threading.Event, budget: CrashBudget
    ) -> EngineRun:
        """Every task run (or stopped by `cancel`), with the journals they returned; raises
        MissingOnWorker when a worker lacks an input."""
        ...

    def run_bundles(self, jobs: list[BundleJob], report: EngineReport) -> dict[str, ReproResult]:
        """Every bucket's bundle, by bucket key."""
        ...

    def close(self) -> None: ...


class LocalEngine:
    def __init__(self, workers: int) -> None:
        self._workers = workers
        # a worker thread's next partition goes on in its debugger; the bundles verify in them
        self._sessions = SessionCache()

    @property
    def workers(self) -> int:
        return self._workers

    def report(self) -> EngineReport:
        return EngineReport("local", self._workers)

    def run(
        self, tasks: list[PartitionTask], cancel: threading.Event, budget: CrashBudget
    ) -> EngineRun:
        ran = EngineRun(self.report())
        # the largest first
        order = sorted(tasks, key=lambda t: (-t.partition.bytes, t.partition.index))
        pool = ThreadPoolExecutor(
            max_workers=max(1, min(self._workers, len(order))), thread_name_prefix="spmi-triage"
        )
        sessions = self._sessions
        try:
            futures = {
                pool.submit(run_partition, t, cancel=cancel, budget=budget, sessions=sessions): t
                for t in order
            }
            for f, task in futures.items():
                try:
                    ran.journals[task.partition.index] = f.result()
                except MissingOnWorker:
                    raise
                # a broken journal, a full disk: this partition's
                except (SpmiDbgError, OSError, ValueError) as e:
                    ran.report.failed(task.partition.index, e)
        except BaseException:
            cancel.set()
            raise
        finally:
            pool.shutdown(wait=True)
        return ran

    def run_bundles(self, jobs: list[BundleJob], report: EngineReport) -> dict[str, ReproResult]:
        """One after another: each repro already runs its verification replays --workers at a
        time, in the debuggers the partitions left."""
        if not jobs:
            return {}
        with self._sessions.lend(jobs[0].options.debugger) as warm:
            return {
                job.key: job.run(warm if job.options.debugger == warm.driver else None)
                for job in jobs
            }

    def close(self) -> None:
        self._sessions.close_all()
