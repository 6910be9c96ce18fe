"""One method context record seen as packets and the few decoded facts the product needs."""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from spmi_dbg.mch import packets as P
from spmi_dbg.mch.layouts import (
    AllocMemDetails,
    CompileMethodRequest,
    CompileMethodResults,
    UnknownLayout,
    decode_alloc_mem,
    decode_compile_method,
    decode_cr_compile_method,
    decode_string_blob,
    decode_u32_value,
    target_arch_name,
)
from spmi_dbg.mch.maps import MapError, SerializedMap, parse_map

T = TypeVar("T")


@dataclass(frozen=True)
class Packet:
    id: int
    offset: int  # file offset of the packet's id byte
    size: int  # bytes of the serialised map
    data: bytes

    @property
    def name(self) -> str:
        return P.packet_name(self.id)

    @property
    def is_compile_result(self) -> bool:
        return P.is_compile_result(self.id)


def split_packets(record: bytes, base_offset: int = 0) -> list[Packet]:
    """Packets of one framed record (`mc` ... `42`). Framing must have been checked by the scanner;
    a record that is not framed correctly raises ValueError."""
    if len(record) < 8 or record[:2] != b"mc":
        raise ValueError("not a method context record")
    (total,) = struct.unpack_from("<I", record, 2)
    end = 6 + total
    if end + 2 != len(record):
        raise ValueError("record length does not match its header")
    out: list[Packet] = []
    p = 6
    while p < end:
        if end - p < 6:
            raise ValueError(f"truncated packet header at +{p}")
        pid = record[p]
        (size,) = struct.unpack_from("<I", record, p + 1)
        if p + 5 + size + 1 > end or record[p + 5 + size] != 0x42:
            raise ValueError(f"bad packet {pid} at +{p}")
        out.append(Packet(pid, base_offset + p, size, bytes(record[p + 5 : p + 5 + size])))
        p += 6 + size
    return out


@dataclass
class MethodContextInfo:
    number: int
    offset: int
    size: int
    packets: list[Packet]
    request: CompileMethodRequest | None = None
    name: str | None = None
    name_note: str | None = None  # e.g. that part of the name is superpmi's placeholder
    target_arch: int | None = None
    compile_result: CompileMethodResults | None = None
    alloc_mem: AllocMemDetails | None = None
    problems: list[str] = field(default_factory=list)  # decode problems: reported, never raised
    # packets of a layout this tool does not know (no problem)
    undecoded: list[str] = field(default_factory=list)

    @property
    def il_size(self) -> int | None:
        return self.request.il_size if self.request else None

    @property
    def target_arch_name(self) -> str | None:
        return None if self.target_arch is None else target_arch_name(self.target_arch)

    def packet(self, packet_id: int) -> Packet | None:
        return next((p for p in self.packets if p.id == packet_id), None)


def decode_method_context(number: int, offset: int, record: bytes) -> MethodContextInfo:
    info = MethodContextInfo(number, offset, len(record), split_packets(record, offset))
    maps: dict[int, SerializedMap] = {}
    for pkt in info.packets:
        if pkt.id in maps:
            continue
        try:
            maps[pkt.id] = parse_map(pkt.id, pkt.data)
        except MapError as e:
            info.problems.append(f"packet {pkt.id} ({pkt.name}): {e}")

    def attempt(pid: int, fn: Callable[[SerializedMap], T]) -> T | None:
        m = maps.get(pid)
        if m is None:
            return None
        try:
            return fn(m)
        except UnknownLayout as e:
            info.undecoded.append(f"packet {pid} ({P.packet_name(pid)}): {e}")
            return None
        except (MapError, struct.error) as e:
            info.problems.append(f"packet {pid} ({P.packet_name(pid)}): {e}")
            return None

    info.request = attempt(P.CompileMethod, decode_compile_method)
    info.target_arch = attempt(P.GetExpectedTargetArchitecture, decode_u32_value)
    info.compile_result = attempt(P.CR_CompileMethod, decode_cr_compile_method)
    info.alloc_mem = attempt(P.CR_AllocMem, decode_alloc_mem)
    if info.request is not None:
        try:
            info.name, info.name_note = method_full_name(maps, info.request.ftn)
        except (MapError, struct.error) as e:
            info.problems.append(f"method name: {e}")
    return info


def _print_result(m: SerializedMap, key: bytes) -> str | None:
    """Agnostic_PrintResult {u32 requiredBufferSize, stringBuffer, stringBufferSize} -> the
    string."""
    v = m.get(key)
    if v is None or len(v) < 12:
        return None
    _, off, _ = struct.unpack_from("<III", v)
    return decode_string_blob(m.blob(off))


