"""The signal policy, written once for every way of running a replay under a debugger (the gdb condition
function, the in-gdb loop, the lldb worker, the MI driver): given the quick diagnosis of a stop, pass its
signal on or stop there (docs/debugger-notes.md "Signals", "First and second chance").

- A stop the replay survives (a first-chance fault inside the JIT's protected call; a debug break nobody
  asked to stop at) is passed on, after a quick note of where it happened.
- A hardware fault at the same pc, in the same method context, with the same fault address as the stop
  passed just before is the replay's handler declining the fault (it restored the default action and the
  instruction ran again): that second stop is the fatal one.
- A debug break is delivered only to a program that has a SIGTRAP handler (SigCgt); otherwise the debugger
  absorbs it as a user's `continue` does (superpmi's DEBUG_BREAK expects that), stepping over an aarch64
  `brk`, which would trap again."""

from __future__ import annotations

import signal as _signal
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from spmi_dbg.analysis.diagnosis import diagnose
from spmi_dbg.analysis.facts import Diagnosis, Handling, HandlingKind
from spmi_dbg.analysis.view import Process

# Stops the replay survives when their signal is passed on.
PASS_KINDS = (HandlingKind.FIRST_CHANCE, HandlingKind.DEBUG_BREAK)
PASSABLE = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGTRAP")


@dataclass
class PassedStop:
    """A quick note of a stop whose signal was passed on to the replay."""

    signal: str
    kind: HandlingKind  # first-chance or debug-break: the kinds the replay survives
    frame: str
    method_context: int | None
    pc: int | None
    delivered: bool  # the signal was delivered to the replay (a debug break it has no handler for is absorbed)
    seconds: float  # quick diagnosis + resume with the signal, as seen by whoever passed it
    address: int | None = None  # the fault address

    def to_json(self) -> dict[str, Any]:
        return {"signal": self.signal, "kind": str(self.kind), "frame": self.frame,
                "method_context": self.method_context, "pc": self.pc, "delivered": self.delivered,
                "seconds": round(self.seconds, 6), "address": self.address}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PassedStop:
        return cls(str(data["signal"]), HandlingKind(data["kind"]), str(data["frame"]), data.get("method_context"),
                   data.get("pc"), bool(data.get("delivered", True)), float(data.get("seconds", 0.0)),
                   data.get("address"))


class Verdict(IntEnum):
    """A decision as one number (what gdb's `$_spmi_should_stop` returns to a catchpoint or the MI driver)."""

    PASS = 0  # resume with the signal
    STOP = 1  # the stop that matters: diagnose it in full
    ABSORB = 2  # resume without the signal (a debug break nobody handles)
    ABSORB_STEP_OVER_BRK = 3  # the same, past an aarch64 `brk` first


@dataclass(frozen=True)
class Decision:
    stop: bool  # True: this is the stop that matters (diagnose it in full); False: pass it on
    deliver: bool = True  # resume with the signal (False: the debugger absorbs a debug break)
    step_over_brk: bool = False  # aarch64: move the pc past the `brk` before resuming without the signal
    note: str | None = None  # why this stop is the one, when that is not obvious from its diagnosis
    passed: PassedStop | None = None  # the note of a stop passed on
    second_chance: bool = False  # the stop is a fault's second chance: fatal, whatever its quick diagnosis said

    @property
    def verdict(self) -> Verdict:
        if self.stop or self.passed is None:
            return Verdict.STOP
        if self.deliver:
            return Verdict.PASS
        return Verdict.ABSORB_STEP_OVER_BRK if self.step_over_brk else Verdict.ABSORB


def _catches(mask: int | None, signo: int) -> bool:
    return mask is not None and bool(mask & (1 << (signo - 1)))


def decide(quick: Diagnosis, *, pc: int | None, arch: str, caught_mask: int | None, previous: PassedStop | None,
           passes_left: bool, seconds: float = 0.0) -> Decision:
    """`quick` is `diagnose(view, full=False)`; `previous` the stop passed just before."""
    sig = quick.signal
    kind = quick.handling.kind
    name = sig.name if sig else ""
    mc = quick.method_context.number if quick.method_context else None
    address = sig.address if sig else None
    if previous is not None and name != "SIGTRAP" and \
            (previous.signal, previous.pc, previous.method_context, previous.address) == (name, pc, mc, address):
        return Decision(True, second_chance=True,
                        note=f"{name} again at the same pc in the same method context: the replay's handler "
                                   "declined the fault, this second stop is the fatal one")
    if kind not in PASS_KINDS or name not in PASSABLE:
        return Decision(True)
    if not passes_left:
        return Decision(True, note="the limit of stops passed on was reached")
    deliver = kind != HandlingKind.DEBUG_BREAK or _catches(caught_mask, sig.signo if sig else _signal.SIGTRAP)
    folded = quick.folded or ["?"]
    note = PassedStop(name, kind, str(folded[0]), mc or None, pc, deliver, seconds, address)
    return Decision(False, deliver=deliver, step_over_brk=not deliver and arch == "aarch64", passed=note)


def check_stop(process: Process, *, previous: PassedStop | None, passes_left: bool) -> Decision:
    """The quick diagnosis of the current stop, then the decision: what every loop that runs a replay under a
    debugger calls at each stop (gdb's `$_spmi_should_stop`, which the MI driver also asks; the lldb worker; the
    test and bench harnesses). The caller resumes as told, or diagnoses the stop in full."""
    quick = diagnose(process, full=False)
    return decide(quick, pc=quick.pc, arch=process.arch, caught_mask=process.caught_signals(),
                  previous=previous, passes_left=passes_left)


SECOND_CHANCE = "second chance"


def mark_second_chance(d: Diagnosis, note: str | None) -> None:
    """The full diagnosis of a second-chance stop: the fault came back after the replay's handler declined it,
    so it is fatal, whatever the stack suggested at its first chance."""
    d.handling = Handling(HandlingKind.FATAL, note or "the same fault again after the replay's handler declined it",
                          SECOND_CHANCE)
