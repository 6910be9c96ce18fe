"""What the JIT was doing at a stop inside it (spmi_dbg.analysis.jitstate): read from the JIT's
`Compiler` by the real JIT's member names, in gdb and lldb, on the sample JIT and on
libsamplejit_alt.so (the same JIT shaped differently: other members around these, other phase
numbers, no PhaseNames table), at a first-chance fault, a debug break of an assert and a hang; shown
by `spmi why`, `spmi jit`, diagnose --json, report.md and triage. A field the JIT does not have is
absent and said, never guessed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.analysis import diagnose
from spmi_dbg.analysis.facts import Diagnosis, JitFact, MethodContextFact
from spmi_dbg.analysis.jitstate import jit_state
from spmi_dbg.commands.why import jit_line, render_text
from spmi_dbg.driver.loader import gdbinit_line
from spmi_dbg.mch.collection import Collection
from spmi_dbg.method.decode import decode
from spmi_dbg.method.recorded import Answers
from spmi_dbg.sample.build import SampleSpec, build

from .harness.stops import StopsResult, run_gdb, run_lldb
from .support.common import DEBUGGERS, Collections, aarch64_native, native
from .support.diagnosis import gdb_batch, gdb_path, require
from .support.natives import BASE, REPLAY
from .support.pipeline import make_core, report, repro, repro_args
from .support.recorded_view import RFrame, RProcess, RValue

ALT = native("jit/libsamplejit_alt.so")
JIT_NULL_N, ASSERT_N, HANG_N = 20, 40, 30


# ------------------------------------------------------------------------------------------
# recorded views
PHASES = {0: "PHASE_PRE_IMPORT", 1: "PHASE_IMPORTATION", 2: "PHASE_MORPH_GLOBAL"}


def _cstr(memory: dict[int, bytes], address: int, text: str) -> RValue:
    memory[address] = text.encode() + b"\0"
    return RValue("const char *", address)


def _compiler(
    memory: dict[int, bytes],
    *,
    phase: int = 2,
    full_name: str | None = "Ns.C:M",
    with_members: bool = True,
) -> RValue:
    info = {"compILCodeSize": RValue("unsigned int", 77)}
    if full_name is not None:
        info["compFullName"] = _cstr(memory, 0x9000, full_name)
    info["compMethodName"] = _cstr(memory, 0x9100, "M")
    members = {
        "info": RValue("Compiler::Info", None, info),
        "compMethodSuperPMIIndex": RValue("int", 123),
        "opts": RValue("Compiler::Options", None, {"compMinOpts": RValue("bool", 1)}),
    }
    if with_members:
        members["mostRecentlyActivePhase"] = RValue("Phases", phase, enumerators=PHASES)
    return RValue("Compiler *", 0x5000, members)


def _process(frames: list[RFrame], memory: dict[int, bytes]) -> RProcess:
    return RProcess(
        frames, None, memory=memory, command=["/opt/spmi/superpmi", "/j/libclrjit.so", "/x/c.mch"]
    )


def _phase_table(memory: dict[int, bytes]) -> RValue:
    return RValue(
        "const char *[3]",
        None,
        elements=[
            _cstr(memory, 0xA000 + 0x100 * i, name)
            for i, name in enumerate(("Pre-import", "Importation", "Morph - Global"))
        ],
    )


def _morphing(memory: dict[int, bytes]) -> RFrame:
    """The JIT's frame in Compiler::fgMorphTree: its Compiler and the phase names in `memory`."""
    return RFrame(
        "Compiler::fgMorphTree(GenTree*)",
        module="/j/libclrjit.so",
        variables={"this": _compiler(memory)},
        globals={"PhaseNames": _phase_table(memory)},
    )


@pytest.mark.unit
def test_a_compiler_member_function_tells_everything() -> None:
    memory: dict[int, bytes] = {}
    frames = [
        _morphing(memory),
        RFrame("JitInstance::CompileMethod(MethodContext*, int, bool)"),
    ]
    jit, notes = jit_state(_process(frames, memory), frames)
    assert notes == [] and jit is not None
    assert (jit.method, jit.method_source) == ("Ns.C:M", "Compiler::info.compFullName")
    assert (jit.phase, jit.phase_value, jit.phase_name) == (
        "PHASE_MORPH_GLOBAL",
        2,
        "Morph - Global",
    )
    assert (jit.method_context, jit.il_size, jit.opt_level) == (123, 77, "MinOpts")
    assert jit.source == "this of Compiler::fgMorphTree (frame 0)" and jit.tried == []
    assert (
        jit_line(jit)
        == "compiling Ns.C:M (IL size 77) during Morph - Global [PHASE_MORPH_GLOBAL], method "
        "context 123, MinOpts"
    )
    assert JitFact.from_json(json.loads(json.dumps(jit.__dict__))) == jit


