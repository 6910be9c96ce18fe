"""What the JIT was doing at a stop inside it: the method being compiled, the phase, the method
context, the IL size and the optimization level, read from the JIT's own `Compiler`
(docs/superpmi-conventions.md section 2: a hardware fault in the JIT kills superpmi on Linux, so
this is what a JIT developer needs first).

The `Compiler` is found in the innermost frame that has one: a `Compiler` member function's `this`,
a `Compiler*` local or argument under the names the real JIT uses (`comp`, `compiler`, `pComp`), or
the `Compiler*` member of the object a JIT frame runs on (`CodeGen::compiler`, `emitter::emitComp`,
`LinearScan::compiler`). Members are read by the real JIT's names, never by layout, and each JIT
era's own (docs/superpmi-conventions.md 7.1, "JIT state"):
- the method: `info.compFullName`, else `info.compMethodName`;
- the phase: `mostRecentlyActivePhase` (the phase running: "during X"), else
  `previousCompletedPhase` (3.1: the last phase that ended: "after X"); the display name from the
  JIT's `PhaseNames[]` table;
- the method context: `info.compMethodSuperPMIIndex` (today), else `compMethodSuperPMIIndex` (3.1
has neither);
- `info.compILCodeSize`, `opts.compMinOpts`, `opts.compDbgCode`.

Nothing uninitialised is shown as a fact. Early in a compile the JIT has not filled `info` in yet
(the Checked JIT's arena fills fresh memory with 0xdd; a Release JIT's may hold a previous compile's
values): a name must be a readable string that is not one of the JIT's placeholders
(`hackishMethodName`, `<unknown method>`), and the IL size must be the record's (the caller passes
the method context it established, with the record's IL size and name), or, when the record is not
known, lie within what the JIT can compile (1 to 2^30 bytes). `previousCompletedPhase` and `opts`
are written only after `info.compILCodeSize` is (EndPhase, compInitOptions), so they are believed
only when the IL size is. A member the JIT does not have, or that debug information cannot give (a
release or stripped JIT), is left out, never guessed, and `tried` says what was looked for and why a
value was not believed."""

from __future__ import annotations

from collections.abc import Sequence

from spmi_dbg.analysis import frames as F
from spmi_dbg.analysis.facts import JitFact, MethodContextFact
from spmi_dbg.analysis.values import member_int, read_c_string
from spmi_dbg.analysis.view import Frame, Process, Value

COMPILER_LOCALS = ("comp", "compiler", "pComp", "m_compiler")
COMPILER_MEMBERS = ("compiler", "emitComp", "m_compiler", "m_comp", "comp")
# the JIT's frames are the innermost ones; JitInstance::CompileMethod ends the search
SEARCH_FRAMES = 64
# The names the JIT gives a method it could not ask the host about (3.1's ee_il_dll.cpp
# eeGetMethodName and eeinterface.cpp eeGetMethodFullName; today's eeinterface.cpp): never the
# method's name.
PLACEHOLDERS = ("hackishMethodName", "hackishClassName", "<unknown method>")
# The JIT keeps IL offsets in 30 bits (jit.h IL_OFFSETX: the top two bits are flags, BAD_IL_OFFSET
# 0x80000000).
IL_SIZE_LIMIT = 1 << 30
# The phase members, newest first: (member, how its phase relates to the stop).
PHASE_MEMBERS = (("mostRecentlyActivePhase", "during"), ("previousCompletedPhase", "after"))
INDEX_MEMBERS = (("info", "compMethodSuperPMIIndex"), ("compMethodSuperPMIIndex",))
# The statement the importer is at: 3.1's IL_OFFSETX, today's DebugInfo's ILLocation.
IL_OFFSET_MEMBERS = (("impCurStmtOffs",), ("impCurStmtDI", "m_location", "m_offset"))
# No offset: 3.1's BAD_IL_OFFSET, today's (and ICorDebugInfo's NO_MAPPING), PROLOG, EPILOG
NO_IL_OFFSET = frozenset({0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD})
IL_OFFSETX_BITS = 0xC0000000  # 3.1: the stack-not-empty and call-instruction bits of IL_OFFSETX
# the phases in which the importer's offset is the JIT's place: importing now, or (3.1, which keeps
# only the last phase ended) right after the pre-import phase
IMPORTING = (("during", "PHASE_IMPORTATION"), ("after", "PHASE_PRE_IMPORT"))


