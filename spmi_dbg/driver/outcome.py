"""What one replay run under a debugger ended with: the same shape whichever debugger drove it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from spmi_dbg.analysis.policy import PASS_KINDS, PassedStop

__all__ = ["PASS_KINDS", "PassedStop", "ReplayOutcome"]

@dataclass
class ReplayOutcome:
    # fatal: a stop the replay does not survive, diagnosed in full | hang: --timeout expired, interrupted,
    # diagnosed | exited: ran to the end | signaled: died of a signal the debugger had passed on (no diagnosis)
    # | cancelled: another partition won first
    kind: str
    diagnosis: dict[str, Any] | None = None
    passed: list[PassedStop] = field(default_factory=list)
    exit_status: int | None = None
    signal: str | None = None
    threads: list[dict[str, Any]] = field(default_factory=list)  # hang: every thread's stack
    seconds: float = 0.0
    startup_seconds: float = 0.0  # debugger start to the replay running
    notes: list[str] = field(default_factory=list)

    @property
    def method_context(self) -> int | None:
        mc = (self.diagnosis or {}).get("method_context") or {}
        n = mc.get("number")
        return int(n) if n else None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
