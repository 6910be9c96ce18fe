"""The IL subset the sample JIT compiles (native/README.md): opcode table, decoder, stack check,
trigger scan.

Everything here works on raw IL bytes, so it checks what the assembler and the random generator
produce independently of how they produced it (the tests rely on that).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from spmi_dbg.method.opcodes import BY_NAME as ECMA
from spmi_dbg.method.opcodes import Operand, encoding

# CorInfoType values used for return types (corinfo.h).
TYPE_VOID = 1
TYPE_INT = 8
TYPE_LONG = 10
RET_TYPES = {"void": TYPE_VOID, "int": TYPE_INT, "long": TYPE_LONG}
RET_TYPE_NAMES = {v: k for k, v in RET_TYPES.items()}

# Operand kinds.
NONE, U8, I8, I32, I64, TOKEN, BR8, BR32 = "none", "u8", "i8", "i32", "i64", "token", "br8", "br32"
OPERAND_SIZE = {NONE: 0, U8: 1, I8: 1, I32: 4, I64: 8, TOKEN: 4, BR8: 1, BR32: 4}


@dataclass(frozen=True)
class OpCode:
    name: str
    code: bytes  # 1 byte, or FE xx
    operand: str
    pops: int  # -1: call (from the callee's signature)
    pushes: int  # -1: call
    flow: str = "next"  # next | branch | cond | return


# Families of the table below, in code order (gen.py draws its operators from them).
COMPARE_BRANCHES = ("beq.s", "bge.s", "bgt.s", "ble.s", "blt.s", "bne.un.s")  # 0x2E..0x33
BINARY_OPS = ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr")
UNARY_OPS = ("neg", "not", "conv.i8")
COMPARES = ("ceq", "cgt", "clt")  # FE xx

# ECMA-335's operand kinds (spmi_dbg/method/opcodes.py, the table written once) as this subset
# names them
_OPERANDS = {
    Operand.NONE: NONE,
    Operand.U1: U8,
    Operand.I1: I8,
    Operand.I4: I32,
    Operand.I8: I64,
    Operand.TOKEN: TOKEN,
    Operand.BR1: BR8,
    Operand.BR4: BR32,
}


def _op(name: str, pops: int, pushes: int, flow: str = "next") -> OpCode:
    """The subset's opcode `name`: its bytes and operand from ECMA-335's table, its stack effect
    and flow as the sample JIT checks them."""
    ecma = ECMA[name]
    return OpCode(name, encoding(ecma), _OPERANDS[ecma.operand], pops, pushes, flow)


_TABLE: list[OpCode] = [
    _op("nop", 0, 0),
    *(_op(f"ldarg.{i}", 0, 1) for i in range(4)),
    *(_op(f"ldloc.{i}", 0, 1) for i in range(4)),
    *(_op(f"stloc.{i}", 1, 0) for i in range(4)),
    _op("ldarg.s", 0, 1),
    _op("ldloc.s", 0, 1),
    _op("stloc.s", 1, 0),
    _op("ldc.i4.m1", 0, 1),
    *(_op(f"ldc.i4.{i}", 0, 1) for i in range(9)),
    _op("ldc.i4.s", 0, 1),
    _op("ldc.i4", 0, 1),
    _op("ldc.i8", 0, 1),
    _op("dup", 1, 2),
    _op("pop", 1, 0),
    _op("call", -1, -1),
    _op("ret", -1, 0, "return"),
    _op("br.s", 0, 0, "branch"),
    _op("brfalse.s", 1, 0, "cond"),
    _op("brtrue.s", 1, 0, "cond"),
    *(_op(n, 2, 0, "cond") for n in COMPARE_BRANCHES),
    _op("br", 0, 0, "branch"),
    _op("brfalse", 1, 0, "cond"),
    _op("brtrue", 1, 0, "cond"),
    *(_op(n, 2, 1) for n in BINARY_OPS),
    *(_op(n, 1, 1) for n in UNARY_OPS),
    *(_op(n, 2, 1) for n in COMPARES),
]

BY_NAME: dict[str, OpCode] = {op.name: op for op in _TABLE}
BY_CODE: dict[bytes, OpCode] = {op.code: op for op in _TABLE}

# Short branch -> long form (only br/brfalse/brtrue have one in the subset).
LONG_FORM = {"br.s": "br", "brfalse.s": "brfalse", "brtrue.s": "brtrue"}
# Compare-and-branch -> (compare opcode, branch-if-true?) that computes the same condition.
COMPARE_FORM = {
    "beq.s": ("ceq", True),
    "bne.un.s": ("ceq", False),
    "bgt.s": ("cgt", True),
    "ble.s": ("cgt", False),
    "blt.s": ("clt", True),
    "bge.s": ("clt", False),
}

# Bug trigger thresholds (native/README.md).
POISON_LOCALS = 9
DEEP_NESTING = 20000


class ILError(ValueError):
    """IL the sample JIT would refuse (CORJIT_BADCODE): the message says where and why; `offset` is
    the IL offset of the offending instruction (None when it is not about one)."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Instr:
    offset: int
    op: OpCode
    operand: int | None
    size: int

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def target(self) -> int | None:
        """Branch target offset (relative to the next instruction, as ECMA-335 defines it)."""
        if self.op.operand in (BR8, BR32):
            assert self.operand is not None
            return self.end + self.operand
        return None

    @property
    def constant(self) -> int | None:
        """The value an ldc.* pushes, else None."""
        n = self.op.name
        if n == "ldc.i4.m1":
            return -1
        if n.startswith("ldc.i4.") and n[7:].isdigit():
            return int(n[7:])
        if n in ("ldc.i4.s", "ldc.i4", "ldc.i8"):
            return self.operand
        return None