@pytest.mark.unit
def test_a_jit_object_with_a_compiler_member_and_a_jit_without_names() -> None:
    """A CodeGen frame reaches the Compiler through this->compiler; without compFullName,
    compMethodName; without a PhaseNames table, the enumerator alone, and `tried` says what was
    missing."""
    memory: dict[int, bytes] = {}
    comp = _compiler(memory, phase=1, full_name=None)
    codegen = RValue("CodeGen *", 0x6000, {"compiler": comp})
    frames = [
        RFrame(
            "emitter::emitIns(instruction)", variables={"this": RValue("emitter *", 0x7000, {})}
        ),
        RFrame("CodeGen::genCodeForTreeNode(GenTree*)", variables={"this": codegen}),
    ]
    jit, _ = jit_state(_process(frames, memory), frames)
    assert (
        jit is not None
        and jit.frame == 1
        and jit.source == "this->compiler (Compiler*) of CodeGen::genCodeForTreeNode (frame 1)"
    )
    assert (jit.method, jit.method_source) == ("M", "Compiler::info.compMethodName")
    assert (jit.phase, jit.phase_name) == ("PHASE_IMPORTATION", None)
    assert jit.tried == [
        "phase display name: no PhaseNames table in the JIT's symbols",
        "IL offset: the JIT has neither Compiler::impCurStmtOffs nor impCurStmtDI in its debug "
        "information",
    ]
    assert jit.phase_shown == "PHASE_IMPORTATION" and jit.il_offset is None


def _importing(memory: dict[int, bytes], phase: int, **offset: RValue) -> JitFact:
    """The JIT state of a stop in Compiler::impImportBlockCode, the Compiler's statement offset
    members given."""
    comp = _compiler(memory, phase=phase)
    comp.members.update(offset)
    frames = [RFrame("Compiler::impImportBlockCode(BasicBlock*)", variables={"this": comp})]
    jit, _ = jit_state(_process(frames, memory), frames)
    assert jit is not None
    return jit


@pytest.mark.unit
def test_the_importers_il_offset_in_each_era() -> None:
    """3.1's IL_OFFSETX (its stack bit masked off) and today's DebugInfo location, each while
    importing the method whose IL size was checked."""
    old = _importing({}, 1, impCurStmtOffs=RValue("IL_OFFSETX", 0x80000011))
    assert (old.il_offset, old.il_offset_source) == (0x11, "Compiler::impCurStmtOffs")
    location = RValue("ILLocation", None, {"m_offset": RValue("IL_OFFSET", 0x42)})
    di = RValue("DebugInfo", None, {"m_location": location})
    today = _importing({}, 1, impCurStmtDI=di)
    assert today.il_offset == 0x42
    assert today.il_offset_source == "Compiler::impCurStmtDI.m_location.m_offset"


@pytest.mark.unit
def test_an_importer_frame_is_importing_whatever_the_phase_says() -> None:
    """A JIT that keeps no phase member: a stop in Compiler::imp* is the importer's place all the
    same."""
    memory: dict[int, bytes] = {}
    comp = _compiler(memory, with_members=False)
    comp.members["impCurStmtOffs"] = RValue("IL_OFFSETX", 0x40000007)  # a call instruction's
    frames = [RFrame("Compiler::impImportCall(OPCODE, ...)", variables={"this": comp})]
    jit, _ = jit_state(_process(frames, memory), frames)
    assert jit is not None and jit.phase is None and jit.il_offset == 7


@pytest.mark.unit
def test_an_il_offset_that_is_none_or_past_the_il_is_not_believed() -> None:
    none_yet = _importing({}, 1, impCurStmtOffs=RValue("IL_OFFSETX", 0x80000000))
    assert none_yet.il_offset is None
    assert (
        none_yet.tried[-1]
        == "IL offset: Compiler::impCurStmtOffs is 0x80000000: no statement imported yet"
    )
    past = _importing({}, 1, impCurStmtOffs=RValue("IL_OFFSETX", 77))
    assert past.il_offset is None and "outside the method's 77 bytes of IL" in past.tried[-1]


