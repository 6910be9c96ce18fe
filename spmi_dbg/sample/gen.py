"""Seeded random methods in the sample JIT's IL subset that it compiles successfully (CORJIT_OK).

Shape: 1-4 int64 arguments, 0-4 locals, statements that leave the evaluation stack empty (local
stores, ignored results, void calls), if/if-else/loops/early returns nested at most two deep
(forward and backward branches, short forms where they fit), calls through tokens to a
per-collection pool of callees, and a final `<expr> ret`. IL is 10..300 bytes for most methods, up
to a few KB for a few.

Never a bug trigger by accident (native/README.md): the right operand of mul/div/rem/shl/shr is
either a non-constant expression or a literal from a safe set (mul: positive, not a power of two;
div/rem: not 0 or
-1; shifts: 1..31), every binary operator has at least one non-constant operand (so no constant
folding can manufacture a trigger), locals <= 4, no two dups in a row, no branch to itself,
expressions at most ~6 deep. A fraction of methods (15%) gets one `<expr> ldc.i4.s 2^k mul`
statement so that the diff JIT has asm diffs.

Speed: statements, conditions and return expressions are generated once per (arguments, locals)
shape from their own seeded RNG and kept as encoded fragments; a method draws fragments and only
encodes its branches.
"""

from __future__ import annotations

import math
import random
import struct
from dataclasses import dataclass
from typing import NamedTuple

from spmi_dbg.sample.builder import (
    CALLEE_BASE,
    CALLEE_CLASS_BASE,
    TOKEN_BASE,
    Callee,
    Method,
    class_handle_for,
    scope_for,
)
from spmi_dbg.sample.il import TYPE_INT, TYPE_LONG, TYPE_VOID

POW2_FRACTION = 0.15
MODULES = 8
CALLEES = 160
CLASSES = 1500
METHOD_NAMES = 4096

_NAMESPACES = [
    "System",
    "System.Collections.Generic",
    "System.Linq",
    "System.Text",
    "System.IO",
    "System.Runtime.CompilerServices",
    "System.Numerics",
    "System.Buffers",
    "System.Net.Http",
    "Microsoft.Extensions.Logging",
    "System.Text.Json",
    "System.Threading",
    "Sample.Compute",
]
_CLASSES = [
    "List`1",
    "Dictionary`2",
    "Enumerable",
    "StringBuilder",
    "Stream",
    "Unsafe",
    "Logger",
    "HttpClient",
    "Span`1",
    "Math",
    "Buffer",
    "Array",
    "Convert",
    "BitConverter",
    "BitOperations",
    "Vector`1",
    "Utf8Parser",
    "HashHelpers",
    "ArrayPool`1",
    "Interlocked",
    "JsonReader",
    "Checksum",
    "Crc32",
    "Adler32",
    "Base64",
    "Number",
    "DateTimeParse",
    "Decimal",
    "Int64",
    "UInt32",
    "HashSet`1",
    "Queue`1",
    "SortedSet`1",
]
_VERBS = [
    "Get",
    "Set",
    "Try",
    "Compute",
    "Parse",
    "Format",
    "Read",
    "Write",
    "Add",
    "Remove",
    "Find",
    "Update",
    "Create",
    "Validate",
    "Process",
    "Handle",
    "Convert",
    "Compare",
    "Hash",
    "Encode",
    "Decode",
    "Scan",
    "Merge",
    "Split",
    "Count",
    "Reduce",
    "Rotate",
    "Mix",
    "Fold",
    "Clamp",
]
_NOUNS = [
    "Value",
    "Count",
    "Item",
    "Bytes",
    "Length",
    "Index",
    "Key",
    "Node",
    "Buffer",
    "State",
    "Token",
    "Range",
    "Offset",
    "Checksum",
    "Header",
    "Block",
    "Entry",
    "Slot",
    "Mask",
    "Flags",
    "Bits",
    "Digits",
    "Seed",
    "Bucket",
    "Capacity",
    "Span",
    "Words",
    "Carry",
]

