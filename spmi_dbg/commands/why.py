"""`spmi why`: a Diagnosis as text for a human, in SuperPMI's terms."""

from __future__ import annotations

from spmi_dbg.analysis.facts import Diagnosis, JitFact


def jit_line(j: JitFact) -> str:
    """`compiling X (IL size N) during <phase> [PHASE_X], method context M, MinOpts` (3.1's JIT: `after <phase>`):
    what is known of it; what is not is said so (`tried` says why)."""
    parts = [f"compiling {j.method}" if j.method else "method not known yet"]
    if j.il_size is not None:
        parts[0] += f" (IL size {j.il_size})"
    phase = j.phase_text
    if phase:
        parts[0] += f" {phase}" + (f" [{j.phase}]" if j.phase and j.phase_name else "")
    else:
        parts.append("phase not known yet")
    if j.method_context is not None:
        parts.append(f"method context {j.method_context}")
    if j.opt_level:
        parts.append(j.opt_level)
    return ", ".join(parts)


def render_jit(j: JitFact) -> str:
    """`spmi jit`: every field, and what could not be read or was not believed."""
    rows = [("method", j.method and f"{j.method}  [{j.method_source}]"),
            ("phase", j.phase_text and f"{j.phase_text}  [{j.phase_source}]"),
            ("enumerator", None if j.phase is None and j.phase_value is None else
             f"{j.phase or '?'} ({j.phase_value})"),
            ("method context", None if j.method_context is None else str(j.method_context)),
            ("IL size", None if j.il_size is None else f"{j.il_size}  [{j.info_check}]"),
            ("optimization", j.opt_level), ("Compiler", j.source), ("JIT", j.module)]
    out = [f"{k:<15}{v}" for k, v in rows if v]
    out += [f"not known: {t}" for t in j.tried]
    return "\n".join(out)


def render_text(d: Diagnosis) -> str:
    out: list[str] = []
    s = d.signal
    if s is not None:
        addr = f" at address 0x{s.address:x}" if s.address is not None else ""
        near = " (near null)" if s.near_null else ""
        out.append(f"{s.name}{addr}{near}  [{s.source}]")
    out.append(f"handling: {d.handling.kind}: {d.handling.reason}")
    if d.faulting_module:
        out.append(f"faulting module: {d.faulting_module.role}: {d.faulting_module.path}")
    mc = d.method_context
    if mc is not None:
        extra = ", ".join(x for x in (mc.name, f"IL size {mc.il_size}" if mc.il_size is not None else None) if x)
        out.append(f"method context: {mc.number}{' (' + extra + ')' if extra else ''}  [{mc.source}]")
    else:
        out.append("method context: not found in the stack")
    if d.jit is not None:
        out.append(f"JIT: {jit_line(d.jit)}  [{d.jit.source}]")
        out += [f"  not known: {t}" for t in d.jit.tried]
    nm = d.null_map
    if nm is not None:
        packet = f", packet {nm.packet_id} {nm.packet_name}" if nm.packet_id is not None else ""
        out.append(f"null map: {nm.owner_type}::{nm.member} of the {nm.role}{packet}")
        out.append(f"  {nm.explanation}")
        out.append(f"  [{nm.source}]")
    a = d.assertion
    if a is not None:
        where = f" ({a.file}:{a.line})" if a.file else ""
        out.append(f"assert: {a.expr}{where}")
    i = d.instruction
    if i is not None:
        regs = ", ".join(f"{k}=0x{v:x}" for k, v in i.registers.items())
        out.append(f"instruction: 0x{i.address:x}: {i.text}" + (f"   ({regs})" if regs else ""))
    if d.folded:
        out.append("stack: " + " <- ".join(d.folded[:8]))
    for b in d.known_bugs:
        out.append(f"known bug: {b.id}: {b.title}")
        out.append(f"  {b.url}")
        if b.fix:
            out.append(f"  fix: {b.fix}")
    for n in d.near_known_bugs:
        out.append(f"resembles known bug {n.id} (all but its {n.differs_in} criterion): {n.url}")
    out.append(f"signature: {d.signature}")
    out.append(f"bucket: {d.bucket}")
    for note in d.notes:
        out.append(f"note: {note}")
    return "\n".join(out)
