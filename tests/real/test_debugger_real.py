"""The diagnosis in real gdb and lldb on the real superpmi (../shared/real-superpmi/README.md, "What
a debugger sees"): the Checked JIT's null-map crash on api-reljit.mch, an assert of the Checked JIT,
a stop in Microsoft's Release JIT (.symtab only, no DWARF), and superpmi split and stripped as
dotnet's build does it (docs/superpmi-conventions.md 7). One fresh debugger per test
(tests/test_debug_diagnosis.py's sessions: the extension loaded, `run`, then `spmi why` and `spmi
diagnose --json`). The JIT's state is checked against the collection's records and the real
superpmi's own output: what is not known is said, never invented."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.driver.loader import gdbinit_line
from spmi_dbg.mch.collection import Collection

from ..support.diagnosis import assert_the_debuggers_frame_numbers, require
from ..support.real import Real
from ..test_debug_diagnosis import gdb_session, lldb_session

# A real build (SPMI_DBG_REAL_SUPERPMI): the live half of the conformance suite.
pytestmark = pytest.mark.live

# of api-reljit.mch: the Checked JIT asks for a signature the Release JIT never did
NULL_MAP_N = 2000
ASSERT_N = 543  # of api.mch, with JitStressRegs=400
# superpmi's own ISSUE line for it (README): "... in
# 'StringBuilder:AppendFormatHelper(ref,ref,struct):ref:this' (IL size 844)"
ASSERT_METHOD, ASSERT_IL_SIZE = "StringBuilder:AppendFormatHelper(ref,ref,struct):ref:this", 844
PLACEHOLDERS = ("hackishMethodName", "hackishClassName", "<unknown method>")
FILL = 0xDDDDDDDD  # the Checked JIT's fill of memory it has not written yet (3722304989)


def _session(
    debugger: str, argv: list[str], commands: list[str], init: list[str] | None = None
) -> dict[str, str]:
    require(debugger)
    return (gdb_session if debugger == "gdb" else lldb_session)(argv, commands, init)


def _null_map_argv(real: Real, superpmi: Path | None = None) -> list[str]:
    return [
        str(superpmi or real.superpmi),
        "-c",
        f"{NULL_MAP_N}-5514",
        str(real.jit_checked),
        str(real.api_reljit),
    ]


def _record(col: Path, number: int) -> tuple[str | None, int | None]:
    with Collection.open(col) as c:
        rec = c.method_context(number)
    return rec.name, rec.il_size


def _same(a: str | None, b: Path) -> bool:
    return a is not None and os.path.realpath(a) == os.path.realpath(b)


def _jit_line(why: str) -> str:
    lines = [line for line in why.splitlines() if line.startswith("JIT: ")]
    assert len(lines) == 1, why
    return lines[0]


def _nothing_invented(jit: dict[str, Any], why: str) -> None:
    """No placeholder name and no unfilled value stated as the JIT's state."""
    line = _jit_line(why)
    assert not any(p in line for p in PLACEHOLDERS) and str(FILL) not in line, line
    assert jit["method"] is None or not any(p in jit["method"] for p in PLACEHOLDERS), jit
    assert jit["il_size"] is None or 0 < jit["il_size"] < 1 << 30, jit
    assert jit["phase_value"] in (None, *range(0, 256)), jit


def _assert_null_map_stop(d: dict[str, Any], why: str, superpmi: Path) -> None:
    nm = d["null_map"]
    assert nm is not None and (nm["owner_type"], nm["member"]) == (
        "MethodContext",
        "GetMethodSig",
    ), (nm, d["notes"])
    assert "null map: MethodContext::GetMethodSig of the method context" in why
    assert d["faulting_module"]["role"] == "superpmi (replay host)" and _same(
        d["faulting_module"]["path"], superpmi
    )
    assert d["signal"]["name"] == "SIGSEGV" and d["signal"]["near_null"]