def decode(il: bytes) -> Iterator[Instr]:
    """Instructions in order; raises ILError on an unknown opcode or a truncated instruction."""
    pos, n = 0, len(il)
    while pos < n:
        b = il[pos]
        if b == 0xFE:
            if pos + 1 >= n:
                raise ILError(f"IL offset {pos}: truncated two-byte opcode FE", pos)
            code = il[pos : pos + 2]
        else:
            code = il[pos : pos + 1]
        op = BY_CODE.get(code)
        if op is None:
            raise ILError(f"IL offset {pos}: opcode {code.hex().upper()} is not in the subset", pos)
        osz = OPERAND_SIZE[op.operand]
        start = pos + len(code)
        if start + osz > n:
            raise ILError(
                f"IL offset {pos}: {op.name} is truncated: expected {osz} operand bytes, "
                f"found {n - start}",
                pos,
            )
        operand: int | None
        if op.operand == NONE:
            operand = None
        elif op.operand == U8:
            operand = il[start]
        elif op.operand in (I8, BR8):
            operand = struct.unpack_from("<b", il, start)[0]
        elif op.operand in (I32, BR32):
            operand = struct.unpack_from("<i", il, start)[0]
        elif op.operand == TOKEN:
            operand = struct.unpack_from("<I", il, start)[0]
        else:
            operand = struct.unpack_from("<q", il, start)[0]
        yield Instr(pos, op, operand, len(code) + osz)
        pos = start + osz


CallEffect = Callable[[int], tuple[int, int]]  # token -> (pops, pushes); raises KeyError if unknown


def check_stack(
    il: bytes,
    *,
    nargs: int,
    nlocals: int,
    returns_value: bool = True,
    call_effect: CallEffect | None = None,
) -> int:
    """Check what the sample JIT checks (valid opcodes, branch targets on instruction boundaries
    inside the method, a balanced evaluation stack with consistent depths at joins, arg/local
    indices in range) with ECMA-335's single forward pass; returns the maximum stack depth. Without
    `call_effect` a call counts as (0 pops, 1 push)."""
    instrs = list(decode(il))
    if not instrs:
        raise ILError("empty IL: expected at least a ret")
    joins = _Joins({i.offset for i in instrs}, len(il))
    depth: int | None = 0
    max_depth = 0
    for ins in instrs:
        depth = joins.arrive(ins, depth)
        _check_index(ins, nargs, nlocals)
        pops, pushes = _effect(ins, depth, returns_value, call_effect)
        if depth < pops:
            raise ILError(
                f"IL offset {ins.offset}: {ins.op.name} underflows the stack: needs {pops}, "
                f"has {depth}",
                ins.offset,
            )
        depth = depth - pops + pushes
        max_depth = max(max_depth, depth)
        joins.branch(ins, depth)
        if ins.op.flow in ("branch", "return"):
            depth = None
    if depth is not None:
        raise ILError(
            f"IL offset {len(il)}: control falls off the end of the method: expected ret or br",
            len(il),
        )
    return max_depth


