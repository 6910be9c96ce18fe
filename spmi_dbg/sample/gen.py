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
from collections.abc import Callable
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
from spmi_dbg.sample.il import (
    BY_NAME,
    COMPARE_BRANCHES,
    COMPARE_FORM,
    COMPARES,
    LONG_FORM,
    TYPE_INT,
    TYPE_LONG,
    TYPE_VOID,
    UNARY_OPS,
)
from spmi_dbg.sample.names import CLASS_NAMES, NAMESPACES, NOUNS, VERBS

POW2_FRACTION = 0.15
MODULES = 8
CALLEES = 160
CLASSES = 1500
METHOD_NAMES = 4096

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

# Opcode bytes by name, and the families the generator draws from (il.py's table).
_OP = {name: op.code for name, op in BY_NAME.items()}
_LDARG = tuple(_OP[f"ldarg.{i}"] for i in range(4))
_LDLOC = tuple(_OP[f"ldloc.{i}"] for i in range(4))
_STLOC = tuple(_OP[f"stloc.{i}"] for i in range(4))
_UNARY = tuple(_OP[name] for name in UNARY_OPS)
_COMPARE = tuple(_OP[name] for name in COMPARES)
_RET = _OP["ret"]

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


def _ldc_i4(v: int) -> bytes:
    if v == -1:
        return _OP["ldc.i4.m1"]
    if 0 <= v <= 8:
        return _OP[f"ldc.i4.{v}"]
    if -128 <= v <= 127:
        return _OP["ldc.i4.s"] + _i8(v)
    return _OP["ldc.i4"] + struct.pack("<I", v & 0xFFFFFFFF)


def sink(nlocals: int, rng: random.Random) -> bytes:
    """Consume one value: store it to a local when there is one, else pop it."""
    return _STLOC[rng.randrange(nlocals)] if nlocals else _OP["pop"]


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
            return Frag(_LDLOC[k], 1)
        k = rng.randrange(self.nargs)
        return Frag(_LDARG[k], 1)

    def _literal(self, rng: random.Random) -> Frag:
        r = rng.random()
        if r < 0.45:
            v = rng.randrange(-1, 9)
            return Frag(_ldc_i4(v), 1, True)
        if r < 0.75:
            return Frag(_OP["ldc.i4.s"] + _i8(rng.randrange(-128, 128)), 1, True)
        if r < 0.9:
            return Frag(_OP["ldc.i4"] + _i32(rng.randrange(-(1 << 31), 1 << 31)), 1, True)
        # ldc.i8: small, 32-bit, 48-bit (movz/movk pair or more) and full 64-bit (Arm64 literal
        # pool) values.
        bits = rng.choice((16, 32, 48, 64, 64))
        v = rng.getrandbits(bits)
        return Frag(_OP["ldc.i8"] + struct.pack("<Q", v), 1, True)

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
            return Frag(e.code + rng.choice(_UNARY), e.depth, False, e.callees)
        if r < 0.21:  # ceq / cgt / clt
            a = self._nonconst(rng, budget - 1)
            b = self._expr(rng, budget - 1)
            return self._bin(a, b, rng.choice(_COMPARE))
        op = _pick(rng, _BIN_WEIGHTS)
        code = _OP[op]
        a = self._nonconst(rng, budget - 1)
        shape = rng.random()
        if op == "mul":
            if shape < 0.45:
                return self._bin(a, self._mul_literal(rng), code)
            if shape < 0.55:
                return self._bin(self._mul_literal(rng), a, code)
            return self._bin(a, self._nonconst(rng, budget - 1), code)
        if op in ("div", "rem"):
            b = self._div_literal(rng) if shape < 0.6 else self._nonconst(rng, budget - 1)
            return self._bin(a, b, code)
        if op in ("shl", "shr"):
            b = self._shift_literal(rng) if shape < 0.7 else self._nonconst(rng, budget - 1)
            return self._bin(a, b, code)
        if shape < 0.2:  # literal on the left
            return self._bin(self._literal(rng), a, code)
        return self._bin(a, self._expr(rng, budget - 1), code)

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
        code += _OP["call"] + struct.pack("<I", callee.token)
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
            return Frag(e.code + _OP["pop"], e.depth, False, e.callees)
        if r < 0.24 and self.nlocals >= 2:  # e dup stloc.a stloc.b
            e = self._nonconst(rng, budget)
            a, b = rng.sample(range(self.nlocals), 2)
            code = e.code + _OP["dup"] + _STLOC[a] + _STLOC[b]
            return Frag(code, max(e.depth, 2), False, e.callees)
        if r < 0.25:
            return Frag(_OP["nop"], 0)
        e = self._expr(rng, budget)
        return Frag(e.code + sink(self.nlocals, rng), e.depth, False, e.callees)

    def _condition(self, rng: random.Random) -> tuple[Frag, str]:
        """(condition code, branch): brtrue.s/brfalse.s after one value, or a compare-branch after
        two."""
        budget = rng.choice((1, 1, 2, 2, 3))
        if rng.random() < 0.45:
            e = self._nonconst(rng, budget)
            return e, rng.choice(("brtrue.s", "brfalse.s"))
        a = self._nonconst(rng, budget)
        b = self._expr(rng, budget - 1)
        return self._bin(a, b, b""), rng.choice(COMPARE_BRANCHES)

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
        tail = e.code + _RET
        return _forward(cond, len(tail)) + tail, max(cd, e.depth)

    def _pow2_statement(self, rng: random.Random) -> Frag:
        e = self._nonconst(rng, rng.choice((0, 1, 2)))
        code = e.code + _OP["ldc.i4.s"] + bytes([1 << rng.randrange(1, 7)]) + _OP["mul"]
        code += sink(self.nlocals, rng)
        return Frag(code, max(e.depth, 2), False, e.callees)


def _forward(cond: tuple[Frag, str], distance: int) -> bytes:
    """Condition code + its branch over `distance` bytes (short form when it fits)."""
    return _branch(cond[0].code, cond[1], lambda size: distance)


def _backward(cond: tuple[Frag, str], span: int) -> bytes:
    """Condition code + its branch back to `span` bytes before the condition's first byte."""
    back = span + len(cond[0].code)
    return _branch(cond[0].code, cond[1], lambda size: -(back + size))


def _jump(distance: int) -> bytes:
    """An unconditional forward branch over `distance` bytes."""
    return _branch(b"", "br.s", lambda size: distance)


def _branch(code: bytes, br: str, disp: Callable[[int], int]) -> bytes:
    """`code` + short branch `br` with displacement `disp(2)` when it fits -128..127, else its long
    form (a compare-branch: the compare and brtrue/brfalse) with `disp(its size in bytes)`."""
    short = disp(2)
    if -128 <= short <= 127:
        return code + _OP[br] + _i8(short)
    form = COMPARE_FORM.get(br)
    if form is None:
        return code + _OP[LONG_FORM[br]] + _i32(disp(5))
    compare, if_true = form
    return code + _OP[compare] + _OP["brtrue" if if_true else "brfalse"] + _i32(disp(7))


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
            f"{prng.choice(NAMESPACES)}.{prng.choice(CLASS_NAMES)}" for _ in range(CLASSES)
        ]
        names = []
        for _ in range(METHOD_NAMES):
            n = prng.choice(VERBS) + prng.choice(NOUNS)
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
            name = f"{self.classes[cidx]}:{prng.choice(VERBS)}{prng.choice(NOUNS)}"
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
            ret.code + _RET,
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
