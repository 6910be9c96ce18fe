"""Mutations of valid collections and indexes, shared by the property tests and the sanitizer
test."""

from __future__ import annotations

import random
import struct

INTERESTING_U32 = [
    0,
    1,
    2,
    5,
    6,
    8,
    0x41,
    0xFF,
    0xFFFF,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFF0,
    0xFFFFFFFF,
]


def mutate(data: bytes, rng: random.Random, steps: int = 3) -> bytes:
    d = bytearray(data)
    for _ in range(steps):
        if not d:
            break
        kind = rng.randrange(6)
        pos = rng.randrange(len(d))
        if kind == 0:
            d[pos] ^= 1 << rng.randrange(8)
        elif kind == 1:
            d[pos] = rng.choice([0x6D, 0x63, 0x34, 0x32, 0x42, 0x00, 0xFF])
        elif kind == 2 and len(d) >= pos + 4:
            v = rng.choice([*INTERESTING_U32, rng.randrange(1 << 32), len(d) - pos])
            d[pos : pos + 4] = struct.pack("<I", v & 0xFFFFFFFF)
        elif kind == 3:
            del d[pos:]
        elif kind == 4:
            d[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
        else:
            del d[pos : pos + rng.randrange(1, 9)]
    return bytes(d)