class _Joins:
    """check_stack's depths: at each offset passed, and at each forward branch target ahead."""

    def __init__(self, starts: set[int], size: int) -> None:
        self.starts = starts
        self.size = size
        self.expected: dict[
            int, int
        ] = {}  # forward branch targets -> the depth the branch requires
        self.seen: dict[int, int] = {}  # offsets already passed -> their depth

    def arrive(self, ins: Instr, depth: int | None) -> int:
        """The depth at `ins`: the one the previous instruction leaves (None after an unconditional
        transfer), checked against the branches to it."""
        at = self.expected.get(ins.offset)
        if depth is None:
            # after an unconditional transfer: ECMA assumes empty
            depth = at if at is not None else 0
        elif at is not None and at != depth:
            raise ILError(
                f"IL offset {ins.offset}: stack depth {depth} does not match {at} "
                "from a branch here",
                ins.offset,
            )
        self.seen[ins.offset] = depth
        return depth

    def branch(self, ins: Instr, depth: int) -> None:
        """Check the target of `ins`, if it branches, with the depth `ins` leaves."""
        tgt = ins.target
        if tgt is None:
            return
        if tgt not in self.starts:
            raise ILError(
                f"IL offset {ins.offset}: {ins.op.name} target {tgt} is not an instruction start "
                f"inside the method (0..{self.size - 1})",
                ins.offset,
            )
        prev = self.seen.get(tgt) if tgt <= ins.offset else self.expected.get(tgt)
        if prev is not None and prev != depth:
            raise ILError(
                f"IL offset {ins.offset}: branch to {tgt} with stack depth {depth}, "
                f"but the depth there is {prev}",
                ins.offset,
            )
        if tgt > ins.offset:
            self.expected[tgt] = depth


def _check_index(ins: Instr, nargs: int, nlocals: int) -> None:
    """An ldarg, ldloc or stloc index in range."""
    name = ins.op.name
    if not name.startswith(("ldarg", "ldloc", "stloc")):
        return
    idx = ins.operand if ins.operand is not None else int(name[-1])
    limit = nargs if name.startswith("ldarg") else nlocals
    if idx >= limit:
        what = "arguments" if name.startswith("ldarg") else "locals"
        raise ILError(
            f"IL offset {ins.offset}: {name} {idx} is out of range: the method has {limit} {what}",
            ins.offset,
        )


def _effect(
    ins: Instr, depth: int, returns_value: bool, call_effect: CallEffect | None
) -> tuple[int, int]:
    """(pops, pushes) of `ins` at stack depth `depth`; a ret must find exactly its value."""
    name = ins.op.name
    if name == "call":
        assert ins.operand is not None
        return call_effect(ins.operand) if call_effect is not None else (0, 1)
    if name == "ret":
        pops = 1 if returns_value else 0
        if depth != pops:
            raise ILError(
                f"IL offset {ins.offset}: ret with stack depth {depth}: expected {pops}",
                ins.offset,
            )
        return pops, 0
    return ins.op.pops, ins.op.pushes


# ----------------------------------------------------------------------------------------------
# triggers

BUG_KINDS = (
    "jit-null",
    "jit-assert",
    "poison",
    "poison-crash",
    "hang",
    "stack-overflow",
    "diff-assert",
    "stress-assert",
)


