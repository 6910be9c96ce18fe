"""A method's IL bytes as instructions (ECMA-335 Partition III): offsets, opcodes, operands as
values, branch targets as offsets. Never raises on bad IL: an opcode no table knows is an
instruction of its own (one byte, `opcode` None), an operand cut short by the end of the IL is
said in `truncated`."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from spmi_dbg.method.opcodes import OPCODES, TWO_BYTE_LEAD, Opcode, Operand


@dataclass(frozen=True)
class Instruction:
    offset: int
    opcode: Opcode | None  # None: no opcode has these bytes
    raw: bytes  # the instruction's bytes (a switch's targets included)
    value: int | float | None = None  # an operand's value (a token, a number, a local number)
    targets: tuple[int, ...] = ()  # branch targets, as IL offsets
    truncated: bool = False  # the IL ended inside the operand

    @property
    def name(self) -> str:
        if self.opcode is None:
            return f"<unknown opcode 0x{self.raw.hex()}>"
        return self.opcode.name

    @property
    def size(self) -> int:
        return len(self.raw)

    @property
    def next_offset(self) -> int:
        return self.offset + self.size


_SCALARS = {
    Operand.U1: "<B",
    Operand.U2: "<H",
    Operand.I1: "<b",
    Operand.I4: "<i",
    Operand.I8: "<q",
    Operand.R4: "<f",
    Operand.R8: "<d",
    Operand.TOKEN: "<I",
    Operand.SIG: "<I",
    Operand.BR1: "<b",
    Operand.BR4: "<i",
    Operand.SWITCH: "<I",
}


def _opcode_at(il: bytes, at: int) -> Opcode | None:
    lead = il[at]
    if lead == TWO_BYTE_LEAD:
        if at + 1 >= len(il):
            return None
        return OPCODES.get(0xFE00 | il[at + 1])
    return OPCODES.get(lead)


def decode_one(il: bytes, at: int) -> Instruction:
    """The instruction at offset `at` (< len(il))."""
    op = _opcode_at(il, at)
    if op is None:
        width = 2 if il[at] == TWO_BYTE_LEAD and at + 1 < len(il) else 1
        return Instruction(at, None, il[at : at + width])
    start = at + (2 if op.two_byte else 1)
    fmt = _SCALARS.get(op.operand)
    if fmt is None:
        return Instruction(at, op, il[at:start])
    end = start + op.operand.size
    if end > len(il):
        return Instruction(at, op, il[at:], truncated=True)
    (value,) = struct.unpack_from(fmt, il, start)
    if op.operand in (Operand.BR1, Operand.BR4):
        return Instruction(at, op, il[at:end], value, (end + int(value),))
    if op.operand is Operand.SWITCH:
        count = int(value)
        stop = end + 4 * count
        if stop > len(il):
            return Instruction(at, op, il[at:], value, truncated=True)
        deltas = struct.unpack_from(f"<{count}i", il, end)
        return Instruction(at, op, il[at:stop], value, tuple(stop + d for d in deltas))
    return Instruction(at, op, il[at:end], value)


def decode(il: bytes) -> list[Instruction]:
    """Every instruction of `il`, in order."""
    out: list[Instruction] = []
    at = 0
    while at < len(il):
        ins = decode_one(il, at)
        out.append(ins)
        at = ins.next_offset
    return out
