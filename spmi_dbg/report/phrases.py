"""The phrasebook: each fact of a diagnosis in words, written once, over the typed facts
(spmi_dbg.analysis.facts: a `Diagnosis` and its facts, read from JSON where report.json, triage.json
or a tape comes in). Every view renders from here: `spmi why` (WHY), report.md and triage.md
(MARKDOWN), the summary rows of the terminal and `spmi-dbg report --format text` (SUMMARY). A view
asks for `fact_lines(diagnosis, style)`: the facts that style shows, in its order, each as (label,
text). A new fact gets its phrase and its place in the styles' orders here, and every view shows
it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.analysis.facts import (
    Diagnosis,
    FrameInfo,
    Instruction,
    JitFact,
    KnownBugInfo,
    MethodContextFact,
    ModuleFact,
    NullMap,
)

# (label, text): "null map", "CompileResult::CompileMethod of ..."; a label "" is a line of its own
# (WHY's first line, an indented detail)
Line = tuple[str, str]


@dataclass(frozen=True)
class Style:
    """How a view says things: `markdown` puts names in backticks; `detail` is the in-debugger form
    (what is not known, how each fact was obtained, in brackets); `terse` is the one-line summary
    (no packet, no reason)."""

    name: str
    markdown: bool
    detail: bool
    terse: bool
    order: tuple[str, ...]  # the facts shown, by PHRASES key

    def code(self, text: str) -> str:
        return f"`{text}`" if self.markdown else text

    def enumerator(self, text: str) -> str:
        return f"[{text}]" if self.detail else f"({text})"


# ---------------------------------------------------------------------------- one fact each
def signal_text(name: str, address: int | None, near_null: bool | None, style: Style) -> str:
    """`SIGSEGV at address 0x14 (near null)` (the summary: `at 0x14`)."""
    at = "" if address is None else f" at {'' if style.terse else 'address '}0x{address:x}"
    return f"{style.code(name)}{at}{' (near null)' if near_null else ''}"


def null_map_text(nm: NullMap, style: Style, *, packet: bool = True) -> str:
    """`CompileResult::CompileMethod of the base compile result (cr1), packet 118
    PacketCR_CompileMethod`."""
    text = f"{style.code(nm.owner_type + '::' + nm.member)} of the {nm.role}"
    if packet and not style.terse and nm.packet_id is not None:
        text += f", packet {nm.packet_id} {nm.packet_name}"
    return text


def null_map_cause(nm: NullMap) -> str:
    """Why the map is null, as a clause: the explanation without its packet, or the plain fact."""
    why = nm.explanation.split(" (packet", 1)[0]
    return why or f"the {nm.owner_type}::{nm.member} map of the {nm.role} is null"


def phase_text(j: JitFact) -> str | None:
    """`during Morph - Global` / `after Post-import` (3.1's JIT tells the last phase that ended,
    not the running one)."""
    shown = j.phase_shown
    return None if shown is None else f"{j.phase_when or 'during'} {shown}"


def frame_text(f: FrameInfo) -> str:
    """`#3 Compiler::fgMorph at morph.cpp:120 [inlined]`: a backtrace line."""
    where = f" at {f.file}:{f.line}" if f.file else ""
    return f"#{f.index} {f.function}{where}" + (" [inlined]" if f.inlined else "")


def jit_text(j: JitFact, style: Style) -> str:
    """`compiling X (IL size N) during Morph - Global (PHASE_MORPH_GLOBAL), MinOpts` (3.1's JIT:
    `after <phase>`, the phase that ended last). The in-debugger form also says what is not known
    yet and the JIT's own method context number."""
    if j.method:
        parts = [f"compiling {style.code(j.method)}"]
    else:
        parts = ["method not known yet" if style.detail else "compiling a method not known yet"]
    if j.il_size is not None:
        parts[0] += f" (IL size {j.il_size})"
    phase = phase_text(j)
    if phase:
        parts[0] += f" {phase}"
        if j.phase and j.phase_name:
            parts[0] += f" {style.enumerator(j.phase)}"
    elif style.detail:
        parts.append("phase not known yet")
    if style.detail and j.method_context is not None:
        parts.append(f"method context {j.method_context}")
    if j.opt_level:
        parts.append(j.opt_level)
    return ", ".join(parts)


def method_context_text(number: int | None, mc: MethodContextFact | None, style: Style) -> str:
    """`method context 150 (`Sample.C:M`, IL size 198)`: the number, and the record's name and IL
    size."""
    who = f"method context {number}" if number else "an unidentified method context"
    extra = []
    if mc is not None and mc.name:
        extra.append(style.code(mc.name))
    if mc is not None and mc.il_size is not None:
        extra.append(f"IL size {mc.il_size}")
    return f"{who} ({', '.join(extra)})" if extra else who


