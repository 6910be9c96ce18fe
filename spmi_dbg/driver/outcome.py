"""What one replay run under a debugger ended with: the same shape whichever debugger drove it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.analysis.policy import PASS_KINDS, PassedStop, mark_second_chance
from spmi_dbg.analysis.stacks import ThreadStack
from spmi_dbg.jsonfacts import JsonFact

__all__ = ["PASS_KINDS", "OutcomeKind", "PassedStop", "ReplayOutcome", "RunClock"]

# fatal: a stop the replay does not survive, diagnosed in full | hang: --timeout expired,
# interrupted, diagnosed
# | exited: ran to the end | signaled: died of a signal the debugger had passed on (no diagnosis) |
# cancelled: another partition won first
OutcomeKind = Literal["fatal", "hang", "exited", "signaled", "cancelled"]
OUTCOME_KINDS: tuple[OutcomeKind, ...] = ("fatal", "hang", "exited", "signaled", "cancelled")


@dataclass
class ReplayOutcome(JsonFact):
    kind: OutcomeKind
    diagnosis: Diagnosis | None = None
    passed: list[PassedStop] = field(default_factory=list)
    exit_status: int | None = None
    signal: str | None = None
    threads: list[ThreadStack] = field(default_factory=list)  # hang: every thread's stack
    seconds: float = 0.0
    startup_seconds: float = 0.0  # debugger start to the replay running
    notes: list[str] = field(default_factory=list)

    @property
    def method_context(self) -> int | None:
        mc = self.diagnosis.method_context if self.diagnosis is not None else None
        return mc.number if mc is not None and mc.number else None


@dataclass
class RunClock:
    """What every debugger's loop knows of a replay when it ends (gdb's MiRun, the lldb worker):
    when the run began, when the replay was running, the stops passed on. `outcome` is the one
    builder of a ReplayOutcome for every debugger."""

    start: float
    running: float
    passed: list[PassedStop] = field(default_factory=list)

    def outcome(
        self,
        kind: OutcomeKind,
        *,
        diagnosis: Diagnosis | None = None,
        notes: Sequence[str] = (),
        second_chance: str | None = None,
        exit_status: int | None = None,
        signal: str | None = None,
        threads: Sequence[ThreadStack] = (),
    ) -> ReplayOutcome:
        """The outcome as of now; `second_chance`: the note of a fatal stop that is a fault's
        second chance (its diagnosis says fatal, whatever the stack suggested)."""
        if kind == "fatal" and second_chance is not None and diagnosis is not None:
            diagnosis = mark_second_chance(diagnosis, second_chance)
        return ReplayOutcome(
            kind,
            diagnosis=diagnosis,
            passed=list(self.passed),
            exit_status=exit_status,
            signal=signal,
            threads=list(threads),
            seconds=time.monotonic() - self.start,
            startup_seconds=self.running - self.start,
            notes=list(notes),
        )