def _is_compiler(v: Value | None) -> bool:
    if v is None or v.optimized_out:
        return False
    name = v.type_name
    for word in ("class ", "struct ", "const", " "):  # gdb/MI says "class Compiler * const"
        name = name.replace(word, "")
    return name in ("Compiler*", "Compiler&") or name.endswith("::Compiler*")


def compiler_in(frame: Frame, index: int, *, locals_too: bool = True) -> tuple[Value, str] | None:
    name = F.short_name(frame.function)
    this = frame.variable("this")
    if F.class_of(frame.function) == "Compiler" and _is_compiler(this):
        assert this is not None
        return this, f"this of {name} ({F.frame_ref(frame, index)})"
    if this is not None and not this.optimized_out and this.as_int():
        for member in COMPILER_MEMBERS:
            v = this.field(member)
            if _is_compiler(v):
                assert v is not None
                return v, f"this->{member} (Compiler*) of {name} ({F.frame_ref(frame, index)})"
    if locals_too:
        for local in COMPILER_LOCALS:
            v = frame.variable(local)
            if _is_compiler(v):
                assert v is not None
                return v, f"`{local}` (Compiler*) in {name} ({F.frame_ref(frame, index)})"
    return None


def find_compiler(frames: Sequence[Frame]) -> tuple[int, Value, str] | None:
    """The innermost frame's Compiler: (frame index, the Compiler* value, how it was found). The
    frames' `this` first, then their locals: a name a frame does not have is looked up in every
    module's symbols by gdb (seconds in a Checked JIT's debug information), so locals are asked for
    only when no `this` leads to a Compiler."""
    hit = F.find(frames, "JitInstance::CompileMethod")
    searched = frames[: hit[0] if hit is not None else SEARCH_FRAMES]
    for locals_too in (False, True):
        for i, frame in enumerate(searched):
            found = compiler_in(frame, i, locals_too=locals_too)
            if found is not None and found[0].as_int():
                return i, found[0], found[1]
    return None


def superpmi_index(comp: Value | None) -> tuple[int | None, str | None]:
    """The JIT's own method context number (today's `info.compMethodSuperPMIIndex`, else a Compiler
    member of that name) and the member it came from; (None, None) when the JIT has neither or it is
    not set (-1)."""
    known = _index_paths.get(comp.type_name) if comp is not None else None
    for path in (known, *INDEX_MEMBERS) if known else INDEX_MEMBERS:
        n = member_int(comp, *path)
        if n is not None:
            if comp is not None:
                _index_paths[comp.type_name] = path
            return (n, "Compiler::" + ".".join(path)) if n > 0 else (None, None)
    return None, None


# The member path that held the index, by the Compiler's type name: asked first at the next stop
# (one JIT's layout; a JIT of the same type name whose layout differs falls back to every path).
_index_paths: dict[str, tuple[str, ...]] = {}


def jit_state(
    process: Process,
    frames: Sequence[Frame],
    record: MethodContextFact | None = None,
    *,
    searched: bool = False,
) -> tuple[JitFact | None, list[str]]:
    """(the JIT's state, notes): None when no frame has a Compiler (the notes say what was tried).
    `record` is the method context the diagnosis established, with the record's IL size and name
    when the collection gave them: what the JIT's `info` is checked against. `searched`: the
    diagnosis looked for the method context (the JIT's own number among the candidates), so the
    JIT's number is shown only when it is the one established."""
    found = find_compiler(frames)
    if found is None:
        return None, [_no_compiler(frames)]
    index, comp, source = found
    frame = frames[index]
    fact = JitFact(
        frame=index, function=F.short_name(frame.function), module=frame.module, source=source
    )
    tried = fact.tried

    il_ok = _il_size(comp, record, fact)
    _method(process, comp, record, fact)
    _phase(process, frame, comp, il_ok, fact)

    n, member = superpmi_index(comp)
    if n is not None and (record.number == n if record is not None else not searched):
        fact.method_context = n
    elif n is not None:
        # superpmi answers the JIT's SuperPMIMethodContextNumber with mc->index, which 3.1 sets to
        # the count loaded: the JIT's number is shown only when it is the one established
        established = (
            f"the method context the diagnosis established is {record.number}"
            if record is not None
            else "the diagnosis established no method context (the stack's candidates, this one "
            "included, are in its notes)"
        )
        tried.append(f"method context: {member} = {n}, not shown: {established}")
    elif record is None and all(member_int(comp, *p) is None for p in INDEX_MEMBERS):
        # (with the method context established, the JIT's own number is not missed)
        tried.append(
            "method context: the JIT has no info.compMethodSuperPMIIndex or "
            "compMethodSuperPMIIndex in its "
            "debug information"
        )

    if il_ok:
        fact.opt_level = _opt_level(comp, tried)
        _il_offset(comp, fact)
    else:
        tried.append(
            "optimization level: not known yet (opts are set after info.compILCodeSize, by "
            "compInitOptions)"
        )
    return fact, []