def module_text(fm: ModuleFact, style: Style) -> str:
    """`superpmi (replay host): /path` (Markdown: `superpmi (replay host) (`/path`)`)."""
    if style.markdown:
        return f"{fm.role} ({style.code(str(fm.path))})"
    return f"{fm.role}: {fm.path}"


def module_clause(fm: ModuleFact) -> str:
    """Where the faulting code is, as a description says it."""
    where = (
        "superpmi itself (the replay host), not in a JIT"
        if fm.role.startswith("superpmi")
        else f"the {fm.role}"
    )
    return f"The faulting code is in {where}" + (f" (`{Path(fm.path).name}`)." if fm.path else ".")


def instruction_text(i: Instruction, style: Style) -> str:
    regs = ", ".join(f"{k}=0x{v:x}" for k, v in i.registers.items())
    text = style.code(f"0x{i.address:x}: {i.text}")
    return text + (f"{'   ' if style.detail else ' '}({regs})" if regs else "")


def stack_text(folded: list[str], style: Style) -> str:
    return " <- ".join(style.code(f) for f in folded[:8])


def top_frames(d: Diagnosis | None) -> list[str]:
    """The stack a title names: the signature's frames (concrete ones), else the folded stack,
    unknowns out."""
    frames = (d.signature_frames or d.folded) if d is not None else []
    return [f for f in frames if f and f != "??"]


def crash_title(signal: str | None, d: Diagnosis | None, *, hang: bool, where: str = "") -> str:
    """`superpmi SIGSEGV in F for method context N (null X::Y of the R)`, `superpmi hangs in F`."""
    frames = top_frames(d)
    top = f" in {frames[0]}" if frames else ""
    if hang:
        return f"superpmi hangs{top}{where}"
    nm = d.null_map if d is not None else None
    null = f" (null {null_map_text(nm, SUMMARY)})" if nm else ""
    return f"superpmi {signal or 'crash'}{top}{where}{null}"


def known_bug_summary(b: KnownBugInfo) -> Line:
    """One row: the crash's known bug (`known bug: id url, fix url`), or one in how it was reported
    (`also`)."""
    if is_about_the_crash(b):
        return "known bug", f"{b.id} {b.url}" + (f", fix {b.fix_url}" if b.fix_url else "")
    return "also", f"{b.said or b.title} ({b.id} {b.url})"


def known_bug_sentence(b: KnownBugInfo) -> str:
    if is_about_the_crash(b):
        return f"Known upstream: {b.id}, {b.title}."
    return f"Also: {b.said or 'reported wrong'} ({b.id}, {b.title})."


def is_about_the_crash(b: KnownBugInfo) -> bool:
    """known_bugs.toml's `about`: "crash" (the bug is the crash) or "reporting" (how the crash was
    reported)."""
    return b.about == "crash"


def how_found(d: Diagnosis) -> list[str]:
    """How each fact was obtained, one line each (report.md's Other information)."""
    facts = (
        ("signal", d.signal),
        ("null map", d.null_map),
        ("faulting module", d.faulting_module),
    )
    how = [f"{label}: {fact.source}" for label, fact in facts if fact]
    j = d.jit
    if j:
        how.append(
            f"JIT state: the Compiler of {j.source}"
            + (f"; method from {j.method_source}" if j.method_source else "")
            + (f"; phase from {j.phase_source}" if j.phase_source else "")
            + (f"; IL size {j.info_check}" if j.info_check else "")
            + "".join(f"; {t}" for t in j.tried)
        )
    return how