@pytest.mark.unit
def test_past_importation_the_statement_offset_is_not_the_jits_place() -> None:
    """Morphing (phase 2), a frame outside the importer: the member holds the last statement
    imported, so it is neither shown nor said."""
    comp = _compiler({}, phase=2)
    comp.members["impCurStmtOffs"] = RValue("IL_OFFSETX", 0x11)
    frames = [RFrame("Compiler::fgMorphTree(GenTree*)", variables={"this": comp})]
    jit, _ = jit_state(_process(frames, {}), frames)
    assert jit is not None and jit.il_offset is None
    assert not any(t.startswith("IL offset") for t in jit.tried)


@pytest.mark.unit
def test_a_release_jit_says_what_it_could_not_read() -> None:
    memory: dict[int, bytes] = {}
    bare = RValue("Compiler *", 0x5000, {})
    frames = [RFrame("Compiler::impImport()", variables={"this": bare})]
    jit, _ = jit_state(_process(frames, memory), frames)
    assert jit is not None and jit.method is None and jit.phase is None and jit.il_size is None
    assert jit.opt_level is None and jit.method_context is None
    assert jit.tried == [
        "IL size: Compiler::info.compILCodeSize not readable",
        "method: not known yet: Compiler::info.compFullName not readable; "
        "Compiler::info.compMethodName not readable",
        "phase: the JIT has neither Compiler::mostRecentlyActivePhase nor previousCompletedPhase "
        "in its debug "
        "information",
        "method context: the JIT has no info.compMethodSuperPMIIndex or compMethodSuperPMIIndex in "
        "its debug "
        "information",
        "optimization level: not known yet (opts are set after info.compILCodeSize, by "
        "compInitOptions)",
    ]
    assert jit_line(jit) == "method not known yet, phase not known yet"
    frames = [RFrame("??", module="/j/libclrjit.so")]
    none, notes = jit_state(_process(frames, memory), frames)
    assert none is None and notes[0].startswith("JIT state: not known: no Compiler in the stack")
    assert notes[0].endswith(
        "the JIT's frames (0 in libclrjit.so) have no debug information: its method, phase and IL "
        "size cannot be read"
    )


# 3.1's JIT (../shared/real-superpmi/README.md "What a debugger sees"): previousCompletedPhase, no
# compMethodSuperPMIIndex; early in compCompile info is the Checked JIT's 0xdd fill and the
# placeholder name.
PHASES_31 = {0: "PHASE_PRE_IMPORT", 1: "PHASE_IMPORTATION", 2: "PHASE_POST_IMPORT"}
FILL = 0xDDDDDDDD


def _compiler_31(
    memory: dict[int, bytes],
    *,
    il_size: int,
    phase: int,
    name: str | None,
    method_name: str,
    opts: int = 0,
) -> RValue:
    info = {
        "compILCodeSize": RValue("unsigned int", il_size),
        "compMethodName": _cstr(memory, 0x9100, method_name),
        # an unfilled pointer reads 0xdddd...: not readable memory
        "compFullName": _cstr(memory, 0x9000, name)
        if name is not None
        else RValue("const char *", FILL << 32 | FILL),
    }
    return RValue(
        "Compiler *",
        0x5000,
        {
            "info": RValue("Compiler::Info", None, info),
            "previousCompletedPhase": RValue("Phases", phase, enumerators=PHASES_31),
            "opts": RValue(
                "Compiler::Options",
                None,
                {"compMinOpts": RValue("bool", opts), "compDbgCode": RValue("bool", opts)},
            ),
        },
    )


def _frames_31(memory: dict[int, bytes], comp: RValue) -> list[RFrame]:
    table = RValue(
        "const char *[3]",
        None,
        elements=[
            _cstr(memory, 0xA000 + 0x100 * i, n)
            for i, n in enumerate(("Pre-import", "Importation", "Post-import"))
        ],
    )
    return [
        RFrame(
            "Compiler::fgMorph()",
            module="/j/libclrjit.so",
            variables={"this": comp},
            globals={"PhaseNames": table},
        )
    ]