_BINOPS = {
    "add": 0x58,
    "sub": 0x59,
    "mul": 0x5A,
    "div": 0x5B,
    "rem": 0x5D,
    "and": 0x5F,
    "or": 0x60,
    "xor": 0x61,
    "shl": 0x62,
    "shr": 0x63,
}
_BIN_WEIGHTS = [
    ("add", 25),
    ("sub", 15),
    ("mul", 12),
    ("and", 8),
    ("or", 7),
    ("xor", 8),
    ("shl", 6),
    ("shr", 6),
    ("div", 5),
    ("rem", 4),
]
_CMP = {"ceq": b"\xfe\x01", "cgt": b"\xfe\x02", "clt": b"\xfe\x04"}
_CMP_BRANCH = {
    "beq.s": 0x2E,
    "bge.s": 0x2F,
    "bgt.s": 0x30,
    "ble.s": 0x31,
    "blt.s": 0x32,
    "bne.un.s": 0x33,
}
# Compare-and-branch -> (compare opcode bytes, branch-if-true?) for targets out of short range.
_CMP_FORM = {
    "beq.s": ("ceq", True),
    "bne.un.s": ("ceq", False),
    "bgt.s": ("cgt", True),
    "ble.s": ("cgt", False),
    "blt.s": ("clt", True),
    "bge.s": ("clt", False),
}
BR_S, BR = 0x2B, 0x38
BRFALSE_S, BRTRUE_S, BRFALSE, BRTRUE = 0x2C, 0x2D, 0x39, 0x3A
RET = b"\x2a"

_i8 = struct.Struct("<b").pack
_i32 = struct.Struct("<i").pack


def _pick(rng: random.Random, weighted: list[tuple[str, int]]) -> str:
    total = sum(w for _, w in weighted)
    r = rng.randrange(total)
    for name, w in weighted:
        r -= w
        if r < 0:
            return name
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class Frag:
    """Encoded IL with its stack needs: `depth` = max stack depth reached (starting empty), `const`
    = a literal, `callees` = pool indices of the methods it calls."""

    code: bytes
    depth: int
    const: bool = False
    callees: frozenset[int] = frozenset()


_NO_CALLEES: frozenset[int] = frozenset()


def _ldc_i4(v: int) -> bytes:
    if v == -1:
        return b"\x15"
    if 0 <= v <= 8:
        return bytes([0x16 + v])
    if -128 <= v <= 127:
        return b"\x1f" + _i8(v)
    return b"\x20" + struct.pack("<I", v & 0xFFFFFFFF)