@pytest.mark.parametrize("debugger", ["gdb", "lldb"])
def test_the_null_map_crash_of_the_checked_jit(real: Real, debugger: str) -> None:
    """The crash is inside Compiler::compCompile's eeGetMethodFullName, before the JIT fills `info`
    in: its name is the placeholder, its IL size and previousCompletedPhase the 0xdd fill. The tool
    says so instead of "compiling hackishMethodName (IL size 3722304989)"."""
    o = _session(debugger, _null_map_argv(real), ["spmi why", "spmi diagnose --json"])
    why, d = o["spmi why"], json.loads(o["spmi diagnose --json"])
    _assert_null_map_stop(d, why, real.superpmi)
    _, il_size = _record(real.api_reljit, NULL_MAP_N)
    jit = d["jit"]
    assert (
        jit is not None
        and _same(jit["module"], real.jit_checked)
        and jit["function"].startswith("Compiler::")
    )
    _nothing_invented(jit, why)
    tried = "\n".join(jit["tried"])
    # the method: not known yet, and why (the placeholder, the unfilled compFullName)
    assert jit["method"] is None and "method: not known yet" in tried
    assert "Compiler::info.compMethodName is 'hackishMethodName', the JIT's placeholder" in tried
    # the IL size: not the record's, so not known yet
    assert jit["il_size"] is None and il_size == 30
    assert f"is {FILL}, method context {NULL_MAP_N}'s record says {il_size}" in tried, tried
    # 3.1's JIT has previousCompletedPhase (no mostRecentlyActivePhase): read, and refused as
    # unfilled
    assert (
        jit["phase"] is None
        and f"Compiler::previousCompletedPhase is {FILL}, which names no phase" in tried
    )
    assert (
        "JIT: method not known yet, phase not known yet" in why
        and "not known: method: not known yet" in why
    )
    assert jit["opt_level"] is None  # opts are the fill too
    # the method context number: JitInstance::CompileMethod's mcIndex, not mc->index (1: the count
    # loaded so far)
    assert d["method_context"] is not None and d["method_context"]["number"] == NULL_MAP_N, d[
        "method_context"
    ]


def test_an_assert_of_the_checked_jit_names_its_phase(real: Real) -> None:
    """A codegen assert (JitStressRegs=400, api.mch 543) stopped at assertAbort: info is filled in,
    so the method and its IL size are the record's, and the phase is the last one that ended,
    `after` it (3.1's previousCompletedPhase), named from the JIT's own PhaseNames[]."""
    argv = [
        str(real.superpmi),
        "-jitoption",
        "JitStressRegs=400",
        "-c",
        str(ASSERT_N),
        str(real.jit_checked),
        str(real.api),
    ]
    o = gdb_session(
        argv,
        ["spmi why", "spmi diagnose --json", "print PhaseNames[PHASE_LINEAR_SCAN]"],
        init=[gdbinit_line(), "set breakpoint pending on", "break assertAbort"],
    )
    why, d = o["spmi why"], json.loads(o["spmi diagnose --json"])
    jit = d["jit"]
    assert jit is not None and _same(jit["module"], real.jit_checked), d["notes"]
    _nothing_invented(jit, why)
    name, il_size = _record(real.api, ASSERT_N)
    assert (jit["method"], jit["il_size"]) == (
        ASSERT_METHOD,
        ASSERT_IL_SIZE,
    ) and il_size == ASSERT_IL_SIZE
    assert name is not None and name.rsplit(":", 1)[-1] in jit["method"]
    shown = re.search(r'= 0x[0-9a-f]+ "([^"]+)"', o["print PhaseNames[PHASE_LINEAR_SCAN]"])
    assert shown is not None, o["print PhaseNames[PHASE_LINEAR_SCAN]"]
    assert (jit["phase"], jit["phase_name"], jit["phase_when"], jit["phase_source"]) == (
        "PHASE_LINEAR_SCAN",
        shown.group(1),
        "after",
        "Compiler::previousCompletedPhase",
    )
    assert (
        f"JIT: compiling {ASSERT_METHOD} (IL size {ASSERT_IL_SIZE}) after {shown.group(1)} "
        "[PHASE_LINEAR_SCAN]" in why
    )
    # a register allocator stress: full opts
    assert jit["opt_level"] == "optimized (opts.compMinOpts is false)"
    # 3.1's JIT has no number of its own; the diagnosis established 543, so nothing is missed
    assert d["method_context"]["number"] == ASSERT_N
    assert jit["method_context"] is None and not any(
        "compMethodSuperPMIIndex" in t for t in jit["tried"]
    )


