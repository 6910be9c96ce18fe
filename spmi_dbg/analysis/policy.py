"""The signal policy, written once for every way of running a replay under a debugger (the gdb
condition function, the in-gdb loop, the lldb worker, the MI driver): given the quick diagnosis of a
stop, pass its signal on or stop there (docs/debugger-notes.md "Signals", "First and second
chance").

- A stop the replay survives (a first-chance fault inside the JIT's protected call; a debug break
  nobody asked to stop at) is passed on, after a quick note of where it happened.
- A hardware fault at the same pc, in the same method context, with the same fault address as the
  stop passed just before is the replay's handler declining the fault (it restored the default
  action and the instruction ran again): that second stop is the fatal one.
- A debug break is delivered only to a program that has a SIGTRAP handler (SigCgt); otherwise the
  debugger absorbs it as a user's `continue` does (superpmi's DEBUG_BREAK expects that), stepping
  over an aarch64 `brk`, which would trap again."""

from __future__ import annotations

import dataclasses
import os
import signal as _signal
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from spmi_dbg.analysis import frames as F
from spmi_dbg.analysis.diagnosis import diagnose, stack_overflow
from spmi_dbg.analysis.facts import Diagnosis, Handling, HandlingKind
from spmi_dbg.analysis.jitstate import compiler_in, superpmi_index
from spmi_dbg.analysis.view import Process
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.superpmi_argv import parse_command

# Stops the replay survives when their signal is passed on.
PASS_KINDS = (HandlingKind.FIRST_CHANCE, HandlingKind.DEBUG_BREAK)
PASSABLE = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGTRAP")
FAULT_SIGNALS = (_signal.SIGSEGV, _signal.SIGBUS, _signal.SIGILL, _signal.SIGFPE)
FAST_FRAMES = 4  # the fast path reads frame 0 and what is inlined at its pc


@dataclass
class PassedStop(JsonFact):
    """A quick note of a stop whose signal was passed on to the replay."""

    signal: str
    kind: HandlingKind  # first-chance or debug-break: the kinds the replay survives
    frame: str
    method_context: int | None
    pc: int | None
    # the signal was delivered to the replay (a debug break it has no handler for is absorbed)
    delivered: bool
    seconds: float  # quick diagnosis + resume with the signal, as seen by whoever passed it
    address: int | None = None  # the fault address

    def to_json(self) -> dict[str, Any]:
        return {
            "signal": self.signal,
            "kind": str(self.kind),
            "frame": self.frame,
            "method_context": self.method_context,
            "pc": self.pc,
            "delivered": self.delivered,
            "seconds": round(self.seconds, 6),
            "address": self.address,
        }


@dataclass
class StopNote(JsonFact):
    """What the first-chance condition inside gdb tells the driver of one stop (a JSON line each,
    ext/gdb/passing.py -> driver/gdb/loop.py): a stop passed on (`passed`), or the stop that ends
    the run: why, when that is not obvious from its diagnosis (`stop`), its signal, and whether it
    is a fault's second chance."""

    passed: PassedStop | None = None
    stop: str | None = None
    signal: int | None = None
    second_chance: bool = False


class Verdict(IntEnum):
    """A decision as one number (what gdb's `$_spmi_should_stop` returns to a catchpoint or the MI
    driver)."""

    PASS = 0  # resume with the signal
    STOP = 1  # the stop that matters: diagnose it in full
    ABSORB = 2  # resume without the signal (a debug break nobody handles)
    ABSORB_STEP_OVER_BRK = 3  # the same, past an aarch64 `brk` first


@dataclass(frozen=True)
class Decision:
    stop: bool  # True: this is the stop that matters (diagnose it in full); False: pass it on
    deliver: bool = True  # resume with the signal (False: the debugger absorbs a debug break)
    # aarch64: move the pc past the `brk` before resuming without the signal
    step_over_brk: bool = False
    note: str | None = None  # why this stop is the one, when that is not obvious from its diagnosis
    passed: PassedStop | None = None  # the note of a stop passed on
    # the stop is a fault's second chance: fatal, whatever its quick diagnosis said
    second_chance: bool = False

    @property
    def verdict(self) -> Verdict:
        if self.stop or self.passed is None:
            return Verdict.STOP
        if self.deliver:
            return Verdict.PASS
        return Verdict.ABSORB_STEP_OVER_BRK if self.step_over_brk else Verdict.ABSORB


def _catches(mask: int | None, signo: int) -> bool:
    return mask is not None and bool(mask & (1 << (signo - 1)))


def decide(
    quick: Diagnosis,
    *,
    pc: int | None,
    arch: str,
    caught_mask: int | None,
    previous: PassedStop | None,
    passes_left: bool,
    stop_at_break: bool = False,
) -> Decision:
    """`quick` is `diagnose(view, full=False)`; `previous` the stop passed just before.
    `stop_at_break`: a debug break is the stop (a replay run with -boa/-boe to stop in a JIT assert
    or at a failed compile)."""
    sig = quick.signal
    kind = quick.handling.kind
    name = sig.name if sig else ""
    mc = quick.method_context.number if quick.method_context else None
    address = sig.address if sig else None
    if (
        previous is not None
        and name != "SIGTRAP"
        and (previous.signal, previous.pc, previous.address) == (name, pc, address)
        and (previous.method_context is None or mc is None or previous.method_context == mc)
    ):
        return Decision(
            True,
            second_chance=True,
            note=f"{name} again at the same pc in the same method context: the replay's handler "
            "declined the fault, this second stop is the fatal one",
        )
    if stop_at_break and kind == HandlingKind.DEBUG_BREAK:
        return Decision(True, note="a debug break, and this run stops at the first one")
    if kind not in PASS_KINDS or name not in PASSABLE:
        return Decision(True)
    if not passes_left:
        return Decision(True, note="the limit of stops passed on was reached")
    deliver = kind != HandlingKind.DEBUG_BREAK or _catches(
        caught_mask, sig.signo if sig else _signal.SIGTRAP
    )
    folded = quick.folded or ["?"]
    note = PassedStop(name, kind, str(folded[0]), mc or None, pc, deliver, 0.0, address)
    return Decision(
        False, deliver=deliver, step_over_brk=not deliver and arch == "aarch64", passed=note
    )