def _no_compiler(frames: Sequence[Frame]) -> str:
    note = (
        "JIT state: not known: no Compiler in the stack (looked for a Compiler member function's "
        "`this`, a "
        f"Compiler* named {', '.join(COMPILER_LOCALS)}, or a JIT object's "
        f"{'/'.join(COMPILER_MEMBERS)} member)"
    )
    bare = [(i, f) for i, f in enumerate(frames[:SEARCH_FRAMES]) if _in_jit(f) and f.file is None]
    if bare:
        modules = sorted({(f.module or "?").rsplit("/", 1)[-1] for _, f in bare})
        note += (
            "; the JIT's frames "
            f"({', '.join(str(i) for i, _ in bare[:6])}{'...' if len(bare) > 6 else ''} in "
            f"{', '.join(modules)}) have no debug information: its method, phase and IL size "
            "cannot be read"
        )
    else:
        note += "; a JIT without debug information cannot tell"
    return note


def _in_jit(frame: Frame) -> bool:
    name = F.short_name(frame.function)
    return bool(
        frame.module and "jit" in frame.module.rsplit("/", 1)[-1].lower()
    ) or name.startswith(("Compiler::", "CodeGen::", "CILJit::", "emitter::", "jitNativeCode"))


def _il_size(comp: Value, record: MethodContextFact | None, fact: JitFact) -> bool:
    """info.compILCodeSize, believed when it is the record's (else, without the record, when
    plausible)."""
    tried = fact.tried
    size = member_int(comp, "info", "compILCodeSize")
    if size is None:
        tried.append("IL size: Compiler::info.compILCodeSize not readable")
        return False
    if record is not None and record.il_size is not None:
        if size != record.il_size:
            tried.append(
                f"IL size: not known yet: Compiler::info.compILCodeSize is {size}, method context "
                f"{record.number}'s record says {record.il_size} (the JIT has not filled info in "
                "yet)"
            )
            return False
        fact.il_size, fact.info_check = (
            size,
            f"info.compILCodeSize is method context {record.number}'s IL size",
        )
        return True
    why = (
        "the method context number is not known"
        if record is None
        else f"method context {record.number}'s record was not read"
    )
    if not 0 < size < IL_SIZE_LIMIT:
        tried.append(
            f"IL size: not known yet: Compiler::info.compILCodeSize is {size}, not an IL size the "
            f"JIT can compile (1 to 2^30 bytes): info is not filled in yet ({why}: not checked "
            "against the record)"
        )
        return False
    fact.il_size = size
    fact.info_check = (
        f"not checked against the record ({why}); info.compILCodeSize is a plausible IL size"
    )
    return True


def _name_problem(name: str | None) -> str | None:
    if not name:
        return "not readable"
    placeholder = next((p for p in PLACEHOLDERS if p in name), None)
    if placeholder is not None:
        return f"is {name!r}, the JIT's placeholder for a name it could not get from the host"
    if not name.isprintable() or "\ufffd" in name:
        return f"is not a readable name ({name[:40]!r}): uninitialised memory"
    return None


def _method(process: Process, comp: Value, record: MethodContextFact | None, fact: JitFact) -> None:
    problems = []
    for path in (("info", "compFullName"), ("info", "compMethodName")):
        member = "Compiler::" + ".".join(path)
        name = read_c_string(process, member_int(comp, *path), limit=2048)
        problem = _name_problem(name)
        if problem is None and name is not None and record is not None and record.name:
            simple = record.name.rsplit(":", 1)[-1]
            if simple not in name:
                problem = f"is {name!r}, not method context {record.number}'s {record.name!r}"
        if problem is None:
            fact.method, fact.method_source = name, member
            return
        problems.append(f"{member} {problem}")
    fact.tried.append("method: not known yet: " + "; ".join(problems))