def _blob_text(m: SerializedMap, offset: int) -> str:
    """A name blob as mcs prints it with printf("%s"): a recorded null (0xFFFFFFFF) reads
    "(null)"."""
    text = decode_string_blob(m.blob(offset))
    return "(null)" if text is None else text


HACKISH_METHOD = "hackishMethodName"  # 3.1's repGetMethodName without a recorded name
HACKISH_CLASS = "hackishClassName"  # 3.1's repGetClassName without a recorded name


def _dump_map_name(maps: dict[int, SerializedMap], key: bytes) -> tuple[str, str | None] | None:
    """3.1 `mcs -dumpMap`'s "method name" (verbdumpmap.cpp `DumpMap`): `className:methodName` with
    methodName = repGetMethodName(ftn, &moduleName) (the GetMethodName item keyed {ftn, 1}, else
    "hackishMethodName") and className = repGetClassName(repGetMethodClass(ftn)) (else
    "hackishClassName"). None when the record has neither name (mcs would print
    "hackishClassName:hackishMethodName"), or no GetMethodClass answer for the method (mcs would
    stop on it). The second item says which part is a placeholder."""
    hcls = maps[P.GetMethodClass].get(key) if P.GetMethodClass in maps else None
    if hcls is None or len(hcls) < 8:
        return None
    method: str | None = None
    names = maps.get(P.GetMethodName)
    if names is not None and names.key_size == 12 and names.item_size == 12 + 8:  # DLD -> DD
        entry = names.get(key + struct.pack("<I", 1))
        if entry is not None:
            method = _blob_text(names, struct.unpack_from("<I", entry)[0])
    cls: str | None = None
    classes = maps.get(P.GetClassName)
    if classes is not None and classes.key_size == 8 and classes.item_size == 8 + 4:
        cv = classes.get(hcls[:8])
        if cv is not None:
            cls = _blob_text(classes, struct.unpack_from("<I", cv)[0])
    if method is None and cls is None:
        return None
    missing = [what for what, got in (("method", method), ("class", cls)) if got is None]
    note = (
        f"{' and '.join(missing)} name not recorded: superpmi's placeholder, as mcs -dumpMap "
        "prints it"
        if missing
        else None
    )
    return f"{cls or HACKISH_CLASS}:{method or HACKISH_METHOD}", note


def method_full_name(maps: dict[int, SerializedMap], ftn: int) -> tuple[str | None, str | None]:
    """(`Class:Method`, note) from whichever name packets the collection recorded: PrintMethodName
    (2023+); else the name 3.1's `mcs -dumpMap` prints (GetMethodName keyed {ftn, 1}, GetMethodClass
    + GetClassName; the note says when part of it is superpmi's placeholder); else
    GetMethodNameFromMetadata; else any GetMethodName item of the method; else (None, None)."""
    key = struct.pack("<Q", ftn)
    method: str | None = None
    cls: str | None = None
    if P.PrintMethodName in maps:
        method = _print_result(maps[P.PrintMethodName], key)
    if method is None:
        dumped = _dump_map_name(maps, key)
        if dumped is not None:
            return dumped
    if method is None and P.GetMethodNameFromMetadata in maps:
        m = maps[P.GetMethodNameFromMetadata]
        for k, v in zip(m.keys(), m.values(), strict=True):
            if k[:8] == key and len(v) >= 16:
                mo, co, no, _ = struct.unpack_from("<IIII", v)
                method = decode_string_blob(m.blob(mo))
                cls = decode_string_blob(m.blob(co))
                ns = decode_string_blob(m.blob(no))
                if cls and ns:
                    cls = f"{ns}.{cls}"
                break
    if method is None and P.GetMethodName in maps:
        m = maps[P.GetMethodName]
        for k, v in zip(m.keys(), m.values(), strict=True):
            if k[:8] == key and len(v) >= 8:
                mo, co = struct.unpack_from("<II", v)
                method = decode_string_blob(m.blob(mo))
                cls = decode_string_blob(m.blob(co))
                break
    if method is None:
        return None, None
    if cls is None and P.GetMethodClass in maps:
        hcls = maps[P.GetMethodClass].get(key)
        if hcls is not None:
            if P.PrintClassName in maps and maps[P.PrintClassName].item_size == 8 + 12:
                cls = _print_result(maps[P.PrintClassName], hcls[:8])
            if cls is None and P.GetClassName in maps:
                cv = maps[P.GetClassName].get(hcls[:8])
                if cv is not None:
                    cls = decode_string_blob(
                        maps[P.GetClassName].blob(struct.unpack_from("<I", cv)[0])
                    )
    return (f"{cls}:{method}" if cls else method), None
