"""The signal policy (spmi_dbg.analysis.policy) on its own, no debugger: `decide` on typed quick
diagnoses built here, `Decision.verdict`, and `check_stop` on recorded stops
(tests/support/recorded_view.py) giving the decision that `decide(diagnose(view, full=False))` gives
(debugger-notes.md "Signals", "First and second chance")."""

from __future__ import annotations

import signal

import pytest

from spmi_dbg.analysis import diagnose
from spmi_dbg.analysis.facts import Diagnosis, Handling, HandlingKind, MethodContextFact, SignalFact
from spmi_dbg.analysis.policy import Decision, PassedStop, Verdict, check_stop, decide
from spmi_dbg.analysis.view import SignalInfo

from .support.recorded_view import RFrame, RProcess, RThread, RValue

pytestmark = pytest.mark.unit  # none of these tests starts a process

PC = 0x7F00_1234
FAULT = 0x18
SEGV_CAUGHT = 1 << (signal.SIGSEGV - 1)
TRAP_CAUGHT = 1 << (signal.SIGTRAP - 1)


def quick(
    name: str = "SIGSEGV",
    kind: HandlingKind = HandlingKind.FIRST_CHANCE,
    *,
    mc: int | None = 50,
    address: int | None = FAULT,
    frame: str = "Compiler::gtFoldDivByConst",
    arch: str = "x86_64",
) -> Diagnosis:
    """A quick diagnosis (`diagnose(view, full=False)`'s shape): the signal, its handling, where it
    happened."""
    signo = int(signal.Signals[name])
    return Diagnosis(
        schema=1,
        debugger="recorded",
        arch=arch,
        signal=SignalFact(
            name, signo, 1, address, address is not None and address < 0x10000, "test"
        ),
        handling=Handling(kind, "test"),
        faulting_module=None,
        method_context=MethodContextFact(mc, "test") if mc is not None else None,
        null_map=None,
        instruction=None,
        assertion=None,
        folded=[frame],
        pc=PC,
    )


def first_pass() -> Decision:
    return decide(
        quick(), pc=PC, arch="x86_64", caught_mask=SEGV_CAUGHT, previous=None, passes_left=True
    )


# ------------------------------------------------------------------------------------------ decide


def test_first_chance_fault_is_passed_on_with_a_note() -> None:
    d = first_pass()
    assert not d.stop and d.deliver and not d.step_over_brk and d.note is None
    assert d.passed == PassedStop(
        signal="SIGSEGV",
        kind=HandlingKind.FIRST_CHANCE,
        frame="Compiler::gtFoldDivByConst",
        method_context=50,
        pc=PC,
        delivered=True,
        seconds=0.0,  # the caller's: who passed it on times it
        address=FAULT,
    )
    # typed, as the diagnosis has it
    assert d.passed is not None and d.passed.kind is HandlingKind.FIRST_CHANCE
    assert d.verdict == Verdict.PASS


@pytest.mark.parametrize("mask", [None, 0, SEGV_CAUGHT])
def test_first_chance_fault_is_delivered_whatever_the_caught_mask(mask: int | None) -> None:
    """Only a debug break asks SigCgt: a first-chance fault is the replay's own handler's to
    take."""
    d = decide(quick(), pc=PC, arch="x86_64", caught_mask=mask, previous=None, passes_left=True)
    assert not d.stop and d.deliver and d.passed is not None and d.passed.delivered
    assert d.verdict == Verdict.PASS


def test_no_method_context_is_noted_as_none() -> None:
    d = decide(
        quick(mc=None), pc=PC, arch="x86_64", caught_mask=None, previous=None, passes_left=True
    )
    assert d.passed is not None and d.passed.method_context is None
    d = decide(quick(mc=0), pc=PC, arch="x86_64", caught_mask=None, previous=None, passes_left=True)
    # 0 is no method context (superpmi counts from 1)
    assert d.passed is not None and d.passed.method_context is None


@pytest.mark.parametrize(
    "name, kind",
    [
        ("SIGSEGV", HandlingKind.FATAL),
        ("SIGABRT", HandlingKind.FATAL),
        ("SIGSEGV", HandlingKind.UNKNOWN),
        ("SIGUSR1", HandlingKind.FIRST_CHANCE),
    ],
)
def test_a_stop_the_replay_does_not_survive_stops(name: str, kind: HandlingKind) -> None:
    """Fatal or unknown handling, or a signal that is no fault nor debug break, is the stop that
    matters."""
    d = decide(
        quick(name, kind),
        pc=PC,
        arch="x86_64",
        caught_mask=SEGV_CAUGHT,
        previous=None,
        passes_left=True,
    )
    assert d == Decision(True)
    assert d.stop and d.passed is None and d.note is None and d.verdict == Verdict.STOP


