"""Crash triggers placed at chosen method context numbers (names as in native/README.md's tables).

An injected method is a normal random method (name, arguments, locals, statements, calls) drawn from
its own RNG, seeded by (collection seed, kind, number), with the trigger added as one more top-level
statement; so the rest of the collection is byte-identical with and without the injection.

| kind | what the method gets |
|---|---|
| jit-null | `ldarg.0 ldc.i4.0 div` (stored or popped) |
| jit-assert | `ldarg.0 ldc.i4.m1 shl` |
| poison | 9-12 locals (the extra ones used through `stloc.s`/`ldloc.s`) |
| poison-crash | `ldarg.0 dup dup dup add add add` |
| hang | `ldarg.0 brtrue.s +2; br.s -2` (a branch to itself, reachable) |
| stack-overflow | `ldarg.0` x 30000, `add` x 29999, `ret` (~60 KB of IL) |
| diff-assert | `ldarg.0 ldc.i4.0 mul` |
| stress-assert | `ldarg.0 ldc.i4.6 rem` (asserts only under JitStress=2 with STRESS_FOLD named) |
| missing | a call whose token has no ResolveToken record (and no GetMethodSig) |
| null-map | a recorded call in a record without a GetMethodSig map (a map the collection never
had: MISSING today, SIGSEGV in a 3.1-era replay, `SPMI_REPLAY_ERA=3.1`) |
| ee-exception | a call whose ResolveToken record carries exceptionCode 0xE0434352 |
| seed-arm64 | = ee-exception (meant for an Arm64 collection: dotnet/runtime#91257 with `-bug
91257`) |
| corrupt | a normal method whose record has a bad packet canary (GetJitFlags'); framing intact |
"""

from __future__ import annotations

import dataclasses
import random
import struct

from spmi_dbg.errors import UsageError
from spmi_dbg.sample.builder import CLR_EXCEPTION, Callee, Method, class_handle_for, scope_for
from spmi_dbg.sample.gen import MODULES, Generated, Generator, Parts, sink
from spmi_dbg.sample.il import BUG_KINDS, TYPE_VOID

# The JIT's bug triggers (il.BUG_KINDS) and the collection's own faults, in the order the help and
# the tests list them (stress-assert, BUG_KINDS' last, came late).
KINDS = (
    *BUG_KINDS[:-1],
    "missing",
    "ee-exception",
    "seed-arm64",
    "corrupt",
    BUG_KINDS[-1],
    "null-map",
)
STACK_OVERFLOW_DEPTH = 30000
_CALL_KINDS = ("missing", "ee-exception", "seed-arm64", "null-map")


def injected(gen: Generator, kind: str, number: int) -> Generated:
    """The method with trigger `kind` for method context `number` (does not touch `gen`'s main
    RNG)."""
    if kind not in KINDS:
        raise UsageError(f"unknown injection kind {kind!r}: expected one of {', '.join(KINDS)}")
    rng = random.Random(f"{gen.seed}:{kind}:{number}")
    p = gen.parts(rng, pow2=False)
    handles = (class_handle_for(p.class_index), scope_for(1 + p.class_index % MODULES))
    pos = rng.randrange(len(p.statements) + 1)
    if kind == "stack-overflow":
        il = b"\x02" * STACK_OVERFLOW_DEPTH + b"\x58" * (STACK_OVERFLOW_DEPTH - 1) + b"\x2a"
        return Generated(Method(p.name, 1, 0, il, STACK_OVERFLOW_DEPTH), *handles)
    extra: tuple[Callee, ...] = ()
    nlocals: int | None = None
    if kind in _CALL_KINDS:
        trigger, callee = _call_trigger(gen, kind, p, rng)
        extra = (callee,)
    else:
        trigger, nlocals = _trigger(kind, p, rng)
    if trigger:
        p.statements.insert(pos, trigger)
    method = p.method(
        gen,
        extra_callees=extra,
        nlocals=nlocals,
        corrupt=kind == "corrupt",
        no_sig_map=kind == "null-map",
    )
    return Generated(method, *handles)


def _trigger(kind: str, p: Parts, rng: random.Random) -> tuple[bytes, int | None]:
    """The statement carrying a JIT bug trigger (b"" for none) and the method's locals (None: as
    drawn); raises `p.depth` to what the statement needs."""
    if kind == "jit-null":
        return b"\x02\x16\x5b" + sink(p.nlocals, rng), None
    if kind == "jit-assert":
        return b"\x02\x15\x62" + sink(p.nlocals, rng), None
    if kind == "diff-assert":
        return b"\x02\x16\x5a" + sink(p.nlocals, rng), None
    if kind == "stress-assert":
        return b"\x02\x1c\x5d" + sink(p.nlocals, rng), None  # ldarg.0 ldc.i4.6 rem
    if kind == "poison-crash":
        p.depth = max(p.depth, 4)
        return b"\x02\x25\x25\x25\x58\x58\x58" + sink(p.nlocals, rng), None
    if kind == "hang":
        p.depth = max(p.depth, 1)
        return b"\x02\x2d\x02\x2b\xfe", None
    if kind == "poison":
        nlocals = rng.randrange(9, 13)
        k = rng.randrange(8, nlocals)
        # a high local: stloc.s K = arg0 + 3, then ldloc.s K; pop
        p.depth = max(p.depth, 2)
        return b"\x02\x1f\x03\x58\x13" + bytes([k]) + b"\x11" + bytes([k]) + b"\x26", nlocals
    return b"", None  # corrupt: the record is damaged, not the IL


def _call_trigger(gen: Generator, kind: str, p: Parts, rng: random.Random) -> tuple[bytes, Callee]:
    """A call to a pool callee whose record `kind` spoils (missing, throwing, or no signature map),
    and that callee; the callee leaves `p`'s own list."""
    idx = rng.choice(gen.value_callees)
    c = gen.callees[idx]
    if kind == "missing":
        c = dataclasses.replace(c, recorded=False)
    elif kind != "null-map":  # null-map: recorded as usual; the record drops its GetMethodSig map
        c = dataclasses.replace(c, exception_code=CLR_EXCEPTION)
    trigger = (
        b"\x02" * c.nargs
        + b"\x28"
        + struct.pack("<I", c.token)
        + (b"\x26" if c.ret_type != TYPE_VOID else b"")
    )
    p.depth = max(p.depth, c.nargs, 1)
    p.callees.discard(idx)
    return trigger, c


def parse_inject(spec: str) -> list[tuple[str, int]]:
    """`KIND@N[,N...]` -> [(kind, n), ...]; a bad spec is a UsageError (one line)."""
    kind, at, numbers = spec.partition("@")
    kind = kind.strip()
    if not at or not kind or not numbers.strip():
        raise UsageError(
            f"--inject {spec!r}: expected KIND@N[,N...], e.g. jit-null@42 or hang@10,20"
        )
    if kind not in KINDS:
        raise UsageError(
            f"--inject {spec!r}: unknown kind {kind!r}: expected one of {', '.join(KINDS)}"
        )
    out = []
    for part in numbers.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise UsageError(
                f"--inject {spec!r}: method context number {part!r}: expected an integer >= 1"
            )
        out.append((kind, int(part)))
    return out
