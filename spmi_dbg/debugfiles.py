"""Separate debug files: where a binary's symbols are, and how the debuggers are told
(`--debug-dir`).

Official builds split their debug information into `<file>.dbg` beside it, named in the binary's
`.gnu_debuglink` (dotnet/runtime's eng/native/functions.cmake, `strip_symbols`), and symbol servers
publish it by ELF build-id (`.build-id/ab/cdef....debug`). A `--debug-dir` may hold either layout,
or be flat (`<name>.dbg` files, as symbol download tools write them). gdb (`debug-file-directory`)
and lldb (`target.debug-file-search-paths`) both read the build-id layout; for the flat files, a
build-id tree of links is made beside them (`debugger_dirs`), so both debuggers find them by
build-id and check it: a `.dbg` whose build-id does not match is never used. `find_symbols` says,
for the report, where a binary's symbols are."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from spmi_dbg import elf
from spmi_dbg.errors import UsageError, printable
from spmi_dbg.tempfiles import run_tag, sweep

DEBUG_SUFFIXES = (".dbg", ".debug")
SYSTEM_DEBUG_DIR = "/usr/lib/debug"
_trees: list[Path] = []


def check_debug_dirs(dirs: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The `--debug-dir` values as absolute paths; a UsageError for one that is not a directory."""
    out = []
    for d in dirs:
        p = Path(d)
        if not p.is_dir():
            raise UsageError(
                f"--debug-dir {printable(d)}: "
                + ("not a directory" if p.exists() else "does not exist")
            )
        out.append(str(p.resolve()))
    return tuple(out)


def _flat_files(dirs: tuple[str, ...]) -> list[Path]:
    files = []
    for d in dirs:
        for entry in sorted(Path(d).iterdir()):
            if entry.suffix in DEBUG_SUFFIXES and entry.is_file():
                files.append(entry)
    return files


def debugger_dirs(dirs: tuple[str, ...]) -> tuple[str, ...]:
    """The directories to give gdb and lldb: the `--debug-dir`s, a build-id tree of links to their
    flat `.dbg` files (made once per run, removed at exit), and the system's /usr/lib/debug."""
    if not dirs:
        return ()
    out = list(dirs)
    flat = _flat_files(dirs)
    if flat:
        sweep(tempfile.gettempdir(), "spmi-")
        tree = Path(tempfile.mkdtemp(prefix=f"spmi-symbols-{run_tag()}-"))
        _trees.append(tree)
        for f in flat:
            facts = elf.read(str(f))
            if facts is None or not facts.build_id or len(facts.build_id) < 3:
                continue
            link = tree / ".build-id" / facts.build_id[:2] / f"{facts.build_id[2:]}.debug"
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                link.symlink_to(f)
        out.append(str(tree))
    if os.path.isdir(SYSTEM_DEBUG_DIR) and SYSTEM_DEBUG_DIR not in out:
        out.append(SYSTEM_DEBUG_DIR)
    return tuple(out)


@atexit.register
def _remove_trees() -> None:
    for tree in _trees:
        shutil.rmtree(tree, ignore_errors=True)


def _candidates(
    binary: Path, link: str | None, build_id: str | None, dirs: tuple[str, ...]
) -> list[Path]:
    out: list[Path] = []
    if link:
        out += [binary.parent / link, binary.parent / ".debug" / link]
        for d in dirs:
            out += [Path(d) / link, Path(d) / str(binary.parent.resolve()).lstrip("/") / link]
    if build_id and len(build_id) > 2:
        for d in (*dirs, SYSTEM_DEBUG_DIR):
            out.append(Path(d) / ".build-id" / build_id[:2] / f"{build_id[2:]}.debug")
    if not link:  # a flat directory of <name>.dbg for a binary without a debuglink
        for d in dirs:
            out += [Path(d) / f"{binary.name}{s}" for s in DEBUG_SUFFIXES]
    return out


def find_symbols(path: str, dirs: tuple[str, ...] = ()) -> dict[str, object]:
    """Where the binary's symbols are: {"found": bool, "where": path or "in the binary", "how": ...,
    "note"}. A debug file whose build-id differs from the binary's is named as not used."""
    facts = elf.read(path)
    if facts is None:
        return {"found": False, "where": None, "how": None, "note": "not an ELF file"}
    if facts.has_debug_info:
        return {"found": True, "where": "in the binary", "how": ".debug_info", "note": None}
    binary = Path(path)
    mismatched: list[str] = []
    for candidate in _candidates(binary, facts.debuglink, facts.build_id, dirs):
        other = elf.read(str(candidate)) if candidate.is_file() else None
        if other is None:
            continue
        if facts.build_id and other.build_id and other.build_id != facts.build_id:
            mismatched.append(str(candidate))
            continue
        how = (
            "gnu_debuglink" if facts.debuglink and candidate.name == facts.debuglink else "build-id"
        )
        return {"found": True, "where": str(candidate), "how": how, "note": None}
    note = "stripped: no .debug_info, " + (
        f"its gnu_debuglink {facts.debuglink} was not found"
        if facts.debuglink
        else "no gnu_debuglink"
    )
    if mismatched:
        note += "; not used, the build-id differs: " + ", ".join(mismatched)
    return {"found": False, "where": None, "how": None, "note": note}
