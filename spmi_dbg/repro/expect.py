"""What counts as "the same failure" when a repro is re-run: derived from the run that found it.

A crash is matched natively by its signal and under a debugger by its bucket (analysis' signature). A hang's
stop is our own SIGINT, so its signature is rebuilt without the signal: "hang | <concrete frames>"."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from spmi_dbg.driver.outcome import ReplayOutcome

HANG_FRAMES = 4


@dataclass(frozen=True)
class Expectation:
    kind: str  # "crash" | "hang"
    signal: str | None
    bucket: str | None

    def describe(self) -> str:
        if self.kind == "hang":
            return "a hang"
        return f"death by {self.signal}" if self.signal else "a crash"

    def matches_outcome(self, outcome: ReplayOutcome) -> bool:
        """A run under the debugger reproduces when it ends the same way with the same bucket."""
        if self.kind == "hang":
            return outcome.kind == "hang" and (self.bucket is None or bucket_of(outcome) == self.bucket)
        if outcome.kind == "signaled":
            return self.bucket is None and outcome.signal == self.signal
        if outcome.kind != "fatal":
            return False
        if self.bucket:
            return bucket_of(outcome) == self.bucket
        return signal_of(outcome) == self.signal


def hang_signature(diagnosis: dict[str, Any]) -> tuple[str, str]:
    frames = diagnosis.get("signature_frames") or diagnosis.get("folded") or []
    sig = "hang | " + (" <- ".join(frames[:HANG_FRAMES]) or "no frames")
    return sig, hashlib.sha1(sig.encode()).hexdigest()[:10]


def mark_hang(diagnosis: dict[str, Any]) -> None:
    """The interrupt's SIGINT is ours, not the replay's: a hang's signature and bucket say hang instead."""
    diagnosis["hang"] = True
    diagnosis["signature"], diagnosis["bucket"] = hang_signature(diagnosis)


def signal_of(outcome: ReplayOutcome) -> str | None:
    sig = (outcome.diagnosis or {}).get("signal") or {}
    return str(sig["name"]) if sig.get("name") else outcome.signal


def bucket_of(outcome: ReplayOutcome) -> str | None:
    d = outcome.diagnosis or {}
    if outcome.kind == "hang":
        return hang_signature(d)[1]
    b = d.get("bucket")
    return str(b) if b else None


def expectation_of(outcome: ReplayOutcome) -> Expectation:
    if outcome.kind == "hang":
        return Expectation("hang", None, bucket_of(outcome))
    return Expectation("crash", signal_of(outcome), bucket_of(outcome))
