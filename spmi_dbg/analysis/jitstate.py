"""What the JIT was doing at a stop inside it: the method being compiled, the phase, the method context, the IL
size and the optimization level, read from the JIT's own `Compiler` (docs/superpmi-conventions.md section 2:
a hardware fault in the JIT kills superpmi on Linux, so this is what a JIT developer needs first).

The `Compiler` is found in the innermost frame that has one: a `Compiler` member function's `this`, a
`Compiler*` local or argument under the names the real JIT uses (`comp`, `compiler`, `pComp`), or the
`Compiler*` member of the object a JIT frame runs on (`CodeGen::compiler`, `emitter::emitComp`,
`LinearScan::compiler`). Members are read by the real JIT's names (`info.compFullName`, else
`info.compMethodName`; `mostRecentlyActivePhase`, with its display name from the JIT's `PhaseNames[]` table;
`compMethodSuperPMIIndex`; `info.compILCodeSize`; `opts.compMinOpts`, `opts.compDbgCode`), never by layout. A
member the JIT does not have, or that debug information cannot give (a release or stripped JIT), is left out,
never guessed, and `tried` says what was looked for."""

from __future__ import annotations

from collections.abc import Sequence

from spmi_dbg.analysis import frames as F
from spmi_dbg.analysis.facts import JitFact
from spmi_dbg.analysis.values import member_int, read_c_string
from spmi_dbg.analysis.view import Frame, Process, Value

COMPILER_LOCALS = ("comp", "compiler", "pComp", "m_compiler")
COMPILER_MEMBERS = ("compiler", "emitComp", "m_compiler", "m_comp", "comp")
SEARCH_FRAMES = 64  # the JIT's frames are the innermost ones; JitInstance::CompileMethod ends the search


def _is_compiler(v: Value | None) -> bool:
    if v is None or v.optimized_out:
        return False
    name = v.type_name
    for word in ("class ", "struct ", "const", " "):  # gdb/MI says "class Compiler * const"
        name = name.replace(word, "")
    return name in ("Compiler*", "Compiler&") or name.endswith("::Compiler*")


def compiler_in(frame: Frame, index: int) -> tuple[Value, str] | None:
    name = F.short_name(frame.function)
    this = frame.variable("this")
    if F.class_of(frame.function) == "Compiler" and _is_compiler(this):
        assert this is not None
        return this, f"this of {name} (frame {index})"
    for local in COMPILER_LOCALS:
        v = frame.variable(local)
        if _is_compiler(v):
            assert v is not None
            return v, f"`{local}` (Compiler*) in {name} (frame {index})"
    if this is not None and not this.optimized_out and this.as_int():
        for member in COMPILER_MEMBERS:
            v = this.field(member)
            if _is_compiler(v):
                assert v is not None
                return v, f"this->{member} (Compiler*) of {name} (frame {index})"
    return None


def find_compiler(frames: Sequence[Frame]) -> tuple[int, Value, str] | None:
    """The innermost frame's Compiler: (frame index, the Compiler* value, how it was found)."""
    hit = F.find(frames, "JitInstance::CompileMethod")
    for i, frame in enumerate(frames[:hit[0] if hit is not None else SEARCH_FRAMES]):
        found = compiler_in(frame, i)
        if found is not None and found[0].as_int():
            return i, found[0], found[1]
    return None


def _string_member(process: Process, comp: Value, path: tuple[str, ...]) -> str | None:
    return read_c_string(process, member_int(comp, *path), limit=2048)


def jit_state(process: Process, frames: Sequence[Frame]) -> tuple[JitFact | None, list[str]]:
    """(the JIT's state, notes): None when no frame has a Compiler (the notes say what was tried)."""
    found = find_compiler(frames)
    if found is None:
        return None, ["JIT state: no Compiler in the stack (looked for a Compiler member function's `this`, a "
                      f"Compiler* named {', '.join(COMPILER_LOCALS)}, or a JIT object's "
                      f"{'/'.join(COMPILER_MEMBERS)} member); a JIT without debug information cannot tell"]
    index, comp, source = found
    frame = frames[index]
    fact = JitFact(frame=index, function=F.short_name(frame.function), module=frame.module, source=source)
    tried = fact.tried

    for path in (("info", "compFullName"), ("info", "compMethodName")):
        name = _string_member(process, comp, path)
        if name:
            fact.method, fact.method_source = name, f"Compiler::{'.'.join(path)}"
            break
    else:
        tried.append("method: Compiler::info.compFullName and info.compMethodName not readable")

    phase = comp.field("mostRecentlyActivePhase")
    value = phase.as_int() if phase is not None else None
    if phase is None or value is None:
        tried.append("phase: Compiler::mostRecentlyActivePhase not readable")
    else:
        fact.phase_value = value
        fact.phase = phase.enumerator()
        if fact.phase is None:
            tried.append(f"phase: mostRecentlyActivePhase is {value}, which names no enumerator of its type")
        fact.phase_name = _phase_name(process, frame, value, tried)

    n = member_int(comp, "compMethodSuperPMIIndex")
    if n is not None and n > 0:
        fact.method_context = n
    elif n is None:
        tried.append("method context: Compiler::compMethodSuperPMIIndex not readable")

    fact.il_size = member_int(comp, "info", "compILCodeSize")
    if fact.il_size is None:
        tried.append("IL size: Compiler::info.compILCodeSize not readable")

    minopts = member_int(comp, "opts", "compMinOpts")
    dbg = member_int(comp, "opts", "compDbgCode")
    if dbg:
        fact.opt_level = "debuggable code (opts.compDbgCode)"
    elif minopts is not None:
        fact.opt_level = "MinOpts" if minopts else "optimized (opts.compMinOpts is false)"
    else:
        tried.append("optimization level: Compiler::opts.compMinOpts not readable")
    return fact, []


def _phase_name(process: Process, frame: Frame, value: int, tried: list[str]) -> str | None:
    """The phase's display name from the JIT's PhaseNames[] table, as the JIT's own messages name it."""
    table = frame.global_variable("PhaseNames")
    if table is None:
        tried.append("phase display name: no PhaseNames table in the JIT's symbols")
        return None
    entry = table.element(value)
    name = read_c_string(process, entry.as_int() if entry is not None else None, limit=256)
    if not name:
        tried.append(f"phase display name: PhaseNames[{value}] not readable")
    return name or None
