"""report.json's `method` and report.md's "The method": the failing method context's method as the
JIT saw it (spmi_dbg.method: its IL with names, flags, callees), with the instruction where the
JIT was marked when the JIT state established it (the importer's statement offset), written as data
and rendered from that data alone."""

from __future__ import annotations

from dataclasses import dataclass, field

from spmi_dbg.analysis.facts import JitFact
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.method.flags import JitFlags
from spmi_dbg.method.seen import MethodSeen

MAX_LINES = 150  # IL lines in report.md; the rest: `spmi-dbg mch il`
MAX_CALLEES = 25
AROUND = 20  # lines shown before a marked instruction that lies past MAX_LINES


@dataclass(frozen=True)
class MethodLinePart(JsonFact):
    offset: int
    text: str  # `IL_0011:  call  System.ThrowHelper:Throw...(int)`
    token: int | None = None
    named: str | None = None  # the recorded name the token resolved to
    raw_why: str | None = None  # a token shown raw: why


@dataclass(frozen=True)
class CalleePart(JsonFact):
    handle: str
    name: str | None
    text: str  # the callee as a line: name, where, body, what the JIT was told
    call_sites: list[int] = field(default_factory=list)
    il_size: int | None = None


@dataclass(frozen=True)
class MethodPart(JsonFact):
    method_context: int
    name: str | None
    il_size: int
    header: list[str]  # `.method ...`, `.maxstack`, `.locals`, exception clauses
    lines: list[MethodLinePart]
    flags: JitFlags | None = None  # as recorded, in words (spmi_dbg.method.flags)
    callees: list[CalleePart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    marked: int | None = None  # the IL offset where the JIT was, when the JIT state says so
    marked_source: str | None = None  # how that was read (the Compiler member)

    @classmethod
    def of(cls, seen: MethodSeen, jit: JitFact | None) -> MethodPart:
        v = seen.view
        marked = source = None
        if jit is not None and jit.il_offset is not None:
            if any(ln.offset == jit.il_offset for ln in v.lines):
                marked, source = jit.il_offset, jit.il_offset_source
        return cls(
            v.method_context,
            v.name,
            v.il_size,
            v.header()[1:],
            [
                MethodLinePart(ln.offset, ln.text(), ln.token, ln.named, ln.raw_why)
                for ln in v.lines
            ],
            seen.flags,
            [
                CalleePart(f"0x{c.handle:x}", c.name, c.text(), c.call_sites, c.il_size)
                for c in seen.callees
            ],
            list(v.notes),
            marked,
            source,
        )


def method_section(part: MethodPart, repro: tuple[str, int] | None) -> list[str]:
    """report.md's "The method": a line of what it is, the IL (the JIT's place marked), the
    callees. `repro`: the bundle's collection and the method's record number in it."""
    name = part.name or "its method (the collection holds no name)"
    flags = ", ".join(part.flags.summary) if part.flags else "JIT flags not recorded"
    out = ["#### The method", ""]
    out.append(
        f"Method context {part.method_context}: `{name}` (IL size {part.il_size}); {flags}; "
        f"{len(part.callees)} callee(s) looked at."
    )
    if part.marked is not None:
        out.append(
            f"The JIT was importing the statement at IL_{part.marked:04x} "
            f"(`{part.marked_source}`), marked `<--` below."
        )
    out += ["", f"<details><summary>IL, {len(part.lines)} instructions</summary>", "", "```"]
    out += [*(f"// note: {n}" for n in part.notes), *part.header]
    out += _lines(part)
    out += ["}", "```", ""]
    if part.callees:
        out += ["Callees the JIT looked at:", ""]
        out += [f"- {c.text}" for c in part.callees[:MAX_CALLEES]]
        if len(part.callees) > MAX_CALLEES:
            out.append(f"- ... {len(part.callees) - MAX_CALLEES} more")
        out.append("")
    if repro is not None:
        out += [
            f"All of it, callees' IL included: `spmi-dbg mch il --callees {repro[0]} {repro[1]}`",
            "",
        ]
    return [*out, "</details>", ""]


def method_text(part: MethodPart) -> str:
    """The method as plain text (`spmi il` in a debugger): what it is, the IL with the JIT's place
    marked, the flags and the callees."""
    out = [f"// method context {part.method_context}: {part.name or '(no name recorded)'}"]
    if part.marked is not None:
        out.append(
            f"// the JIT is importing the statement at IL_{part.marked:04x} ({part.marked_source})"
        )
    out += [*(f"// note: {n}" for n in part.notes), *part.header, *_lines(part), "}"]
    if part.flags is not None:
        f = part.flags
        out.append(f"// JIT flags: {', '.join(f.summary)} ({f.word}, {f.era} numbering)")
    out.append(f"// callees the JIT looked at: {len(part.callees)} (spmi callees)")
    return "\n".join(out)


def _lines(part: MethodPart) -> list[str]:
    """The IL lines (at most MAX_LINES: from the start, or up to and past the marked one)."""
    lines = part.lines
    start = 0
    if part.marked is not None:
        at = next(i for i, ln in enumerate(lines) if ln.offset == part.marked)
        if at >= MAX_LINES:
            start = at - AROUND
    shown = lines[start : start + MAX_LINES]
    out = [f"// ... {start} instructions before"] if start else []
    for ln in shown:
        mark = "   // <-- the JIT was here" if ln.offset == part.marked else ""
        out.append(ln.text + mark)
    rest = len(lines) - start - len(shown)
    if rest > 0:
        out.append(f"// ... {rest} more instructions (report.json has them all)")
    return out