def _record(
    number: int = 2000, il_size: int | None = 30, name: str | None = "StringBuilder:Append"
) -> MethodContextFact:
    return MethodContextFact(
        number, "mcIndex argument of JitInstance::CompileMethod (frame 12)", name, il_size
    )


@pytest.mark.unit
def test_info_not_filled_in_yet_is_not_known() -> None:
    """The null-map crash of the Checked JIT on api-reljit.mch: compMethodName is the placeholder,
    the IL size and previousCompletedPhase are the 0xdd fill, opts too: none is shown, each is
    said."""
    memory: dict[int, bytes] = {}
    comp = _compiler_31(
        memory, il_size=FILL, phase=FILL, name=None, method_name="hackishMethodName", opts=0xDD
    )
    frames = _frames_31(memory, comp)
    jit, _ = jit_state(_process(frames, memory), frames, _record())
    assert jit is not None
    assert (jit.method, jit.il_size, jit.phase, jit.phase_value, jit.opt_level) == (
        None,
        None,
        None,
        None,
        None,
    )
    assert jit_line(jit) == "method not known yet, phase not known yet"
    tried = "\n".join(jit.tried)
    assert "compMethodName is 'hackishMethodName', the JIT's placeholder" in tried
    assert (
        "Compiler::info.compILCodeSize is 3722304989, method context 2000's record says 30" in tried
    )
    assert "previousCompletedPhase is 3722304989, which names no phase" in tried
    # without the record: plausibility (the JIT keeps IL offsets in 30 bits)
    jit, _ = jit_state(_process(frames, memory), frames)
    assert jit is not None and jit.il_size is None
    assert any(
        "not an IL size the JIT can compile" in t and "the method context number is not known" in t
        for t in jit.tried
    )


@pytest.mark.unit
def test_after_the_last_completed_phase() -> None:
    """3.1: the phase is the last one that ended, `after Post-import`, read once info is the
    record's."""
    memory: dict[int, bytes] = {}
    full = "StringBuilder:Append(ref):ref:this"
    comp = _compiler_31(memory, il_size=30, phase=2, name=full, method_name="Append")
    frames = _frames_31(memory, comp)
    jit, _ = jit_state(_process(frames, memory), frames, _record())
    assert jit is not None
    assert (jit.method, jit.method_source, jit.il_size) == (full, "Compiler::info.compFullName", 30)
    assert (jit.phase, jit.phase_name, jit.phase_when, jit.phase_source) == (
        "PHASE_POST_IMPORT",
        "Post-import",
        "after",
        "Compiler::previousCompletedPhase",
    )
    assert jit.info_check == "info.compILCodeSize is method context 2000's IL size"
    assert (
        jit_line(jit) == f"compiling {full} (IL size 30) after Post-import [PHASE_POST_IMPORT], "
        "optimized (opts.compMinOpts is false)"
    )
    # the JIT has no number of its own, but the method context is established: nothing is missed
    assert jit.tried == []
    assert JitFact.from_json(json.loads(json.dumps(jit.__dict__))) == jit
    # a previousCompletedPhase while info is not the record's is left over from before: not shown
    jit, _ = jit_state(_process(frames, memory), frames, _record(il_size=31))
    assert jit is not None and jit.phase is None and jit.il_size is None and jit.opt_level is None
    assert any("written at a phase's end only" in t for t in jit.tried)
    # another method's name (a Compiler left from an earlier compile): not shown
    jit, _ = jit_state(_process(frames, memory), frames, _record(name="Dictionary`2:TryInsert"))
    assert jit is not None and jit.method is None
    assert any("not method context 2000's 'Dictionary`2:TryInsert'" in t for t in jit.tried)


@pytest.mark.unit
def test_todays_index_is_a_member_of_info() -> None:
    """Today's JIT keeps compMethodSuperPMIIndex in info (compiler.h); -1 when not under
    SuperPMI."""
    memory: dict[int, bytes] = {}
    comp = _compiler(memory)
    del comp.members["compMethodSuperPMIIndex"]
    comp.members["info"].members["compMethodSuperPMIIndex"] = RValue("int", 2000)
    frames = [RFrame("Compiler::fgMorphTree(GenTree*)", variables={"this": comp})]
    jit, _ = jit_state(_process(frames, memory), frames)
    assert jit is not None and jit.method_context == 2000 and jit.phase_when == "during"
    comp.members["info"].members["compMethodSuperPMIIndex"] = RValue("int", -1)
    jit, _ = jit_state(_process(frames, memory), frames)
    assert jit is not None and jit.method_context is None
    assert not any(t.startswith("method context") for t in jit.tried)