def find_triggers(
    il: bytes, *, nlocals: int = 0, max_stack: int | None = None
) -> dict[str, list[int]]:
    """The documented JIT bug triggers present in a method, by kind -> IL offsets (native/README.md
    table): jit-null `ldc.i4.0; div`, jit-assert `ldc.i4.m1; shl`, poison (>= 9 locals; offset -1),
    poison-crash `dup; dup; dup`, hang (a branch to itself), stack-overflow (stack deeper than
    20000), diff-assert `ldc.i4.0; mul`, stress-assert `ldc.i4.6; rem` (only under JitStress=2 with
    STRESS_FOLD). Also `pow2-mul` (`ldc.i4.s 2^k; mul`, k = 1..6: an asm diff, not a bug)."""
    found: dict[str, list[int]] = {}

    def add(kind: str, off: int) -> None:
        found.setdefault(kind, []).append(off)

    if nlocals >= POISON_LOCALS:
        add("poison", -1)
    prev: Instr | None = None
    dups = 0
    depth = 0
    for ins in decode(il):
        name = ins.op.name
        if prev is not None:
            pn = prev.op.name
            if pn == "ldc.i4.0" and name == "div":
                add("jit-null", prev.offset)
            elif pn == "ldc.i4.m1" and name == "shl":
                add("jit-assert", prev.offset)
            elif pn == "ldc.i4.0" and name == "mul":
                add("diff-assert", prev.offset)
            elif pn == "ldc.i4.6" and name == "rem":
                add("stress-assert", prev.offset)
            elif (
                pn == "ldc.i4.s"
                and name == "mul"
                and prev.operand is not None
                and prev.operand in (2, 4, 8, 16, 32, 64)
            ):
                add("pow2-mul", prev.offset)
        dups = dups + 1 if name == "dup" else 0
        if dups == 3:
            add("poison-crash", ins.offset - 2)
        if ins.target == ins.offset:
            add("hang", ins.offset)
        # A rough depth (calls as pushes of 1): enough to spot 20000-deep nesting.
        if ins.op.pops >= 0:
            depth = max(0, depth - ins.op.pops + ins.op.pushes)
        else:
            depth += 1 if name == "call" else 0
        if depth > DEEP_NESTING and "stack-overflow" not in found:
            add("stack-overflow", ins.offset)
        prev = ins
    if max_stack is not None and max_stack > DEEP_NESTING and "stack-overflow" not in found:
        add("stack-overflow", -1)
    return found


def risky_patterns(il: bytes) -> list[str]:
    """Stricter-than-documented patterns the random generator also avoids (so that a JIT whose
    pattern match is looser than the README, e.g. through constant folding, still never trips by
    accident): a zero constant of any form before mul/div/rem, a negative constant before shl/shr or
    -1 before div/rem, two dups in a row, and a pow2 constant (any form) before mul."""
    out: list[str] = []
    prev: Instr | None = None
    for ins in decode(il):
        name = ins.op.name
        c = prev.constant if prev is not None else None
        if prev is not None and c is not None:
            if name in ("mul", "div", "rem") and c == 0:
                out.append(f"{prev.offset}: zero before {name}")
            if name in ("shl", "shr") and c < 0:
                out.append(f"{prev.offset}: negative before {name}")
            if name in ("div", "rem") and c == -1:
                out.append(f"{prev.offset}: -1 before {name}")
        if prev is not None and prev.op.name == "dup" and name == "dup":
            out.append(f"{prev.offset}: dup; dup")
        prev = ins
    return out


def disassemble(il: bytes, *, names: dict[int, str] | None = None) -> str:
    """One instruction per line (`IL_0004: ldc.i4.s 5`), for dumps and error messages."""
    lines = []
    for ins in decode(il):
        text = f"IL_{ins.offset:04X}: {ins.op.name}"
        if ins.target is not None:
            text += f" IL_{ins.target:04X}"
        elif ins.op.operand == TOKEN and ins.operand is not None:
            text += f" 0x{ins.operand:08X}" + (
                f" ({names[ins.operand]})" if names and ins.operand in names else ""
            )
        elif ins.operand is not None:
            text += f" {ins.operand}"
        lines.append(text)
    return "\n".join(lines)
