"""The callees of a method context: the methods the JIT looked at while compiling it, from what
the collection recorded -- the call sites of its IL (call, callvirt, newobj, jmp, ldftn,
ldvirtftn: their tokens' resolveToken answers), the bodies it asked for as inline candidates
(getMethodInfo) and what it was told about inlining them (canInline). A callee asked about but not
called from the method's own IL was met while the JIT looked into another callee. Nothing is
inferred: whether the JIT then inlined it is not recorded, so it is not said."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spmi_dbg.method.decode import decode
from spmi_dbg.method.recorded import Answers, InlineAnswer, MethodInfoAnswer
from spmi_dbg.method.view import MethodView, body_view, signature_types

CALL_OPCODES = frozenset({"call", "callvirt", "newobj", "jmp", "ldftn", "ldvirtftn"})


@dataclass
class Callee:
    handle: int
    name: str | None  # `Class:method(args)` as recorded
    call_sites: list[int] = field(default_factory=list)  # IL offsets in the method's own IL
    body: MethodInfoAnswer | None = None  # getMethodInfo's answer
    inline: InlineAnswer | None = None  # canInline's answer
    il: MethodView | None = None  # its IL, on request

    @property
    def il_size(self) -> int | None:
        return self.body.info.il_size if self.body is not None and self.body.info else None

    def body_words(self) -> str:
        b = self.body
        if b is None:
            return "body not asked for"
        if b.exception:
            return f"getMethodInfo threw 0x{b.exception:08x}"
        if not b.result:
            return "no body given (getMethodInfo answered false)"
        return f"IL size {self.il_size}"

    def inline_words(self) -> str:
        return "inlining not asked" if self.inline is None else f"inline {self.inline.words()}"

    def where(self) -> str:
        if self.call_sites:
            return "called at " + ", ".join(f"IL_{o:04x}" for o in self.call_sites)
        return "met inside another callee"

    def text(self) -> str:
        name = self.name or f"<method 0x{self.handle:x}: name not recorded>"
        return f"{name}: {self.where()}; {self.body_words()}; {self.inline_words()}"

    def to_json(self) -> dict[str, Any]:
        return {
            "handle": f"0x{self.handle:x}",
            "name": self.name,
            "call_sites": self.call_sites,
            "il_size": self.il_size,
            "body": self.body_words(),
            "inline": None
            if self.inline is None
            else {
                "result": self.inline.result,
                "restrictions": self.inline.restrictions,
                "exception": self.inline.exception,
                "words": self.inline.words(),
            },
            "il": None if self.il is None else self.il.to_json(),
        }


def _name(answers: Answers, handle: int) -> str | None:
    name = answers.method_name(handle)
    sig = answers.method_sig(handle)
    if name is not None and sig is not None:
        name += f"({', '.join(signature_types(answers, sig, 'arguments'))})"
    return name


def callees(number: int, answers: Answers, *, with_il: bool = False) -> list[Callee]:
    """Method context `number`'s callees: those called from its IL in the order of their first
    call site, then those met inside other callees in the collection's order; `with_il`: each
    one's IL where getMethodInfo gave it."""
    root = answers.root
    if root is None:
        return []
    info, il, _flags = root
    found: dict[int, Callee] = {}
    for ins in decode(il):
        op = ins.opcode
        if op is None or op.name not in CALL_OPCODES or ins.truncated or ins.value is None:
            continue
        r = answers.resolved(info.scope, int(ins.value), op.token_kind)
        if r is None or not r.hmethod:
            continue
        found.setdefault(r.hmethod, Callee(r.hmethod, None)).call_sites.append(ins.offset)
    for handle in [*answers.method_infos, *answers.inline_answers]:
        if handle != info.ftn:
            found.setdefault(handle, Callee(handle, None))
    for c in found.values():
        c.name = _name(answers, c.handle)
        c.body = answers.method_infos.get(c.handle)
        c.inline = answers.inline_answers.get(c.handle)
        if with_il and c.body is not None and c.body.info is not None and c.body.il is not None:
            c.il = body_view(number, answers, c.body.info, c.body.il, callee=True)
    return list(found.values())


def callees_text(number: int, found: list[Callee]) -> str:
    if not found:
        return f"// method context {number}: no callee recorded\n"
    out = [f"// callees the JIT looked at in method context {number}: {len(found)}"]
    out += [f"//   {c.text()}" for c in found]
    text = "\n".join(out) + "\n"
    for c in found:
        if c.il is not None:
            text += "\n" + c.il.text()
    return text


__all__ = ["CALL_OPCODES", "Callee", "callees", "callees_text"]
