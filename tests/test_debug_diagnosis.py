"""The diagnosis under REAL gdb and lldb (no mocks): every crash class of the replay core
(native/README.md), run through the product's own drivers (spmi_dbg.driver.select's GdbDriver /
LldbDriver, by tests.harness.stops; one fresh debugger per run) against the installed spmi-replay
(-O2 -g, like real superpmi) and, for the seed crash, spmi-replay-O0; the two debuggers must agree.
Then the `spmi` command, the pretty printers/summaries and the init lines inside each debugger.

Each debugger run takes ~0.1-1 s; runs are cached per module (the `runs` fixture,
tests/support/diagnosis.py) so that the per-debugger tests and the gdb-vs-lldb comparison share
them. A missing debugger is a failure with a clear message, never a skip."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.driver.loader import gdbinit_line, lldbinit_lines
from spmi_dbg.mch.collection import Collection

from .support.common import DEBUGGERS, run_cli
from .support.diagnosis import (
    ASSERT_N,
    JIT_NULL_N,
    LLDB_SERVER,
    POISON_CRASH_N,
    SEED_N,
    STACK_OVERFLOW_N,
    Runs,
    assert_the_debuggers_frame_numbers,
    gdb_batch,
    gdb_path,
    lldb_path,
    require,
)
from .support.natives import BASE, DIFF, REPLAY, REPLAY_O0, SEED_OPTIONS

CM_MAP = "LightWeightMap<unsigned int, Agnostic_CompileMethodResults>"
SEED_NULL_MAP = {
    "owner_type": "CompileResult",
    "member": "CompileMethod",
    "map_type": CM_MAP,
    "packet_id": 118,
    "packet_name": "PacketCR_CompileMethod",
    "role": "base compile result (cr1)",
}


def frame_names(d: dict[str, Any]) -> list[str]:
    return [f["function"] for f in d["frames"]]


def same_file(a: str | None, b: str) -> bool:
    return a is not None and os.path.realpath(a) == os.path.realpath(b)


def assert_mc(d: dict[str, Any], number: int, col: Path) -> None:
    """Method context `number`, with the name and IL size the collection records for it."""
    mc = d["method_context"]
    assert mc is not None and mc["number"] == number, (mc, d["notes"])
    with Collection.open(col) as c:
        rec = c.method_context(number)
    assert (mc["name"], mc["il_size"]) == (rec.name, rec.il_size) and mc["name"]
    assert same_file(mc["input"], str(col)) and mc["source"]


# ------------------------------------------------------------------------------------------ 1. the
# seed crash


@pytest.mark.parametrize("debugger", DEBUGGERS)
@pytest.mark.parametrize("build_kind", ["O2", "O0"])
def test_seed_crash(runs: Runs, debugger: str, build_kind: str) -> None:
    d = runs.stop(debugger, "seed" if build_kind == "O2" else "seed-O0")
    sig = d["signal"]
    assert sig["name"] == "SIGSEGV" and sig["near_null"] and sig["address"] < 0x1000
    assert d["handling"]["kind"] == "fatal"
    fm = d["faulting_module"]
    assert fm["role"] == "superpmi (replay host)"
    assert same_file(fm["path"], REPLAY if build_kind == "O2" else REPLAY_O0)
    assert {k: d["null_map"][k] for k in SEED_NULL_MAP} == SEED_NULL_MAP
    assert "base JIT's compile result has no CompileMethod map" in d["null_map"]["explanation"]
    assert d["folded"][:2] == ["CompileResult::repCompileMethod", "NearDiffer::compare"]
    assert d["signature"].startswith(
        "SIGSEGV near-null | CompileResult::repCompileMethod <- NearDiffer::compare"
    )
    assert d["signature"].endswith("| null CompileResult::CompileMethod") and re.fullmatch(
        r"[0-9a-f]{10}", d["bucket"]
    )
    assert d["instruction"] is not None and d["instruction"]["null_base"] is not None
    assert [b["id"] for b in d["known_bugs"]] == ["dotnet/runtime#91257"]  # known_bugs.toml
    assert "91783" in d["known_bugs"][0]["fix"]
    # gdb reads the number at -O2 (mc->index in the inline frame of InvokeNearDiffer it recovers)
    # and at
    # -O0; lldb 16 at -O2 may not (no frame for the inlined InvokeNearDiffer, mc optimized out):
    # then the diagnosis has no method context and says why, never a guess.
    if debugger == "lldb" and build_kind == "O2" and d["method_context"] is None:
        assert any(n.startswith("method context not found in the stack: ") for n in d["notes"]), d[
            "notes"
        ]
    else:
        assert_mc(d, SEED_N, runs.col("seed"))


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_seed_context_without_the_bug_switch_replays_to_the_end(runs: Runs, debugger: str) -> None:
    r = runs.run(debugger, "seed-no-bug")
    assert (r.outcome, r.exit_status, r.diagnosis) == ("exited", 2, None)  # 2: asm diffs, no crash
    assert r.passed == []


# ------------------------------------------------------------------------------------------ 2.
# state-dependent


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_state_dependent_crash(runs: Runs, debugger: str) -> None:
    d = runs.stop(debugger, "state")
    assert d["signal"]["name"] == "SIGABRT" and d["handling"]["kind"] == "fatal"
    assert d["faulting_module"]["role"] == "system library"  # abort() in libc
    assert_mc(d, POISON_CRASH_N, runs.col("state"))  # the crash's context, not the poisoning one
    flush = [f for f in d["frames"] if f["function"] == "Compiler::impFlushLargeFrameCache"]
    assert flush and same_file(flush[0]["module"], BASE), frame_names(d)
    # libc's abort frames are not the culprit
    assert d["folded"][0] == "Compiler::impFlushLargeFrameCache"
    assert d["signature"].startswith("SIGABRT | Compiler::impFlushLargeFrameCache <- ")
    assert d["known_bugs"] == []
    # The crashing context alone does not crash: the state came from an earlier one.
    r = runs.run(debugger, "state-alone")
    assert (r.outcome, r.exit_status, r.diagnosis, r.passed) == ("exited", 0, None, [])


# ------------------------------------------------------------------------------------------ 3. JIT
# assert, -boa


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_jit_assert_debug_break(runs: Runs, debugger: str) -> None:
    d = runs.stop(debugger, "assert-first")
    assert d["signal"]["name"] == "SIGTRAP" and d["handling"]["kind"] == "debug-break"
    a = d["assertion"]
    assert a is not None and a["expr"] == "shiftAmount >= 0"
    assert a["file"].endswith("importer.cpp") and a["line"] > 0 and a["phase"] == "Importation"
    assert_mc(d, ASSERT_N, runs.col("assert"))
    assert a["method"] == d["method_context"]["name"].rsplit(":", 1)[1]
    assert d["folded"][:2] == ["DebugBreakorAV", "MyICJI::doAssert"]
    assert d["signature"].endswith("| assert shiftAmount >= N")


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_jit_assert_debug_break_is_passed_on(runs: Runs, debugger: str) -> None:
    """Without stop_first the debug break is noted and resumed past, as a debugger user does:
    superpmi's DEBUG_BREAK (DebugBreakorAV with -boa) asks the attached debugger to stop. Today's
    superpmi catches SIGTRAP (SigCgt), so the signal is delivered with `signal SIGTRAP` and its PAL
    turns the break in the JIT's protected call into an exception (3.1's, without a handler, has
    it absorbed: tests/test_gdbmi.py). The replay then reports the assert as a failed compile."""
    r = runs.run(debugger, "assert-run")
    assert r.passed == [
        {
            "signal": "SIGTRAP",
            "kind": "debug-break",
            "frame": "DebugBreakorAV",
            "method_context": ASSERT_N,
            "delivered": True,
        }
    ]
    assert (r.outcome, r.exit_status, r.diagnosis) == ("exited", 1, None)


# ------------------------------------------------------------------------------------------ 4.
# first-chance fault


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_first_chance_jit_fault(runs: Runs, debugger: str) -> None:
    d = runs.stop(debugger, "null-first")
    assert d["signal"]["name"] == "SIGSEGV" and d["signal"]["near_null"]
    assert (
        d["handling"]["kind"] == "first-chance"
        and "JitInstance::CompileMethod" in d["handling"]["reason"]
    )
    fm = d["faulting_module"]
    assert fm["role"] == "JIT (JIT1)" and same_file(fm["path"], BASE)
    assert_mc(d, JIT_NULL_N, runs.col("null"))
    assert d["null_map"] is None and d["assertion"] is None
    # Run on: the core catches it (a failed compile, exit 1); it is in `passed`, never the crash.
    r = runs.run(debugger, "null-run")
    assert (r.outcome, r.exit_status, r.diagnosis) == ("exited", 1, None)
    assert r.passed == [
        {
            "signal": "SIGSEGV",
            "kind": "first-chance",
            "frame": d["folded"][0],
            "method_context": JIT_NULL_N,
            "delivered": True,
        }
    ]


# ------------------------------------------------------------------------------------------ 5.
# stack overflow


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_stack_overflow(runs: Runs, debugger: str) -> None:
    d = runs.stop(debugger, "stackov")
    assert d["signal"]["name"] == "SIGSEGV" and not d["signal"]["near_null"]
    assert d["handling"]["kind"] == "fatal" and "stack overflow" in d["handling"]["reason"]
    assert d["faulting_module"]["role"] == "JIT (JIT1)"
    assert_mc(d, STACK_OVERFLOW_N, runs.col("stackov"))
    # ~21,000 frames: only the innermost are read (the recursion), in well under a second.
    assert len(d["frames"]) == 256 and d["folded"] == ["Compiler::fgMorphTree"]
    assert any(
        n.startswith("stack overflow: only the innermost 256 frames were read") for n in d["notes"]
    )
    assert d["method_context"]["source"].startswith("Compiler::compMethodSuperPMIIndex")


# ------------------------------------------------------------------------------------------ gdb ==
# lldb


def agreed(d: dict[str, Any]) -> dict[str, Any]:
    """What both debuggers must give identically (the fields a debugger may not provide are compared
    apart)."""
    nm = d["null_map"]
    return {
        "signal": d["signal"]["name"] if d["signal"] else None,
        "near_null": d["signal"]["near_null"] if d["signal"] else None,
        "handling": d["handling"]["kind"],
        "module": d["faulting_module"]["role"] if d["faulting_module"] else None,
        "null_map": {k: nm[k] for k in ("owner_type", "member", "packet_id", "packet_name", "role")}
        if nm
        else None,
        "assert": d["assertion"]["expr"] if d["assertion"] else None,
        "signature_frames": d["signature_frames"],
        "signature": d["signature"],
        "bucket": d["bucket"],
        "arch": d["arch"],
    }


@pytest.mark.parametrize(
    "case", ["seed", "seed-O0", "state", "assert-first", "null-first", "stackov"]
)
def test_gdb_and_lldb_agree(runs: Runs, case: str) -> None:
    g, lldb = runs.stop("gdb", case), runs.stop("lldb", case)
    assert g["debugger"].startswith("gdb ") and lldb["debugger"].startswith("lldb ")
    assert agreed(g) == agreed(lldb)
    gm, lm = g["method_context"], lldb["method_context"]
    if gm is not None and lm is not None:
        assert {k: gm[k] for k in ("number", "name", "il_size")} == {
            k: lm[k] for k in ("number", "name", "il_size")
        }
    for d in (g, lldb):  # a missing method context is said, with what was tried
        if d["method_context"] is None:
            assert any(n.startswith("method context not found in the stack: ") for n in d["notes"])


@pytest.mark.parametrize("case", ["seed-no-bug", "state-alone", "assert-run", "null-run"])
def test_gdb_and_lldb_agree_on_runs_that_end(runs: Runs, case: str) -> None:
    g, lldb = runs.run("gdb", case), runs.run("lldb", case)
    assert (g.outcome, g.exit_status, g.signal, g.passed) == (
        lldb.outcome,
        lldb.exit_status,
        lldb.signal,
        lldb.passed,
    )


# ------------------------------------------------------------------------------------------ the
# spmi command


def gdb_session(
    argv: list[str], commands: list[str], init: list[str] | None = None
) -> dict[str, str]:
    """gdb -batch: load the extension, run to the first stop, then each command; returns command ->
    output (stdout and stderr interleaved, as a user sees them)."""
    cmd = gdb_batch("set pagination off", "set startup-with-shell off")
    for line in init if init is not None else [gdbinit_line()]:
        cmd += ["-ex", line]
    cmd += ["-ex", "run"]
    for i, c in enumerate(commands):
        cmd += ["-ex", f"echo @@{i}@@\\n", "-ex", c]
    cmd += ["-ex", f"echo @@{len(commands)}@@\\n", "--args", *argv]
    r = subprocess.run(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120
    )
    parts = re.split(r"^@@(\d+)@@$", r.stdout, flags=re.M)
    out = {commands[int(parts[i])]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 2, 2)}
    assert len(out) == len(commands), r.stdout[-3000:]
    assert "Traceback" not in r.stdout and "Python Exception" not in r.stdout, r.stdout[-3000:]
    return out


def lldb_session(
    argv: list[str], commands: list[str], init: list[str] | None = None
) -> dict[str, str]:
    """lldb-16 -b: the two lldbinit lines, `run`, then each command after the stop (-k). lldb stops
    a batch at the first command that fails, so a failing command must come last."""
    cmd = [lldb_path(), "--no-lldbinit", "-b"]
    for line in init if init is not None else lldbinit_lines():
        cmd += ["-O", line]
    cmd += ["-o", "run"]
    for c in commands:
        cmd += ["-k", c]
    env = dict(os.environ, LLDB_DEBUGSERVER_PATH=LLDB_SERVER)
    r = subprocess.run(
        [*cmd, "--", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        env=env,
    )
    out: dict[str, str] = {}
    current: str | None = None
    for line in r.stdout.splitlines():
        if line.startswith("(lldb) "):
            current = line[len("(lldb) ") :]
            out[current] = ""
        elif current is not None:
            out[current] += line + "\n"
    missing = [c for c in commands if c not in out]
    assert not missing, f"lldb did not run {missing}:\n{r.stdout[-3000:]}"
    assert "Traceback" not in r.stdout, r.stdout[-3000:]
    return {c: out[c].strip("\n") for c in commands}


def section(text: str, header: str) -> str:
    """The lines of `spmi maps` under `header` (up to the next unindented line)."""
    lines = text.splitlines()
    i = lines.index(header)
    body = []
    for line in lines[i + 1 :]:
        if not line.startswith("  "):
            break
        body.append(line)
    return "\n".join(body)


def map_line(body: str, member: str) -> str:
    m = re.search(rf"^  {member} +(.*)$", body, re.M)
    assert m is not None, body
    return m.group(1)


def assert_repro(out: Path, seed: Path) -> None:
    with Collection.open(seed) as c:
        assert out.read_bytes() == c.record(SEED_N)  # byte-exact
    assert Path(str(out) + ".mct").is_file()
    with Collection.open(out) as c:
        assert c.locate(1).size == out.stat().st_size
    # ... and it is the crash, on its own.
    r = subprocess.run(
        [REPLAY, *SEED_OPTIONS, BASE, DIFF, str(out)],
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == -signal.SIGSEGV


def seed_argv(runs: Runs, replay: str = REPLAY) -> list[str]:
    return [replay, *SEED_OPTIONS, BASE, DIFF, str(runs.col("seed"))]


@dataclass(frozen=True)
class SpmiSession:
    """One debugger's session of the `spmi` command at the seed crash: command -> output."""

    debugger: str
    case: str  # the runs' case of the same stop
    out: Path  # where `spmi repro` writes
    o: dict[str, str]


