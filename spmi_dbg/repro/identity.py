"""Which builds and which machine a report speaks of: each binary's path, size, mtime and ELF
build-id (NT_GNU_BUILD_ID, what `file` and `readelf -n` print), the OS, the host architecture and
the debugger's version. A binary that cannot be read is described as such, never guessed."""

from __future__ import annotations

import datetime
import functools
import os
import platform
import re
import subprocess
from typing import Any

from spmi_dbg.debugfiles import find_symbols
from spmi_dbg.driver.registry import DEBUGGERS
from spmi_dbg.elf import elf_build_id


def binary(
    path: str | None, role: str, debug_dirs: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """Path, size, mtime, build-id and machine; with `debug_dirs` (a program), also where its
    symbols are."""
    if not path:
        return {"role": role, "path": None}
    out: dict[str, Any] = {"role": role, "path": path}
    try:
        st = os.stat(path)
    except OSError as e:
        return out | {"error": e.strerror}
    build_id, machine = elf_build_id(path)
    out |= {
        "size": st.st_size,
        "mtime": datetime.datetime.fromtimestamp(st.st_mtime, datetime.UTC).isoformat(
            timespec="seconds"
        ),
        "build_id": build_id,
        "machine": machine,
    }
    if debug_dirs is not None:
        out["symbols"] = find_symbols(path, debug_dirs)
    return out


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
    """The first line of `gdb --version` / `lldb-16 --version` (`lldb` when there is no lldb-16), or
    of any other tool's `--version` (gdb-multiarch, qemu-aarch64)."""
    for exe in DEBUGGERS[name].executables if name in DEBUGGERS else (name,):
        try:
            r = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        first = (r.stdout or r.stderr).splitlines()[:1]
        if first:
            return re.sub(r"\s+", " ", first[0]).strip()
    return None


def machine() -> dict[str, Any]:
    return {
        "os": os_name(),
        "kernel": platform.release(),
        "host_arch": platform.machine(),
        "python": platform.python_version(),
    }