@pytest.mark.unit
def test_the_diagnosis_carries_the_jit_object() -> None:
    memory: dict[int, bytes] = {}
    frames = [_morphing(memory)]
    p = _process(frames, memory)
    d = diagnose(p)
    assert d.jit is not None and d.jit.phase == "PHASE_MORPH_GLOBAL"
    again = Diagnosis.from_json(json.loads(json.dumps(d.to_json())))
    assert again.jit == d.jit
    assert "JIT: compiling Ns.C:M (IL size 77) during Morph - Global" in render_text(d)


# ------------------------------------------------------------------------------------------ real
# debuggers
@pytest.fixture(scope="module")
def jit_collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("jit-state") / "jit.mch"
    build(
        path,
        SampleSpec(
            methods=60, seed=4, injections=[("jit-null", JIT_NULL_N), ("jit-assert", ASSERT_N)]
        ),
    )
    return path


@pytest.fixture(scope="module")
def hang_collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("jit-hang") / "hang.mch"
    build(path, SampleSpec(methods=60, seed=5, injections=[("hang", HANG_N)]))
    return path


def _run(debugger: str, argv: list[str], **kw: Any) -> StopsResult:
    require(debugger)
    return (run_gdb if debugger == "gdb" else run_lldb)(argv, **kw)


def _opcode_at(col: Path, number: int, offset: int | None) -> str | None:
    """The opcode at IL offset `offset` of the record's method."""
    with Collection.open(col) as c:
        root = Answers.of_packets(c.packets(number)).root
    assert root is not None and offset is not None
    return next((i.name for i in decode(root[1]) if i.offset == offset), None)


def _name(col: Path, number: int) -> str:
    with Collection.open(col) as c:
        name = c.method_context(number).name
    assert name
    return name


@pytest.mark.parametrize("debugger", DEBUGGERS)
@pytest.mark.parametrize("jit", ["sample", "alt"])
def test_first_chance_fault_in_the_jit(jit_collection: Path, debugger: str, jit: str) -> None:
    """The first stop (a SIGSEGV the replay survives) inside the JIT, on both JIT shapes: the same
    facts; the phase's number differs (the alt JIT numbers its phases after three others) and only
    the sample JIT has a PhaseNames table."""
    r = _run(
        debugger, [REPLAY, BASE if jit == "sample" else ALT, str(jit_collection)], stop_first=True
    )
    d = r.diagnosis
    assert r.outcome == "stop" and d is not None, r
    j = d["jit"]
    assert j is not None, d["notes"]
    assert j["method"] == _name(jit_collection, JIT_NULL_N).rsplit(":", 1)[1]
    assert j["method_source"] == "Compiler::info.compFullName"
    assert (
        j["phase"] == "PHASE_IMPORTATION" and j["method_context"] == JIT_NULL_N and j["il_size"] > 0
    )
    assert j["function"].startswith("Compiler::") and j["source"].startswith("this of Compiler::")
    # the importer's statement: the injected `div` by a constant 0 (spmi_dbg/sample/inject.py)
    assert _opcode_at(jit_collection, JIT_NULL_N, j["il_offset"]) == "div"
    assert j["il_offset_source"] == "Compiler::impCurStmtOffs"
    if jit == "sample":
        assert (j["phase_value"], j["phase_name"], j["tried"]) == (1, "Importation", [])
    else:
        assert (j["phase_value"], j["phase_name"]) == (4, None)
        assert j["tried"] == ["phase display name: no PhaseNames table in the JIT's symbols"]


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_assert_debug_break_shows_the_phase_of_the_assert(
    jit_collection: Path, debugger: str
) -> None:
    r = _run(
        debugger, [REPLAY, "-boa", "-c", str(ASSERT_N), BASE, str(jit_collection)], stop_first=True
    )
    d = r.diagnosis
    assert d is not None and d["signal"]["name"] == "SIGTRAP"
    assert d["assertion"]["phase"] == d["jit"]["phase_name"] == "Importation"
    assert d["jit"]["method_context"] == ASSERT_N
    # the injected `shl` by -1 the importer asserts on
    assert _opcode_at(jit_collection, ASSERT_N, d["jit"]["il_offset"]) == "shl"


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_a_hang_in_the_jit_names_its_phase(hang_collection: Path, debugger: str) -> None:
    r = _run(debugger, [REPLAY, BASE, str(hang_collection)], timeout=2)
    d = r.diagnosis
    assert r.kind == "hang" and d is not None
    assert d["jit"]["phase"] == "PHASE_FIND_LOOPS" and d["jit"]["phase_name"] == "Find loops"
    assert d["jit"]["method_context"] == HANG_N


