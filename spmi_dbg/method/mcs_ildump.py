"""What `mcs -ildump` prints for an instruction, and its output read back: so that our decoding
can be checked against the real tool's, instruction by instruction (docs/superpmi-conventions.md,
"The IL of a method context").

mcs's IL printer (verbildump.cpp, the same in 3.1 and today) is not ECMA-335 in a few places, and
the comparison knows them as facts about mcs, not as our errors:
- 0x2F (bge.s) is printed `bgt.s`, 0x3C (bge) `bgt`, 0x4D (ldind.i) `ldind.u8`, 0xA3 (ldelem
  <T>) `stelem`;
- a short branch's offset is read unsigned (a backward `br.s` prints a target past the branch);
- `leave`/`leave.s` print their raw offset (`leave 0x0e`), a switch its count and raw offsets;
- `no.` is printed without its operand, whose byte mcs then reads as an opcode;
- an opcode mcs does not know (e.g. `readonly.`) prints nothing after `IL_xxxx: ` but a line
  break (and an error line on stderr);
- no line break between instructions: the stream is one line per method."""

from __future__ import annotations

import re
from dataclasses import dataclass

from spmi_dbg.method.decode import Instruction
from spmi_dbg.method.opcodes import Operand

# opcode -> the name mcs prints where it is not ECMA's
_MISNAMED = {0x2F: "bgt.s", 0x3C: "bgt", 0x4D: "ldind.u8", 0xA3: "stelem"}
_UNKNOWN_TO_MCS = {0xFE1E}  # readonly.


def _hex(raw: bytes) -> str:
    """Operand bytes as mcs prints them: most significant first, two digits a byte."""
    return "0x" + raw[::-1].hex()


def mcs_text(ins: Instruction) -> str | None:
    """The text mcs prints after `IL_xxxx: ` for this instruction ("" for an opcode mcs does not
    know); None when mcs's walk cannot agree with ECMA's here (`no.`, a cut-short operand)."""
    op = ins.opcode
    if op is None or op.code in _UNKNOWN_TO_MCS:
        return ""
    if op.name == "no." or ins.truncated:
        return None
    name = _MISNAMED.get(op.code, op.name)
    body = ins.raw[2:] if op.two_byte else ins.raw[1:]
    kind = op.operand
    if kind is Operand.NONE:
        return name
    if op.name in ("leave", "leave.s"):
        return f"leave {_hex(body)}"
    if kind is Operand.BR1:
        return f"{name} IL_{ins.offset + 2 + body[0]:04x}"
    if kind is Operand.BR4:
        return f"{name} IL_{ins.targets[0]:04x}"
    if kind is Operand.SWITCH:
        raws = [body[4 + 4 * i : 8 + 4 * i] for i in range((len(body) - 4) // 4)]
        return f"switch ({_hex(body[:4])})" + "".join(f" <{_hex(r)}>" for r in raws)
    if kind in (Operand.TOKEN, Operand.SIG):
        return f"{name} <{_hex(body)}>"
    if kind is Operand.R4:
        return f"{name} float32({_hex(body)})"
    if kind is Operand.R8:
        return f"{name} float64({_hex(body)})"
    return f"{name} {_hex(body)}"


_INSTRUCTION = re.compile(r"IL_([0-9a-f]{4,}): ")
_END = "   }\n}"


@dataclass(frozen=True)
class DumpedMethod:
    """One method of `mcs -ildump`'s output: its header lines and its instructions as printed."""

    header: list[str]
    instructions: list[tuple[int, str]]  # (offset, the text after `IL_xxxx: `)


def parse_ildump(text: str) -> list[DumpedMethod]:
    """mcs -ildump's stdout, one DumpedMethod per method context dumped, in order."""
    out: list[DumpedMethod] = []
    for block in text.split(".assembly extern mscorlib{}\n")[1:]:
        body, _, _ = block.partition(_END)
        head, sep, stream = body.partition("IL_")
        header = head.splitlines()
        if not sep:
            out.append(DumpedMethod(header, []))
            continue
        stream = "IL_" + stream
        marks = list(_INSTRUCTION.finditer(stream))
        instructions = []
        for k, m in enumerate(marks):
            end = marks[k + 1].start() if k + 1 < len(marks) else len(stream)
            instructions.append((int(m.group(1), 16), stream[m.end() : end].rstrip("\n")))
        out.append(DumpedMethod(header, instructions))
    return out


def compare(ours: list[Instruction], theirs: list[tuple[int, str]]) -> list[str]:
    """How our decoding differs from what mcs printed, one line per difference (none: they agree
    on every offset, opcode and operand). Where mcs's walk leaves ECMA's (`no.`, an operand cut
    short by the end of the IL) the comparison stops, and the last line says so."""
    problems: list[str] = []
    printed = dict(theirs)
    for ins in ours:
        expected = mcs_text(ins)
        if expected is None:
            problems.append(
                f"IL_{ins.offset:04x}: {ins.name}: mcs walks the IL differently from here on "
                "(not compared further)"
            )
            return problems
        got = printed.pop(ins.offset, None)
        if got is None:
            problems.append(f"IL_{ins.offset:04x}: ours {expected!r}, mcs printed no instruction")
        elif got != expected:
            problems.append(f"IL_{ins.offset:04x}: ours {expected!r}, mcs {got!r}")
    problems += [f"IL_{o:04x}: mcs printed {t!r}, ours has none" for o, t in printed.items()]
    return problems