def test_the_same_fault_again_is_the_second_chance() -> None:
    """The replay's handler declined the fault (default action restored, the instruction ran again):
    the same signal at the same pc, method context and fault address right after it was passed is
    the fatal stop."""
    previous = first_pass().passed
    assert previous is not None
    d = decide(
        quick(), pc=PC, arch="x86_64", caught_mask=SEGV_CAUGHT, previous=previous, passes_left=True
    )
    assert d.stop and d.passed is None and d.verdict == Verdict.STOP
    assert (
        d.note
        == "SIGSEGV again at the same pc in the same method context: the replay's handler declined "
        "the "
        "fault, this second stop is the fatal one"
    )


@pytest.mark.parametrize("change", ["pc", "method context", "address", "signal"])
def test_a_different_fault_after_a_passed_one_is_another_first_chance(change: str) -> None:
    previous = first_pass().passed
    assert previous is not None
    pc = PC + 4 if change == "pc" else PC
    q = quick(
        "SIGBUS" if change == "signal" else "SIGSEGV",
        mc=51 if change == "method context" else 50,
        address=FAULT + 8 if change == "address" else FAULT,
    )
    d = decide(q, pc=pc, arch="x86_64", caught_mask=None, previous=previous, passes_left=True)
    assert not d.stop and d.deliver and d.passed is not None and d.verdict == Verdict.PASS


def test_the_second_chance_wins_over_the_handling() -> None:
    """Even a stop whose quick diagnosis says first-chance again is fatal the second time (the check
    comes first)."""
    previous = PassedStop(
        "SIGSEGV", HandlingKind.FIRST_CHANCE, "Compiler::gtFoldDivByConst", 50, PC, True, 0.0, FAULT
    )
    for passes_left in (True, False):
        d = decide(
            quick(),
            pc=PC,
            arch="x86_64",
            caught_mask=None,
            previous=previous,
            passes_left=passes_left,
        )
        assert d.stop and d.note is not None and d.note.startswith("SIGSEGV again at the same pc")


def test_debug_break_is_delivered_only_to_a_sigtrap_handler() -> None:
    trap = quick("SIGTRAP", HandlingKind.DEBUG_BREAK, address=None, frame="DebugBreakorAV")
    d = decide(
        trap,
        pc=PC,
        arch="x86_64",
        caught_mask=TRAP_CAUGHT | SEGV_CAUGHT,
        previous=None,
        passes_left=True,
    )
    assert not d.stop and d.deliver and not d.step_over_brk and d.verdict == Verdict.PASS
    assert d.passed == PassedStop(
        "SIGTRAP", HandlingKind.DEBUG_BREAK, "DebugBreakorAV", 50, PC, True, 0.0, None
    )
    # No SIGTRAP bit in SigCgt (or SigCgt unknown): absorbed, as a debugger user's `continue` does.
    for mask in (SEGV_CAUGHT, 0, None):
        d = decide(trap, pc=PC, arch="x86_64", caught_mask=mask, previous=None, passes_left=True)
        assert not d.stop and not d.deliver and not d.step_over_brk and d.verdict == Verdict.ABSORB
        assert (
            d.passed is not None
            and not d.passed.delivered
            and d.passed.kind == HandlingKind.DEBUG_BREAK
        )


def test_debug_break_on_aarch64_is_absorbed_past_the_brk() -> None:
    trap = quick(
        "SIGTRAP", HandlingKind.DEBUG_BREAK, address=None, frame="DebugBreakorAV", arch="aarch64"
    )
    d = decide(trap, pc=PC, arch="aarch64", caught_mask=0, previous=None, passes_left=True)
    assert (
        not d.stop
        and not d.deliver
        and d.step_over_brk
        and d.verdict == Verdict.ABSORB_STEP_OVER_BRK
    )
    assert d.passed is not None and not d.passed.delivered
    # Delivered to a handler, the pc is left alone: the handler decides.
    d = decide(
        trap, pc=PC, arch="aarch64", caught_mask=TRAP_CAUGHT, previous=None, passes_left=True
    )
    assert d.deliver and not d.step_over_brk and d.verdict == Verdict.PASS


def test_sigtrap_again_is_never_a_second_chance() -> None:
    """A debug break in a loop breaks at the same pc each time: each one is passed on, never taken
    as fatal."""
    trap = quick("SIGTRAP", HandlingKind.DEBUG_BREAK, address=None, frame="DebugBreakorAV")
    previous = decide(
        trap, pc=PC, arch="x86_64", caught_mask=0, previous=None, passes_left=True
    ).passed
    assert previous is not None
    d = decide(trap, pc=PC, arch="x86_64", caught_mask=0, previous=previous, passes_left=True)
    assert not d.stop and d.note is None and d.passed == previous and d.verdict == Verdict.ABSORB