class _Shape:
    """Fragment pools for methods with `nargs` arguments and `nlocals` locals."""

    def __init__(self, gen: Generator, nargs: int, nlocals: int) -> None:
        self.gen = gen
        self.nargs = nargs
        self.nlocals = nlocals
        rng = random.Random(f"{gen.seed}:shape:{nargs}:{nlocals}")
        self.rng = rng
        self.statements = [self._statement(rng) for _ in range(384)]
        self.conditions = [self._condition(rng) for _ in range(160)]
        self.returns = [self._expr(rng, rng.choice((1, 2, 2, 3))) for _ in range(64)]
        # Runs of 1-5 statements, pre-joined: what a method draws (code, depth, callees).
        self.runs: list[tuple[bytes, int, frozenset[int]]] = []
        for _ in range(1024):
            seq = [rng.choice(self.statements) for _ in range(rng.choice((1, 2, 2, 3, 3, 4, 5)))]
            self.runs.append(
                (
                    b"".join(f.code for f in seq),
                    max(f.depth for f in seq),
                    frozenset().union(*(f.callees for f in seq)),
                )
            )
        # Compound statements (if / if-else / loops / early returns, nested up to two deep) built
        # from runs.
        self.compounds: list[tuple[bytes, int, frozenset[int]]] = []
        for _ in range(1024):
            used: set[int] = set()
            code, depth = self._compound(rng, 0, used)
            self.compounds.append((code, depth, frozenset(used)))
        self.pow2 = [self._pow2_statement(rng) for _ in range(48)]

    # ---------------------------------------------------------------- expressions
    def _var(self, rng: random.Random) -> Frag:
        if self.nlocals and rng.random() < 0.4:
            k = rng.randrange(self.nlocals)
            return Frag(bytes([0x06 + k]), 1)
        k = rng.randrange(self.nargs)
        return Frag(bytes([0x02 + k]), 1)

    def _literal(self, rng: random.Random) -> Frag:
        r = rng.random()
        if r < 0.45:
            v = rng.randrange(-1, 9)
            return Frag(_ldc_i4(v), 1, True)
        if r < 0.75:
            return Frag(b"\x1f" + _i8(rng.randrange(-128, 128)), 1, True)
        if r < 0.9:
            return Frag(b"\x20" + _i32(rng.randrange(-(1 << 31), 1 << 31)), 1, True)
        # ldc.i8: small, 32-bit, 48-bit (movz/movk pair or more) and full 64-bit (Arm64 literal
        # pool) values.
        bits = rng.choice((16, 32, 48, 64, 64))
        v = rng.getrandbits(bits)
        return Frag(b"\x21" + struct.pack("<Q", v), 1, True)

    def _mul_literal(self, rng: random.Random) -> Frag:
        """Positive, not a power of two: never a diff (pow2) nor a diff-assert (zero) multiplier."""
        r = rng.random()
        if r < 0.4:
            v = rng.choice((3, 5, 6, 7))
        elif r < 0.8:
            v = rng.randrange(9, 128)
        else:
            v = rng.randrange(129, 1 << 30)
        if v & (v - 1) == 0:
            v += 1
        return Frag(_ldc_i4(v), 1, True)

    def _div_literal(self, rng: random.Random) -> Frag:
        v = rng.choice((2, 3, 5, 7, 10, 16, 100, 1000, -3, -7, rng.randrange(11, 5000)))
        return Frag(_ldc_i4(v), 1, True)

    def _shift_literal(self, rng: random.Random) -> Frag:
        return Frag(_ldc_i4(rng.randrange(1, 32)), 1, True)

    def _nonconst(self, rng: random.Random, budget: int) -> Frag:
        """An expression with at least one argument, local or call in it (never a bare literal)."""
        if budget <= 0 or rng.random() < 0.45:
            return self._var(rng)
        return self._composite(rng, budget)

    def _expr(self, rng: random.Random, budget: int) -> Frag:
        if budget <= 0:
            return self._literal(rng) if rng.random() < 0.2 else self._var(rng)
        r = rng.random()
        if r < 0.15:
            return self._literal(rng)
        if r < 0.45:
            return self._var(rng)
        return self._composite(rng, budget)

    def _composite(self, rng: random.Random, budget: int) -> Frag:
        r = rng.random()
        if r < 0.07:
            return self._call(rng, budget)
        if r < 0.15:  # neg / not / conv.i8
            e = self._nonconst(rng, budget - 1)
            return Frag(e.code + rng.choice((b"\x65", b"\x66", b"\x6a")), e.depth, False, e.callees)
        if r < 0.21:  # ceq / cgt / clt
            a = self._nonconst(rng, budget - 1)
            b = self._expr(rng, budget - 1)
            return self._bin(a, b, rng.choice(list(_CMP.values())))
        op = _pick(rng, _BIN_WEIGHTS)
        a = self._nonconst(rng, budget - 1)
        shape = rng.random()
        if op == "mul":
            if shape < 0.45:
                return self._bin(a, self._mul_literal(rng), b"\x5a")
            if shape < 0.55:
                return self._bin(self._mul_literal(rng), a, b"\x5a")
            return self._bin(a, self._nonconst(rng, budget - 1), b"\x5a")
        if op in ("div", "rem"):
            b = self._div_literal(rng) if shape < 0.6 else self._nonconst(rng, budget - 1)
            return self._bin(a, b, bytes([_BINOPS[op]]))
        if op in ("shl", "shr"):
            b = self._shift_literal(rng) if shape < 0.7 else self._nonconst(rng, budget - 1)
            return self._bin(a, b, bytes([_BINOPS[op]]))
        if shape < 0.2:  # literal on the left
            return self._bin(self._literal(rng), a, bytes([_BINOPS[op]]))
        return self._bin(a, self._expr(rng, budget - 1), bytes([_BINOPS[op]]))

    @staticmethod
    def _bin(a: Frag, b: Frag, op: bytes) -> Frag:
        return Frag(a.code + b.code + op, max(a.depth, 1 + b.depth), False, a.callees | b.callees)

    def _call_args(self, rng: random.Random, idx: int, budget: int) -> Frag:
        callee = self.gen.callees[idx]
        code = bytearray()
        depth = 0
        callees = {idx}
        for i in range(callee.nargs):
            a = self._expr(rng, min(budget - 1, 1))
            code += a.code
            depth = max(depth, i + a.depth)
            callees |= a.callees
        code += b"\x28" + struct.pack("<I", callee.token)
        pushes = 0 if callee.ret_type == TYPE_VOID else 1
        return Frag(bytes(code), max(depth, pushes), False, frozenset(callees))

    def _call(self, rng: random.Random, budget: int) -> Frag:
        return self._call_args(rng, rng.choice(self.gen.value_callees), budget)

    # ---------------------------------------------------------------- statements
    def _statement(self, rng: random.Random) -> Frag:
        r = rng.random()
        budget = rng.choice((1, 2, 2, 3, 3, 4))
        if r < 0.08:
            return self._call_args(rng, rng.choice(self.gen.void_callees), budget)
        if r < 0.2 or not self.nlocals:  # an ignored result: a call or a computation
            e = self._call(rng, budget) if rng.random() < 0.5 else self._composite(rng, budget)
            return Frag(e.code + b"\x26", e.depth, False, e.callees)
        if r < 0.24 and self.nlocals >= 2:  # e dup stloc.a stloc.b
            e = self._nonconst(rng, budget)
            a, b = rng.sample(range(self.nlocals), 2)
            return Frag(
                e.code + bytes((0x25, 0x0A + a, 0x0A + b)), max(e.depth, 2), False, e.callees
            )
        if r < 0.25:
            return Frag(b"\x00", 0)
        e = self._expr(rng, budget)
        return Frag(e.code + bytes([0x0A + rng.randrange(self.nlocals)]), e.depth, False, e.callees)

    def _condition(self, rng: random.Random) -> tuple[Frag, str]:
        """(condition code, branch): brtrue.s/brfalse.s after one value, or a compare-branch after
        two."""
        budget = rng.choice((1, 1, 2, 2, 3))
        if rng.random() < 0.45:
            e = self._nonconst(rng, budget)
            return e, rng.choice(("brtrue.s", "brfalse.s"))
        a = self._nonconst(rng, budget)
        b = self._expr(rng, budget - 1)
        return self._bin(a, b, b""), rng.choice(list(_CMP_BRANCH))

    def _block(self, rng: random.Random, nest: int, callees: set[int]) -> tuple[bytes, int]:
        rand = rng.random
        runs = self.runs
        nruns = len(runs)
        parts = []
        depth = 0
        for _ in range(1 + int(rand() * 2.2)):
            if nest < 2 and rand() < 0.26:
                c, d = self._compound(rng, nest, callees)
            else:
                c, d, cs = runs[int(rand() * nruns)]
                if cs:
                    callees |= cs
            parts.append(c)
            if d > depth:
                depth = d
        return b"".join(parts), depth

    def _compound(self, rng: random.Random, nest: int, callees: set[int]) -> tuple[bytes, int]:
        """if / if-else / do-while / while / early return around blocks one level deeper."""
        rand = rng.random
        cond = self.conditions[int(rand() * len(self.conditions))]
        if cond[0].callees:
            callees |= cond[0].callees
        cd = cond[0].depth
        r = rand()
        if r < 0.42:  # if (cond) { body }
            body, d = self._block(rng, nest + 1, callees)
            return _forward(cond, len(body)) + body, max(cd, d)
        if r < 0.62:  # if (cond) { a } else { b }
            a, da = self._block(rng, nest + 1, callees)
            b, db = self._block(rng, nest + 1, callees)
            a += _jump(len(b))
            return _forward(cond, len(a)) + a + b, max(cd, da, db)
        if r < 0.73:  # do { body } while (cond)
            body, d = self._block(rng, nest + 1, callees)
            return body + _backward(cond, len(body)), max(cd, d)
        if r < 0.88:  # while (cond) { body }: jump to the test at the bottom
            body, d = self._block(rng, nest + 1, callees)
            return _jump(len(body)) + body + _backward(cond, len(body)), max(cd, d)
        # if (cond) return expr;
        e = self.returns[int(rand() * len(self.returns))]
        if e.callees:
            callees |= e.callees
        tail = e.code + RET
        return _forward(cond, len(tail)) + tail, max(cd, e.depth)

    def _pow2_statement(self, rng: random.Random) -> Frag:
        e = self._nonconst(rng, rng.choice((0, 1, 2)))
        code = e.code + b"\x1f" + bytes([1 << rng.randrange(1, 7)]) + b"\x5a"
        code += bytes([0x0A + rng.randrange(self.nlocals)]) if self.nlocals else b"\x26"
        return Frag(code, max(e.depth, 2), False, e.callees)


