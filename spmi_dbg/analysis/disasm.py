"""The code of a live CompileResult (its AllocMem map's hot code, as recAllocMemCapture stored it),
read through debug info and disassembled with capstone; on Arm64 the literal pool after
nativeSizeOfCode is shown as data (docs/mch-format.md 5.4 and 9)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from spmi_dbg.analysis.values import member_int
from spmi_dbg.analysis.view import Process, Value


@dataclass(frozen=True)
class CodeListing:
    hot_code_size: int
    native_size: int | None
    arch: str
    lines: list[str]


class DisasmError(Exception):
    pass


def _first_item(map_ptr: Value, name: str) -> Value:
    if map_ptr.as_int() in (None, 0):
        raise DisasmError(f"the {name} map is null (never recorded)")
    items = map_ptr.field("pItems")
    if items is None or items.as_int() in (None, 0) or member_int(map_ptr, "numItems") in (None, 0):
        raise DisasmError(f"the {name} map has no items")
    return items


def code_of(process: Process, cr: Value, arch: str) -> CodeListing:
    am = cr.field("AllocMem")
    if am is None:
        raise DisasmError(f"{cr.type_name} has no AllocMem member")
    item = _first_item(am, "AllocMem")
    hot = member_int(item, "hotCodeSize")
    off = member_int(item, "hotCodeBlock_offset")
    buf = member_int(am, "buffer")
    if hot is None or off is None or buf is None:
        raise DisasmError("AllocMem's hotCodeSize/hotCodeBlock_offset/buffer are not readable")
    if hot == 0:
        return CodeListing(0, None, arch, ["(hotCodeSize is 0: no code was produced)"])
    code = process.read_memory(buf + off, hot)
    if code is None:
        raise DisasmError(f"cannot read {hot} bytes of code at 0x{buf + off:x}")
    native: int | None = None
    cm = cr.field("CompileMethod")
    if cm is not None and cm.as_int():
        try:
            native = member_int(_first_item(cm, "CompileMethod"), "nativeSizeOfCode")
        except DisasmError:
            native = None
    split = native if (arch == "aarch64" and native is not None and native <= hot) else hot
    return CodeListing(
        hot, native, arch, disassemble(code[:split], arch) + _pool(code[split:], split)
    )


def disassemble(code: bytes, arch: str) -> list[str]:
    import capstone  # here: 20 ms of every debugger's start otherwise, for a command few run

    if arch == "aarch64":
        md = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
    else:
        md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    out = []
    end = 0
    for insn in md.disasm(code, 0):
        out.append(
            f"  {insn.address:06x}  {bytes(insn.bytes).hex():<20} {insn.mnemonic} "
            f"{insn.op_str}".rstrip()
        )
        end = insn.address + insn.size
    if end < len(code):
        out.append(f"  {end:06x}  ({len(code) - end} bytes not decodable)")
    return out


def _pool(data: bytes, base: int) -> list[str]:
    if not data:
        return []
    out = [f"  ; literal pool / read-only data: {len(data)} bytes"]
    pad = (-base) % 8  # the pool itself is 8-byte aligned; bytes before it are padding
    if pad:
        out.append(f"  {base:06x}  .byte {data[:pad].hex()}  ; padding")
    i = pad
    while i + 8 <= len(data):
        out.append(f"  {base + i:06x}  .quad 0x{struct.unpack_from('<Q', data, i)[0]:016x}")
        i += 8
    if i < len(data):
        out.append(f"  {base + i:06x}  .byte {data[i:].hex()}")
    return out