def test_a_stop_in_the_official_release_jit_says_its_state_is_not_known(real: Real) -> None:
    """Microsoft's Release JIT has no DWARF: stopped inside it (Compiler::fgMorph, by its .symtab
    name), the JIT's state is not known, with the reason; nothing is made up from its frames'
    names."""
    argv = [str(real.superpmi), "-c", str(ASSERT_N), str(real.jit_official), str(real.api)]
    o = gdb_session(
        argv,
        ["spmi why", "spmi diagnose --json"],
        init=[gdbinit_line(), "set breakpoint pending on", "break Compiler::fgMorph()"],
    )
    why, d = o["spmi why"], json.loads(o["spmi diagnose --json"])
    assert d["frames"][0]["function"] == "Compiler::fgMorph" and _same(
        d["frames"][0]["module"], real.jit_official
    )
    assert d["faulting_module"]["role"] == "JIT (JIT1)"
    assert d["jit"] is None and "JIT: " not in why
    note = next((n for n in d["notes"] if n.startswith("JIT state: not known")), None)
    assert note is not None, d["notes"]
    assert (
        "libclrjit_official_release.so) have no debug information" in note
        and f"note: {note}" in why
    )


def test_the_diff_jits_crash_under_asm_diffs(real: Real, monkeypatch: pytest.MonkeyPatch) -> None:
    """`-a` with the official JIT as base and the Checked JIT as diff on api-reljit.mch: method
    context 2 dies of the same null map in the diff JIT's compile (the base JIT compiled it); the
    JIT state is the diff JIT's."""
    # libcoredistools.so, dlopened by bare name
    monkeypatch.setenv("LD_LIBRARY_PATH", str(real.bin))
    argv = [
        str(real.superpmi),
        "-a",
        "-c",
        "2",
        str(real.jit_official),
        str(real.jit_checked),
        str(real.api_reljit),
    ]
    o = gdb_session(argv, ["spmi why", "spmi diagnose --json"])
    why, d = o["spmi why"], json.loads(o["spmi diagnose --json"])
    _assert_null_map_stop(d, why, real.superpmi)
    jit = d["jit"]
    assert jit is not None and _same(jit["module"], real.jit_checked), d["notes"]
    _nothing_invented(jit, why)
    assert jit["method"] is None and jit["il_size"] is None and jit["phase"] is None


# ------------------------------------------------------------------------------------------ without
# symbols
def _objcopy() -> str:
    path = shutil.which("objcopy")
    assert path is not None, (
        "objcopy is missing (binutils: scripts/setup-debian.sh installs it with g++)"
    )
    return path


