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

ARCH_VALUES = {"x64": 0x8664, "arm64": 0xAA64}

_NAMESPACES = [
    "System",
    "System.Collections.Generic",
    "System.Linq",
    "System.Text",
    "System.IO",
    "System.Runtime.CompilerServices",
    "Microsoft.Extensions.Logging",
    "System.Net.Http",
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
]
_METHODS = [
    "Add",
    "TryGetValue",
    "Select",
    "Append",
    "Read",
    "As",
    "Log",
    "SendAsync",
    "Slice",
    "Max",
    "MemoryCopy",
    "Resize",
    "ToInt32",
    "GetBytes",
    "MoveNext",
    "get_Count",
    "Dispose",
    ".ctor",
]

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
    cls = f"{rng.choice(_NAMESPACES)}.{rng.choice(_CLASSES)}"
    return cls, f"{rng.choice(_METHODS)}_{number}"


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

    packets: list[bytes] = []
    buf = E.BlobBuffer()
    il_off = buf.add(il)
    packets.append(
        E.packet(
            P.CompileMethod,
            E.lwm(
                [
                    (
                        E.u32(0),
                        E.compile_method_value(
                            ftn, il_off, len(il), args=E.sig_info(num_args=2, ret_type=8)
                        ),
                    )
                ],
                buf,
            ),
        )
    )

    cls, meth = method_name(rng, number)
    names = E.BlobBuffer()
    moff = names.add_string(meth)
    packets.append(
        E.packet(
            P.PrintMethodName,
            E.lwm([(E.u64(ftn), E.print_result_value(moff, len(meth) + 1))], names),
        )
    )
    packets.append(E.packet(P.GetMethodClass, E.lwm([(E.u64(ftn), E.u64(cls_handle))])))
    cnames = E.BlobBuffer()
    coff = cnames.add_string(cls)
    packets.append(
        E.packet(
            P.PrintClassName,
            E.lwm([(E.u64(cls_handle), E.print_result_value(coff, len(cls) + 1))], cnames),
        )
    )

    flags_buf = E.BlobBuffer()
    foff = flags_buf.add(struct.pack("<QQ", 1 << 20, 0))
    packets.append(
        E.packet(P.GetJitFlags, E.lwm([(E.u32(0), struct.pack("<II", foff, 16))], flags_buf))
    )
    packets.append(
        E.packet(P.GetExpectedTargetArchitecture, E.lwm([(E.u32(0), E.u32(ARCH_VALUES[arch]))]))
    )

    n_inl = rng.randrange(0, 2 * inlinees + 1) if inlinees else 0
    if n_inl:
        ibuf = E.BlobBuffer()
        items = []
        for k in range(n_inl):
            iil = random_il(rng, rng.randrange(8, 2 * mean_il + 8))
            ioff = ibuf.add(iil)
            ih = 0x7FD000000000 + rng.randrange(1 << 24) * 0x40 + k
            info = E.compile_method_value(ih, ioff, len(iil))[:208]
            items.append((E.u64(ih), info + b"\x01" + E.u32(0)))  # Agnostic_GetMethodInfo (213)
        packets.append(E.packet(74, E.lwm(items, ibuf)))

    if with_compile_result:
        code = bytes(rng.randrange(256) for _ in range(16 + len(il) * 2))
        cbuf = E.BlobBuffer()
        hoff = cbuf.add(code)
        packets.append(
            E.packet(
                P.CR_AllocMem,
                E.lwm(
                    [(E.u32(0), E.alloc_mem_value(len(code), hoff, 0x10000 + number * 0x1000))],
                    cbuf,
                ),
            )
        )
        packets.append(
            E.packet(
                P.CR_CompileMethod,
                E.lwm(
                    [(E.u32(0), E.cr_compile_method_value(0x10000 + number * 0x1000, len(code)))]
                ),
            )
        )
    return E.record(packets)


def synthetic_collection(count: int, seed: int = 1, **kwargs: object) -> Iterator[bytes]:
    rng = random.Random(seed)
    for n in range(1, count + 1):
        yield method_context(rng, n, **kwargs)  # type: ignore[arg-type]
