"""Triage, the replay part: every partition is replayed under its own debugger, as by `spmi-dbg repro`, but a
fatal stop (or a hang) at method context N does not end it: the crash is identified (from the stack, else by
native bisection of the segment) and the partition resumes at N+1 with `-c`, in a fresh debugger, until its
records are done or `--max-crashes` crashes were found in all. So each further crash costs a debugger start
and the replay of the records after it, never a re-replay from the start."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from spmi_dbg.analysis.policy import PassedStop
from spmi_dbg.analysis.signature import bucket_key
from spmi_dbg.driver.base import Driver
from spmi_dbg.errors import ToolFailure
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.locate import ATTEMPTS, WINNING, Located, PartitionRun, identify


@dataclass
class Crash:
    """One fatal stop (or hang): its run (the segment that ended there) and what was identified of it."""

    located: Located  # winner = the segment's run; method_context and expectation identified

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


@dataclass
class TriageRun:
    segments: list[PartitionRun] = field(default_factory=list)  # every run, in the order they ended
    crashes: list[Crash] = field(default_factory=list)
    unidentified: list[PartitionRun] = field(default_factory=list)  # crashed, but no method context number
    tool_failures: list[PartitionRun] = field(default_factory=list)
    stopped_early: bool = False  # --max-crashes reached
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> list[tuple[int, PassedStop]]:
        return [(r.partition.index, s) for r in self.segments if r.outcome for s in r.outcome.passed]


class TriageProgress:
    """What a terminal display is told (the default tells nothing)."""

    def segment_started(self, partition: Partition, attempt: int, stdout: Path) -> None: ...

    def stop_passed(self, partition: Partition, stop: PassedStop) -> None: ...

    def crash_found(self, crash: Crash) -> None: ...

    def segment_finished(self, partition: Partition, run: PartitionRun) -> None: ...


def triage(cmd: ReproCommand, partitions: list[Partition], debugger: Driver, *, timeout: float, workdir: Path,
           max_crashes: int, progress: TriageProgress | None = None) -> TriageRun:
    result = TriageRun()
    lock = threading.Lock()
    cancel = threading.Event()
    show = progress or TriageProgress()

    def replay(segment: Partition, tag: str) -> PartitionRun:
        run = PartitionRun(segment, workdir / f"{tag}.stdout", workdir / f"{tag}.stderr", workdir / f"{tag}.log")
        on_stop: Callable[[PassedStop], None] = lambda s: show.stop_passed(segment, s)  # noqa: E731
        while run.attempts < ATTEMPTS and not cancel.is_set():
            run.attempts += 1
            show.segment_started(segment, run.attempts, run.stdout)
            try:
                run.outcome = debugger.run_replay(cmd.argv(segment.spec), timeout=timeout, stdout=run.stdout,
                                       stderr=run.stderr, transcript=run.transcript, cancel=cancel, on_stop=on_stop)
                break
            except ToolFailure as e:
                run.failures.append(str(e))
        show.segment_finished(segment, run)
        return run

    def work(partition: Partition) -> None:
        remaining = list(partition.numbers)
        step = 0
        while remaining and not cancel.is_set():
            step += 1
            run = replay(Partition(partition.index, tuple(remaining)), f"partition-{partition.index}.{step}")
            with lock:
                result.segments.append(run)
            if run.outcome is None:
                if run.failures:
                    with lock:
                        result.tool_failures.append(run)
                return
            if run.outcome.kind not in WINNING:
                return  # ran to its end (or cancelled)
            located = Located([run], winner=run)
            identify(cmd, located, timeout=timeout, workdir=workdir)
            if located.method_context is None:  # cannot resume after an unknown record
                with lock:
                    result.unidentified.append(run)
                    result.notes.append(f"partition {partition.index}: a crash in -c {run.partition.spec} whose "
                                        "method context could not be identified ended the partition: "
                                        + "; ".join(located.notes))
                return
            crash = Crash(located)
            with lock:
                if len(result.crashes) >= max_crashes:
                    return
                result.crashes.append(crash)
                if len(result.crashes) >= max_crashes:
                    result.stopped_early = True
                    cancel.set()
            show.crash_found(crash)
            remaining = [n for n in remaining if n > crash.number]

    pool = ThreadPoolExecutor(max_workers=len(partitions), thread_name_prefix="spmi-triage")
    try:
        for f in [pool.submit(work, p) for p in partitions]:
            f.result()
    except BaseException:
        cancel.set()
        raise
    finally:
        pool.shutdown(wait=True)
    result.crashes.sort(key=lambda c: c.number)
    return result
