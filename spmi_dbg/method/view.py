"""The method of a method context as the JIT saw it: its signature, attributes, locals, exception
clauses and IL, every token shown by the name the collection recorded for it, or raw with why.
Built from `Answers` into plain data (`MethodView.to_json`), rendered as ilasm-like text."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from spmi_dbg.method import opcodes as K
from spmi_dbg.method.decode import Instruction, decode
from spmi_dbg.method.recorded import Answers
from spmi_dbg.method.sig import MethodInfo, SigInfo
from spmi_dbg.method.types import type_text

# CorInfoFlag bits with the same meaning in 3.1 and today (corinfo.h)
ATTRIBUTES = [
    (0x00000008, "static"),
    (0x00000010, "final"),
    (0x00000020, "synchronized"),
    (0x00000040, "virtual"),
    (0x00000400, "abstract"),
    (0x00400000, "intrinsic"),
    (0x00800000, "constructor"),
    (0x10000000, "noinlining"),
]


@dataclass(frozen=True)
class Line:
    """One instruction: its offset, opcode, operand as shown, and for a token how it was named."""

    offset: int
    opcode: str
    operand: str = ""
    token: int | None = None
    named: str | None = None  # the recorded name the token resolved to
    raw_why: str | None = None  # a token left raw: why
    targets: tuple[int, ...] = ()

    def text(self) -> str:
        head = f"IL_{self.offset:04x}:  {self.opcode}"
        return f"{head:<24}{self.operand}".rstrip() if self.operand else head


@dataclass
class MethodView:
    method_context: int
    name: str | None
    il_size: int
    max_stack: int
    init_locals: bool
    returns: str
    arguments: list[str]
    locals: list[str]
    attributes: list[str]
    exception_clauses: list[str]
    lines: list[Line]
    notes: list[str] = field(default_factory=list)
    callee: bool = False  # a method the JIT looked at while compiling method context N's

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def header(self) -> list[str]:
        attrs = " ".join(self.attributes)
        name = self.name or "<method name not recorded>"
        whose = "a callee in method context" if self.callee else "method context"
        out = [
            f"// {whose} {self.method_context}: {name} (IL size {self.il_size})",
            f".method {attrs + ' ' if attrs else ''}{self.returns} {name}"
            f"({', '.join(self.arguments)})",
            "{",
            f"  .maxstack {self.max_stack}",
            f"  .locals{' init' if self.init_locals else ''} ({', '.join(self.locals)})",
        ]
        out += [f"  // {c}" for c in self.exception_clauses]
        return out

    def text(self) -> str:
        notes = [f"// note: {n}" for n in self.notes]
        return "\n".join([*notes, *self.header(), *(ln.text() for ln in self.lines), "}"]) + "\n"


def _types(answers: Answers, sig: SigInfo) -> list[str] | None:
    """The argument (or local) types of `sig` as recorded; None when one is not."""
    out: list[str] = []
    arg = sig.args
    for i in range(sig.num_args):
        got = answers.arg_type(sig, arg)
        if got is None:
            return None
        out.append(type_text(got[0], got[1], answers.class_name, answers.class_recorded))
        if i + 1 < sig.num_args:
            nxt = answers.arg_next(arg)
            if nxt is None:
                return None
            arg = nxt
    return out


def signature_types(answers: Answers, sig: SigInfo, what: str) -> list[str]:
    got = _types(answers, sig)
    if got is None:
        return [f"<{sig.num_args} {what}: types not recorded>"] if sig.num_args else []
    return got


def _token_operand(answers: Answers, info: MethodInfo, ins: Instruction) -> Line:
    op = ins.opcode
    assert op is not None and ins.value is not None
    token = int(ins.value)
    raw = f"<0x{token:08x}"
    if op.operand is K.Operand.SIG:
        why = "a stand-alone signature"
        return Line(ins.offset, op.name, f"{raw}: {why}>", token, None, why)
    if op.token_kind == K.KIND_STRING:
        text = answers.string_literal(info.scope, token)
        if text is not None:
            quoted = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            return Line(ins.offset, op.name, f'"{quoted}"', token, text)
        why = (
            "string literal, text not recorded (only its handle)"
            if answers.has_string_handle(info.scope, token)
            else "not recorded"
        )
        return Line(ins.offset, op.name, f"{raw}: {why}>", token, None, why)
    r = answers.resolved(info.scope, token, op.token_kind)
    if r is None:
        why = "not recorded"
        return Line(ins.offset, op.name, f"{raw}: {why}>", token, None, why)
    kind = op.token_kind or 0
    name: str | None = None
    what = "class"
    if kind & K.KIND_FIELD and r.hfield:
        what, name = "field", answers.field_name(r.hfield)
        owner = answers.class_name(r.hclass) if r.hclass else None
        name = f"{owner}:{name}" if name and owner else name
    elif kind & K.KIND_METHOD and r.hmethod:
        what, name = "method", answers.method_name(r.hmethod)
        sig = answers.method_sig(r.hmethod)
        if name and sig is not None:
            name += f"({', '.join(signature_types(answers, sig, 'arguments'))})"
    elif r.hclass:
        name = answers.class_name(r.hclass)
    if name is None:
        why = f"{what} name not recorded"
        return Line(ins.offset, op.name, f"{raw}: {why}>", token, None, why)
    return Line(ins.offset, op.name, name, token, name)


def _line(answers: Answers, info: MethodInfo, ins: Instruction) -> Line:
    op = ins.opcode
    if op is None:
        return Line(ins.offset, ins.name)
    if ins.truncated:
        return Line(ins.offset, op.name, "<operand cut short by the end of the IL>")
    kind = op.operand
    if kind in (K.Operand.TOKEN, K.Operand.SIG):
        return _token_operand(answers, info, ins)
    if kind in (K.Operand.BR1, K.Operand.BR4):
        return Line(ins.offset, op.name, f"IL_{ins.targets[0]:04x}", targets=ins.targets)
    if kind is K.Operand.SWITCH:
        labels = ", ".join(f"IL_{t:04x}" for t in ins.targets)
        return Line(ins.offset, op.name, f"({labels})", targets=ins.targets)
    if kind is K.Operand.NONE:
        return Line(ins.offset, op.name)
    if kind is K.Operand.I8 and isinstance(ins.value, int) and abs(ins.value) >= 1 << 32:
        return Line(ins.offset, op.name, f"0x{ins.value & (1 << 64) - 1:x}")  # an address
    return Line(ins.offset, op.name, f"{ins.value}")


def _clauses(answers: Answers, info: MethodInfo) -> list[str]:
    out = []
    for n in range(info.eh_count):
        c = answers.eh_clause(info.ftn, n)
        if c is None:
            out.append(f"exception clause {n}: not recorded")
            continue
        try_end, handler_end = c.try_offset + c.try_length, c.handler_offset + c.handler_length
        what = c.kind
        if c.kind == "catch":
            r = answers.resolved(info.scope, c.class_token, K.KIND_CLASS)
            cls = answers.class_name(r.hclass) if r is not None and r.hclass else None
            what += f" {cls or f'<0x{c.class_token:08x}>'}"
        elif c.kind == "filter":
            what += f" IL_{c.class_token:04x}"
        out.append(
            f".try IL_{c.try_offset:04x} to IL_{try_end:04x} {what} handler "
            f"IL_{c.handler_offset:04x} to IL_{handler_end:04x}"
        )
    return out


def method_view(number: int, answers: Answers) -> MethodView | None:
    """Method context `number`'s method; None when its compile request is not readable."""
    root = answers.root
    if root is None:
        return None
    info, il, _flags = root
    return body_view(number, answers, info, il)


