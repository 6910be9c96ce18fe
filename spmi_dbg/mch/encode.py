"""Writers for real-format records: maps, packets, records, and the agnostic structs we decode.

Used to build sample collections and test inputs. Keyed maps are sorted with memcmp over the raw key
bytes (not numerically), as LightWeightMap does, or replay lookups would miss (docs/mch-format.md
3).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from spmi_dbg.mch.layouts import COMPILE_METHOD_SIZE, SIG_INFO_SIZE
from spmi_dbg.mch.maps import NO_BLOB


class BlobBuffer:
    """A map's side buffer: `[u32 len][bytes]` chunks; offsets point at the data; identical blobs
    shared."""

    def __init__(self) -> None:
        self.data = bytearray()
        self._seen: dict[bytes, int] = {}

    def add(self, blob: bytes) -> int:
        if not blob:
            return NO_BLOB
        found = self._seen.get(blob)
        if found is not None:
            return found
        self.data += struct.pack("<I", len(blob))
        offset = len(self.data)
        self.data += blob
        self._seen[blob] = offset
        return offset

    def add_string(self, text: str) -> int:
        """8-bit name string with its NUL terminator (length includes it)."""
        return self.add(text.encode() + b"\0")

    def add_wide_string(self, text: str) -> int:
        """WCHAR string (UTF-16LE, NUL-terminated; length includes the terminator): 2021-2024 config
        names."""
        return self.add(text.encode("utf-16-le") + b"\0\0")


def lwm(
    items: Iterable[tuple[bytes, bytes]], buffer: BlobBuffer | None = None, *, tagged: bool = True
) -> bytes:
    """Serialise a LightWeightMap: [LWM1] count [bufferLength keys values buffer]."""
    unique: dict[bytes, bytes] = {}
    for k, v in items:
        unique.setdefault(k, v)  # first value wins, as in LightWeightMap::Add
    keys = sorted(unique)  # bytes compare like memcmp
    tag = b"LWM1" if tagged else b""
    if not keys:
        return tag + struct.pack("<I", 0)
    buf = bytes(buffer.data) if buffer is not None else b""
    return (
        tag
        + struct.pack("<II", len(keys), len(buf))
        + b"".join(keys)
        + b"".join(unique[k] for k in keys)
        + buf
    )


def dense(values: Iterable[bytes], buffer: BlobBuffer | None = None) -> bytes:
    vals = list(values)
    if not vals:
        return b"DWM1" + struct.pack("<I", 0)
    buf = bytes(buffer.data) if buffer is not None else b""
    return b"DWM1" + struct.pack("<II", len(vals), len(buf)) + b"".join(vals) + buf


def packet(packet_id: int, map_bytes: bytes) -> bytes:
    return struct.pack("<BI", packet_id, len(map_bytes)) + map_bytes + b"B"


def record(packets: Iterable[bytes]) -> bytes:
    payload = b"".join(packets)
    return b"mc" + struct.pack("<I", len(payload)) + payload + b"42"


def u32(v: int) -> bytes:
    return struct.pack("<I", v)


def u64(v: int) -> bytes:
    return struct.pack("<Q", v)


def sig_info(
    num_args: int = 0,
    ret_type: int = 0,
    call_conv: int = 0,
    *,
    scope: int = 0,
    token: int = 0,
    flags: int = 0,
) -> bytes:
    """Agnostic_CORINFO_SIG_INFO (84 bytes); instantiation/signature blobs absent."""
    return struct.pack(
        "<IQQIIIIIIIQIIQQI",
        call_conv,
        0,
        0,
        ret_type,
        flags,
        num_args,
        0,
        NO_BLOB,
        0,
        NO_BLOB,
        0,
        NO_BLOB,
        0,
        0,
        scope,
        token,
    )


RESOLVED_TOKEN_IN_SIZE = 24
RESOLVE_TOKEN_VALUE_SIZE = 44  # TOKENout (40) + exceptionCode
CORINFO_TOKENKIND_Method = 2


def resolve_token_key(
    token: int, scope: int, token_type: int = CORINFO_TOKENKIND_Method, context: int = 0
) -> bytes:
    """Agnostic_CORINFO_RESOLVED_TOKENin {u64 tokenContext, tokenScope; u32 token, tokenType} (24
    bytes)."""
    return struct.pack("<QQII", context, scope, token, token_type)


def resolve_token_value(
    h_class: int, h_method: int, h_field: int = 0, *, exception_code: int = 0
) -> bytes:
    """ResolveToken value: TOKENout {u64 hClass, hMethod, hField; u32 pTypeSpec_Index, cbTypeSpec,
    pMethodSpec_Index, cbMethodSpec} (no spec blobs) + u32 exceptionCode (44 bytes)."""
    return struct.pack(
        "<QQQIIIII", h_class, h_method, h_field, NO_BLOB, 0, NO_BLOB, 0, exception_code
    )


def dldl(a: int, b: int = 0) -> bytes:
    """DLDL {u64 A, B}: e.g. the GetMethodSig key {ftn, memberParent}."""
    return struct.pack("<QQ", a, b)


def dd(a: int, b: int) -> bytes:
    """DD {u32 A, B}: e.g. the GetJitFlags value {blob offset, byte count}."""
    return struct.pack("<II", a, b)


def config_int_key(name_offset: int, default_value: int) -> bytes:
    """Agnostic_ConfigIntInfo {u32 nameIndex (blob offset of the name), u32 defaultValue}
    (GetIntConfigValue)."""
    return struct.pack("<II", name_offset, default_value & 0xFFFFFFFF)


def jit_flags_blob(cor_jit_flags: int, instruction_set_flags: int = 0) -> bytes:
    """The raw 16-byte CORJIT_FLAGS object recorded by GetJitFlags (native/jit/corinfo.h)."""
    return struct.pack("<QQ", cor_jit_flags, instruction_set_flags)


def compile_method_value(
    ftn: int,
    il_offset: int,
    il_size: int,
    *,
    scope: int = 0,
    max_stack: int = 8,
    eh_count: int = 0,
    options: int = 0,
    region_kind: int = 0,
    args: bytes | None = None,
    locals_: bytes | None = None,
    flags: int = 0,
    os_: int = 0,
) -> bytes:
    """Agnostic_CompileMethod (216 bytes): METHOD_INFO (208, with regionKind) + flags + os."""
    v = (
        struct.pack(
            "<QQIIIIII", ftn, scope, il_offset, il_size, max_stack, eh_count, options, region_kind
        )
        + (args or sig_info())
        + (locals_ or sig_info())
        + struct.pack("<II", flags, os_)
    )
    assert len(v) == COMPILE_METHOD_SIZE and len(sig_info()) == SIG_INFO_SIZE
    return v


def cr_compile_method_value(native_entry: int, native_size: int, result: int = 0) -> bytes:
    return struct.pack("<QII", native_entry, native_size, result)


def alloc_mem_value(
    hot_size: int,
    hot_offset: int,
    hot_block: int,
    *,
    cold_size: int = 0,
    ro_size: int = 0,
    cold_offset: int = NO_BLOB,
    ro_offset: int = NO_BLOB,
    layout: int = 56,
    flag: int = 0,
) -> bytes:
    """Agnostic_AllocMemDetails in the 56-byte (2021-2025) or 52-byte (2025/26 main) layout."""
    if layout == 56:
        return struct.pack(
            "<8I3Q",
            hot_size,
            cold_size,
            ro_size,
            0,
            flag,
            hot_offset,
            cold_offset,
            ro_offset,
            hot_block,
            0,
            0,
        )
    return struct.pack(
        "<7I3Q",
        hot_size,
        cold_size,
        ro_size,
        0,
        hot_offset,
        cold_offset,
        ro_offset,
        hot_block,
        0,
        0,
    )


def print_result_value(string_offset: int, length: int) -> bytes:
    """Agnostic_PrintResult {requiredBufferSize, stringBuffer, stringBufferSize}."""
    return struct.pack("<III", length, string_offset, length)
