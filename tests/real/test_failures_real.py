"""superpmi's own failure lines of every era, on the real superpmi of .NET Core 3.1.23
(../shared/real-superpmi/ README.md): its asserts have no `#N` and no phase (paired with their
failed compile by IL size), `-boa` goes on without a debugger and breaks under one, missing data
exits 3, a `-c` past the end exits 255; `repro --failure assert` on a real assert, and a crash that
`-p` hid, from the command and from a 3.1-style superpmi.py log. The live half (a real build):
tests/real/test_failures_transcripts.py is the data half, the same parsers on what 3.1 printed."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from spmi_dbg.failures.output import parse_output
from spmi_dbg.repro.native import run_native

from ..support.pipeline import ReproRun, report, repro, repro_args, repro_run, validate
from ..support.real import Real
from ..support.real31 import assert_the_543_assert, method_names


def replay(
    real: Real, *args: str | Path, jit: Path | None = None, mch: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return real.replay(*args, jit or real.jit_checked, mch or real.api)


def names(real: Real) -> dict[int, str]:
    return method_names(real.api_map)


@pytest.mark.live
def test_a_31_assert_takes_its_number_from_the_failed_compile(real: Real) -> None:
    r = replay(real, "-jitoption", "JitStressRegs=400", "-c", "543")
    assert r.returncode == 1, r.stdout + r.stderr
    assert_the_543_assert(r.stdout, r.stderr)


@pytest.mark.live
def test_several_asserts_pair_by_il_size_the_kth_with_the_kth(real: Real) -> None:
    r = replay(real, "-jitoption", "JitStressRegs=800", "-c", "1-2250")
    assert r.returncode == 1, r.stderr
    out = parse_output(r.stdout.splitlines(), r.stderr.splitlines())
    got = [(f.method_context, Path(f.file or "").name, f.source_line) for f in out.failures]
    assert got == [
        (503, "codegenxarch.cpp", 3928),
        (1210, "codegenlinear.cpp", 1164),
        (1308, "codegenlinear.cpp", 1164),
        (1540, "codegenxarch.cpp", 5052),
        (1559, "codegenlinear.cpp", 1164),
        (1561, "codegenlinear.cpp", 1164),
        (1717, "codegenlinear.cpp", 1164),
        (1749, "codegenlinear.cpp", 1164),
        (2064, "codegenxarch.cpp", 5052),
        (2118, "codegenxarch.cpp", 5052),
        (2183, "codegenlinear.cpp", 1164),
        (2207, "codegenxarch.cpp", 5052),
    ]
    assert all(f.kind == "assert" for f in out.failures) and len(out.failed_compiles) == 12
    # 1561 and 1749 both have IL size 70: each assert went to its own record, as mcs -dumpMap names
    # them.
    recorded = names(real)
    for f in out.failures:
        assert f.method is not None and f.method.split("(")[0] == recorded[f.method_context], f
    assert {f.il_size for f in out.failures if f.method_context in (1561, 1749)} == {70}


@pytest.mark.live
def test_boa_without_a_debugger_goes_on_and_the_output_is_the_same(real: Real) -> None:
    r = replay(real, "-boa", "-jitoption", "JitStressRegs=400", "-c", "543")
    assert r.returncode == 1, r.stdout + r.stderr
    assert (
        r.stderr.startswith("ERROR: SuperPMI: Assert Failure (PID ")
        and "gentree.cpp, Line: 6080" in r.stderr
    )
    assert "Loaded 1  Jitted 1  FailedCompile 1 Excluded 0" in r.stdout  # it went on to the summary
    out = parse_output(r.stdout.splitlines(), r.stderr.splitlines())
    assert [(f.kind, f.method_context, f.source_line) for f in out.failures] == [
        ("assert", 543, 6080)
    ]


@pytest.mark.live
def test_boa_breaks_under_gdb_in_doassert(real: Real) -> None:
    """What the diagnose phase's -boa run relies on: with a debugger attached, 3.1's DebugBreakorAV
    breaks."""
    r = subprocess.run(
        [
            "gdb",
            "-q",
            "-batch",
            "-ex",
            "run",
            "-ex",
            "bt 2",
            "--args",
            str(real.superpmi),
            "-boa",
            "-jitoption",
            "JitStressRegs=400",
            "-c",
            "543",
            str(real.jit_checked),
            str(real.api),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "received signal SIGTRAP" in r.stdout, r.stdout + r.stderr
    assert "DebugBreakorAV (val=val@entry=123)" in r.stdout and "MyICJI::doAssert" in r.stdout


@pytest.mark.live
def test_missing_data_only_exits_3(real: Real) -> None:
    r = replay(real, "-jitoption", "JitAggressiveInlining=1", "-c", "1-50")
    assert r.returncode == 3, r.stdout + r.stderr
    out = parse_output(r.stdout.splitlines(), r.stderr.splitlines())
    assert (
        out.failures and {f.kind for f in out.failures} == {"missing"} and out.failed_compiles == []
    )
    assert (
        out.failures[0].method_context == 1
        and "InitClass->GetIndex(key) != -1" in out.failures[0].message
    )
    run = run_native(
        [
            str(real.superpmi),
            "-jitoption",
            "JitAggressiveInlining=1",
            "-c",
            "1",
            str(real.jit_checked),
            str(real.api),
        ],
        timeout=60,
    )
    assert run.describe() == "exit status 3 (Misses: missing data only)"


@pytest.mark.live
def test_a_c_past_the_end_is_an_input_error(real: Real, tmp_path: Path) -> None:
    r = replay(real, "-c", "6000")
    assert r.returncode == 255 and r.stderr == "" and len(r.stdout.splitlines()) == 2, (
        r.stdout + r.stderr
    )
    assert parse_output(r.stdout.splitlines(), r.stderr.splitlines()).failures == []
    got = repro(
        *repro_args(*real.command("-c", "6000"), out="b", options=("--failure", "assert")),
        cwd=tmp_path,
    )
    assert got.returncode == 3, got.stdout + got.stderr
    assert (
        "-c asks for method context 6000; the collection has 5657" in got.stderr
        and "no crash" not in got.stdout
    )


@pytest.mark.live
def test_repro_of_a_real_assert_keeps_only_the_setting_it_needs(real: Real, tmp_path: Path) -> None:
    out = tmp_path / "a"
    r = repro(
        *repro_args(
            *real.command(
                "-jitoption",
                "JitStressRegs=800",
                "-jitoption",
                "JitEnableNoWayAssert=1",
                "-jitoption",
                "JitNoForceFallback=1",
            ),
            out=str(out),
            options=("--failure", "assert"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(out)
    validate(rep)
    assert rep["outcome"] == "verified"
    f = rep["target"]["failure"]
    assert (f["kind"], f["method_context"], f["source_line"]) == ("assert", 503, 3928)
    assert (
        f["file"] == "/_/src/src/jit/codegenxarch.cpp"
        and f["message"] == "node->gtRegNum != addr->gtRegNum"
    )
    copy = tmp_path / "copy.mch"
    c = real.mcs_run("-copy", "503", real.api, copy)
    assert c.returncode == 0, c.stdout + c.stderr
    assert (out / "repro.mch").read_bytes() == copy.read_bytes()
    assert rep["target"]["options"]["needed"] == ["JitStressRegs=800"]
    assert set(rep["target"]["options"]["dropped"]) == {
        "JitEnableNoWayAssert=1",
        "JitNoForceFallback=1",
    }
    # The -boa stop under gdb is the assert; the phase comes from the JIT's state there, when it can
    # be read.
    d = rep["diagnosis"]
    assert (
        d["folded"][:2] == ["DebugBreakorAV", "MyICJI::doAssert"]
        and d["method_context"]["number"] == 503
    )
    phase = (d.get("jit") or {}).get("phase_name")
    assert rep["title"].startswith(
        "Assertion failed 'node->gtRegNum != addr->gtRegNum' in 'Finalizer:ThrottledCollect():this'"
    )
    # 3.1's JIT knows the phase it completed last, not the one running: the title (dotnet/runtime's
    # "during '<phase>'" shape) does not claim it; the description says "after" it
    assert "'None'" not in rep["title"] and " during '" not in rep["title"]
    assert phase is None or f"after {phase}" in rep["issue"]["description"]
    md = (out / "report.md").read_text()
    assert f["line"] in md and "codegenxarch.cpp" in md and "3928" in md
    assert (
        "paired with the ISSUE: <ASSERT> line by its IL size"
        in rep["locate"]["method_context_source"]
    )


@pytest.mark.live
def test_a_crash_p_hid_is_found(real: Real, tmp_path: Path) -> None:
    parent = replay(real, "-p", "-jitoption", "JitStress=1")
    # no word of a crash
    assert parent.returncode == 1 and "Loaded 0  Jitted 0  FailedCompile 0" in parent.stdout
    r = repro(*repro_args(*real.command("-p", "-jitoption", "JitStress=1"), out="p"), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "p")
    assert rep["outcome"] == "verified" and rep["diagnosis"]["signal"]["name"] == "SIGSEGV"
    assert rep["diagnosis"]["null_map"]["member"] == "GetGSCookie"
    assert any("dropped `-p`" in n for n in rep["command"]["notes"])
    assert "dotnet/runtime#56506" in [b["id"] for b in rep["known_bugs"]]


@dataclass(frozen=True)
class PRunLog:
    """3.1's superpmi.py prints to stdout (saved by the user as the log): `Starting SuperPMI
    replay.`, its temp location, `Invoking:` and superpmi's own output; its -p run lost a worker
    and said nothing of it. The run, the method contexts it says it loaded, and the repro from its
    log."""

    run: subprocess.CompletedProcess[str]
    loaded: int
    repro: ReproRun


@pytest.fixture(scope="module")
def p_run_log(real: Real, tmp_path_factory: pytest.TempPathFactory) -> PRunLog:
    tmp = tmp_path_factory.mktemp("p-run-log")
    temp = tmp / "tmpq3x9"
    temp.mkdir()
    argv = [
        str(real.superpmi),
        "-p",
        "-f",
        str(temp / "fail.mcl"),
        "-r",
        str(temp / "repro"),
        "-jitoption",
        "force",
        "AltJit=",
        "-jitoption",
        "force",
        "AltJitNgen=",
        str(real.jit_checked),
        str(real.api_reljit),
    ]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "\nLoaded " in run.stdout, run.stdout + run.stderr
    loaded = int(run.stdout.split("\nLoaded ")[1].split()[0])
    fail = (temp / "fail.mcl").read_text() if (temp / "fail.mcl").exists() else ""
    log = tmp / "superpmi.log"
    log.write_text(
        "\n".join(
            [
                "Starting SuperPMI replay.",
                "",
                f"Temp Location: {temp}",
                "",
                f"Invoking: {' '.join(argv)}",
                *run.stdout.splitlines(),
                *run.stderr.splitlines(),
                *(["Complition failures.", fail] if fail.strip() else []),
            ]
        )
        + "\n"
    )
    for p in sorted(temp.iterdir()):  # superpmi.py's TempDir is gone when the log is read
        p.unlink()
    temp.rmdir()
    return PRunLog(run, loaded, repro_run("--from-log", str(log), "--out", "b", cwd=tmp, out="b"))


@pytest.mark.live
def test_a_31_p_run_loses_a_worker_silently(p_run_log: PRunLog) -> None:
    assert p_run_log.loaded < 5514


@pytest.mark.live
def test_from_log_of_a_31_p_run(p_run_log: PRunLog) -> None:
    rep = p_run_log.repro.report
    assert rep["outcome"] == "verified" and rep["diagnosis"]["signal"]["name"] == "SIGSEGV"
    assert rep["diagnosis"]["null_map"]["member"] == "GetMethodSig"
    assert "dotnet/runtime#56506" in [b["id"] for b in rep["known_bugs"]]


@pytest.mark.live
def test_from_log_of_a_31_p_run_drops_p_and_the_temp_files(p_run_log: PRunLog, real: Real) -> None:
    cmd = p_run_log.repro.report["command"]
    assert (
        cmd["input"] == str(real.api_reljit)
        and "-p" not in cmd["options"]
        and "-f" not in cmd["options"]
    )


@pytest.mark.live
def test_from_log_of_a_31_p_run_says_p_hid_a_crash(p_run_log: PRunLog) -> None:
    rep = p_run_log.repro.report
    cmd = rep["command"]
    hid = [n for n in cmd["notes"] if n.startswith("-p hid a crash: ")]
    assert hid and f"counts {p_run_log.loaded} of 5,514 method contexts" in hid[0], cmd["notes"]
    # the log's fatal line is kept (command.from_log)
    assert json.dumps(rep).count("-p lost a worker") >= 1