@pytest.fixture(scope="module")
def split(real: Real, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """superpmi as eng/native/functions.cmake strip_symbols leaves it: `beside` has superpmi.dbg
    next to it, `bare` has the same binary alone (the .dbg in `dbg`, for --debug-dir)."""
    root = tmp_path_factory.mktemp("split")
    beside, bare, dbg = root / "beside", root / "bare", root / "dbg"
    for d in (beside, bare, dbg):
        d.mkdir()
    exe = beside / "superpmi"
    shutil.copyfile(real.superpmi, exe)
    exe.chmod(0o755)
    objcopy = _objcopy()
    for args in (
        ["--only-keep-debug", "superpmi", "superpmi.dbg"],
        ["--strip-debug", "--strip-unneeded", "superpmi"],
        ["--add-gnu-debuglink=superpmi.dbg", "superpmi"],
    ):
        subprocess.run([objcopy, *args], check=True, cwd=beside)
    shutil.copy2(exe, bare / "superpmi")
    shutil.copy2(beside / "superpmi.dbg", dbg / "superpmi.dbg")
    return {"beside": beside / "superpmi", "bare": bare / "superpmi", "dbg": dbg}


@pytest.mark.parametrize("debugger", ["gdb", "lldb"])
def test_a_stripped_superpmi_names_the_module_and_the_fault(
    real: Real, split: dict[str, Path], debugger: str
) -> None:
    """No .dbg anywhere: the faulting module and the fault are still named, the null map cannot be,
    and what could not be read is said. The JIT has its symbols: its state is read as with a
    symbolized superpmi."""
    exe = split["bare"]
    o = _session(debugger, _null_map_argv(real, exe), ["spmi why", "spmi diagnose --json"])
    why, d = o["spmi why"], json.loads(o["spmi diagnose --json"])
    assert d["faulting_module"]["role"] == "superpmi (replay host)" and _same(
        d["faulting_module"]["path"], exe
    )
    assert (
        d["signal"]["name"] == "SIGSEGV"
        and d["signal"]["near_null"]
        and d["instruction"] is not None
    )
    assert d["folded"][0].startswith("superpmi+0x"), d["folded"]
    assert d["null_map"] is None and "null map:" not in why
    assert d["method_context"] is not None or any(
        n.startswith("method context not found") for n in d["notes"]
    )
    jit = d["jit"]
    assert jit is not None and jit["method"] is None and jit["il_size"] is None, jit
    _nothing_invented(jit, why)


def test_split_debug_info_beside_superpmi_names_the_null_map(
    real: Real, split: dict[str, Path]
) -> None:
    o = gdb_session(_null_map_argv(real, split["beside"]), ["spmi why", "spmi diagnose --json"])
    _assert_null_map_stop(json.loads(o["spmi diagnose --json"]), o["spmi why"], split["beside"])


def test_split_debug_info_through_debug_dir_names_the_null_map(
    real: Real, split: dict[str, Path]
) -> None:
    """`spmi-dbg gdb --debug-dir DIR`: the flat directory of .dbg files, found by build-id."""
    commands = ["spmi why", "spmi diagnose --json"]
    script = (
        "set pagination off\nset confirm off\nrun\n"
        + "".join(f"echo @@{i}@@\\n\n{c}\n" for i, c in enumerate(commands))
        + f"echo @@{len(commands)}@@\\n\nkill\nquit\n"
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "spmi_dbg",
            "gdb",
            "--debug-dir",
            str(split["dbg"]),
            "--",
            *_null_map_argv(real, split["bare"]),
        ],
        input=script,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=180,
    )
    parts = re.split(r"^(?:\(gdb\) )*@@(\d+)@@$", r.stdout, flags=re.M)
    out = {
        commands[int(parts[i])]: parts[i + 1].replace("(gdb) ", "").strip("\n")
        for i in range(1, len(parts) - 2, 2)
    }
    assert len(out) == len(commands), r.stdout[-3000:]
    _assert_null_map_stop(json.loads(out["spmi diagnose --json"]), out["spmi why"], split["bare"])


@pytest.mark.parametrize("debugger", ["gdb", "lldb"])
def test_frame_numbers_at_the_real_null_map_stop_are_the_debuggers_own(
    real: Real, debugger: str
) -> None:
    """Issue 38 item 3 on the real -O2 superpmi: at the null-map stop (LightWeightMap::GetIndex
    inlined; gdb hides the inline frame whose block starts at the stop pc, lldb shows it), every
    "frame N" `spmi why` says is the frame the debugger's own `bt` numbers N."""
    o = _session(debugger, _null_map_argv(real), ["bt", "spmi why", "spmi diagnose --json"])
    frames = assert_the_debuggers_frame_numbers(o, debugger)
    # the case the numbering is about: gdb hides GetIndex's inline frame at the stop pc
    assert any(f["hidden"] for f in frames) == (debugger == "gdb"), frames
