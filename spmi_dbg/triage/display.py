"""Triage on the terminal: a line per partition while it runs (segment, crashes, stops passed), then the
summary, as plain `key: value` lines (what a log or CI keeps)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn

from spmi_dbg.analysis.policy import PassedStop
from spmi_dbg.report.triage import triage_text
from spmi_dbg.repro.command import Partition
from spmi_dbg.repro.locate import PartitionRun
from spmi_dbg.triage.pipeline import TriageResult
from spmi_dbg.triage.run import Crash, TriageProgress


class TerminalTriageProgress(TriageProgress):
    def __init__(self) -> None:
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                 TextColumn("{task.fields[crashes]} crash(es)"),
                                 TextColumn("{task.fields[stops]} stops passed"), TextColumn("{task.fields[status]}"),
                                 console=Console(stderr=True), transient=False)
        self.tasks: dict[int, TaskID] = {}
        self.counts: dict[int, list[int]] = {}
        self.lock = threading.Lock()
        self.progress.start()

    def _task(self, partition: Partition) -> TaskID:
        with self.lock:
            if partition.index not in self.tasks:
                self.tasks[partition.index] = self.progress.add_task(f"partition {partition.index}", crashes=0,
                                                                     stops=0, status="")
                self.counts[partition.index] = [0, 0]
            return self.tasks[partition.index]

    def segment_started(self, partition: Partition, attempt: int, stdout: Path) -> None:
        status = f"-c {partition.spec}" + ("" if attempt == 1 else f" (retry {attempt - 1})")
        self.progress.update(self._task(partition), status=status)

    def stop_passed(self, partition: Partition, stop: PassedStop) -> None:
        task = self._task(partition)
        with self.lock:
            self.counts[partition.index][1] += 1
            n = self.counts[partition.index][1]
        self.progress.update(task, stops=n)

    def crash_found(self, crash: Crash) -> None:
        partition = crash.run.partition
        task = self._task(partition)
        with self.lock:
            self.counts[partition.index][0] += 1
            n = self.counts[partition.index][0]
        self.progress.update(task, crashes=n, status=f"crash at {crash.number}, resuming")

    def segment_finished(self, partition: Partition, run: PartitionRun) -> None:
        if run.outcome is not None and run.outcome.kind in ("exited", "cancelled"):
            self.progress.update(self._task(partition), status=run.outcome.kind)

    def close(self) -> None:
        self.progress.stop()


def print_summary(result: TriageResult) -> None:
    import json


    data = json.loads((result.options.out / "triage.json").read_text())
    sys.stdout.write(triage_text(data) + f"triage: {result.options.out / 'triage.md'}\n")
