"""Verify: replay the repro K times natively (a crash is recognised from the signal that killed the
replay, a hang from the timeout) and once under the debugger, whose diagnosis must land in the same
bucket. Accepted when at least half of the native runs reproduce and the debugger run (when it ran)
lands in the same bucket; the rate is the native runs' (the debugger run is said apart, never
counted as one of them). With no native run (--verify-runs 0) nothing is accepted: only the debugger
run was checked, and the summary says so."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.analysis.signature import in_bucket
from spmi_dbg.driver.base import Replays
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.request import ReplayRequest
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
        """Native runs that reproduced."""
        return sum(r.matches(self.expected) for r in self.native)

    @property
    def total(self) -> int:
        """Native runs (the debugger run is not one of them)."""
        return len(self.native)

    @property
    def rate(self) -> float:
        return self.reproduced / self.total if self.total else 0.0

    @property
    def accepted(self) -> bool:
        return self.native_accepted and self.debugger_matched is not False

    @property
    def native_accepted(self) -> bool:
        """At least one native run, and at least half of them reproduced (the debugger run
        aside)."""
        return self.total > 0 and self.rate >= ACCEPT_RATE

    def summary(self) -> str:
        """What was run and what each showed: `3/3 native runs reproduced death by SIGSEGV (100%,
        accepted); under the debugger: same bucket`."""
        dbg = (
            ""
            if self.debugger is None
            else "; under the debugger: "
            f"{'same bucket' if self.debugger_matched else self._debugger_text()}"
        )
        if not self.native:
            return (
                f"no native run (--verify-runs 0): not verified{dbg or '; no debugger run'} (a "
                "repro is verified "
                "by native replays; the debugger run only checks the bucket)"
            )
        if self.accepted:
            verdict = "accepted"
        elif self.native_accepted:
            verdict = "not accepted: the run under the debugger did not land in the same bucket"
        elif self.reproduced == 0:
            verdict = (
                "not accepted; the native runs have repro.sh's clean environment (env -i, PATH, "
                "HOME and the recorded variables): if the replay needs another variable of "
                "yours, name it with --env NAME (or --env-all)"
            )
        else:
            verdict = "not accepted"
        return (
            f"{self.reproduced}/{self.total} native run{'s' if self.total != 1 else ''} reproduced "
            f"{self.expected.describe()} ({self.rate:.0%}, {verdict}){dbg}"
        )

    def _debugger_text(self) -> str:
        d = self.debugger
        if d is None:
            return "not run"
        if d.kind in ("fatal", "hang"):
            return f"{d.kind} {in_bucket(bucket_of(d))}, not {self.expected.bucket_key}"
        return f"{d.kind}" + (
            f" (exit status {d.exit_status})" if d.exit_status is not None else ""
        )

    def to_json(self) -> dict[str, Any]:
        d = self.debugger
        return {
            "expected": {
                "kind": self.expected.kind,
                "signal": self.expected.signal,
                "bucket": self.expected.bucket,
            },
            "native_runs": [
                r.to_json() | {"reproduced": r.matches(self.expected)} for r in self.native
            ],
            "debugger_run": None
            if d is None
            else {
                "outcome": d.kind,
                "bucket": bucket_of(d),
                "reproduced": self.debugger_matched,
                "exit_status": d.exit_status,
                "signal": d.signal,
                "seconds": round(d.seconds, 3),
            },
            "debugger_failures": self.debugger_failures,
            "reproduced": self.reproduced,
            "runs": self.total,
            "rate": round(self.rate, 4),
            "accepted": self.accepted,
            "notes": self.notes,
            "summary": self.summary(),
        }


def verify(
    cmd: ReproCommand,
    repro: Path,
    expected: Expectation,
    replays: Replays,
    *,
    runs: int,
    label: str = "verify",
) -> Verification:
    """`repro` replayed natively `runs` times and, when one of them fails as expected, once under
    the debugger; the files beside `label` in the replays' directory."""
    debugger, timeout, workdir = replays.under, replays.timeout, replays.workdir
    result = Verification(expected)
    argv = cmd.argv(None, input=repro)
    for _ in range(runs):
        result.native.append(
            run_native(
                cmd.native_argv(None, input=repro),
                timeout=timeout,
                stdout=workdir / f"{label}.stdout",
                stderr=workdir / f"{label}.stderr",
            )
        )
    if runs and not any(r.matches(expected) for r in result.native):
        result.notes.append(
            f"no native run reproduced {expected.describe()}: the debugger run was skipped"
        )
        return result
    for _ in range(ATTEMPTS):
        try:
            result.debugger = debugger.run_replay(
                ReplayRequest(
                    tuple(argv),
                    timeout,
                    stdout=workdir / f"{label}.debugger.stdout",
                    stderr=workdir / f"{label}.debugger.stderr",
                    transcript=workdir / f"{label}.debugger.log",
                    env=cmd.replay_env(),
                )
            )
            break
        except ToolFailure as e:
            result.debugger_failures.append(str(e))
    if result.debugger is None:
        result.notes.append(
            "the debugger failed twice: the bucket was not checked under the debugger, only the "
            "native runs' signal"
        )
    return result