def _phase(process: Process, frame: Frame, comp: Value, il_ok: bool, fact: JitFact) -> None:
    tried = fact.tried
    for member, when in PHASE_MEMBERS:
        phase = comp.field(member)
        value = phase.as_int() if phase is not None else None
        if phase is None or value is None:
            continue
        enumerator = phase.enumerator()
        if enumerator is None:
            tried.append(
                f"phase: not known yet: Compiler::{member} is {value}, which names no phase "
                "(uninitialised)"
            )
            return
        if when == "after" and not il_ok:
            tried.append(
                f"phase: not known yet: Compiler::{member} ({enumerator}) is written at a phase's "
                "end only, and info is not filled in yet, so no phase of this method has ended: "
                "the value is left over"
            )
            return
        fact.phase, fact.phase_value, fact.phase_when = enumerator, value, when
        fact.phase_source = f"Compiler::{member}"
        fact.phase_name = _phase_name(process, frame, value, tried)
        return
    tried.append(
        "phase: the JIT has neither Compiler::mostRecentlyActivePhase nor previousCompletedPhase "
        "in its debug information"
    )


def _phase_name(process: Process, frame: Frame, value: int, tried: list[str]) -> str | None:
    """The phase's display name from the JIT's PhaseNames[] table, as the JIT's own messages name
    it."""
    table = frame.global_variable("PhaseNames")
    if table is None:
        tried.append("phase display name: no PhaseNames table in the JIT's symbols")
        return None
    entry = table.element(value)
    name = read_c_string(process, entry.as_int() if entry is not None else None, limit=256)
    if not name or not name.isprintable():
        tried.append(f"phase display name: PhaseNames[{value}] not readable")
        return None
    return name


def _il_offset(comp: Value, fact: JitFact) -> None:
    """Where in the IL the importer was: its current statement's offset, believed only while the
    JIT imports the method whose IL size was checked (an inlinee's importer has its own `info`,
    which fails that check) and only when it lies inside the IL."""
    in_importer = fact.function.rsplit("::", 1)[-1].startswith("imp")  # Compiler::imp*
    importing = (fact.phase_when, fact.phase) in IMPORTING or in_importer
    if not importing:
        return  # past importation the member holds the last statement imported: not the JIT's place
    for path in IL_OFFSET_MEMBERS:
        value = member_int(comp, *path)
        if value is None:
            continue
        source = "Compiler::" + ".".join(path)
        value &= 0xFFFFFFFF
        if value in NO_IL_OFFSET:
            fact.tried.append(f"IL offset: {source} is 0x{value:x}: no statement imported yet")
            return
        offset = value & ~IL_OFFSETX_BITS if path == IL_OFFSET_MEMBERS[0] else value
        if fact.il_size is None or offset >= fact.il_size:
            fact.tried.append(
                f"IL offset: {source} is 0x{value:x}, outside the method's {fact.il_size} bytes of "
                "IL: not believed"
            )
            return
        fact.il_offset, fact.il_offset_source = offset, source
        return
    fact.tried.append(
        "IL offset: the JIT has neither Compiler::impCurStmtOffs nor impCurStmtDI in its debug "
        "information"
    )


def _opt_level(comp: Value, tried: list[str]) -> str | None:
    minopts = member_int(comp, "opts", "compMinOpts")
    dbg = member_int(comp, "opts", "compDbgCode")
    if (minopts is not None and minopts not in (0, 1)) or (dbg is not None and dbg not in (0, 1)):
        tried.append(
            f"optimization level: not known: opts.compMinOpts/compDbgCode read {minopts}/{dbg}, "
            "not booleans (uninitialised)"
        )
        return None
    if dbg:
        return "debuggable code (opts.compDbgCode)"
    if minopts is not None:
        return "MinOpts" if minopts else "optimized (opts.compMinOpts is false)"
    tried.append("optimization level: Compiler::opts.compMinOpts not readable")
    return None
