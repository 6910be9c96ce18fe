"""`spmi-dbg repro --from-log`: the failing command recovered from a superpmi.py log
(superpmi-conventions.md 3.1), then the whole pipeline with real gdb (and lldb 16) on the sample
seed crash."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from spmi_dbg.repro.fromlog import parse_log

from .support.common import DEBUGGERS, Collections, mc_bytes
from .support.natives import BASE, DIFF, REPLAY
from .support.pipeline import (
    ReproRun,
    assert_null_map,
    assert_refused,
    render_fixture,
    report,
    repro,
    repro_run,
)


@pytest.mark.unit
def test_parse_log_picks_the_failing_run_and_its_hints() -> None:
    text = "\n".join(
        [
            "Running SuperPMI replay of /c/a.mch",
            "Invoking: git rev-parse HEAD",
            "Invoking: /core_root/superpmi -v ewi -f /tmp/x/a_fail.mcl /core_root/libclrjit.so "
            "/c/a.mch",
            "ERROR: Method 17 of size 40 failed to load and compile correctly by JIT1",
            "ISSUE: <ASSERT> #23 /src/jit/morph.cpp (123) - Assertion failed 'x' in 'M:N()' "
            "during 'Morph' (IL size 9)",
            "MISSING: Method context 31 is missing a recorded getClassName answer",
            "Compilation failures",
            "Method numbers with compilation failures:",
            "17",
            "23",
            "44",
            "Running SuperPMI replay of /c/b.mch",
            "[10:00:01] Invoking: C:\\core_root\\superpmi.exe -v ewi /core_root/libclrjit.so "
            "/c/b.mch",
            "[10:00:09] ERROR: main method 9 of size 12 failed to load and compile correctly by "
            "JIT2",
            "[10:00:09] Fatal error, SuperPMI has returned SIGSEGV (segmentation fault), please "
            "check the log",
        ]
    )
    runs = parse_log(text)
    assert [r.mch for r in runs] == ["/c/a.mch", "/c/b.mch"]  # git's Invoking: line is not superpmi
    assert runs[0].argv[0] == "/core_root/superpmi" and runs[0].line == 3
    assert runs[0].hints == [17, 23, 31, 44] and runs[0].severity == 1
    assert runs[1].hints == [9] and runs[1].severity == 2  # the run that died is the one reproduced


@dataclass(frozen=True)
class FromLog:
    """`spmi-dbg repro --from-log` of the rendered fixture log under one debugger, and the seed
    collection the log names (big.mch)."""

    run: ReproRun
    big: Path


@pytest.fixture(scope="module", params=DEBUGGERS)
def from_log(
    request: pytest.FixtureRequest, cols: Collections, tmp_path_factory: pytest.TempPathFactory
) -> FromLog:
    tmp = tmp_path_factory.mktemp(f"from-log-{request.param}")
    log, big = render_fixture(tmp, cols)
    args = ("--from-log", str(log), "--workers", "2", "--verify-runs", "1", "--out", "b")
    return FromLog(repro_run(*args, cwd=tmp, out="b", debugger=request.param), big)


def test_from_log_finds_the_seed_crash(from_log: FromLog) -> None:
    rep = from_log.run.report
    assert rep["outcome"] == "verified"
    d = rep["diagnosis"]
    assert d["method_context"]["number"] == 300 and rep["locate"]["method_context"] == 300
    assert_null_map(d, "CompileResult", "CompileMethod")
    assert d["null_map"]["role"].startswith("base compile result")
    assert (from_log.run.bundle / "repro.mch").read_bytes() == mc_bytes(from_log.big, 300)


def test_from_log_command_is_the_failing_runs(from_log: FromLog) -> None:
    cmd = from_log.run.report["command"]
    assert cmd["input"] == str(from_log.big) and cmd["jits"] == [BASE, DIFF]
    # The temp files are gone, -p is dropped; the replay options stay.
    assert cmd["options"] == [
        "-a",
        "-v",
        "ewi",
        "-target",
        "arm64",
        "-bug",
        "91257",
        "-jitoption",
        "force",
        "JitEnableNoWayAssert=1",
        "-jitoption",
        "force",
        "JitNoForceFallback=1",
        "-jit2option",
        "force",
        "JitEnableNoWayAssert=1",
        "-jit2option",
        "force",
        "JitNoForceFallback=1",
        "-failureLimit",
        "100",
    ]


def test_from_log_notes_say_where_the_command_came_from(from_log: FromLog) -> None:
    cmd = from_log.run.report["command"]
    notes = cmd["notes"]
    assert (
        notes[0]
        == "command from superpmi.4.log line 14 (asm diffs of "
        + str(from_log.big)
        + "; of 2 runs in the log, the first that failed fatally)"
    )
    assert sum("superpmi.py's temporary file no longer exists" in n for n in notes) == 5
    assert any("dropped `-p`" in n for n in notes)
    assert cmd["from_log"]["line"] == 14 and cmd["from_log"]["failures"] == [
        "ERROR: Couldn't load base metrics summary created by child process"
    ]
    assert "command from superpmi.4.log line 14" in from_log.run.text("report.md")


def test_from_log_bad_logs_are_one_line_errors(cols: Collections, tmp_path: Path) -> None:
    log, _ = render_fixture(tmp_path, cols)
    no_invoking = tmp_path / "no-invoking.log"
    no_invoking.write_text(
        "\n".join(ln for ln in log.read_text().splitlines() if "Invoking:" not in ln) + "\n"
    )
    cases = {
        ("--from-log", str(no_invoking)): "no-invoking.log: no superpmi command in the log",
        ("--from-log", str(tmp_path / "none.log")): "none.log: superpmi.py log not found",
        (
            "--from-log",
            str(log),
            "--",
            REPLAY,
            BASE,
            str(log),
        ): "--from-log takes the whole command from the log",
    }
    assert_refused(repro, cases, tmp_path)


def _with_output(log: Path, *lines: str) -> Path:
    """The fixture log with more output lines of the failing (big.mch) run, after its Invoking:
    line."""
    text = log.read_text().splitlines()
    at = next(i for i, ln in enumerate(text) if "Invoking:" in ln and "big.mch" in ln) + 1
    text[at:at] = [f"[15:39:20] {ln}" for ln in lines]
    out = log.with_name("superpmi.5.log")
    out.write_text("\n".join(text) + "\n")
    return out


def test_from_log_replays_the_named_method_contexts_first(
    cols: Collections, tmp_path: Path
) -> None:
    log, big = render_fixture(tmp_path, cols)
    log = _with_output(
        log,
        "ERROR: Method 7 of size 52 failed to load and compile correctly by JIT2 (diff.so).",
        "ISSUE: <ASSERT> #300 importer.cpp (92) - Assertion failed 'x' in 'M' during 'Import' "
        "(IL size 34; hash 0x1; Tier0)",
    )
    r = repro(
        "--from-log", str(log), "--workers", "2", "--verify-runs", "1", "--out", "b", cwd=tmp_path
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert rep["command"]["from_log"]["hints"] == [7, 300]
    parts = rep["locate"]["partitions"]
    # no full replay
    assert [(p["partition"], p["compile"], p["status"]) for p in parts] == [(0, "7,300", "fatal")]
    assert rep["locate"]["method_context"] == 300
    assert any(
        "were replayed first, alone, and the crash is among them" in n
        for n in rep["locate"]["notes"]
    )
    assert (tmp_path / "b" / "repro.mch").read_bytes() == mc_bytes(big, 300)


def test_from_log_named_method_contexts_that_do_not_crash(
    cols: Collections, tmp_path: Path
) -> None:
    log, _ = render_fixture(tmp_path, cols)
    log = _with_output(
        log, "ERROR: Method 7 of size 52 failed to load and compile correctly by JIT2 (diff.so)."
    )
    r = repro(
        "--from-log", str(log), "--workers", "2", "--verify-runs", "1", "--out", "b", cwd=tmp_path
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    parts = rep["locate"]["partitions"]
    assert [(p["partition"], p["compile"]) for p in parts] == [
        (0, "7"),
        (1, "1-200"),
        (2, "201-400"),
    ]
    assert parts[0]["status"] == "exited" and rep["locate"]["method_context"] == 300
    assert any("without a crash: then the whole selection" in n for n in rep["locate"]["notes"])


@pytest.mark.unit
def test_parse_log_of_31s_superpmi_py_and_a_lost_worker() -> None:
    """3.1's superpmi.py: `Starting SuperPMI replay.`, no `Running ... of`; the collection is the
    command's input. Its -p parent says nothing of a dead worker but its summary falls short of the
    collection."""
    from spmi_dbg.repro.fromlog import lost_worker

    text = "\n".join(
        [
            "Starting SuperPMI replay.",
            "",
            "Temp Location: /tmp/tmpab",
            "",
            "Invoking: /b/superpmi -p -f /tmp/tmpab/fail.mcl -r /tmp/tmpab/repro -jitoption force "
            "AltJit= "
            "/b/libclrjit.so /c/api.mch",
            "Using child (/b/superpmi) with args ( -reproName /tmp/tmpab/repro /b/libclrjit.so "
            "/c/api.mch)",
            " workerCount=2, skipCleanup=0.",
            "Loaded 0  Jitted 0  FailedCompile 0 Excluded 0",
            "ERROR: JIT2 main method 7 of size 3 failed to load and compile correctly.",
        ]
    )
    runs = parse_log(text)
    assert [(r.mode, r.mch, r.line, r.loaded, r.hints) for r in runs] == [
        ("SuperPMI replay", "/c/api.mch", 5, 0, [7])
    ]
    line = lost_worker(runs[0], 5657)
    assert line is not None and line.startswith(
        "-p lost a worker: the parent's summary counts 0 of 5,657 "
    )
    assert lost_worker(runs[0], 0) is None and lost_worker(runs[0], None) is None
    runs[0].argv.remove("-p")
    # a short summary without -p is a -c list, not a lost worker
    assert lost_worker(runs[0], 5657) is None


def test_from_log_of_a_run_that_never_replayed_says_so_first(
    cols: Collections, tmp_path: Path
) -> None:
    """A logged superpmi run that printed its usage (an unknown switch) replayed nothing: that is
    said first, in one line, and nothing is replayed (issue 36 item 7)."""
    log, _ = render_fixture(tmp_path, cols)
    refused = _with_output(
        log,
        "SuperPMI is a JIT compiler testing tool.",
        "ERROR: Unknown switch '-bogus' passed as argument.",
    )
    r = repro("--from-log", str(refused), "--out", str(tmp_path / "b"), cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "never replayed anything" in lines[0], r.stderr
    assert "Unknown switch '-bogus'" in lines[0]
    assert not (tmp_path / "b").exists()
