"""Microsoft's own Release JIT of .NET Core 3.1.23 (libclrjit.so of PyPI dotnetcore2==3.1.23,
fetched by scripts/fetch-official-jit.sh): the ELF facts the tool reads from a JIT we did not build,
checked against binutils' readelf: the build-id, the `.dynsym` functions that name frames without
symbols (`libclrjit.so+0x...`, the nearest exported function), and the symbols report (`.symtab`
only, no DWARF, a gnu_debuglink whose file is absent; a `.dbg` of another build not used)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spmi_dbg import elf
from spmi_dbg.debugfiles import find_symbols
from spmi_dbg.repro.capability import carries, has_asserts

from ..support.natives import BASE
from ..support.real import Reference


@pytest.fixture(scope="module")
def jit(reference: Reference) -> Path:
    path = reference.official_jit
    assert path.is_file(), (
        f"{path}: missing (scripts/fetch-official-jit.sh fetches it with pip; "
        "scripts/setup-debian.sh --test runs it)"
    )
    return path


def readelf(*args: str) -> str:
    return subprocess.run(
        ["readelf", "-W", *args], capture_output=True, text=True, check=True
    ).stdout


def test_build_id_and_machine_as_readelf_reads_them(jit: Path) -> None:
    m = re.search(r"Build ID: ([0-9a-f]+)", readelf("-n", str(jit)))
    assert m is not None
    assert elf.elf_build_id(str(jit)) == (m.group(1), "x86_64")
    facts = elf.read(str(jit))
    assert facts is not None and not facts.has_debug_info
    assert facts.debuglink == "libclrjit.so.dbg"
    sections = readelf("-S", str(jit))
    assert ".symtab" in sections and ".debug_info" not in sections


def test_the_exported_functions_name_frames_without_symbols(jit: Path) -> None:
    exported = {
        name.split("@")[0]: (int(value, 16), int(size))
        for value, size, kind, bind, name in re.findall(
            r"^\s*\d+: ([0-9a-f]+)\s+(\d+)\s+(\w+)\s+(\w+)\s+\w+\s+\d+\s+(\S+)$",
            readelf("--dyn-syms", str(jit)),
            re.M,
        )
        if kind == "FUNC" and bind == "GLOBAL"
    }
    facts = elf.read(str(jit))
    assert facts is not None
    assert {name: (v, s) for v, s, name in facts.dynamic_symbols} == exported
    value, size = exported["getJit"]
    assert elf.nearest_dynamic_symbol(str(jit), value + 5) == ("getJit", 5)
    assert elf.nearest_dynamic_symbol(str(jit), value + size) is None  # past its end
    start, _ = exported["jitStartup"]
    assert elf.nearest_dynamic_symbol(str(jit), start) == ("jitStartup", 0)


@pytest.mark.unit
def test_its_symbols_are_said_missing_and_a_dbg_of_another_build_is_not_used(
    jit: Path, tmp_path: Path
) -> None:
    said = find_symbols(str(jit))
    assert said["found"] is False
    assert (
        said["note"] == "stripped: no .debug_info, its gnu_debuglink libclrjit.so.dbg was not found"
    )
    other = tmp_path / "symbols"
    other.mkdir()
    shutil.copy(BASE, other / "libclrjit.so.dbg")  # an ELF with DWARF, of another build
    said = find_symbols(str(jit), (str(other),))
    assert said["found"] is False and "not used, the build-id differs" in str(said["note"])
    assert str(other / "libclrjit.so.dbg") in str(said["note"])


def test_the_official_release_jit_cannot_show_an_assert_or_a_stress_setting(
    reference: Reference,
) -> None:
    """Microsoft's Release JIT of 3.1.23 has no assert report and no DEBUG-only setting names; it
    reads JITMinOpts (a Release setting), and 3.1's superpmi passes COMPlus_ variables only
    (issue 36 item 5: the evidence a verdict of "fixed" needs)."""
    jit = reference.official_jit
    assert has_asserts(jit) is False
    assert carries(jit, ["JitStressRegs", "JitStress", "JITMinOpts"]) == {
        "JitStressRegs": False,
        "JitStress": False,
        "JITMinOpts": True,
    }
