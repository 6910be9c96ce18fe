"""The repro pipeline's facts about where a crash is: a partition's replay under a debugger
(PartitionRun) and what locate established of the crash (Located). Data apart from the operations
that make them (repro/locate.py locates, triage/task.py replays a triage's partitions): every stage
that reads them imports this module, not the stage that wrote them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from spmi_dbg import jsonfacts
from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.repro.command import Partition
from spmi_dbg.repro.expect import Expectation

T = TypeVar("T")

__all__ = ["Located", "PartitionRun"]


@dataclass
class PartitionRun(JsonFact):
    """A partition's replay under the debugger (to_json/from_json: the whole fact; `summary`:
    report.json's and the journal's line of it)."""

    partition: Partition
    stdout: Path
    stderr: Path
    transcript: Path
    outcome: ReplayOutcome | None = None
    attempts: int = 0
    failures: list[str] = field(default_factory=list)  # one per failed attempt

    @property
    def status(self) -> str:
        if self.outcome is not None:
            return self.outcome.kind
        return "tool-failure" if self.failures else "not run"

    def summary(self) -> dict[str, Any]:
        o = self.outcome
        return {
            "partition": self.partition.index,
            "compile": self.partition.spec,
            "methods": len(self.partition.numbers),
            "status": self.status,
            "attempts": self.attempts,
            "failures": self.failures,
            "exit_status": o.exit_status if o else None,
            "signal": o.signal if o else None,
            "stops_passed": len(o.passed) if o else 0,
            "seconds": round(o.seconds, 3) if o else None,
            "debugger_startup_seconds": round(o.startup_seconds, 3) if o else None,
            "notes": o.notes if o else [],
        }


@dataclass
class Located(JsonFact):
    """What locate established of a crash: the replays, the winner among them (one of `runs`), the
    expectation and the method context with how it was found."""

    runs: list[PartitionRun]
    winner: PartitionRun | None = None
    expectation: Expectation | None = None
    method_context: int | None = None
    method_context_source: str = ""
    # the stack's numbers that failed their checks
    method_context_rejected: list[str] = field(default_factory=list)
    bisection: list[dict[str, Any]] = field(default_factory=list)  # the native runs, when bisected
    notes: list[str] = field(default_factory=list)
    # --first-found won over an earlier partition that had not ended: what it did not wait for
    first_found: str | None = None

    @property
    def diagnosis(self) -> Diagnosis | None:
        return self.winner.outcome.diagnosis if self.winner and self.winner.outcome else None

    @property
    def tool_failures(self) -> list[PartitionRun]:
        return [r for r in self.runs if r.outcome is None and r.failures]

    @classmethod
    def from_json(cls: type[T], data: Any) -> T:
        """The fact read back, its winner the very run of `runs` it was (JSON writes it twice)."""
        located = jsonfacts.from_json(cls, data)
        assert isinstance(located, Located)
        if located.winner is not None and located.winner in located.runs:
            located.winner = located.runs[located.runs.index(located.winner)]
        return located
