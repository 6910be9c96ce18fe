"""Seeded synthetic collections: real-format method contexts with plausible packets.

Each method context records what a 2023-era collection holds for a small method: the root
CompileMethod request (IL in the map's buffer), the target architecture, JIT flags, name packets
(PrintMethodName, GetMethodClass, PrintClassName), a few inlinee GetMethodInfo entries, and
optionally a stored compile result (CompileMethod, AllocMem, AllocGCInfo). Same arguments, same
bytes.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator

from spmi_dbg.mch import encode as E
from spmi_dbg.mch import packets as P
from spmi_dbg.sample.builder import ARCH_VALUES
from spmi_dbg.sample.names import SYNTH_CLASS_NAMES, SYNTH_METHODS, SYNTH_NAMESPACES

# IL opcodes: ldarg.0, ldarg.1, ldc.i4.s, add, sub, mul, and, or, xor, ret.
_BINOPS = (0x58, 0x59, 0x5A, 0x5F, 0x60, 0x61)


def random_il(rng: random.Random, target_size: int) -> bytes:
    """Stack-balanced IL: ldarg.0, then (ldc.i4.s k | ldarg.1; binop)*, ret."""
    out = bytearray(b"\x02")
    while len(out) < target_size - 4:
        if rng.random() < 0.3:
            out += b"\x03"
        else:
            out += bytes((0x1F, rng.randrange(256)))
        out.append(rng.choice(_BINOPS))
    out.append(0x2A)
    return bytes(out)


def method_name(rng: random.Random, number: int) -> tuple[str, str]:
    cls = f"{rng.choice(SYNTH_NAMESPACES)}.{rng.choice(SYNTH_CLASS_NAMES)}"
    return cls, f"{rng.choice(SYNTH_METHODS)}_{number}"


def method_context(
    rng: random.Random,
    number: int,
    *,
    arch: str = "x64",
    mean_il: int = 40,
    inlinees: int = 3,
    with_compile_result: bool = False,
) -> bytes:
    ftn = 0x7FF000000000 + number * 0x40
    cls_handle = 0x7FE000000000 + (number % 4096) * 0x80
    il = random_il(rng, max(4, int(rng.expovariate(1 / mean_il)) + 4))
    buf = E.BlobBuffer()
    il_off = buf.add(il)
    request = E.compile_method_value(ftn, il_off, len(il), args=E.sig_info(num_args=2, ret_type=8))
    packets = [_one(P.CompileMethod, E.u32(0), request, buf)]
    packets += _names(ftn, cls_handle, *method_name(rng, number))
    flags_buf = E.BlobBuffer()
    foff = flags_buf.add(struct.pack("<QQ", 1 << 20, 0))
    packets.append(_one(P.GetJitFlags, E.u32(0), struct.pack("<II", foff, 16), flags_buf))
    packets.append(_one(P.GetExpectedTargetArchitecture, E.u32(0), E.u32(ARCH_VALUES[arch])))
    n_inl = rng.randrange(0, 2 * inlinees + 1) if inlinees else 0
    if n_inl:
        packets.append(_inlinees(rng, n_inl, mean_il))
    if with_compile_result:
        packets += _compile_result(rng, number, len(il))
    return E.record(packets)


def _one(pid: int, key: bytes, value: bytes, buf: E.BlobBuffer | None = None) -> bytes:
    """A packet whose map holds one entry."""
    return E.packet(pid, E.lwm([(key, value)], buf))


def _names(ftn: int, cls_handle: int, cls: str, meth: str) -> list[bytes]:
    """PrintMethodName, GetMethodClass and PrintClassName of the method `ftn` in `cls_handle`."""
    names = E.BlobBuffer()
    moff = names.add_string(meth)
    cnames = E.BlobBuffer()
    coff = cnames.add_string(cls)
    return [
        _one(P.PrintMethodName, E.u64(ftn), E.print_result_value(moff, len(meth) + 1), names),
        _one(P.GetMethodClass, E.u64(ftn), E.u64(cls_handle)),
        _one(P.PrintClassName, E.u64(cls_handle), E.print_result_value(coff, len(cls) + 1), cnames),
    ]


def _inlinees(rng: random.Random, count: int, mean_il: int) -> bytes:
    """GetMethodInfo (74) entries of `count` inlinees with random IL."""
    ibuf = E.BlobBuffer()
    items = []
    for k in range(count):
        iil = random_il(rng, rng.randrange(8, 2 * mean_il + 8))
        ioff = ibuf.add(iil)
        ih = 0x7FD000000000 + rng.randrange(1 << 24) * 0x40 + k
        info = E.compile_method_value(ih, ioff, len(iil))[:208]
        items.append((E.u64(ih), info + b"\x01" + E.u32(0)))  # Agnostic_GetMethodInfo (213)
    return E.packet(74, E.lwm(items, ibuf))


def _compile_result(rng: random.Random, number: int, il_size: int) -> list[bytes]:
    """A stored compile result: AllocMem with random code, and CompileMethod's answer."""
    code = bytes(rng.randrange(256) for _ in range(16 + il_size * 2))
    cbuf = E.BlobBuffer()
    hoff = cbuf.add(code)
    base = 0x10000 + number * 0x1000
    return [
        _one(P.CR_AllocMem, E.u32(0), E.alloc_mem_value(len(code), hoff, base), cbuf),
        _one(P.CR_CompileMethod, E.u32(0), E.cr_compile_method_value(base, len(code))),
    ]


def synthetic_collection(count: int, seed: int = 1, **kwargs: object) -> Iterator[bytes]:
    rng = random.Random(seed)
    for n in range(1, count + 1):
        yield method_context(rng, n, **kwargs)  # type: ignore[arg-type]
