"""Symbols for a core file whose PIE executable gdb could not relocate (qemu-user's guest cores dump
no page of the executable's text, so gdb cannot check the program headers at AT_PHDR and leaves the
displacement at 0): the driver gives the displacement (AT_ENTRY - e_entry) with `symbol-file -o`,
then `load_solibs` walks the dynamic linker's list from the executable's DT_DEBUG entry
(r_debug.r_map -> link_map {l_addr, l_name, ...}) and adds each library at its l_addr. Runs inside
gdb."""

from __future__ import annotations

import os
import struct

import gdb

DT_NULL, DT_DEBUG = 0, 21
MAX_LIBRARIES = 512


def _read(address: int, size: int) -> bytes:
    return bytes(gdb.selected_inferior().read_memory(address, size))


def _word(address: int) -> int:
    return int(struct.unpack("<Q", _read(address, 8))[0])


def _string(address: int, limit: int = 4096) -> str:
    data = _read(address, limit)
    return data.split(b"\0", 1)[0].decode(errors="replace")


def _find(name: str, sysroot: str, dirs: list[str]) -> str | None:
    for cand in (
        ([os.path.join(sysroot, name.lstrip("/"))] if sysroot else [])
        + [name]
        + [os.path.join(d, os.path.basename(name)) for d in dirs]
    ):
        if os.path.isfile(cand):
            return cand
    return None


def load_solibs(sysroot: str, dirs: list[str]) -> list[str]:
    """Add the core's shared libraries at their load addresses; the paths added."""
    dynamic = int(gdb.parse_and_eval("(long)&_DYNAMIC"))
    r_debug = 0
    for i in range(4096):
        tag, value = struct.unpack("<qQ", _read(dynamic + 16 * i, 16))
        if tag == DT_NULL:
            break
        if tag == DT_DEBUG:
            r_debug = value
            break
    if not r_debug:
        return []
    added = []
    entry = _word(r_debug + 8)  # r_map
    for _ in range(MAX_LIBRARIES):
        if not entry:
            break
        l_addr, l_name, l_next = _word(entry), _word(entry + 8), _word(entry + 24)
        name = _string(l_name) if l_name else ""
        path = _find(name, sysroot, dirs) if name else None
        if path is not None:
            gdb.execute(f"add-symbol-file -o {l_addr:#x} {path}", to_string=True)
            added.append(path)
        entry = l_next
    return added