def _forward(cond: tuple[Frag, str], distance: int) -> bytes:
    """Condition code + its branch over `distance` bytes (short form when it fits)."""
    frag, br = cond
    code = frag.code
    if distance <= 127:
        op = _CMP_BRANCH.get(br)
        return (
            code
            + bytes([op if op is not None else (BRTRUE_S if br == "brtrue.s" else BRFALSE_S)])
            + _i8(distance)
        )
    cmp = _CMP_FORM.get(br)
    if cmp is not None:
        return code + _CMP[cmp[0]] + bytes([BRTRUE if cmp[1] else BRFALSE]) + _i32(distance)
    return code + bytes([BRTRUE if br == "brtrue.s" else BRFALSE]) + _i32(distance)


def _backward(cond: tuple[Frag, str], span: int) -> bytes:
    """Condition code + its branch back to `span` bytes before the condition's first byte."""
    frag, br = cond
    code = frag.code
    disp = -(span + len(code) + 2)
    if disp >= -128:
        op = _CMP_BRANCH.get(br)
        return (
            code
            + bytes([op if op is not None else (BRTRUE_S if br == "brtrue.s" else BRFALSE_S)])
            + _i8(disp)
        )
    cmp = _CMP_FORM.get(br)
    if cmp is not None:
        return (
            code
            + _CMP[cmp[0]]
            + bytes([BRTRUE if cmp[1] else BRFALSE])
            + _i32(-(span + len(code) + 7))
        )
    return code + bytes([BRTRUE if br == "brtrue.s" else BRFALSE]) + _i32(-(span + len(code) + 5))