@pytest.mark.parametrize(
    "name, kind", [("SIGSEGV", HandlingKind.FIRST_CHANCE), ("SIGTRAP", HandlingKind.DEBUG_BREAK)]
)
def test_the_pass_limit_stops_with_a_note(name: str, kind: HandlingKind) -> None:
    d = decide(
        quick(name, kind), pc=PC, arch="x86_64", caught_mask=None, previous=None, passes_left=False
    )
    assert d.stop and d.passed is None and d.verdict == Verdict.STOP
    assert d.note == "the limit of stops passed on was reached"


def test_verdicts_are_the_numbers_gdb_is_told() -> None:
    """`$_spmi_should_stop` returns these to gdb's catchpoint and to the MI driver."""
    assert [(v.name, int(v)) for v in Verdict] == [
        ("PASS", 0),
        ("STOP", 1),
        ("ABSORB", 2),
        ("ABSORB_STEP_OVER_BRK", 3),
    ]
    note = PassedStop("SIGTRAP", HandlingKind.DEBUG_BREAK, "DebugBreakorAV", None, PC, False, 0.0)
    assert Decision(True).verdict == Verdict.STOP
    assert Decision(True, passed=note).verdict == Verdict.STOP  # stop wins
    assert Decision(False).verdict == Verdict.STOP  # nothing noted to pass on: stop
    assert Decision(False, deliver=True, passed=note).verdict == Verdict.PASS
    assert Decision(False, deliver=False, passed=note).verdict == Verdict.ABSORB
    assert (
        Decision(False, deliver=False, step_over_brk=True, passed=note).verdict
        == Verdict.ABSORB_STEP_OVER_BRK
    )


# ------------------------------------------------------------------------------------------
# check_stop

JIT = "/opt/jits/libclrjit.so"
COMMAND = ["/opt/spmi/superpmi", "-boa", JIT, "/x/c.mch"]


def jit_fault(sigcgt: int | None = SEGV_CAUGHT, this: bool = True) -> RProcess:
    """A null dereference in the JIT, inside JitInstance::CompileMethod (method context 42); frame 0
    runs on the JIT's Compiler (its compMethodSuperPMIIndex is 42 too) unless `this` is False."""
    compiler = (
        {"this": RValue("Compiler *", 0x5000, {"compMethodSuperPMIIndex": RValue("int", 42)})}
        if this
        else {}
    )
    stack = [
        RFrame(
            "Compiler::gtFoldDivByConst(GenTreeOp*)",
            pc=0x7F0000401000,
            module=JIT,
            variables=compiler,
        ),
        RFrame(
            "CILJit::compileMethod(ICorJitInfo*, CORINFO_METHOD_INFO*, unsigned int, unsigned "
            "char**, "
            "unsigned int*)",
            pc=0x7F0000402000,
            module=JIT,
        ),
        RFrame(
            "JitInstance::CompileMethod(MethodContext*, int, bool)",
            variables={"mcIndex": RValue("int", 42)},
        ),
        RFrame("main"),
    ]
    return RProcess(
        stack,
        SignalInfo(signal.SIGSEGV, "SIGSEGV", 1, FAULT, "$_siginfo"),
        command=COMMAND,
        sigcgt=sigcgt,
    )


def debug_break(arch: str, sigcgt: int | None) -> RProcess:
    """superpmi's DEBUG_BREAK for a JIT assert with -boa: SIGTRAP in DebugBreakorAV."""
    stack = [
        RFrame("DebugBreakorAV(int)", pc=0x401200),
        RFrame("MyICJI::doAssert(char const*, int, char const*)", pc=0x401300),
        RFrame("Compiler::impImport(BasicBlock*)", pc=0x7F0000403000, module=JIT),
        RFrame(
            "JitInstance::CompileMethod(MethodContext*, int, bool)",
            variables={"mcIndex": RValue("int", 70)},
        ),
        RFrame("main"),
    ]
    return RProcess(
        stack,
        SignalInfo(signal.SIGTRAP, "SIGTRAP", 128, None, "$_siginfo"),
        arch=arch,
        command=COMMAND,
        sigcgt=sigcgt,
    )


def fatal_fault() -> RProcess:
    """The same fault outside the JIT's protected call: in superpmi itself, no
    JitInstance::CompileMethod."""
    stack = [
        RFrame(
            "CompileResult::repCompileMethod(unsigned char**, unsigned int*, CorJitResult*)",
            pc=0x402000,
        ),
        RFrame("NearDiffer::compare(MethodContext*, CompileResult*, CompileResult*)"),
        RFrame("main"),
    ]
    return RProcess(
        stack,
        SignalInfo(signal.SIGSEGV, "SIGSEGV", 1, 0x8, "$_siginfo"),
        command=COMMAND,
        sigcgt=SEGV_CAUGHT,
    )


