"""Triage on the terminal: one progress bar over all partitions (method contexts accounted for,
methods/s, crashes so far, ETA) on a terminal; plain `triage: ...` lines every PLAIN_EVERY seconds
when stderr is a pipe or a file (what a CI log keeps); then the summary as `key: value` lines on
stdout."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from spmi_dbg.errors import printable
from spmi_dbg.report.triage import triage_text
from spmi_dbg.triage.engine import EngineReport
from spmi_dbg.triage.plan import TriagePartition
from spmi_dbg.triage.result import TriageResult
from spmi_dbg.triage.run import Tally, TriageProgress

PLAIN_EVERY = 10.0  # seconds between two plain progress lines


def _eta(t: Tally) -> str:
    if t.rate <= 0:
        return "?"
    # the rate of this run (not of a resumed triage's earlier part)
    left = int((t.methods - t.accounted) / t.rate)
    return (
        f"{left // 3600}h{left % 3600 // 60:02d}m"
        if left >= 3600
        else f"{left // 60}m{left % 60:02d}s"
    )


def _where(engine: EngineReport) -> str:
    if engine.name == "dask":
        board = f", dashboard {engine.dashboard}" if engine.dashboard else ""
        return f"the dask cluster {engine.address} ({engine.workers} worker thread(s){board})"
    return f"this machine ({engine.workers} worker(s))"


class TerminalTriageProgress(TriageProgress):
    def __init__(self, stream: TextIO) -> None:
        self.console = Console(file=stream)
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} method contexts"),
            TextColumn("{task.fields[rate]:.0f}/s"),
            TextColumn("{task.fields[crashes]} crash(es)"),
            TextColumn("{task.fields[parts]}"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self.task: TaskID | None = None

    def started(self, partitions: list[TriagePartition], engine: EngineReport) -> None:
        # Not markup, not highlighted: an address or a path is printed as it is.
        self.console.print(
            f"triage: {len(partitions)} partition(s) on {_where(engine)}",
            markup=False,
            highlight=False,
        )
        self.task = self.progress.add_task(
            "triage", total=sum(p.methods for p in partitions), rate=0.0, crashes=0, parts=""
        )
        self.progress.start()

    def update(self, tally: Tally) -> None:
        if self.task is not None:
            self.progress.update(
                self.task,
                completed=tally.accounted,
                rate=tally.rate,
                crashes=tally.crashes,
                parts=f"{tally.partitions_done}/{tally.partitions} partitions",
            )

    def systematic(self, text: str) -> None:
        self.console.print(f"triage: {text}", markup=False, highlight=False)

    def close(self) -> None:
        self.progress.stop()


class PlainTriageProgress(TriageProgress):
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last = 0.0
        self.final: Tally | None = None

    def started(self, partitions: list[TriagePartition], engine: EngineReport) -> None:
        self._line(
            f"{len(partitions)} partition(s), {sum(p.methods for p in partitions)} method "
            "contexts, on "
            f"{_where(engine)}"
        )
        self.last = time.monotonic()

    def update(self, tally: Tally) -> None:
        self.final = tally
        if time.monotonic() - self.last >= PLAIN_EVERY:
            self.last = time.monotonic()
            self._tally(tally)

    def systematic(self, text: str) -> None:
        self._line(text)

    def close(self) -> None:
        if self.final is not None:
            self._tally(self.final)

    def _tally(self, t: Tally) -> None:
        share = 100.0 * t.accounted / t.methods if t.methods else 100.0
        unreached = f", {t.not_reached} not reached" if t.not_reached else ""
        self._line(
            f"{t.accounted}/{t.methods} method contexts ({share:.1f}%): {t.replayed_clean} "
            f"replayed clean, {t.crashes} crashed, {t.failed_compile} failed compile(s)"
            f"{unreached}; {t.rate:.0f}/s, {t.partitions_done}/{t.partitions} partitions, "
            f"ETA {_eta(t)}"
        )

    def _line(self, text: str) -> None:
        try:
            self.stream.write(f"triage: {text}\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass


def progress_for(stream: TextIO) -> TriageProgress:
    return TerminalTriageProgress(stream) if stream.isatty() else PlainTriageProgress(stream)


def print_summary(result: TriageResult) -> None:
    assert result.doc is not None, "the summary of a triage whose triage.json was written"
    summary = triage_text(result.doc)
    sys.stdout.write(summary + f"triage: {printable(str(result.options.out / 'triage.md'))}\n")