class SpmiSessions:
    """The `spmi` command's session in each debugger, run once for the module: gdb at -O2, as real
    superpmi is built; lldb at -O0, where lldb 16 reads the method context (see test_seed_crash and
    test_spmi_command_in_lldb_at_O2_says_what_it_cannot_read for -O2)."""

    def __init__(self, runs: Runs, root: Path) -> None:
        self.runs = runs
        self.root = root
        self._sessions: dict[str, SpmiSession] = {}

    def __call__(self, debugger: str) -> SpmiSession:
        if debugger not in self._sessions:
            self._sessions[debugger] = self._session(debugger)
        return self._sessions[debugger]

    def _session(self, debugger: str) -> SpmiSession:
        require(debugger)
        out = self.root / debugger / "repro.mch"
        out.parent.mkdir()
        cmds = ["spmi why", "spmi diagnose --json", "spmi context", "spmi maps", "spmi maps --all"]
        cmds += [f"spmi repro {out}"]
        # Then each debugger's own commands to select NearDiffer::compare and print values (gdb's
        # pretty printers, lldb's summaries) and the user errors: lldb stops a batch at the first
        # command that fails, so it gets only one failing command, last.
        if debugger == "gdb":
            cmds += [
                "frame function NearDiffer::compare",
                "spmi maps cr1",
                "print *cr1",
                "print *cr2->AllocMem",
                "print *cr1->CompileMethod",
                "spmi bogus",
                "spmi maps 1+",
                "spmi maps cr1->AllocMem",
                "spmi",
            ]
            return SpmiSession(debugger, "seed", out, gdb_session(seed_argv(self.runs), cmds))
        cmds += [
            "frame select 3",
            "spmi maps cr1",
            "frame variable *cr1",
            "frame variable *cr2->AllocMem",
            "frame variable cr1->CompileMethod",
            "spmi",
            "spmi bogus",
        ]
        o = lldb_session(seed_argv(self.runs, REPLAY_O0), cmds)
        return SpmiSession(debugger, "seed-O0", out, o)


