"""Agnostic struct layouts the product decodes (docs/mch-format.md 5.4; all packed,
little-endian)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import cast

from spmi_dbg.mch.maps import NO_BLOB, MapError, SerializedMap

SIG_INFO_SIZE = 84  # today's Agnostic_CORINFO_SIG_INFO (3.1's has no methodSignature: 76)
METHOD_INFO_SIZE = 208  # today's; 204 without regionKind; 3.1's 192 (two 76-byte SIG_INFOs)
COMPILE_METHOD_SIZE = METHOD_INFO_SIZE + 8  # today's value: METHOD_INFO, flags, os


class UnknownLayout(MapError):
    """A packet whose item size matches no layout this tool knows: not decoded, and not a problem of
    the collection (framing never depends on struct sizes, docs/mch-format.md 10)."""

    def __init__(self, what: str, size: int) -> None:
        super().__init__(f"not decoded (unknown layout, {size} bytes)")
        self.what = what
        self.size = size


@dataclass(frozen=True)
class CompileMethodLayout:
    """One era's `Agnostic_CompileMethod` (packet 143), told apart by its item size (key 4 +
    value)."""

    item_size: int
    era: str
    sig_info_size: int  # Agnostic_CORINFO_SIG_INFO
    region_kind: bool  # METHOD_INFO has u32 regionKind after options
    has_os: bool  # u32 os after flags
    source: str

    @property
    def value_size(self) -> int:
        return self.item_size - 4

    def describe(self) -> str:
        return f"CompileMethod {self.item_size} bytes ({self.era})"


_TODAY = "dotnet/runtime src/coreclr/tools/superpmi/superpmi-shared/agnostic.h"
_V31 = "dotnet/coreclr v3.1.23 src/ToolBox/superpmi/superpmi-shared/methodcontext.h"

# docs/mch-format.md 5.4 and 11. The fields before regionKind (ftn, scope, ILCode_offset,
# ILCodeSize, maxStack, EHcount, options) are at the same offsets in every layout.
COMPILE_METHOD_LAYOUTS: dict[int, CompileMethodLayout] = {
    layout.item_size: layout
    for layout in (
        CompileMethodLayout(4 + 216, "today's METHOD_INFO", 84, True, True, _TODAY),
        CompileMethodLayout(
            4 + 212, "today's METHOD_INFO without regionKind", 84, False, True, _TODAY
        ),
        CompileMethodLayout(4 + 196, "3.1-era METHOD_INFO", 76, True, False, _V31),
    )
}


@dataclass(frozen=True)
class MethodInfoHead:
    """`Agnostic_CORINFO_METHOD_INFO`'s fixed fields, at the same offsets in every era (before
    regionKind and the two SIG_INFOs): the start of a CompileMethod request (below) and of a
    callee's METHOD_INFO (method/sig.py)."""

    ftn: int
    scope: int
    il_offset: int  # of the IL in the map's buffer
    il_size: int
    max_stack: int
    eh_count: int
    options: int


# MethodInfoHead's bytes: ftn, scope, ILCode_offset, ILCodeSize, maxStack, EHcount, options
_HEAD = struct.Struct("<QQIIIII")
METHOD_INFO_HEAD_SIZE = _HEAD.size  # 36
HeadFields = tuple[int, int, int, int, int, int, int]


def method_info_head(raw: bytes) -> HeadFields:
    """MethodInfoHead's fields, in order, from the start of `raw` (a METHOD_INFO or a
    CompileMethod)."""
    return cast(HeadFields, _HEAD.unpack_from(raw, 0))


@dataclass(frozen=True)
class CompileMethodRequest(MethodInfoHead):
    """Method-context CompileMethod (packet 143): the root compile request."""

    region_kind: int | None  # absent in the layout without regionKind
    flags: int
    os: int | None  # absent in 3.1's layout
    il: bytes
    layout: CompileMethodLayout


def compile_method_layout(m: SerializedMap) -> CompileMethodLayout:
    """The layout of a CompileMethod map, or UnknownLayout."""
    layout = COMPILE_METHOD_LAYOUTS.get(m.item_size)
    if layout is None:
        raise UnknownLayout("CompileMethod", m.item_size)
    return layout


def _one_item(m: SerializedMap, what: str) -> bytes:
    """The value of a map that holds one item (a compile's request or result)."""
    values = m.values()
    if not values:
        raise MapError(f"{what} map is empty: expected one item")
    return values[0]