def test_spmi_jit_in_gdb(jit_collection: Path) -> None:
    gdb = gdb_path()
    r = subprocess.run(
        gdb_batch(
            gdbinit_line(),
            "run",
            "spmi jit",
            "kill",
            args=[REPLAY, BASE, str(jit_collection)],
            gdb=gdb,
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "phase          during Importation  [Compiler::mostRecentlyActivePhase]" in r.stdout, (
        r.stdout + r.stderr
    )
    assert (
        "enumerator     PHASE_IMPORTATION (1)" in r.stdout
        and f"method context {JIT_NULL_N}" in r.stdout
    )


def test_the_report_names_the_method_and_the_phase(cols: Collections, tmp_path: Path) -> None:
    """A hang inside the JIT through `spmi-dbg repro`: report.md's Description and Actual behavior,
    and the summary, say what the JIT was compiling and in which phase."""
    mch = cols.get("jit-state-hang", 60, seed=5, inject=[("hang", HANG_N)])
    r = repro(
        *repro_args(
            REPLAY, BASE, str(mch), out="h", workers=1, verify_runs=1, options=("--timeout", "2")
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    data = report(tmp_path / "h")
    assert data["schema"] == 5 and data["diagnosis"]["jit"]["phase_name"] == "Find loops"
    method = data["diagnosis"]["jit"]["method"]
    assert f"while compiling `{method}` during Find loops" in data["issue"]["description"]
    md = (tmp_path / "h" / "report.md").read_text()
    assert (
        f"the JIT was compiling `{method}`" in md and "during Find loops (PHASE_FIND_LOOPS)" in md
    )
    assert "JIT: compiling" in r.stdout


# ------------------------------------------------------------------------------------------ core
# file, qemu
@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_the_jit_state_from_a_core_file(cols: Collections, tmp_path: Path, debugger: str) -> None:
    """Post-mortem: superpmi killed by a hardware fault in the JIT (`-bug 56506`, as on Linux); the
    core file's diagnosis names the method and the phase."""
    require(debugger)
    mch = cols.get("jit-state-core", 40, seed=3, inject=[("jit-null", 25)])
    argv = [REPLAY, "-bug", "56506", BASE, str(mch)]
    core = make_core(argv, tmp_path)
    r = repro(
        *repro_args(*argv, out="c", verify_runs=1, options=("--core", str(core))),
        cwd=tmp_path,
        debugger=debugger,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    jit = report(tmp_path / "c")["diagnosis"]["jit"]
    assert (
        jit is not None
        and (jit["phase"], jit["method_context"]) == ("PHASE_IMPORTATION", 25)
        and jit["method"]
    )


def test_the_jit_state_under_qemu(cols: Collections, tmp_path: Path) -> None:
    """An Arm64 superpmi under qemu-user, the fault in the Arm64 JIT: the same JIT state, read
    through qemu's gdbstub by gdb-multiarch."""
    mch = cols.get("jit-state-qemu", 40, seed=3, inject=[("jit-null", 25)])
    r = repro(
        *repro_args(
            aarch64_native("bin/spmi-replay"),
            "-bug",
            "56506",
            aarch64_native("jit/libsamplejit_base.so"),
            str(mch),
            out="q",
            workers=1,
            verify_runs=1,
            options=("--qemu", "aarch64"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    data = report(tmp_path / "q")
    jit = data["diagnosis"]["jit"]
    assert (
        data["diagnosis"]["arch"] == "aarch64"
        and data["diagnosis"]["handling"]["rule"] == "second chance"
    )
    assert (jit["phase_name"], jit["method_context"]) == ("Importation", 25) and jit["method"]
    assert "during Importation" in (tmp_path / "q" / "report.md").read_text()
