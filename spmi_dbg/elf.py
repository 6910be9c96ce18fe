"""ELF facts read from the file through pyelftools (no debugger): the GNU build-id (NT_GNU_BUILD_ID,
what `file` and `readelf -n` print), the machine, the entry point, the gnu_debuglink (the separate
`.dbg` file official builds split their debug information into), whether the file carries DWARF
itself, and the dynamic symbols (`.dynsym`, which even a stripped library keeps: the nearest one
names a frame that has no other name). Read once per file version (path, size, mtime). The bottom
layer: anything may import it."""

from __future__ import annotations

import bisect
import functools
import os
from dataclasses import dataclass

ELF_MAGIC = b"\x7fELF"
MACHINES = {"EM_X86_64": "x86_64", "EM_AARCH64": "aarch64", "EM_386": "x86", "EM_ARM": "arm"}


@dataclass(frozen=True)
class ElfFacts:
    machine: str | None
    entry: int
    build_id: str | None
    debuglink: str | None  # the name in .gnu_debuglink
    debuglink_crc: int | None
    has_debug_info: bool  # a .debug_info section of its own
    text_address: int | None  # sh_addr of .text
    path: str  # the real path it was read from (its dynamic symbols are read from it on demand)

    @property
    def dynamic_symbols(self) -> tuple[tuple[int, int, str], ...]:
        """(value, size, name) of the defined functions of `.dynsym`, by value: read when first
        asked (thousands of them in libstdc++; a debugger session asks the other facts of every
        library it loads)."""
        st = os.stat(self.path)
        return _dynamic_symbols(self.path, st.st_size, st.st_mtime_ns)


def is_elf(path: str) -> bool:
    """Whether the file starts with the ELF magic (raises OSError when it cannot be read)."""
    with open(path, "rb") as f:
        return f.read(4) == ELF_MAGIC


def read(path: str) -> ElfFacts | None:
    """The facts of an ELF file; None when it is not ELF or cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _read(os.path.realpath(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _read(path: str, size: int, mtime: int) -> ElfFacts | None:
    # pyelftools is imported when a file is first read (20 ms of every debugger's start otherwise)
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import NoteSection

    try:
        with open(path, "rb") as f:
            if f.read(4) != ELF_MAGIC:
                return None
            f.seek(0)
            elf = ELFFile(f)
            build_id = None
            for section in elf.iter_sections():
                if isinstance(section, NoteSection):
                    for note in section.iter_notes():
                        if note["n_type"] == "NT_GNU_BUILD_ID":
                            build_id = str(note["n_desc"])
            link = elf.get_section_by_name(".gnu_debuglink")
            name, crc = None, None
            if link is not None:
                data = link.data()
                end = data.find(b"\0")
                name = data[:end].decode("utf-8", "replace") if end > 0 else None
                crc_at = (end + 4) & ~3
                crc = (
                    int.from_bytes(data[crc_at : crc_at + 4], "little")
                    if len(data) >= crc_at + 4
                    else None
                )
            text = elf.get_section_by_name(".text")
            return ElfFacts(
                MACHINES.get(str(elf["e_machine"])),
                int(elf["e_entry"]),
                build_id,
                name,
                crc,
                elf.get_section_by_name(".debug_info") is not None,
                int(text["sh_addr"]) if text is not None else None,
                path,
            )
    except (OSError, ELFError, ValueError, KeyError, AssertionError):
        return None


@functools.lru_cache(maxsize=16)
def _dynamic_symbols(path: str, size: int, mtime: int) -> tuple[tuple[int, int, str], ...]:
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    try:
        with open(path, "rb") as f:
            dynsym = ELFFile(f).get_section_by_name(".dynsym")
            if not isinstance(dynsym, SymbolTableSection):
                return ()
            return tuple(
                sorted(
                    (int(sym["st_value"]), int(sym["st_size"]), str(sym.name))
                    for sym in dynsym.iter_symbols()
                    if sym["st_info"]["type"] == "STT_FUNC"
                    and sym["st_shndx"] != "SHN_UNDEF"
                    and sym.name
                )
            )
    except (OSError, ELFError, ValueError, KeyError, AssertionError):
        return ()


def elf_build_id(path: str) -> tuple[str | None, str | None]:
    """(build-id hex, machine) of an ELF file; (None, None) if it is not ELF."""
    facts = read(path)
    return (facts.build_id, facts.machine) if facts is not None else (None, None)


def elf_entry(path: str) -> int | None:
    """e_entry of an ELF file (None if it is not ELF)."""
    facts = read(path)
    return facts.entry if facts is not None else None


def nearest_dynamic_symbol(path: str, offset: int) -> tuple[str, int] | None:
    """The `.dynsym` function at or before `offset` (an address relative to the file's load base)
    and the distance from it; None when there is none before it, or `offset` lies past its end."""
    facts = read(path)
    if facts is None or not facts.dynamic_symbols:
        return None
    values = [s[0] for s in facts.dynamic_symbols]
    i = bisect.bisect_right(values, offset) - 1
    if i < 0:
        return None
    value, size, name = facts.dynamic_symbols[i]
    if size and offset >= value + size:
        return None
    return name, offset - value
