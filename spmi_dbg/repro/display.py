"""Terminal rendering of `spmi-dbg repro`: rich progress for the partitions (methods done -- from
the replay's own ` NN% - Loaded N ...` progress lines --, rate, stops passed), one line per phase,
and a summary panel. Piped output stays quiet: only the plain summary lines at the end."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
)
from rich.table import Table
from rich.text import Text

from spmi_dbg.driver.outcome import PassedStop
from spmi_dbg.report.text import rows
from spmi_dbg.repro.command import Partition
from spmi_dbg.repro.models import PartitionRun
from spmi_dbg.repro.result import PhaseRecord, ReproResult

_LOADED = re.compile(rb"Loaded (\d+) ")
_TAIL = 4096


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.speed
        return Text(f"{speed:,.0f}/s" if speed else "", style="progress.data.speed")


def methods_done(stdout: Path) -> int | None:
    """The last progress count the replay wrote (superpmi prints one every 500 method contexts)."""
    try:
        with open(stdout, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - _TAIL))
            tail = f.read()
    except OSError:
        return None
    found = _LOADED.findall(tail)
    return int(found[-1]) if found else None


class TerminalProgress:
    def __init__(self, console: Console, debugger: str = "gdb") -> None:
        self.console = console
        self.debugger = debugger
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _Rate(),
            TextColumn("{task.fields[stops]} stops passed"),
            TextColumn("{task.fields[status]}"),
            console=console,
            transient=False,
        )
        self.tasks: dict[int, TaskID] = {}
        self.outputs: dict[int, Path] = {}
        self.stops: dict[int, int] = {}
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.poller: threading.Thread | None = None

    # ------------------------------------------------------------------ LocateProgress
    def partition_started(self, partition: Partition, attempt: int, stdout: Path) -> None:
        with self.lock:
            if not self.tasks:
                self.progress.start()
                self.poller = threading.Thread(target=self._poll, daemon=True)
                self.poller.start()
            if partition.index not in self.tasks:
                self.tasks[partition.index] = self.progress.add_task(
                    f"partition {partition.index} -c {partition.spec}",
                    total=len(partition.numbers),
                    stops=0,
                    status="",
                )
            self.outputs[partition.index] = stdout
            self.stops.setdefault(partition.index, 0)
        status = (
            f"under {self.debugger}"
            if attempt == 1
            else f"retry {attempt - 1} with a fresh debugger"
        )
        self.progress.update(self.tasks[partition.index], status=status)

    def stop_passed(self, partition: Partition, stop: PassedStop) -> None:
        with self.lock:
            self.stops[partition.index] += 1
            n = self.stops[partition.index]
        self.progress.update(self.tasks[partition.index], stops=n)

    def partition_finished(self, partition: Partition, run: PartitionRun) -> None:
        task = self.tasks.get(partition.index)
        if task is None:
            return
        o = run.outcome
        status = {
            "exited": f"exited ({o.exit_status})" if o else "",
            "fatal": "[bold red]fatal stop[/]",
            "hang": "[bold red]hang[/]",
            "signaled": f"[red]killed by {o.signal if o else '?'}[/]",
            "cancelled": "[dim]cancelled[/]",
        }.get(run.status, f"[red]{run.status}[/]")
        if o is not None and o.kind == "exited":
            self.progress.update(task, completed=len(partition.numbers))
        self.progress.update(task, status=status)

    def _poll(self) -> None:
        while not self.done.wait(0.25):
            with self.lock:
                items = list(self.outputs.items())
            for index, path in items:
                n = methods_done(path)
                if n is not None:
                    self.progress.update(self.tasks[index], completed=n)

    # ------------------------------------------------------------------ phases
    def phase_started(self, name: str) -> None:
        if name != "locate":
            self.console.print(f"[dim]{name}...[/]")

    def phase_finished(self, phase: PhaseRecord) -> None:
        if phase.name == "locate":
            self.close()
        mark = "[green]ok[/]" if phase.status == "ok" else "[bold red]failed[/]"
        self.console.print(
            f"{phase.name}: {mark} ({phase.seconds:.1f} s) {phase.detail}",
            highlight=False,
            markup=True,
        )

    def close(self) -> None:
        self.done.set()
        if self.poller is not None:
            self.poller.join()
            self.poller = None
        if self.tasks:
            self.progress.stop()


def summary_rows(result: ReproResult) -> list[tuple[str, str]]:
    """The report's own summary (spmi_dbg.report.text), and where the bundle is or why it is not."""
    if result.bundle is None:  # the bundle could not even be put together
        return [
            ("result", f"{result.outcome} (exit {result.exit_code}, {result.seconds:.1f} s)"),
            ("bundle", result.bundle_error or str(result.out)),
        ]
    out = rows(result.bundle.report)
    if result.bundle_error:
        out = [(k, result.bundle_error if k == "bundle" else v) for k, v in out]
    return out


PANEL_CHROME = 6  # the panel's borders and padding, and the grid's padding between its two columns


def fit_paths(text: str, width: int) -> str:
    """`text` with each path wider than `width` shortened at its directory part
    (`.../bin/spmi-replay`): the file name is kept whole (a name wider than the column is folded by
    the panel, never cut). URLs stay."""

    def fit(word: str) -> str:
        if len(word) <= width or "/" not in word.rstrip("/") or "://" in word:
            return word
        parts = word.split("/")
        kept = parts[-1]
        for part in reversed(parts[1:-1]):
            if len(".../" + part + "/" + kept) > width:
                break
            kept = part + "/" + kept
        return ".../" + kept

    return " ".join(fit(w) for w in text.split(" "))


def print_summary(
    result: ReproResult,
    console: Console,
    *,
    rich_panel: bool,
    extra: list[tuple[str, str]] | None = None,
    title: str = "spmi-dbg repro",
) -> None:
    rows = summary_rows(result) + list(extra or [])
    if not rich_panel:
        for k, v in rows:
            console.print(f"{k}: {v}", markup=False, highlight=False, soft_wrap=True)
        return
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    width = console.width - PANEL_CHROME - max((len(k) for k, _ in rows), default=0)
    for k, v in rows:
        table.add_row(k, Text(fit_paths(v, width), overflow="fold"))
    style = {"verified": "green", "not-verified": "yellow", "no-crash": "blue"}.get(
        result.outcome, "red"
    )
    console.print(Panel(table, title=title, border_style=style, expand=False))
