"""What counts as "the same failure" when a repro is re-run: derived from the run that found it.

A crash is matched natively by its signal and under a debugger by its bucket
(spmi_dbg.analysis.signature, which also rebuilds a hang's: its stop is our own SIGINT)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from spmi_dbg.analysis import signature
from spmi_dbg.driver.outcome import ReplayOutcome

ExpectationKind = Literal["crash", "hang"]


@dataclass(frozen=True)
class Expectation:
    kind: ExpectationKind
    signal: str | None
    bucket: str | None

    def describe(self) -> str:
        if self.kind == "hang":
            return "a hang"
        return f"death by {self.signal}" if self.signal else "a crash"

    @property
    def bucket_key(self) -> str:
        """The bucket, or `<kind>-<signal>` when the run that found it had no diagnosis."""
        return signature.bucket_key(self.bucket, self.kind, self.signal)

    def matches_outcome(self, outcome: ReplayOutcome) -> bool:
        """A run under the debugger reproduces when it ends the same way with the same bucket."""
        if self.kind == "hang":
            return outcome.kind == "hang" and (
                self.bucket is None or bucket_of(outcome) == self.bucket
            )
        if outcome.kind == "signaled":
            return self.bucket is None and outcome.signal == self.signal
        if outcome.kind != "fatal":
            return False
        if self.bucket:
            return bucket_of(outcome) == self.bucket
        return signal_of(outcome) == self.signal


def signal_of(outcome: ReplayOutcome) -> str | None:
    sig = outcome.diagnosis.signal if outcome.diagnosis is not None else None
    return sig.name if sig is not None else outcome.signal


def bucket_of(outcome: ReplayOutcome) -> str | None:
    """The bucket of a run under the debugger (None: it ended with nothing to diagnose)."""
    return signature.bucket_of(outcome.diagnosis, hang=outcome.kind == "hang")


def expectation_of(outcome: ReplayOutcome) -> Expectation:
    if outcome.kind == "hang":
        return Expectation("hang", None, bucket_of(outcome))
    return Expectation("crash", signal_of(outcome), bucket_of(outcome))
