"""Agnostic struct layouts the product decodes (docs/mch-format.md 5.4; all packed, little-endian)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from spmi_dbg.mch.maps import NO_BLOB, MapError, SerializedMap

SIG_INFO_SIZE = 84
METHOD_INFO_SIZE = 208  # 204 in collections predating regionKind
COMPILE_METHOD_SIZE = METHOD_INFO_SIZE + 8


@dataclass(frozen=True)
class CompileMethodRequest:
    """Method-context CompileMethod (packet 143): the root compile request."""

    ftn: int
    scope: int
    il_offset: int
    il_size: int
    max_stack: int
    eh_count: int
    options: int
    region_kind: int | None  # absent in pre-regionKind collections
    flags: int
    os: int
    il: bytes


def decode_compile_method(m: SerializedMap) -> CompileMethodRequest:
    values = m.values()
    if not values:
        raise MapError("CompileMethod map is empty: expected one item")
    v = values[0]
    if len(v) == COMPILE_METHOD_SIZE:
        ftn, scope, il_off, il_size, max_stack, eh, options, region = struct.unpack_from("<QQIIIIII", v, 0)
        rest = 40
    elif len(v) == COMPILE_METHOD_SIZE - 4:
        ftn, scope, il_off, il_size, max_stack, eh, options = struct.unpack_from("<QQIIIII", v, 0)
        region, rest = None, 36
    else:
        raise MapError(f"CompileMethod value: expected {COMPILE_METHOD_SIZE} or {COMPILE_METHOD_SIZE - 4} bytes, "
                       f"found {len(v)}")
    flags, os_ = struct.unpack_from("<II", v, rest + 2 * SIG_INFO_SIZE)
    il = m.blob(il_off) if il_size else b""
    if il is None:
        il = b""
    if len(il) < il_size:
        raise MapError(f"CompileMethod IL: expected {il_size} bytes, found {len(il)}")
    return CompileMethodRequest(ftn, scope, il_off, il_size, max_stack, eh, options, region, flags, os_,
                                bytes(il[:il_size]))


@dataclass(frozen=True)
class CompileMethodResults:
    """Compile-result CompileMethod (packet 118, `Agnostic_CompileMethodResults`)."""

    native_entry: int
    native_size_of_code: int
    cor_jit_result: int


def decode_cr_compile_method(m: SerializedMap) -> CompileMethodResults:
    values = m.values()
    if not values or len(values[0]) != 16:
        raise MapError("CompileMethodResults: expected one 16-byte item")
    return CompileMethodResults(*struct.unpack("<QII", values[0]))


@dataclass(frozen=True)
class AllocMemDetails:
    """Compile-result AllocMem (packet 115); `layout` is 56 (2021-2025) or 52 (2025/26 main, no flag)."""

    layout: int
    hot_code_size: int
    cold_code_size: int
    ro_data_size: int
    xcptns_count: int
    flag: int | None
    hot_code_block_offset: int
    cold_code_block_offset: int
    ro_data_block_offset: int
    hot_code_block: int
    cold_code_block: int
    ro_data_block: int
    hot_code: bytes
    cold_code: bytes
    ro_data: bytes


def decode_alloc_mem(m: SerializedMap) -> AllocMemDetails:
    values = m.values()
    if not values:
        raise MapError("AllocMem map is empty: expected one item")
    v = values[0]
    if len(v) == 56:
        hot, cold, ro, xc, flag, hoff, coff, roff, hblk, cblk, rblk = struct.unpack("<8I3Q", v)
    elif len(v) == 52:
        hot, cold, ro, xc, hoff, coff, roff, hblk, cblk, rblk = struct.unpack("<7I3Q", v)
        flag = None
    else:
        raise MapError(f"AllocMemDetails: expected 56 or 52 bytes, found {len(v)}")

    def code(size: int, offset: int) -> bytes:
        if size == 0 or offset == NO_BLOB:
            return b""
        data = m.blob(offset) or b""
        if len(data) < size:
            raise MapError(f"AllocMem block at {offset}: expected {size} bytes, found {len(data)}")
        return bytes(data[:size])

    return AllocMemDetails(len(v), hot, cold, ro, xc, flag, hoff, coff, roff, hblk, cblk, rblk,
                           code(hot, hoff), code(cold, coff), code(ro, roff))


# GetExpectedTargetArchitecture (183): IMAGE_FILE_MACHINE_* in 2023-era collections.
IMAGE_FILE_MACHINE = {
    0x014C: "x86",
    0x8664: "x64",
    0x01C4: "arm",
    0xAA64: "arm64",
    0x6264: "loongarch64",
    0x5064: "riscv64",
}


def target_arch_name(value: int) -> str:
    """Name for a recorded target architecture; unknown values are shown raw, never guessed."""
    name = IMAGE_FILE_MACHINE.get(value)
    return name if name else f"unknown (0x{value:x})"


def decode_u32_value(m: SerializedMap) -> int:
    values = m.values()
    if not values or len(values[0]) < 4:
        raise MapError("expected one item with a 4-byte value")
    return int(struct.unpack_from("<I", values[0])[0])


def decode_string_blob(raw: bytes | None) -> str | None:
    """A name blob: 8-bit chars, usually NUL-terminated (older WCHAR blobs are detected and decoded)."""
    if raw is None:
        return None
    if len(raw) >= 4 and len(raw) % 2 == 0 and raw[1] == 0 and raw[3] == 0:
        return raw.decode("utf-16-le", "replace").split("\0", 1)[0]
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")
