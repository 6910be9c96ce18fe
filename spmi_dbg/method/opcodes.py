"""ECMA-335 Partition III's opcode table, as data, written once: each opcode's name, its operand
and, for a token operand, what kind of token the JIT resolves it as (the `CorInfoTokenKind` it
passes to resolveToken, which keys the collection's ResolveToken answers)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Operand(enum.Enum):
    NONE = 0
    U1 = 1  # an unsigned byte: the argument or local number of the .s forms, unaligned./no.
    U2 = 2  # an unsigned 16-bit argument or local number
    I1 = 3  # ldc.i4.s
    I4 = 4
    I8 = 5
    R4 = 6
    R8 = 7
    TOKEN = 8  # a metadata token
    SIG = 9  # calli's stand-alone signature token
    BR1 = 10  # a signed 8-bit branch offset from the next instruction
    BR4 = 11  # a signed 32-bit branch offset from the next instruction
    SWITCH = 12  # u32 count, then count signed 32-bit offsets from the next instruction

    @property
    def size(self) -> int:
        """The operand's bytes (a switch's: its count's only)."""
        return _SIZES[self]


_SIZES = {
    Operand.NONE: 0,
    Operand.U1: 1,
    Operand.U2: 2,
    Operand.I1: 1,
    Operand.I4: 4,
    Operand.I8: 8,
    Operand.R4: 4,
    Operand.R8: 8,
    Operand.TOKEN: 4,
    Operand.SIG: 4,
    Operand.BR1: 1,
    Operand.BR4: 4,
    Operand.SWITCH: 4,
}

# CorInfoTokenKind (corinfo.h, the same values in 3.1 and today)
KIND_CLASS = 0x01
KIND_METHOD = 0x02
KIND_FIELD = 0x04
KIND_LDTOKEN = 0x10 | KIND_CLASS | KIND_METHOD | KIND_FIELD
KIND_CASTING = 0x20 | KIND_CLASS
KIND_NEWARR = 0x40 | KIND_CLASS
KIND_BOX = 0x80 | KIND_CLASS
KIND_CONSTRAINED = 0x100 | KIND_CLASS
KIND_NEWOBJ = 0x200 | KIND_METHOD
KIND_LDVIRTFTN = 0x400 | KIND_METHOD
KIND_STRING = 0  # ldstr: not resolved through resolveToken (ConstructStringLiteral answers it)


@dataclass(frozen=True)
class Opcode:
    code: int  # the byte, or 0xFE00 | the second byte
    name: str
    operand: Operand = Operand.NONE
    token_kind: int | None = None  # for TOKEN/SIG operands: the CorInfoTokenKind, KIND_STRING

    @property
    def two_byte(self) -> bool:
        return self.code >= 0xFE00

    @property
    def is_prefix(self) -> bool:
        """volatile., tail., constrained., unaligned., no., readonly.: they modify the next one."""
        return self.name.endswith(".")


_O = Operand


def _simple(codes: range | list[int], names: list[str]) -> list[Opcode]:
    return [Opcode(c, n) for c, n in zip(codes, names, strict=True)]


# an argument or local by number: the short forms 0x0E.., the long ones FE 09..
_VARIABLES = ["ldarg", "ldarga", "starg", "ldloc", "ldloca", "stloc"]
_BRANCHES = ["br", "brfalse", "brtrue", "beq", "bge", "bgt", "ble", "blt"]
_BRANCHES += ["bne.un", "bge.un", "bgt.un", "ble.un", "blt.un"]

