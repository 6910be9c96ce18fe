"""Stop -> Diagnosis: the one function every `spmi why`, `spmi diagnose --json` and the unattended
pipeline use. Debugger-neutral: it reads only the view in `view.py`. Every fact says how it was
obtained."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import signal as _signal
from collections.abc import Sequence

from spmi_dbg.analysis import asserts, knownbugs
from spmi_dbg.analysis import frames as F
from spmi_dbg.analysis.causes import causes_of
from spmi_dbg.analysis.facts import (
    Diagnosis,
    FrameInfo,
    Handling,
    HandlingKind,
    JitFact,
    MethodContextFact,
    ModuleFact,
    ModuleRole,
    SignalFact,
)
from spmi_dbg.analysis.instruction import Instruction, decode
from spmi_dbg.analysis.jitstate import jit_state
from spmi_dbg.analysis.mcnumber import (
    Evidence,
    compiled_il_sizes,
    find_method_context,
    selection_of,
)
from spmi_dbg.analysis.nullmap import find_null_map
from spmi_dbg.analysis.records import CollectionRecords, OpenRecords
from spmi_dbg.analysis.signature import signature
from spmi_dbg.analysis.view import Frame, Process, SignalInfo, Thread
from spmi_dbg.superpmi_argv import parse_command

__all__ = ["Diagnosis", "diagnose"]

SCHEMA_VERSION = 1
NEAR_NULL_LIMIT = 0x10000
HARDWARE_SIGNALS = {_signal.SIGSEGV, _signal.SIGBUS, _signal.SIGILL, _signal.SIGFPE}
# the quick check at first-chance stops looks no deeper (JitInstance::CompileMethod is near)
QUICK_FRAMES = 64
OVERFLOW_FRAMES = 256  # read at a stack overflow


def diagnose(
    process: Process, *, full: bool = True, collections: OpenRecords = CollectionRecords
) -> Diagnosis:
    """The diagnosis of the current stop. `full=False` skips the collection lookup and disassembly
    (the quick check run at every first-chance stop). `collections` opens the collection the stopped
    superpmi replays (a tape's recording or replay of it: tape.py)."""
    notes: list[str] = []
    thread = process.selected_thread()
    sig, insn = _stop_signal(process, thread, full, notes)
    frames = _frames(process, thread, sig, full, notes)
    argv = process.argv()
    cmd = parse_command(argv) if argv else None
    signal_fact = _signal_fact(sig, notes)
    pc = frames[0].pc if frames else None
    module = _faulting_module(process, frames, cmd.jits if cmd else [], argv[0] if argv else None)
    stop = Diagnosis(
        schema=SCHEMA_VERSION,
        debugger=process.debugger,
        arch=process.arch,
        signal=signal_fact,
        handling=_handling(process, sig, frames, module),
        faulting_module=module,
        notes=notes,
        pc=pc,
    )
    if not full:
        return _quick(process, stop, frames)

    mc_fact, mc_rejected = _method_context(
        frames, argv, cmd.input if cmd else None, notes, collections
    )
    jit = _jit(process, frames, mc_fact, module, notes)
    folded_frames = F.fold(frames)
    diag = dataclasses.replace(
        stop,
        method_context=mc_fact,
        null_map=find_null_map(process, frames, signal_fact.address if signal_fact else None),
        instruction=insn,
        assertion=asserts.from_frames(process, frames),
        frames=_frame_infos(frames),
        folded=[f.name for f in folded_frames],
        signature_frames=F.up_to_main([f.name for f in folded_frames if not f.inlined]),
        jit=jit,
        method_context_rejected=mc_rejected,
        calling_jit=_calling_jit(frames, module, cmd.jits if cmd else []),
    )
    diag.signature, diag.bucket = signature(diag)
    diag.causes = causes_of(diag)
    facts = knownbugs.facts_of(diag, argv=argv)
    diag.known_bugs, diag.near_known_bugs = knownbugs.match(facts), knownbugs.near_misses(facts)
    return diag


def _jit(
    process: Process,
    frames: Sequence[Frame],
    mc_fact: MethodContextFact | None,
    module: ModuleFact | None,
    notes: list[str],
) -> JitFact | None:
    """What the JIT was doing: its info checked against the record, its method context number only
    if it is the one found. A stop inside a JIT whose state could not be read says what was
    tried."""
    jit, jit_notes = jit_state(process, frames, mc_fact, searched=True)
    if jit is None and (
        (module is not None and module.role.is_jit) or any(_is_jit_frame(f) for f in frames[:8])
    ):
        notes.extend(jit_notes)
    return jit


def _stop_signal(
    process: Process, thread: Thread | None, full: bool, notes: list[str]
) -> tuple[SignalInfo | None, Instruction | None]:
    """The stop's signal, and (full diagnosis) the faulting instruction. With no fault address in
    the signal information (lldb on a core file, a qemu stub), the instruction's memory operand,
    from the registers, is where it faulted."""
    sig = process.signal()
    if not full or thread is None:
        return sig, None
    top = thread.frames(1)
    insn = decode(process, top[0].pc) if top else None
    if (
        sig is not None
        and sig.address is None
        and sig.signo in (_signal.SIGSEGV, _signal.SIGBUS)
        and insn is not None
        and insn.memory_address is not None
    ):
        sig = dataclasses.replace(
            sig,
            address=insn.memory_address,
            source=sig.source
            + "; fault address computed from the faulting instruction and the registers",
        )
        notes.append(
            "no fault address in the signal information: computed from the faulting "
            f"instruction's memory operand ({insn.text}) and the registers"
        )
    return sig, insn


def _frames(
    process: Process,
    thread: Thread | None,
    sig: SignalInfo | None,
    full: bool,
    notes: list[str],
) -> list[Frame]:
    """The stopped thread's frames. A stack overflow's ~20,000 frames would take seconds to read:
    its innermost frames show the recursion, and the JIT's Compiler::compMethodSuperPMIIndex there
    gives the method context (else: native bisection)."""
    if thread is None:
        return []
    overflow = full and sig is not None and stack_overflow(process, sig)
    limit = OVERFLOW_FRAMES if overflow else (None if full else QUICK_FRAMES)
    frames = F.name_unnamed(thread.frames(limit), process.modules)
    if overflow and len(frames) >= OVERFLOW_FRAMES:
        notes.append(
            f"stack overflow: only the innermost {OVERFLOW_FRAMES} frames were read (the "
            "recursion); the outer ones, down to main, were not"
        )
    return frames


def _signal_fact(sig: SignalInfo | None, notes: list[str]) -> SignalFact | None:
    if sig is None:
        notes.append("no signal information at this stop")
        return None
    near = (
        sig.address is not None and sig.address < NEAR_NULL_LIMIT and sig.signo in HARDWARE_SIGNALS
    )
    return SignalFact(sig.name, sig.signo, sig.code, sig.address, near, sig.source)


def _frame_infos(frames: Sequence[Frame]) -> list[FrameInfo]:
    return [
        FrameInfo(
            i,
            f.name if isinstance(f, F.NamedFrame) else F.short_name(f.function),
            f.file,
            f.line,
            f.module,
            f.inlined,
            getattr(f, "number", None),
            bool(getattr(f, "hidden", False)),
        )
        for i, f in enumerate(frames)
    ]


def _quick(process: Process, stop: Diagnosis, frames: Sequence[Frame]) -> Diagnosis:
    """The per-stop check: what is needed to decide whether to pass the stop on, and where it
    happened (the first folded frame and the method context number that passes the checks of its
    command line)."""
    # The same candidates and checks as the full diagnosis, without the collection (no file is
    # opened here).
    found = find_method_context(frames, Evidence(selection_of(process.argv())))[0]
    mc_fact = (
        MethodContextFact(
            found.number, found.source, checks=list(found.checks), rejected=list(found.rejected)
        )
        if found is not None
        else None
    )
    first = F.first_folded(frames)
    d = dataclasses.replace(stop, method_context=mc_fact, folded=[first] if first else [])
    d.signature, d.bucket = signature(d)
    return d


def _faulting_module(
    process: Process, frames: Sequence[Frame], jits: list[str], program: str | None
) -> ModuleFact | None:
    if not frames:
        return None
    pc = frames[0].pc
    path = frames[0].module
    source = "object file of frame 0"
    if path is None:
        mod = next((m for m in process.modules() if m.contains(pc)), None)
        path, source = (mod.path, "loaded module range containing the pc") if mod else (None, "")
    if path is None:
        return ModuleFact(None, ModuleRole.UNKNOWN, "no module contains the pc")
    return ModuleFact(path, _role(path, jits, program), source)


def _calling_jit(
    frames: Sequence[Frame], module: ModuleFact | None, jits: list[str]
) -> ModuleFact | None:
    """A fault outside the JITs (superpmi answering a JIT's call, a system library): the command's
    JIT the innermost JIT frame is in, when there is one (with -a: the base or the diff JIT)."""
    if module is None or module.role.is_jit or not jits:
        return None
    for i, f in enumerate(frames):
        if f.module is None:
            continue
        role = _role(f.module, jits, None)
        if role in (ModuleRole.BASE_JIT, ModuleRole.DIFF_JIT, ModuleRole.JIT):
            return ModuleFact(
                f.module, role, f"object file of {F.frame_ref(f, i)} ({F.short_name(f.function)})"
            )
    return None


@functools.lru_cache(maxsize=256)
def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.basename(a) == os.path.basename(b)


def _role(path: str, jits: list[str], program: str | None) -> ModuleRole:
    for i, jit in enumerate(jits[:2]):
        if _same_file(path, jit):
            if len(jits) == 1:
                return ModuleRole.JIT
            return ModuleRole.BASE_JIT if i == 0 else ModuleRole.DIFF_JIT
    if program and _same_file(path, program):
        return ModuleRole.SUPERPMI
    name = path.rsplit("/", 1)[-1]
    if re.match(r"lib(c|pthread|m|dl|stdc\+\+|gcc_s)[.-]", name) or name.startswith("ld-linux"):
        return ModuleRole.SYSTEM
    if "jit" in name.lower():
        return ModuleRole.OTHER_JIT
    return ModuleRole.OTHER


def stack_overflow(process: Process, sig: SignalInfo) -> bool:
    """A fault just below the stack pointer: the guard page was hit (a null dereference is never
    there)."""
    if sig.signo != _signal.SIGSEGV or sig.address is None or sig.address < NEAR_NULL_LIMIT:
        return False
    sp = process.stack_pointer()
    return sp is not None and sp - 65536 <= sig.address <= sp + 4096


def _handling(
    process: Process, sig: SignalInfo | None, frames: Sequence[Frame], module: ModuleFact | None
) -> Handling:
    """Would superpmi survive this signal? A hardware fault while the JIT runs
    (JitInstance::CompileMethod on the stack, the fault in the JIT or in a host callback made by it)
    may be converted into a failed compile (docs/superpmi-conventions.md section 2): first chance.
    Anywhere else it kills the process. Without symbols the stack cannot tell: a fault in a process
    with a handler for it (SigCgt) is passed on, and if the handler declines it the same fault comes
    back, and that second stop is the fatal one (policy.py). `rule` says which of these decided."""
    if sig is None:
        return Handling(HandlingKind.UNKNOWN, "no signal", "no signal")
    by_signal = _by_signal(process, sig)
    if by_signal is not None:
        return by_signal
    caught = process.caught_signals()
    hit = F.find(frames, "JitInstance::CompileMethod")
    in_jit = module is not None and module.role.is_jit
    if hit is not None:
        i, at = hit
        jit_on_stack = in_jit or any(_is_jit_frame(fr) for fr in frames[:i])
        if jit_on_stack:
            return Handling(
                HandlingKind.FIRST_CHANCE,
                f"fault while the JIT runs (JitInstance::CompileMethod at {F.frame_ref(at, i)}): "
                "superpmi may turn it into a failed compile",
                "symbols: in the JIT's protected call",
            )
    if caught is not None and not _superpmi_symbols(frames):
        return Handling(
            HandlingKind.FIRST_CHANCE,
            "the process has a handler for this signal (SigCgt) and its stack "
            "has no symbols to tell whether the fault is in the JIT's protected "
            "call: passed on; if the handler declines it, it comes back",
            "no symbols: a handler is installed",
        )
    return Handling(
        HandlingKind.FATAL,
        "fault outside the JIT's protected call: superpmi does not survive it",
        "symbols: outside the JIT's protected call",
    )


def _by_signal(process: Process, sig: SignalInfo) -> Handling | None:
    """What the signal alone decides (None: a fault the process handles: the stack decides)."""
    signo = sig.signo
    if signo == _signal.SIGTRAP:
        return Handling(
            HandlingKind.DEBUG_BREAK,
            "a debug break (superpmi's -boa/-boe/-box DEBUG_BREAK, or a JIT assert): it asks the "
            "attached debugger to stop; resuming past it continues the replay",
            "debug break",
        )
    if signo == _signal.SIGABRT:
        return Handling(
            HandlingKind.FATAL, "abort() is not converted into an exception by superpmi", "abort"
        )
    if signo not in HARDWARE_SIGNALS:
        return Handling(
            HandlingKind.UNKNOWN, f"signal {signo} is not a fault superpmi handles", "not a fault"
        )
    if stack_overflow(process, sig):
        return Handling(
            HandlingKind.FATAL,
            "stack overflow (the fault is at the stack pointer's guard page): the "
            "signal handler cannot run on the exhausted stack",
            "stack overflow",
        )
    caught = process.caught_signals()
    if caught is not None and not caught & (1 << (signo - 1)):
        return Handling(
            HandlingKind.FATAL, "the process has no handler for this signal (SigCgt)", "no handler"
        )
    return None


# Names of superpmi's own code: a stack that shows one has the symbols to tell where a fault is.
_SUPERPMI_NAMES = (
    "JitInstance::",
    "MethodContext::",
    "CompileResult::",
    "NearDiffer::",
    "MethodContextReader::",
    "MyICJI::",
    "LightWeightMap<",
    "DenseLightWeightMap<",
    "InvokeNearDiffer",
)


def _superpmi_symbols(frames: Sequence[Frame]) -> bool:
    names = [F.short_name(f.function) for f in frames]
    return "main" in names or any(n.startswith(_SUPERPMI_NAMES) for n in names)


def _is_jit_frame(frame: Frame) -> bool:
    name = F.short_name(frame.function)
    return bool(
        frame.module and "jit" in frame.module.rsplit("/", 1)[-1].lower()
    ) or name.startswith(("Compiler::", "CodeGen::", "CILJit::", "emitter::"))


def _method_context(
    frames: Sequence[Frame],
    argv: list[str] | None,
    input_path: str | None,
    notes: list[str],
    collections: OpenRecords,
) -> tuple[MethodContextFact | None, list[str]]:
    """The number every candidate of the stack is checked for (mcnumber.py): the -c list or -stride
    of this process, the collection's size, and the record's IL size against the compile
    request's."""
    records = collections(input_path) if input_path else None
    try:
        evidence = Evidence(
            selection_of(argv),
            records.count if records else None,
            records.identity if records is not None and records.count is not None else None,
            compiled_il_sizes(frames),
        )
        search = find_method_context(frames, evidence)
        found = search.found
        if found is None:
            notes.append("method context not found in the stack: " + "; ".join(search.attempts))
            if records is not None and records.problem:
                notes.append(records.problem)
            return None, list(search.rejected)
        fact = MethodContextFact(
            found.number,
            found.source,
            input=input_path,
            checks=list(found.checks),
            rejected=list(found.rejected),
        )
        ident = records.identity(found.number) if records is not None else None
        if ident is not None:
            fact.name, fact.il_size = ident.name, ident.il_size
            if ident.name_note:
                notes.append(ident.name_note)
                fact.name_note = ident.name_note
        elif records is not None and records.problem:
            notes.append(f"method context details not read: {records.problem}")
        return fact, []
    finally:
        if records is not None:
            records.close()
