"""`spmi-dbg repro --failure`: JIT asserts, failed compiles and missing data superpmi reports
itself, as repro targets, end to end (real command line, real replays, real gdb and lldb)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from spmi_dbg.mch.collection import Collection

from .support.common import Collections
from .support.natives import BASE, REPLAY, STRESS_SETTINGS
from .support.pipeline import ReproRun, report, repro, repro_args, repro_run, validate

STRESS_AT = 140


def failures_collection(cols: Collections) -> Path:
    """A JIT assert at 60, a stress-only assert at STRESS_AT, a caught fault at 90, missing data at
    110."""
    return cols.get(
        "repro-failures",
        200,
        inject=[
            ("jit-assert", 60),
            ("jit-null", 90),
            ("missing", 110),
            ("stress-assert", STRESS_AT),
        ],
    )


@pytest.fixture(scope="module", params=["gdb", "lldb"])
def stress_repro(
    request: pytest.FixtureRequest, cols: Collections, tmp_path_factory: pytest.TempPathFactory
) -> ReproRun:
    """`spmi-dbg repro --failure assert:magic[divisor]` of the command with six JIT settings, two
    of them needed, under each debugger."""
    mch = failures_collection(cols)
    tmp = tmp_path_factory.mktemp(f"stress-{request.param}")
    out = str(tmp / "bundle dir")
    target = ("--failure", "assert:magic[divisor]")
    args = repro_args(REPLAY, *STRESS_SETTINGS, BASE, str(mch), out=out, workers=2, options=target)
    return repro_run(*args, cwd=tmp, out=out, debugger=request.param)


def test_a_stress_only_assert_gets_a_verified_repro_of_its_record(
    stress_repro: ReproRun, cols: Collections
) -> None:
    rep = stress_repro.report
    validate(rep)
    assert rep["outcome"] == "verified" and rep["repro"]["method_contexts"] == [STRESS_AT]
    mch = failures_collection(cols)
    with Collection.open(str(mch)) as col:  # the record, byte-exact
        loc = col.locate(STRESS_AT)
        with open(mch, "rb") as f:
            f.seek(loc.offset)
            record = f.read(loc.size)
    assert (stress_repro.bundle / "repro.mch").read_bytes() == record


def test_a_stress_only_assert_keeps_only_the_needed_settings(stress_repro: ReproRun) -> None:
    t = stress_repro.report["target"]
    assert t["kind"] == "assert" and t["failure"]["method_context"] == STRESS_AT
    assert t["options"]["needed"] == ["JitStress=2", "JitStressModeNames=STRESS_FOLD"]
    assert set(t["options"]["dropped"]) == {
        "JitNoInline=1",
        "JitStressRegs=1",
        "JitMinOpts=0",
        "JitDisasmSummary=0",
        "JitStressModeNames element STRESS_MAKE_CSE",
        "JitStressModeNames element STRESS_REVERSE_FLAG",
    }
    command = stress_repro.text("repro.sh").splitlines()[-1]
    assert "-jitoption JitStress=2 -jitoption JitStressModeNames=STRESS_FOLD " in command
    assert (
        "JitNoInline" not in command
        and "STRESS_MAKE_CSE" not in command
        and "JitMinOpts" not in command
    )


def test_a_stress_only_assert_is_titled_by_its_expression(stress_repro: ReproRun) -> None:
    title = stress_repro.report["title"]
    assert title.startswith(
        "Assertion failed 'divisor > 0 && divisor <= 8 && magic[divisor] != 0' in '"
    )
    assert title.endswith("' during 'Importation'")


def test_a_stress_only_assert_is_diagnosed_at_its_debug_break(stress_repro: ReproRun) -> None:
    rep = stress_repro.report
    t = rep["target"]
    d = rep["diagnosis"]  # the -boa stop: in the assert, the JIT's state there
    assert (
        d["assertion"]["expr"] == t["failure"]["message"]
        and d["assertion"]["line"] == t["failure"]["source_line"]
    )
    assert d["method_context"]["number"] == STRESS_AT
    assert d["jit"]["phase_name"] == "Importation" and d["jit"]["method"] == t["failure"]["method"]
    assert d["folded"][:4] == [
        "DebugBreakorAV",
        "MyICJI::doAssert",
        "assertAbort",
        "Compiler::gtFoldModByConst",
    ]


def test_a_stress_only_assert_bundle_has_the_jit_output(stress_repro: ReproRun) -> None:
    t = stress_repro.report["target"]
    jit_out = stress_repro.text("jit-stdout.txt")
    assert jit_out.startswith(f"****** START compiling {t['failure']['method']} (MethodHash=")
    md = stress_repro.text("report.md")
    assert (
        "`JitStress=2`, `JitStressModeNames=STRESS_FOLD`" in md
        and "- JIT output: `jit-stdout.txt`" in md
    )
    assert t["failure"]["line"] in md


def test_a_stress_only_assert_repro_sh_reproduces_it(stress_repro: ReproRun) -> None:
    # The bundle's script reproduces the assert where it is, and only with the settings it carries.
    script = stress_repro.bundle / "repro.sh"
    run = subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=60)
    assert (
        run.returncode == 1
        and "ISSUE: <ASSERT> #1 " in run.stdout
        and "magic[divisor]" in run.stdout
    )


def test_a_failed_compile_stops_at_its_first_chance_fault(
    cols: Collections, tmp_path: Path
) -> None:
    mch = failures_collection(cols)
    r = repro(
        *repro_args(
            REPLAY, BASE, str(mch), out=str(tmp_path / "b"), options=("--failure", "error")
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    validate(rep)
    f = rep["target"]["failure"]
    assert (f["kind"], f["method_context"], f["message"]) == (
        "error",
        90,
        "Unexpected exception c0000005",
    )
    assert rep["target"]["options"] is None  # no JIT settings to minimize
    d = rep["diagnosis"]
    assert d["signal"]["name"] == "SIGSEGV" and d["folded"][0] == "Compiler::gtFoldDivByConst"
    assert d["method_context"]["number"] == 90
    assert (
        rep["title"]
        == "superpmi: the compile of method context 90 fails (Unexpected exception c0000005)"
    )


def test_missing_data_under_lldb_and_the_first_assert(cols: Collections, tmp_path: Path) -> None:
    mch = failures_collection(cols)
    r = repro(
        *repro_args(
            REPLAY, BASE, str(mch), out=str(tmp_path / "m"), options=("--failure", "missing")
        ),
        cwd=tmp_path,
        debugger="lldb",
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "m")
    assert rep["target"]["failure"]["method_context"] == 110
    assert rep["diagnosis"]["folded"][0] == "ThrowSpmiException"
    # Without the stress settings the first assert is the one at 60 (the stress-only one does not
    # fire).
    r = repro(
        *repro_args(
            REPLAY, BASE, str(mch), out=str(tmp_path / "a"), options=("--failure", "assert")
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "a")
    assert (
        rep["target"]["failure"]["method_context"] == 60
        and rep["diagnosis"]["assertion"]["expr"] == "shiftAmount >= 0"
    )


def test_no_such_failure_and_an_unknown_kind(cols: Collections, tmp_path: Path) -> None:
    mch = failures_collection(cols)
    r = repro(
        *repro_args(
            REPLAY,
            BASE,
            str(mch),
            out=str(tmp_path / "n"),
            options=("--failure", "assert:no assert says this"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    why = [ln for ln in r.stdout.splitlines() if ln.startswith("why: ")]
    assert (
        len(why) == 1
        and "no such failure: a JIT assert containing 'no assert says this'; seen: " in why[0]
    )
    assert "shiftAmount >= 0" in why[0] and "(method context 90)" in why[0]
    validate(report(tmp_path / "n"))
    r = repro("--failure", "asserts", "--", REPLAY, BASE, str(mch), cwd=tmp_path)
    assert r.returncode == 3 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown kind 'asserts'" in lines[0], r.stderr


def test_verify_runs_0_is_not_called_verified(cols: Collections, tmp_path: Path) -> None:
    """--verify-runs 0 for a failure target as for a crash: no native run of the repro, so it is not
    verified (exit 1), the summary says so, and no earlier records are minimized; the run under the
    debugger and the JIT's output are still made."""
    mch = failures_collection(cols)
    r = repro(
        *repro_args(
            REPLAY,
            BASE,
            str(mch),
            out=str(tmp_path / "b"),
            verify_runs=0,
            options=("--failure", "assert"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    validate(rep)
    v = rep["verification"]
    assert rep["outcome"] == "not-verified" and rep["exit_code"] == 1 and not v["accepted"]
    assert v["runs"] == 0 and v["native_runs"] == []
    assert v["summary"].startswith("no native run (--verify-runs 0): not verified")
    assert f"verification: {v['summary']}" in r.stdout.splitlines()
    phases = [p["name"] for p in rep["phases"]]
    assert phases == ["locate", "isolate", "verify", "diagnose", "jit-output"]
    assert rep["target"]["failure"]["method_context"] == 60
    assert rep["diagnosis"]["assertion"]["expr"] == "shiftAmount >= 0"
    assert "A 1-record repro collection is attached (NOT verified)." in rep["issue"]["description"]