def _jump(distance: int) -> bytes:
    """An unconditional forward branch over `distance` bytes."""
    return bytes([BR_S]) + _i8(distance) if distance <= 127 else bytes([BR]) + _i32(distance)


@dataclass
class Parts:
    """A generated method before assembly: top-level statements (each self-contained: every branch
    in one stays inside it and the stack is empty at its ends), the return expression, and its
    metadata."""

    nargs: int
    nlocals: int
    statements: list[bytes]
    ret: bytes
    depth: int
    callees: set[int]
    name: str
    class_index: int

    def method(
        self,
        gen: Generator,
        *,
        extra_callees: tuple[Callee, ...] = (),
        nlocals: int | None = None,
        corrupt: bool = False,
        no_sig_map: bool = False,
    ) -> Method:
        il = b"".join(self.statements) + self.ret
        callees = tuple(gen.callees[i] for i in sorted(self.callees))
        if extra_callees:
            tokens = {c.token for c in extra_callees}
            callees = tuple(c for c in callees if c.token not in tokens) + extra_callees
        return Method(
            self.name,
            self.nargs,
            self.nlocals if nlocals is None else nlocals,
            il,
            self.depth,
            callees,
            TYPE_LONG,
            False,
            corrupt,
            no_sig_map,
        )


class Generated(NamedTuple):
    method: Method
    class_handle: int
    scope: int