# ------------------------------------------------------------------------- the facts of a view
def _signal(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    sig = d.signal
    if not sig or (not at_fault and sig.name == "SIGTRAP"):
        return []
    text = signal_text(sig.name, sig.address, sig.near_null, s)
    return [("", f"{text}  [{sig.source}]")] if s.detail else [("signal", text)]


def _handling(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    h = d.handling
    return [("handling", f"{h.kind}: {h.reason}")] if h else []


def _faulting_module(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    fm = d.faulting_module
    out = [("faulting module", module_text(fm, s))] if fm and at_fault else []
    cj = d.calling_jit  # diagnoses written before it have none
    if cj and at_fault:
        where = f"  [{cj.source}]" if s.detail else ""
        out.append(("called by", module_text(cj, s) + where))
    return out


def _method_context(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    mc = d.method_context
    if not mc:
        return [("method context", "not found in the stack")]
    extra = ", ".join(
        x for x in (mc.name, None if mc.il_size is None else f"IL size {mc.il_size}") if x
    )
    return [("method context", f"{mc.number}{' (' + extra + ')' if extra else ''}  [{mc.source}]")]


def _jit(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    j = d.jit
    if not j:
        return []
    if s.detail:
        return [
            ("JIT", f"{jit_text(j, s)}  [{j.source}]"),
            *(("", f"  not known: {t}") for t in j.tried),
        ]
    if s.markdown:
        return [("", f"the JIT was {jit_text(j, s)} ({s.code(j.function)})")]
    return [("JIT", jit_text(j, s))]


def _null_map(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    nm = d.null_map
    if not nm:
        return [("null map", "none")] if s.terse and at_fault else []
    out = [("null map", null_map_text(nm, s))]
    if s.detail:
        out += [("", f"  {nm.explanation}"), ("", f"  [{nm.source}]")]
    return out


def _assertion(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    a = d.assertion
    if not a:
        return []
    if s.markdown:
        return [("assert", s.code(a.expr))]
    return [("assert", a.expr + (f" ({a.file}:{a.line})" if a.file else ""))]


def _instruction(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    i = d.instruction
    if not i or not at_fault:
        return []
    return [("faulting instruction" if s.markdown else "instruction", instruction_text(i, s))]


def _stack(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    return [("stack", stack_text(d.folded, s))] if d.folded else []


def _known_bugs(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    out: list[Line] = []
    for b in (b for b in d.known_bugs if is_about_the_crash(b)):
        out += [("known bug", f"{b.id}: {b.title}"), ("", f"  {b.url}")]
        out += [("", f"  fix: {b.fix}")] if b.fix else []
    # how it was reported: "also"
    out += [known_bug_summary(b) for b in d.known_bugs if not is_about_the_crash(b)]
    for n in d.near_known_bugs:
        out.append(
            ("", f"resembles known bug {n.id} (all but its {n.differs_in} criterion): {n.url}")
        )
    return out


def _signature(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    if s.markdown:
        return (
            [("signature", f"{s.code(d.signature)} (bucket {s.code(d.bucket)})")]
            if d.signature
            else []
        )
    return [("signature", d.signature), ("bucket", d.bucket)]


def _notes(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    return [("note", n) for n in d.notes]


def _causes(d: Diagnosis, s: Style, at_fault: bool) -> list[Line]:
    """`why: <kind>: <evidence; ...>; <advice>` (the terse styles: the kind and the advice)."""
    out: list[Line] = []
    for c in d.causes:  # diagnoses written before causes have none
        kind = s.code(c.kind) if s.markdown else c.kind
        if s.terse:
            out.append(("why", f"{kind}: {c.advice}"))
        elif s.detail:  # one line of evidence each
            out.append(("why", f"{kind}: {c.advice}"))
            out += [("", f"  {e}") for e in c.evidence]
        else:
            out.append(("why", f"{kind}: {c.advice} (evidence: {'; '.join(c.evidence)})"))
    return out


Phrase = Callable[[Diagnosis, Style, bool], list[Line]]
PHRASES: dict[str, Phrase] = {
    "signal": _signal,
    "handling": _handling,
    "faulting_module": _faulting_module,
    "method_context": _method_context,
    "jit": _jit,
    "null_map": _null_map,
    "assertion": _assertion,
    "instruction": _instruction,
    "stack": _stack,
    "known_bugs": _known_bugs,
    "causes": _causes,
    "signature": _signature,
    "notes": _notes,
}

WHY = Style(
    "why",
    markdown=False,
    detail=True,
    terse=False,
    order=(
        "signal",
        "handling",
        "faulting_module",
        "method_context",
        "causes",
        "jit",
        "null_map",
        "assertion",
        "instruction",
        "stack",
        "known_bugs",
        "signature",
        "notes",
    ),
)
MARKDOWN = Style(
    "markdown",
    markdown=True,
    detail=False,
    terse=False,
    order=(
        "causes",
        "faulting_module",
        "jit",
        "null_map",
        "instruction",
        "assertion",
        "stack",
        "signature",
    ),
)
SUMMARY = Style(
    "summary",
    markdown=False,
    detail=False,
    terse=True,
    order=(
        # the signal row is the report's (a hang has none; the expected one)
        "causes",
        "jit",
        "null_map",
        "faulting_module",
    ),
)


def fact_lines(d: Diagnosis, style: Style, *, at_fault: bool = True) -> list[Line]:
    """The facts `style` shows, in its order. `at_fault` False: the stop is a debug break superpmi
    asked for (a compile-failure target), not a fault: no faulting module or instruction, no
    SIGTRAP."""
    return [line for key in style.order for line in PHRASES[key](d, style, at_fault)]


def joined(lines: list[Line], bullet: str = "") -> list[str]:
    """`label: text` lines (a label "" is a line of its own), each after `bullet`."""
    return [f"{bullet}{label}: {text}" if label else f"{bullet}{text}" for label, text in lines]


# ------------------------------------------------------------------------------- the triage's table
def _jit_phase_cell(d: Diagnosis) -> str:
    return (d.jit.phase_shown if d.jit else None) or "-"


# The bucket table's columns from a bucket's diagnosis (the smallest member's), after "what":
# (header, cell).
TRIAGE_COLUMNS: tuple[tuple[str, Callable[[Diagnosis], str]], ...] = (
    ("JIT phase", _jit_phase_cell),
)
