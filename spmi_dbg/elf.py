"""ELF facts read straight from the file (no debugger, no pyelftools): the GNU build-id (NT_GNU_BUILD_ID, what
`file` and `readelf -n` print), the machine, the entry point, and whether a file is ELF at all. The bottom
layer: anything may import it."""

from __future__ import annotations

import struct

ELF_MAGIC = b"\x7fELF"
NT_GNU_BUILD_ID = 3
ELF_MACHINES = {0x3E: "x86_64", 0xB7: "aarch64", 0x03: "x86", 0x28: "arm"}


def elf_build_id(path: str) -> tuple[str | None, str | None]:
    """(build-id hex, machine) of an ELF file, from its PT_NOTE segments; (None, None) if it is not ELF."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 52 or head[:4] != ELF_MAGIC:
                return None, None
            is64, end = head[4] == 2, "<" if head[5] == 1 else ">"
            machine = ELF_MACHINES.get(struct.unpack_from(end + "H", head, 18)[0])
            if is64:
                phoff, = struct.unpack_from(end + "Q", head, 32)
                phentsize, phnum = struct.unpack_from(end + "HH", head, 54)
            else:
                phoff, = struct.unpack_from(end + "I", head, 28)
                phentsize, phnum = struct.unpack_from(end + "HH", head, 42)
            for i in range(min(phnum, 256)):
                f.seek(phoff + i * phentsize)
                ph = f.read(phentsize)
                if len(ph) < phentsize or struct.unpack_from(end + "I", ph, 0)[0] != 4:  # PT_NOTE
                    continue
                if is64:
                    offset, size = struct.unpack_from(end + "Q", ph, 8)[0], struct.unpack_from(end + "Q", ph, 32)[0]
                else:
                    offset, size = struct.unpack_from(end + "I", ph, 4)[0], struct.unpack_from(end + "I", ph, 16)[0]
                f.seek(offset)
                found = _build_id_in(f.read(min(size, 1 << 16)), end)
                if found:
                    return found, machine
            return None, machine
    except OSError:
        return None, None


def elf_entry(path: str) -> int | None:
    """e_entry of an ELF file (None if it is not ELF)."""
    try:
        with open(path, "rb") as f:
            head = f.read(32)
    except OSError:
        return None
    if len(head) < 32 or head[:4] != ELF_MAGIC:
        return None
    end = "<" if head[5] == 1 else ">"
    return int(struct.unpack_from(end + ("Q" if head[4] == 2 else "I"), head, 24)[0])


def _build_id_in(notes: bytes, end: str) -> str | None:
    pos = 0
    while pos + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from(end + "III", notes, pos)
        name_at = pos + 12
        desc_at = name_at + ((namesz + 3) & ~3)
        if kind == NT_GNU_BUILD_ID and notes[name_at:name_at + namesz].rstrip(b"\0") == b"GNU":
            return notes[desc_at:desc_at + descsz].hex()
        pos = desc_at + ((descsz + 3) & ~3)
    return None


def is_elf(path: str) -> bool:
    """Whether the file starts with the ELF magic (raises OSError when it cannot be read)."""
    with open(path, "rb") as f:
        return f.read(4) == ELF_MAGIC