def body_view(
    number: int, answers: Answers, info: MethodInfo, il: bytes, *, callee: bool = False
) -> MethodView:
    """A method body the JIT was given in method context `number`: the root's, or (`callee`) one
    getMethodInfo gave it for an inline candidate."""
    name = answers.method_name(info.ftn)
    attrs = answers.attribs(info.ftn)
    attributes = [w for bit, w in ATTRIBUTES if attrs is not None and attrs & bit]
    returns = type_text(
        info.args.ret_type, info.args.ret_type_class, answers.class_name, answers.class_recorded
    )
    lines = [_line(answers, info, ins) for ins in decode(il)]
    notes = []
    if callee:
        pass  # the method's own view says once what the collection lacks
    elif name is None:
        notes.append(
            "this collection holds no names for the method (recorded with a Release JIT, which "
            "never asks for them): tokens are shown raw, the IL as recorded"
        )
    elif any(ln.raw_why and "name not recorded" in ln.raw_why for ln in lines):
        notes.append("some names were not recorded: those tokens are shown raw")
    return MethodView(
        number,
        name,
        info.il_size,
        info.max_stack,
        info.init_locals,
        returns,
        signature_types(answers, info.args, "arguments"),
        signature_types(answers, info.locals, "locals"),
        attributes,
        _clauses(answers, info),
        lines,
        notes,
        callee,
    )
