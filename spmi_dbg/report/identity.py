"""Which builds and which machine a report speaks of: each binary's path, size, mtime and ELF build-id
(NT_GNU_BUILD_ID, what `file` and `readelf -n` print), the OS, the host architecture and the debugger's
version. A binary that cannot be read is described as such, never guessed."""

from __future__ import annotations

import datetime
import functools
import os
import platform
import re
import struct
import subprocess
from typing import Any

NT_GNU_BUILD_ID = 3
ELF_MACHINES = {0x3E: "x86_64", 0xB7: "aarch64", 0x03: "x86", 0x28: "arm"}


def elf_build_id(path: str) -> tuple[str | None, str | None]:
    """(build-id hex, machine) of an ELF file, from its PT_NOTE segments; (None, None) if it is not ELF."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 52 or head[:4] != b"\x7fELF":
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
    if len(head) < 32 or head[:4] != b"\x7fELF":
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


def binary(path: str | None, role: str) -> dict[str, Any]:
    if not path:
        return {"role": role, "path": None}
    out: dict[str, Any] = {"role": role, "path": path}
    try:
        st = os.stat(path)
    except OSError as e:
        return out | {"error": e.strerror}
    build_id, machine = elf_build_id(path)
    return out | {"size": st.st_size,
                  "mtime": datetime.datetime.fromtimestamp(st.st_mtime, datetime.UTC).isoformat(timespec="seconds"),
                  "build_id": build_id, "machine": machine}


@functools.cache
def os_name() -> str:
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.platform()


@functools.cache
def debugger_version(name: str) -> str | None:
    """The first line of `gdb --version` / `lldb-16 --version` (`lldb` when there is no lldb-16), or of any
    other tool's `--version` (gdb-multiarch, qemu-aarch64)."""
    for exe in {"gdb": ("gdb",), "lldb": ("lldb-16", "lldb")}.get(name, (name,)):
        try:
            r = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        first = (r.stdout or r.stderr).splitlines()[:1]
        if first:
            return re.sub(r"\s+", " ", first[0]).strip()
    return None


def machine() -> dict[str, Any]:
    return {"os": os_name(), "kernel": platform.release(), "host_arch": platform.machine(),
            "python": platform.python_version()}