class Generator:
    """Random methods for one collection; `seed` fixes everything (pools, callees, names,
    methods)."""

    def __init__(self, seed: int, size_factor: float = 1.0) -> None:
        self.seed = seed
        self.size_factor = size_factor  # scales every method's target IL size (1.0: the usual mix)
        self.rng = random.Random(seed)
        prng = random.Random(f"{seed}:pools")
        self.classes = [
            f"{prng.choice(_NAMESPACES)}.{prng.choice(_CLASSES)}" for _ in range(CLASSES)
        ]
        names = []
        for _ in range(METHOD_NAMES):
            n = prng.choice(_VERBS) + prng.choice(_NOUNS)
            r = prng.random()
            if r < 0.08:
                n = f"<{n}>b__{prng.randrange(40)}_{prng.randrange(4)}"
            elif r < 0.15:
                n = f"{n}Core"
            names.append(n)
        self.method_names = names
        self.callees: list[Callee] = []
        for i in range(CALLEES):
            nargs = prng.choice((0, 1, 1, 1, 2, 2, 2, 3, 3))
            ret = prng.choice((TYPE_LONG, TYPE_LONG, TYPE_LONG, TYPE_INT, TYPE_VOID))
            cidx = prng.randrange(CLASSES)
            name = f"{self.classes[cidx]}:{prng.choice(_VERBS)}{prng.choice(_NOUNS)}"
            self.callees.append(
                Callee(
                    name,
                    nargs,
                    ret,
                    TOKEN_BASE + i,
                    CALLEE_BASE + i * 0x20,
                    CALLEE_CLASS_BASE + cidx * 0x40,
                )
            )
        self.value_callees = [i for i, c in enumerate(self.callees) if c.ret_type != TYPE_VOID]
        self.void_callees = [i for i, c in enumerate(self.callees) if c.ret_type == TYPE_VOID]
        self._shapes: dict[tuple[int, int], _Shape] = {}

    def shape(self, nargs: int, nlocals: int) -> _Shape:
        s = self._shapes.get((nargs, nlocals))
        if s is None:
            s = self._shapes[(nargs, nlocals)] = _Shape(self, nargs, nlocals)
        return s

    def _target_size(self, rng: random.Random) -> int:
        if rng.random() < 0.03:  # a few large methods
            size = int(math.exp(rng.uniform(math.log(300), math.log(2500))))
        else:
            size = min(300, max(10, int(rng.lognormvariate(math.log(45), 0.7))))
        return size if self.size_factor == 1.0 else int(size * self.size_factor)

    def parts(self, rng: random.Random, *, pow2: bool | None = None) -> Parts:
        """A random method as `Parts` (drawing from `rng`; pools come from the seed)."""
        nargs = rng.choice((1, 1, 1, 2, 2, 2, 2, 3, 3, 4))
        nlocals = rng.choice((0, 1, 1, 2, 2, 2, 3, 3, 4, 4))
        sh = self.shape(nargs, nlocals)
        target = self._target_size(rng)
        with_pow2 = rng.random() < POW2_FRACTION if pow2 is None else pow2
        statements: list[bytes] = []
        callees: set[int] = set()
        depth = 0
        size = 0
        rand = rng.random
        ret = sh.returns[int(rand() * len(sh.returns))]
        budget = target - len(ret.code) - 1
        runs = sh.runs
        nruns = len(runs)
        compounds = sh.compounds
        ncompounds = len(compounds)
        while size < budget or not statements:
            if rand() < 0.3:
                code, d, cs = compounds[int(rand() * ncompounds)]
            else:
                code, d, cs = runs[int(rand() * nruns)]
            if cs:
                callees |= cs
            statements.append(code)
            size += len(code)
            if d > depth:
                depth = d
        if with_pow2:
            p = sh.pow2[rng.randrange(len(sh.pow2))]
            statements.insert(rng.randrange(len(statements) + 1), p.code)
            callees |= p.callees
            depth = max(depth, p.depth)
        callees |= ret.callees
        depth = max(depth, ret.depth)
        name = self.method_names[rng.randrange(METHOD_NAMES)]
        cidx = rng.randrange(CLASSES)
        return Parts(
            nargs,
            nlocals,
            statements,
            ret.code + RET,
            depth,
            callees,
            f"{self.classes[cidx]}:{name}",
            cidx,
        )

    def method(self, number: int) -> Generated:
        """The next random method (call once per method context number, in order)."""
        p = self.parts(self.rng)
        return Generated(
            p.method(self), class_handle_for(p.class_index), scope_for(1 + p.class_index % MODULES)
        )