_ONE_BYTE: list[Opcode] = [
    *_simple(range(0x00, 0x0E), ["nop", "break"] + [f"ldarg.{i}" for i in range(4)]
             + [f"ldloc.{i}" for i in range(4)] + [f"stloc.{i}" for i in range(4)]),
    *[Opcode(0x0E + i, f"{n}.s", _O.U1) for i, n in enumerate(_VARIABLES)],
    *_simple(range(0x14, 0x1F), ["ldnull", "ldc.i4.m1"] + [f"ldc.i4.{i}" for i in range(9)]),
    Opcode(0x1F, "ldc.i4.s", _O.I1),
    Opcode(0x20, "ldc.i4", _O.I4),
    Opcode(0x21, "ldc.i8", _O.I8),
    Opcode(0x22, "ldc.r4", _O.R4),
    Opcode(0x23, "ldc.r8", _O.R8),
    Opcode(0x25, "dup"),
    Opcode(0x26, "pop"),
    Opcode(0x27, "jmp", _O.TOKEN, KIND_METHOD),
    Opcode(0x28, "call", _O.TOKEN, KIND_METHOD),
    Opcode(0x29, "calli", _O.SIG),
    Opcode(0x2A, "ret"),
    *[Opcode(0x2B + i, f"{n}.s", _O.BR1) for i, n in enumerate(_BRANCHES)],
    *[Opcode(0x38 + i, n, _O.BR4) for i, n in enumerate(_BRANCHES)],
    Opcode(0x45, "switch", _O.SWITCH),
    *_simple(range(0x46, 0x58), ["ldind.i1", "ldind.u1", "ldind.i2", "ldind.u2", "ldind.i4",
             "ldind.u4", "ldind.i8", "ldind.i", "ldind.r4", "ldind.r8", "ldind.ref", "stind.ref",
             "stind.i1", "stind.i2", "stind.i4", "stind.i8", "stind.r4", "stind.r8"]),
    *_simple(range(0x58, 0x6F), ["add", "sub", "mul", "div", "div.un", "rem", "rem.un", "and",
             "or", "xor", "shl", "shr", "shr.un", "neg", "not", "conv.i1", "conv.i2", "conv.i4",
             "conv.i8", "conv.r4", "conv.r8", "conv.u4", "conv.u8"]),
    Opcode(0x6F, "callvirt", _O.TOKEN, KIND_METHOD),
    Opcode(0x70, "cpobj", _O.TOKEN, KIND_CLASS),
    Opcode(0x71, "ldobj", _O.TOKEN, KIND_CLASS),
    Opcode(0x72, "ldstr", _O.TOKEN, KIND_STRING),
    Opcode(0x73, "newobj", _O.TOKEN, KIND_NEWOBJ),
    Opcode(0x74, "castclass", _O.TOKEN, KIND_CASTING),
    Opcode(0x75, "isinst", _O.TOKEN, KIND_CASTING),
    Opcode(0x76, "conv.r.un"),
    Opcode(0x79, "unbox", _O.TOKEN, KIND_CLASS),
    Opcode(0x7A, "throw"),
    Opcode(0x7B, "ldfld", _O.TOKEN, KIND_FIELD),
    Opcode(0x7C, "ldflda", _O.TOKEN, KIND_FIELD),
    Opcode(0x7D, "stfld", _O.TOKEN, KIND_FIELD),
    Opcode(0x7E, "ldsfld", _O.TOKEN, KIND_FIELD),
    Opcode(0x7F, "ldsflda", _O.TOKEN, KIND_FIELD),
    Opcode(0x80, "stsfld", _O.TOKEN, KIND_FIELD),
    Opcode(0x81, "stobj", _O.TOKEN, KIND_CLASS),
    *_simple(range(0x82, 0x8C), [f"conv.ovf.{t}.un" for t in
             ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "i", "u")]),
    Opcode(0x8C, "box", _O.TOKEN, KIND_BOX),
    Opcode(0x8D, "newarr", _O.TOKEN, KIND_NEWARR),
    Opcode(0x8E, "ldlen"),
    Opcode(0x8F, "ldelema", _O.TOKEN, KIND_CLASS),
    *_simple(range(0x90, 0xA3), [f"ldelem.{t}" for t in
             ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "i", "r4", "r8", "ref")]
             + [f"stelem.{t}" for t in ("i", "i1", "i2", "i4", "i8", "r4", "r8", "ref")]),
    Opcode(0xA3, "ldelem", _O.TOKEN, KIND_CLASS),
    Opcode(0xA4, "stelem", _O.TOKEN, KIND_CLASS),
    Opcode(0xA5, "unbox.any", _O.TOKEN, KIND_CLASS),
    *_simple(range(0xB3, 0xBB), [f"conv.ovf.{t}" for t in
             ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8")]),
    Opcode(0xC2, "refanyval", _O.TOKEN, KIND_CLASS),
    Opcode(0xC3, "ckfinite"),
    Opcode(0xC6, "mkrefany", _O.TOKEN, KIND_CLASS),
    Opcode(0xD0, "ldtoken", _O.TOKEN, KIND_LDTOKEN),
    *_simple(range(0xD1, 0xDD), ["conv.u2", "conv.u1", "conv.i", "conv.ovf.i", "conv.ovf.u",
             "add.ovf", "add.ovf.un", "mul.ovf", "mul.ovf.un", "sub.ovf", "sub.ovf.un",
             "endfinally"]),
    Opcode(0xDD, "leave", _O.BR4),
    Opcode(0xDE, "leave.s", _O.BR1),
    Opcode(0xDF, "stind.i"),
    Opcode(0xE0, "conv.u"),
]  # fmt: skip

_TWO_BYTE: list[Opcode] = [
    *_simple(range(0xFE00, 0xFE06), ["arglist", "ceq", "cgt", "cgt.un", "clt", "clt.un"]),
    Opcode(0xFE06, "ldftn", _O.TOKEN, KIND_METHOD),
    Opcode(0xFE07, "ldvirtftn", _O.TOKEN, KIND_LDVIRTFTN),
    *[Opcode(0xFE09 + i, n, _O.U2) for i, n in enumerate(_VARIABLES)],
    Opcode(0xFE0F, "localloc"),
    Opcode(0xFE11, "endfilter"),
    Opcode(0xFE12, "unaligned.", _O.U1),
    Opcode(0xFE13, "volatile."),
    Opcode(0xFE14, "tail."),
    Opcode(0xFE15, "initobj", _O.TOKEN, KIND_CLASS),
    Opcode(0xFE16, "constrained.", _O.TOKEN, KIND_CONSTRAINED),
    Opcode(0xFE17, "cpblk"),
    Opcode(0xFE18, "initblk"),
    Opcode(0xFE19, "no.", _O.U1),
    Opcode(0xFE1A, "rethrow"),
    Opcode(0xFE1C, "sizeof", _O.TOKEN, KIND_CLASS),
    Opcode(0xFE1D, "refanytype"),
    Opcode(0xFE1E, "readonly."),
]

OPCODES: dict[int, Opcode] = {op.code: op for op in (*_ONE_BYTE, *_TWO_BYTE)}
BY_NAME: dict[str, Opcode] = {op.name: op for op in OPCODES.values()}
TWO_BYTE_LEAD = 0xFE


def encoding(op: Opcode) -> bytes:
    """The opcode's bytes in an instruction stream (one, or FE and the second)."""
    return bytes([TWO_BYTE_LEAD, op.code & 0xFF]) if op.two_byte else bytes([op.code])
