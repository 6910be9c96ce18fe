"""What one replay run under a debugger ended with: the same shape whichever debugger drove it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.analysis.policy import PASS_KINDS, PassedStop
from spmi_dbg.analysis.stacks import ThreadStack
from spmi_dbg.jsonfacts import JsonFact

__all__ = ["PASS_KINDS", "OutcomeKind", "PassedStop", "ReplayOutcome"]

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