def by_decide(p: RProcess, previous: PassedStop | None, passes_left: bool) -> Decision:
    q = diagnose(p, full=False)
    return decide(
        q,
        pc=q.pc,
        arch=p.arch,
        caught_mask=p.caught_signals(),
        previous=previous,
        passes_left=passes_left,
    )


@pytest.mark.parametrize(
    "stop, verdict",
    [
        (jit_fault(), Verdict.PASS),
        (
            jit_fault(sigcgt=0),
            Verdict.STOP,
        ),  # no SIGSEGV handler: the fault is fatal even in the JIT
        (fatal_fault(), Verdict.STOP),
        (debug_break("x86_64", TRAP_CAUGHT), Verdict.PASS),
        (debug_break("x86_64", 0), Verdict.ABSORB),
        (debug_break("aarch64", None), Verdict.ABSORB_STEP_OVER_BRK),
    ],
    ids=["first-chance", "no-handler", "fatal", "break-handled", "break-absorbed", "break-aarch64"],
)
def test_check_stop_is_decide_on_the_quick_diagnosis(stop: RProcess, verdict: Verdict) -> None:
    for passes_left in (True, False):
        d = check_stop(stop, previous=None, passes_left=passes_left)
        assert d == by_decide(stop, None, passes_left)
        assert d.verdict == (verdict if passes_left else Verdict.STOP)


def test_a_fault_in_a_jit_is_passed_without_unwinding() -> None:
    """The fast path: frame 0 alone (in the JIT, the process handles SIGSEGV); the method context
    comes from frame 0's Compiler when it runs on one, and is left out when it does not (never read
    deeper)."""
    p = jit_fault(this=False)
    d = check_stop(p, previous=None, passes_left=True)
    assert d.verdict == Verdict.PASS and d.passed is not None
    assert (d.passed.frame, d.passed.method_context, d.passed.pc) == (
        "Compiler::gtFoldDivByConst",
        None,
        0x7F0000401000,
    )
    # the same pc and address: the full way, fatal
    second = check_stop(p, previous=d.passed, passes_left=True)
    assert second.stop and second.second_chance


def test_check_stop_notes_where_it_passed_and_takes_the_second_chance() -> None:
    p = jit_fault()
    first = check_stop(p, previous=None, passes_left=True)
    assert first.passed == PassedStop(
        "SIGSEGV",
        HandlingKind.FIRST_CHANCE,
        "Compiler::gtFoldDivByConst",
        42,
        0x7F0000401000,
        True,
        0.0,
        FAULT,
    )
    second = check_stop(p, previous=first.passed, passes_left=True)
    assert second == by_decide(p, first.passed, True)
    assert (
        second.stop
        and second.note is not None
        and second.note.startswith("SIGSEGV again at the same pc")
    )
    b = debug_break("aarch64", 0)
    trap = check_stop(b, previous=None, passes_left=True)
    assert trap.passed is not None and (trap.passed.frame, trap.passed.method_context) == (
        "DebugBreakorAV",
        70,
    )
    again = check_stop(b, previous=trap.passed, passes_left=True)
    assert (
        again == by_decide(b, trap.passed, True) and again.verdict == Verdict.ABSORB_STEP_OVER_BRK
    )


class _NoUnwinding(RProcess):
    """A stop whose stack must not be read (the policy's shortcut decides without it)."""

    def selected_thread(self) -> RThread:
        raise AssertionError("the stack was read")


def test_a_fault_without_a_handler_stops_without_unwinding() -> None:
    """A hardware fault in a process with no handler for it (SigCgt) would kill the replay if passed
    on: the stop, decided without a quick diagnosis (a 3.1 superpmi crash was unwound twice); after
    a stop passed on in that process the quick check still runs, for its second chance."""
    p = jit_fault(sigcgt=0)
    shortcut = check_stop(
        _NoUnwinding(p.stack, p.sig, command=COMMAND, sigcgt=0), previous=None, passes_left=True
    )
    assert shortcut == by_decide(p, None, True) == Decision(True)
    passed = check_stop(jit_fault(), previous=None, passes_left=True).passed
    assert passed is not None
    second = check_stop(p, previous=passed, passes_left=True)
    assert second.stop and second.second_chance
    # an unknown mask (a core file, a remote target): never taken for "no handler"
    unknown = jit_fault(sigcgt=None)
    assert check_stop(unknown, previous=None, passes_left=True) == by_decide(unknown, None, True)