def check_stop(
    process: Process, *, previous: PassedStop | None, passes_left: bool, stop_at_break: bool = False
) -> Decision:
    """The quick diagnosis of the current stop, then the decision: what every loop that runs a
    replay under a debugger calls at each stop (gdb's `$_spmi_should_stop`, which the MI driver also
    asks; the lldb worker; the test and bench harnesses). The caller resumes as told, or diagnoses
    the stop in full."""
    fast = _fault_in_a_jit(process, previous, passes_left)
    if fast is not None:
        return fast
    if previous is None and _fault_without_handler(process):
        # passed on, it would kill the replay: the stop (after a stop passed on, the quick check
        # below tells a second chance, which has no handler either, from a new fault)
        return Decision(True)
    quick = diagnose(process, full=False)
    return decide(
        quick,
        pc=quick.pc,
        arch=process.arch,
        caught_mask=process.caught_signals(),
        previous=previous,
        passes_left=passes_left,
        stop_at_break=stop_at_break,
    )


SECOND_CHANCE = "second chance"


def mark_second_chance(d: Diagnosis, note: str | None) -> Diagnosis:
    """The full diagnosis of a second-chance stop, as a new fact: the fault came back after the
    replay's handler declined it, so it is fatal, whatever the stack suggested at its first
    chance."""
    return dataclasses.replace(
        d,
        handling=Handling(
            HandlingKind.FATAL,
            note or "the same fault again after the replay's handler declined it",
            SECOND_CHANCE,
        ),
    )


def _fault_without_handler(process: Process) -> bool:
    """A hardware fault in a process that, as /proc says now, has no handler for it: the stop
    (what `decide` would say after a quick diagnosis, which unwinds: a crash of superpmi 3.1,
    whose PAL does not catch SIGSEGV, stops at once). Unknown (a core, a remote target): no."""
    sig = process.signal()
    caught = process.caught_signals()
    return (
        sig is not None
        and sig.signo in FAULT_SIGNALS
        and caught is not None
        and not _catches(caught, sig.signo)
    )


def _in_a_jit(module: str | None, argv: Callable[[], list[str] | None]) -> bool:
    """Whether `module` is a JIT: by its name, else by the command's JITs (`argv()`, read only
    then: /proc is not read at every passed stop)."""
    if not module:
        return False
    if "jit" in os.path.basename(module).lower():
        return True
    command = argv()
    jits = parse_command(command).jits if command else []
    return any(os.path.basename(j) == os.path.basename(module) for j in jits)


def _fault_in_a_jit(
    process: Process, previous: PassedStop | None, passes_left: bool
) -> Decision | None:
    """The fast path: a hardware fault whose pc lies in a JIT, in a process with a handler for it
    (SigCgt), is passed on without unwinding: the JIT's protected call may survive it, and if it
    does not, the handler declines and the same fault comes back (its second chance goes the full
    way). The note names frame 0 and, when frame 0 runs on the JIT's Compiler, its
    compMethodSuperPMIIndex."""
    sig = process.signal()
    if (
        sig is None
        or sig.signo not in FAULT_SIGNALS
        or not passes_left
        or not _catches(process.caught_signals(), sig.signo)
    ):
        return None
    # the handler cannot run on the exhausted stack: the full way, fatal
    if stack_overflow(process, sig):
        return None
    thread = process.selected_thread()
    top = thread.frames(1) if thread is not None else []
    # frame 0 is a function inlined at the pc: its physical frame holds the Compiler
    if top and top[0].inlined:
        top = thread.frames(FAST_FRAMES) if thread is not None else []
    if not top or not _in_a_jit(top[0].module, process.argv):
        return None
    frame = top[0]
    mc = None
    # frame 0 and the functions inlined at its pc: one physical frame, no unwinding
    for i, f in enumerate(top):
        found = compiler_in(f, i)
        mc = superpmi_index(found[0])[0] if found is not None else None
        if mc is not None or not f.inlined:
            break
    mc = mc if mc is not None and mc > 0 else None
    if (
        previous is not None
        and (previous.signal, previous.pc, previous.address) == (sig.name, frame.pc, sig.address)
        and (mc is None or previous.method_context in (None, mc))
    ):
        return None  # perhaps the same fault again: the full quick check decides (a second chance)
    if F.unnamed(frame):
        frame = F.name_unnamed([frame], process.modules)[0]
    note = PassedStop(
        sig.name,
        HandlingKind.FIRST_CHANCE,
        F.short_name(frame.function),
        mc,
        frame.pc,
        True,
        0.0,
        sig.address,
    )
    return Decision(False, passed=note)