def decode_compile_method(m: SerializedMap) -> CompileMethodRequest:
    v = _one_item(m, "CompileMethod")
    layout = compile_method_layout(m)
    head = method_info_head(v)
    il_off, il_size = head[2], head[3]
    region: int | None = None
    rest = METHOD_INFO_HEAD_SIZE
    if layout.region_kind:
        (region,) = struct.unpack_from("<I", v, rest)
        rest += 4
    rest += 2 * layout.sig_info_size
    (flags,) = struct.unpack_from("<I", v, rest)
    os_ = int(struct.unpack_from("<I", v, rest + 4)[0]) if layout.has_os else None
    il = m.blob(il_off) if il_size else b""
    if il is None:
        il = b""
    if len(il) < il_size:
        raise MapError(f"CompileMethod IL: expected {il_size} bytes, found {len(il)}")
    return CompileMethodRequest(*head, region, flags, os_, bytes(il[:il_size]), layout)


@dataclass(frozen=True)
class CompileMethodResults:
    """Compile-result CompileMethod (packet 118, `Agnostic_CompileMethodResults`)."""

    native_entry: int
    native_size_of_code: int
    cor_jit_result: int


def decode_cr_compile_method(m: SerializedMap) -> CompileMethodResults:
    v = _one_item(m, "CompileMethodResults")
    if len(v) != 16:  # the same in 3.1 and today
        raise UnknownLayout("CompileMethodResults", m.item_size)
    return CompileMethodResults(*struct.unpack("<QII", v))


@dataclass(frozen=True)
class AllocMemDetails:
    """Compile-result AllocMem (packet 115); `layout` is 56 (3.1 to 2025) or 52 (2025/26 main, no
    flag)."""

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
    v = _one_item(m, "AllocMem")
    if len(v) == 56:
        hot, cold, ro, xc, flag, hoff, coff, roff, hblk, cblk, rblk = struct.unpack("<8I3Q", v)
    elif len(v) == 52:
        hot, cold, ro, xc, hoff, coff, roff, hblk, cblk, rblk = struct.unpack("<7I3Q", v)
        flag = None
    else:
        raise UnknownLayout("AllocMemDetails", m.item_size)

    def code(size: int, offset: int) -> bytes:
        if size == 0 or offset == NO_BLOB:
            return b""
        data = m.blob(offset) or b""
        if len(data) < size:
            raise MapError(f"AllocMem block at {offset}: expected {size} bytes, found {len(data)}")
        return bytes(data[:size])

    return AllocMemDetails(
        len(v),
        hot,
        cold,
        ro,
        xc,
        flag,
        hoff,
        coff,
        roff,
        hblk,
        cblk,
        rblk,
        code(hot, hoff),
        code(cold, coff),
        code(ro, roff),
    )


# GetExpectedTargetArchitecture (183): IMAGE_FILE_MACHINE_* in 2023-era collections.
IMAGE_FILE_MACHINE = {
    0x014C: "x86",
    0x8664: "x64",
    0x01C4: "arm",
    0xAA64: "arm64",
    0x6264: "loongarch64",
    0x5064: "riscv64",
}


# ...and `CorInfoArch` (corinfo.h) in 2025+ collections: small values, apart from every machine
# number above.
CORINFO_ARCH = {
    0: "x86",
    1: "x64",
    2: "arm",
    3: "arm64",
    4: "loongarch64",
    5: "riscv64",
    6: "wasm32",
}


def target_arch_name(value: int) -> str:
    """Name for a recorded target architecture (either era's numbering); unknown values are shown
    raw, never guessed."""
    name = IMAGE_FILE_MACHINE.get(value) or CORINFO_ARCH.get(value)
    return name if name else f"unknown (0x{value:x})"


def decode_u32_value(m: SerializedMap) -> int:
    values = m.values()
    if not values or len(values[0]) < 4:
        raise MapError("expected one item with a 4-byte value")
    return int(struct.unpack_from("<I", values[0])[0])


def decode_string_blob(raw: bytes | None) -> str | None:
    """A name blob: 8-bit chars, usually NUL-terminated (older WCHAR blobs are detected and
    decoded)."""
    if raw is None:
        return None
    if len(raw) >= 4 and len(raw) % 2 == 0 and raw[1] == 0 and raw[3] == 0:
        return raw.decode("utf-16-le", "replace").split("\0", 1)[0]
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")