@pytest.fixture(scope="module")
def spmi(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> SpmiSessions:
    return SpmiSessions(runs, tmp_path_factory.mktemp("spmi-command"))


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_why(spmi: SpmiSessions, debugger: str) -> None:
    why = spmi(debugger).o["spmi why"]
    assert (
        "null map: CompileResult::CompileMethod of the base compile result (cr1), packet 118 "
        "PacketCR_CompileMethod" in why
    )
    assert "stack: CompileResult::repCompileMethod <- NearDiffer::compare" in why
    assert re.search(rf"^method context: {SEED_N} \(\S+:\S+, IL size \d+\)", why, re.M), why
    assert "handling: fatal" in why and "faulting module: superpmi (replay host)" in why
    assert "known bug: dotnet/runtime#91257: SPMI asmdiff errors on Arm64 Linux" in why
    assert "fix: dotnet/runtime#91783" in why


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_diagnose_json_is_the_drivers_diagnosis(
    spmi: SpmiSessions, runs: Runs, debugger: str
) -> None:
    s = spmi(debugger)
    d = json.loads(s.o["spmi diagnose --json"])  # one line of valid JSON
    driver = runs.stop(debugger, s.case)
    for k in ("bucket", "signature", "null_map", "method_context", "handling"):
        assert d[k] == driver[k], k
    assert d["bucket"] == runs.stop("lldb" if debugger == "gdb" else "gdb", s.case)["bucket"]


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_context(spmi: SpmiSessions, runs: Runs, debugger: str) -> None:
    s = spmi(debugger)
    driver = runs.stop(debugger, s.case)
    ctx = s.o["spmi context"].splitlines()
    assert ctx[0].startswith(f"method context {SEED_N}  [")
    assert ctx[1:] == [
        f"name     {driver['method_context']['name']}",
        f"IL size  {driver['method_context']['il_size']}",
        f"input    {runs.col('seed')}",
    ]
    if debugger == "lldb":  # at -O0 the MethodContext is a plain variable of NearDiffer::compare
        assert ctx[0] == f"method context {SEED_N}  [mc->index in NearDiffer::compare (frame 3)]"


# Default maps: the MethodContext of NearDiffer::compare, with item counts, and the context's
# compile results (mc->cr is the diff JIT's, cr2: no CompileMethod either).
# Issue 38 item 5: the never-recorded maps folded into one count line (--all lists them), the map
# the fault read first and marked.


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_maps_folds_the_never_recorded(spmi: SpmiSessions, debugger: str) -> None:
    o = spmi(debugger).o
    maps = o["spmi maps"]
    mc_maps = section(maps, "mc (MethodContext):")
    assert re.fullmatch(r"1 item\(s\), \d+ buffer bytes", map_line(mc_maps, "CompileMethod"))
    assert not re.search(r"^  GetClassName ", mc_maps, re.M)
    assert re.search(
        r"^  \d+ more map\(s\) null \(never recorded\): spmi maps --all", mc_maps, re.M
    )
    assert len(maps.splitlines()) < 60, maps
    full = o["spmi maps --all"]
    assert map_line(section(full, "mc (MethodContext):"), "GetClassName") == "null (never recorded)"


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_maps_marks_the_map_the_fault_read(spmi: SpmiSessions, debugger: str) -> None:
    o = spmi(debugger).o
    diff_cr = section(o["spmi maps"], "mc->cr (CompileResult):")
    assert diff_cr.splitlines()[0].startswith("  CompileMethod ")  # first: the kind the fault read
    assert map_line(diff_cr, "CompileMethod") == (
        "null (never recorded)   <- null too; the fault read this map of the base compile result "
        "(cr1)"
    )
    assert re.fullmatch(r"1 item\(s\), \d+ buffer bytes", map_line(diff_cr, "AllocMem"))
    cr1 = o["spmi maps cr1"]
    assert cr1.splitlines()[0] == "cr1 (CompileResult):"
    assert cr1.splitlines()[1].startswith("  CompileMethod ")
    assert map_line(cr1, "CompileMethod") == "null (never recorded)   <- the map the fault read"
    assert not re.search(r"^  RecordRelocation ", cr1, re.M)
    assert map_line(cr1, "AllocMem").startswith("1 item(s)")


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_repro_writes_the_crashing_record(
    spmi: SpmiSessions, runs: Runs, debugger: str
) -> None:
    s = spmi(debugger)
    assert (
        s.o[f"spmi repro {s.out}"]
        == f"wrote method context {SEED_N} of {runs.col('seed')} to {s.out} (index {s.out}.mct)"
    )
    assert_repro(s.out, runs.col("seed"))


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_user_error_is_one_line(spmi: SpmiSessions, debugger: str) -> None:
    # User errors: one line, no traceback (checked for the whole session by gdb_session /
    # lldb_session); lldb prefixes a command's error with "error: ".
    o = spmi(debugger).o
    prefix = "" if debugger == "gdb" else "error: "
    assert o["spmi bogus"].startswith(prefix + "spmi: argument VERB: invalid choice: 'bogus'")
    assert len(o["spmi bogus"].splitlines()) == 1


def test_spmi_gdb_pretty_printers_are_null_safe(spmi: SpmiSessions) -> None:
    o = spmi("gdb").o
    # Pretty printers: the null map of cr1, null-safe.
    assert re.search(
        r"= CompileResult = \{AllocGCInfo = 1 item\(s\), AllocMem = 1 item\(s\), "
        r"CompileMethod = null \(never recorded\), RecordRelocation = null \(never "
        r"recorded\)\}",
        o["print *cr1"],
    ), o["print *cr1"]
    assert re.search(
        r"= LightWeightMap<unsigned int, Agnostic_AllocMemDetails> with 1 item\(s\), \d+ "
        r"buffer "
        r"bytes",
        o["print *cr2->AllocMem"],
    ), o["print *cr2->AllocMem"]
    assert o["print *cr1->CompileMethod"] == "Cannot access memory at address 0x0"


def test_spmi_gdb_maps_of_what_is_no_map(spmi: SpmiSessions) -> None:
    o = spmi("gdb").o
    assert o["spmi maps 1+"] == "spmi maps: cannot evaluate '1+'"
    assert o["spmi maps cr1->AllocMem"].startswith(
        "spmi maps: 'cr1->AllocMem' is a LightWeightMap<"
    )
    assert o["spmi"].startswith("usage: spmi ")  # no verb: the help


def test_spmi_lldb_summaries_on_objects_not_pointers(spmi: SpmiSessions) -> None:
    o = spmi("lldb").o
    # Summaries: on the object, not on pointers (a pointer keeps its address).
    assert "NearDiffer::compare(this=0x" in o["frame select 3"] and "cr1=0x" in o["frame select 3"]
    assert (
        o["frame variable *cr1"]
        == "(CompileResult) *cr1 = CompileResult: maps AllocGCInfo, AllocMem; "
        "null (never recorded): CompileMethod, RecordRelocation"
    )
    assert re.fullmatch(
        r"\(LightWeightMap<unsigned int, Agnostic_AllocMemDetails>\) \*cr2->AllocMem = "
        r"1 item\(s\), \d+ buffer bytes",
        o["frame variable *cr2->AllocMem"],
    )
    assert o["frame variable cr1->CompileMethod"].endswith("cr1->CompileMethod = nullptr")
    assert "usage: spmi " in o["spmi"]  # no verb: the help


def test_spmi_command_in_lldb_at_O2_says_what_it_cannot_read(runs: Runs) -> None:
    require("lldb")
    o = lldb_session(seed_argv(runs), ["spmi diagnose --json", "spmi context"])
    d = json.loads(o["spmi diagnose --json"])
    assert d["bucket"] == runs.stop("gdb", "seed")["bucket"] == runs.stop("lldb", "seed")["bucket"]
    if d["method_context"] is None:  # lldb 16 (see test_seed_crash): a one-line error that says why
        assert o["spmi context"].startswith(
            "error: spmi context: no method context found in the stack: "
        )
        assert len(o["spmi context"].splitlines()) == 1
    else:
        assert o["spmi context"].startswith(f"method context {SEED_N}  [")


def test_spmi_maps_default_lists_the_method_context_maps_at_O2(runs: Runs) -> None:
    o = gdb_session(seed_argv(runs), ["spmi maps"])["spmi maps"]
    assert re.fullmatch(
        r"1 item\(s\), \d+ buffer bytes",
        map_line(section(o, "mc (MethodContext):"), "CompileMethod"),
    )


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_without_a_process_is_a_one_line_error(debugger: str) -> None:
    if debugger == "gdb":
        r = subprocess.run(
            [gdb_path(), "-q", "-nx", "-batch", "-ex", gdbinit_line(), "-ex", "spmi why"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=60,
        )
        assert r.stdout.strip() == "spmi: no process (run the program first)"
    else:
        cmd = [lldb_path(), "--no-lldbinit", "-b"]
        for line in lldbinit_lines():
            cmd += ["-O", line]
        r = subprocess.run(
            [*cmd, "-o", "spmi why"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=60,
        )
        assert r.stdout.strip().endswith(
            "(lldb) spmi why\nerror: spmi: no process (run the program first)"
        )


# ------------------------------------------------------------------------------------------ init
# lines


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_init_lines_load_the_spmi_command(runs: Runs, tmp_path: Path, debugger: str) -> None:
    require(debugger)
    r = run_cli(f"{debugger}init")
    # gdb's is one `python` line; lldb's are two: a `script` line, then `command script import`
    # (lldb runs __lldb_init_module only through it).
    assert r.returncode == 0 and r.stdout.splitlines() == (
        [gdbinit_line()] if debugger == "gdb" else lldbinit_lines()
    )
    init = tmp_path / f"{debugger}init"
    init.write_text(r.stdout)
    # A debugger that reads no init file of its own, sourcing exactly what the user would add.
    cmds = ["help spmi", "spmi diagnose --json"]
    o = (
        gdb_session(seed_argv(runs), cmds, init=[f"source {init}"])
        if debugger == "gdb"
        else lldb_session(seed_argv(runs), cmds, init=[f"command source {init}"])
    )
    assert "SuperPMI-aware crash diagnosis" in o["help spmi"]
    assert json.loads(o["spmi diagnose --json"])["bucket"] == runs.stop(debugger, "seed")["bucket"]


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_maps_finds_a_name_up_the_stack(runs: Runs, debugger: str) -> None:
    """At the seed crash's frame 0 (CompileResult::repCompileMethod, or the LightWeightMap accessor
    inlined in it) `cr1` is not a variable: `spmi maps cr1` finds it up the stack, as
    NearDiffer::compare's argument, and says in which frame (by the debugger's own number,
    docs/debugger-notes.md) and function; a name no frame has says so. gdb at -O2 (as real
    superpmi is built), lldb at -O0 (lldb 16 reads no argument of the -O2 build's
    NearDiffer::compare)."""
    require(debugger)
    cmds = ["spmi diagnose --json", "spmi maps cr1", "spmi maps cr2", "spmi maps no_such_name"]
    if debugger == "gdb":
        o = gdb_session(seed_argv(runs), cmds)
    else:
        o = lldb_session(seed_argv(runs, REPLAY_O0), cmds)
    frames = json.loads(o["spmi diagnose --json"])["frames"]
    assert "cr1" not in frames[0]["function"]
    for name in ("cr1", "cr2"):
        head = o[f"spmi maps {name}"].splitlines()[0]
        m = re.fullmatch(
            rf"{name} \(CompileResult, found in frame (\d+): NearDiffer::compare\):", head
        )
        assert m is not None, o[f"spmi maps {name}"]
        n = int(m.group(1))  # the debugger's own number (frame_ref)
        (named,) = [
            f for f in frames if (f["number"] if f["number"] is not None else f["index"]) == n
        ]
        assert named["function"] == "NearDiffer::compare" and n > 0
    # the seed's null map: cr1's, marked; cr2's of that name is null too, and said so
    assert map_line(o["spmi maps cr1"], "CompileMethod") == (
        "null (never recorded)   <- the map the fault read"
    )
    assert map_line(o["spmi maps cr2"], "CompileMethod") == (
        "null (never recorded)   <- null too; the fault read this map of the base compile result "
        "(cr1)"
    )
    assert map_line(o["spmi maps cr1"], "AllocMem").startswith("1 item(s)")
    prefix = "" if debugger == "gdb" else "error: "
    assert (
        o["spmi maps no_such_name"]
        == prefix
        + "spmi maps: cannot evaluate 'no_such_name': not in the selected "
        "frame, and no frame of the stack has a readable variable "
        "'no_such_name'"
    )


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_frame_numbers_are_the_debuggers_own(runs: Runs, debugger: str) -> None:
    """Issue 38 item 3: every "frame N" the diagnosis says is the frame the debugger's own `bt`
    numbers N, at the -O2 seed stop (inlined LightWeightMap accessors: gdb hides the one whose
    block starts at the stop pc, lldb shows it)."""
    require(debugger)
    cmds = ["bt", "spmi why", "spmi diagnose --json"]
    if debugger == "gdb":
        o = gdb_session(seed_argv(runs), cmds)
    else:
        o = lldb_session(seed_argv(runs), cmds)
    frames = assert_the_debuggers_frame_numbers(o, debugger)
    assert any(f["inlined"] for f in frames), frames  # the stop has inlined frames
