"""Verify: replay the repro K times natively (a crash is recognised from the signal that killed the replay,
a hang from the timeout) and once under the debugger, whose diagnosis must land in the same bucket.
Accepted when at least half of the runs reproduce; the rate is recorded."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.driver.base import Driver
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.errors import ToolFailure
from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.expect import Expectation, bucket_of
from spmi_dbg.repro.locate import ATTEMPTS
from spmi_dbg.repro.native import NativeRun, run_native

ACCEPT_RATE = 0.5


@dataclass
class Verification:
    expected: Expectation
    native: list[NativeRun] = field(default_factory=list)
    debugger: ReplayOutcome | None = None
    debugger_failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def debugger_matched(self) -> bool | None:
        return None if self.debugger is None else self.expected.matches_outcome(self.debugger)

    @property
    def reproduced(self) -> int:
        return sum(r.matches(self.expected) for r in self.native) + (1 if self.debugger_matched else 0)

    @property
    def total(self) -> int:
        return len(self.native) + (1 if self.debugger is not None else 0)

    @property
    def rate(self) -> float:
        return self.reproduced / self.total if self.total else 0.0

    @property
    def accepted(self) -> bool:
        return self.total > 0 and self.rate >= ACCEPT_RATE

    def summary(self) -> str:
        dbg = "" if self.debugger is None else \
            f"; under the debugger: {'same bucket' if self.debugger_matched else self._debugger_text()}"
        verdict = "accepted" if self.accepted else "not accepted"
        return (f"{self.reproduced}/{self.total} runs reproduced {self.expected.describe()} "
                f"({self.rate:.0%}, {verdict}){dbg}")

    def _debugger_text(self) -> str:
        d = self.debugger
        if d is None:
            return "not run"
        if d.kind in ("fatal", "hang"):
            return f"{d.kind} in bucket {bucket_of(d)}"
        return f"{d.kind}" + (f" (exit status {d.exit_status})" if d.exit_status is not None else "")

    def to_json(self) -> dict[str, Any]:
        d = self.debugger
        return {"expected": {"kind": self.expected.kind, "signal": self.expected.signal,
                             "bucket": self.expected.bucket},
                "native_runs": [r.to_json() | {"reproduced": r.matches(self.expected)} for r in self.native],
                "debugger_run": None if d is None else {"outcome": d.kind, "bucket": bucket_of(d),
                                                        "reproduced": self.debugger_matched,
                                                        "exit_status": d.exit_status, "signal": d.signal,
                                                        "seconds": round(d.seconds, 3)},
                "debugger_failures": self.debugger_failures, "reproduced": self.reproduced, "runs": self.total,
                "rate": round(self.rate, 4), "accepted": self.accepted, "notes": self.notes, "summary": self.summary()}


def verify(cmd: ReproCommand, repro: Path, expected: Expectation, debugger: Driver, *, runs: int,
           timeout: float, workdir: Path, label: str = "verify") -> Verification:
    result = Verification(expected)
    argv = cmd.argv(None, input=repro)
    for _ in range(runs):
        result.native.append(run_native(cmd.native_argv(None, input=repro), timeout=timeout,
                                        stdout=workdir / f"{label}.stdout",
                                        stderr=workdir / f"{label}.stderr"))
    if runs and not any(r.matches(expected) for r in result.native):
        result.notes.append(f"no native run reproduced {expected.describe()}: the debugger run was skipped")
        return result
    for _ in range(ATTEMPTS):
        try:
            result.debugger = debugger.run_replay(argv, timeout=timeout, stdout=workdir / f"{label}.debugger.stdout",
                                       stderr=workdir / f"{label}.debugger.stderr",
                                       transcript=workdir / f"{label}.debugger.log", cancel=None, on_stop=None)
            break
        except ToolFailure as e:
            result.debugger_failures.append(str(e))
    if result.debugger is None:
        result.notes.append("the debugger failed twice; the rate counts the native runs only")
    return result
