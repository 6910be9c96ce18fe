"""`spmi-dbg repro` end to end: the real command line, real gdb (through pygdbmi) -- and, for the
tests parametrized by debugger, real lldb 16 (`--debugger lldb`) --, the replay core as real
processes, on sample collections with injected crash classes (native/README.md)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .support.common import BUNDLE_FILES, DEBUGGERS, Collections, mc_bytes, seed_collection
from .support.natives import BASE, DIFF, REPLAY, SEED_COMMAND, SEED_OPTIONS
from .support.pipeline import (
    ReproRun,
    assert_refused,
    assert_seed_diagnosis,
    no_replays_left,
    report,
    repro,
    repro_args,
    repro_run,
    validate,
)

# ------------------------------------------------------------------------------------------ the
# seed crash


@pytest.fixture(scope="module", params=DEBUGGERS)
def seed_repro(
    request: pytest.FixtureRequest, cols: Collections, tmp_path_factory: pytest.TempPathFactory
) -> ReproRun:
    """The user's command as superpmi.py ran it: in parallel (-p), where the crash of a worker is
    invisible; one `spmi-dbg repro` of it per debugger, to the default --out."""
    debugger: str = request.param
    mch = seed_collection(cols)
    start = time.monotonic()
    run = repro_run(
        *repro_args(REPLAY, *SEED_OPTIONS, "-p", BASE, DIFF, str(mch), workers=2),
        cwd=tmp_path_factory.mktemp(f"seed-{debugger}"),
        debugger=debugger,
    )
    print(f"seed repro end to end under {debugger}: {time.monotonic() - start:.2f} s")
    return run


def test_seed_bundle_holds_the_crashing_record(seed_repro: ReproRun, cols: Collections) -> None:
    rep = seed_repro.report
    bundle = seed_repro.cwd / rep["bundle"]
    assert bundle.name == f"spmi-repro-{rep['diagnosis']['bucket']}"  # the default --out
    for name in BUNDLE_FILES:
        assert (bundle / name).is_file(), name
    assert_seed_diagnosis(json.loads((bundle / "diagnosis.json").read_text()))
    assert (bundle / "repro.mch").read_bytes() == mc_bytes(seed_collection(cols), 300)


def test_seed_repro_is_verified(seed_repro: ReproRun) -> None:
    rep = seed_repro.report
    assert rep["outcome"] == "verified" and rep["exit_code"] == 0 and rep["failed_phase"] is None
    validate(rep)
    assert rep["verification"]["rate"] >= 0.5 and rep["verification"]["accepted"]
    assert rep["verification"]["debugger_run"]["reproduced"] is True
    assert rep["repro"]["method_contexts"] == [300]


def test_seed_is_located_in_the_second_partition_without_p(seed_repro: ReproRun) -> None:
    rep = seed_repro.report
    assert [p["compile"] for p in rep["locate"]["partitions"]] == ["1-200", "201-400"]
    assert rep["locate"]["winner"] == 2 and rep["command"]["options"] == SEED_OPTIONS
    assert any("dropped `-p`" in n for n in rep["command"]["notes"])


def test_seed_report_is_dotnet_runtimes_bug_template(seed_repro: ReproRun) -> None:
    md = seed_repro.text("report.md")
    assert md.startswith(
        "# superpmi SIGSEGV in CompileResult::repCompileMethod for method context 300"
    )
    assert "CompileResult::CompileMethod" in md
    # dotnet/runtime's bug template, filled from facts.
    sections = [
        "### Description",
        "### Reproduction Steps",
        "### Expected behavior",
        "### Actual behavior",
        "### Regression?",
        "### Known Workarounds",
        "### Configuration",
        "### Other information",
    ]
    assert [ln for ln in md.splitlines() if ln.startswith("### ")] == sections
    assert (
        "superpmi segfaults in CompileResult::repCompileMethod (called from NearDiffer::compare) "
        "for method "
        "context 300"
        in md
        and "the base JIT's compile result has no CompileMethod map" in md
    )
    assert "Known upstream: dotnet/runtime#91257" in md and "dotnet/runtime#91783" in md
    assert len(md) < 65536 and "<details><summary>Backtrace" in md


def test_seed_needs_both_jits_by_experiment(seed_repro: ReproRun) -> None:
    rep = seed_repro.report
    # the seed needs the near differ: both JITs
    assert "By experiment: neither JIT crashes on its own" in seed_repro.text("report.md")
    assert (
        rep["regression"]["base_jit"]["crashes"] is False
        and rep["regression"]["diff_jit"]["crashes"] is False
    )


def test_seed_report_names_the_configuration(seed_repro: ReproRun) -> None:
    conf = seed_repro.report["issue"]["configuration"]
    assert conf["target"] == "arm64" and re.fullmatch(r"[0-9a-f]{40}", conf["superpmi"]["build_id"])
    assert [j["role"] for j in conf["jits"]] == ["base JIT (JIT1)", "diff JIT (JIT2)"]
    assert all(j["size"] > 0 and j["build_id"] for j in conf["jits"])


def test_seed_debugger_and_its_transcript(seed_repro: ReproRun) -> None:
    rep = seed_repro.report
    d = json.loads(seed_repro.text("diagnosis.json"))
    version = rep["issue"]["configuration"]["debugger"]["version"]
    log = seed_repro.text("debugger.log")
    if seed_repro.debugger == "gdb":
        assert d["debugger"].startswith("gdb ") and version.startswith("GNU gdb")
        assert "*stopped" in log  # the MI transcript
        # gdb reads the number at -O2: mc->index in the inline frame of InvokeNearDiffer it
        # recovers.
        assert "InvokeNearDiffer" in rep["locate"]["method_context_source"]
    else:
        assert d["debugger"].startswith("lldb 16") and version.startswith("lldb")
        assert "# fatal stop: SIGSEGV near-null" in log  # the lldb worker's log
        # lldb 16 at -O2 has no frame for the inlined InvokeNearDiffer (and cannot read entry
        # values): the number comes from the native bisection.
        assert rep["locate"]["method_context_source"].startswith("native bisection")


def test_seed_summary_panel_in_plain_text_when_piped(seed_repro: ReproRun) -> None:
    out = seed_repro.result.stdout
    assert "method context: 300" in out and "verification: 3/3 native runs" in out
    assert f"bundle: {seed_repro.bundle.name}" in out


def test_seed_repro_sh_runs_from_anywhere(seed_repro: ReproRun) -> None:
    # repro.sh is the exact command on the repro, runnable from anywhere.
    script = seed_repro.bundle / "repro.sh"
    assert os.access(script, os.X_OK)
    run = subprocess.run([str(script)], capture_output=True, cwd="/", timeout=60)
    assert run.returncode == -signal.SIGSEGV


def test_friendly_options_form(cols: Collections, tmp_path: Path) -> None:
    mch = seed_collection(cols)
    r = repro(
        *repro_args(
            "-a",
            "-bug",
            "91257",
            out="b",
            workers=2,
            verify_runs=1,
            options=("--mch", str(mch), "--base-jit", BASE, "--jit", DIFF, "--target", "arm64"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    # the bundled spmi-replay by default
    assert rep["command"]["program"] == str(Path(REPLAY).resolve())
    assert rep["command"]["options"] == ["-a", "-bug", "91257", "-target", "arm64"]
    assert rep["repro"]["method_contexts"] == [300] and rep["verification"]["runs"] == 1


# ------------------------------------------------------------------------------------------ other
# crash classes


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_state_dependent_crash_is_minimized_to_two_records(
    cols: Collections, tmp_path: Path, debugger: str
) -> None:
    mch = cols.get("repro-poison", 400, inject=[("poison", 100), ("poison-crash", 200)])
    r = repro(
        *repro_args(REPLAY, BASE, str(mch), out="b", workers=2), cwd=tmp_path, debugger=debugger
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert (
        rep["diagnosis"]["method_context"]["number"] == 200
        and rep["locate"]["method_context"] == 200
    )
    assert rep["diagnosis"]["signal"]["name"] == "SIGABRT"
    single = rep["verification_single_record"]
    assert single["reproduced"] == 0 and not single["accepted"]  # the record alone does not crash
    assert rep["minimization"]["method_contexts"] == [100, 200]
    assert rep["repro"]["records"] == 2 and rep["repro"]["method_contexts"] == [100, 200]
    assert (tmp_path / "b" / "repro.mch").read_bytes() == mc_bytes(mch, 100) + mc_bytes(mch, 200)
    assert rep["verification"]["accepted"] and rep["verification"]["rate"] >= 0.5
    # the environment first (a crash that needs a variable of the user's), then the records
    assert [p["name"] for p in rep["phases"]] == [
        "locate",
        "isolate",
        "verify",
        "environment",
        "minimize",
        "isolate-minimized",
        "verify-minimized",
    ]
    assert rep["environment_experiment"]["whole_reproduced"] is False
    assert (
        "The crashing record alone does not fail: the repro keeps the earlier record(s) 100"
        in (tmp_path / "b" / "report.md").read_text()
    )


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_hang_is_interrupted_and_classified(
    cols: Collections, tmp_path: Path, debugger: str
) -> None:
    mch = cols.get("repro-hang", 400, inject=[("hang", 250)])
    r = repro(
        *repro_args(
            REPLAY, BASE, str(mch), out="b", workers=2, verify_runs=1, options=("--timeout", "2")
        ),
        cwd=tmp_path,
        debugger=debugger,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    validate(rep)
    d = rep["diagnosis"]
    assert d["hang"] is True and d["signature"].startswith("hang | Compiler::optCanonicalizeLoops")
    assert d["method_context"]["number"] == 250 and rep["locate"]["method_context"] == 250
    statuses = {p["partition"]: p["status"] for p in rep["locate"]["partitions"]}
    assert statuses == {1: "exited", 2: "hang"}
    threads = rep["locate"]["hang_threads"]
    # The interrupt lands in the loop, or in BasicBlock::isJumpOnly inlined into it.
    assert threads and "Compiler::optCanonicalizeLoops" in [
        f["function"] for f in threads[0]["frames"][:2]
    ]
    assert rep["verification"]["expected"]["kind"] == "hang"
    assert (
        rep["verification"]["native_runs"][0]["timed_out"]
        and rep["verification"]["debugger_run"]["reproduced"]
    )
    assert (
        "superpmi hangs in Compiler::optCanonicalizeLoops for method context 250"
        in (tmp_path / "b" / "report.md").read_text()
    )
    assert no_replays_left(mch) and no_replays_left(tmp_path / "b" / "repro.mch")


def test_first_chance_faults_are_passed_on(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get(
        "repro-jit-null",
        400,
        arch="arm64",
        seed=2,
        inject=[("jit-null", 50), ("jit-null", 150), ("seed-arm64", 300)],
    )
    r = repro(*repro_args(*SEED_COMMAND, str(mch), out="b", workers=1, verify_runs=1), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    # not 50: those faults are the JIT's, caught
    assert rep["diagnosis"]["method_context"]["number"] == 300
    passed = rep["locate"]["stops_passed"]
    # Each jit-null method faults in both JITs; every fault is passed on and the replay goes on.
    assert [(s["method_context"], s["signal"], s["kind"]) for s in passed] == [
        (50, "SIGSEGV", "first-chance")
    ] * 2 + [(150, "SIGSEGV", "first-chance")] * 2
    assert all(s["frame"] == "Compiler::gtFoldDivByConst" for s in passed)
    out = (tmp_path / "b" / "replay.stderr").read_text()
    # the replay's handler ran
    assert out.count("ERROR: Unexpected exception c0000005 was thrown.") == 4


def test_debug_breaks_and_faults_alone_are_no_crash(cols: Collections, tmp_path: Path) -> None:
    """-boa makes the JIT assert a SIGTRAP under a debugger: passed on with `signal SIGTRAP`, never
    swallowed."""
    mch = cols.get(
        "repro-asserts", 300, inject=[("jit-null", 10), ("jit-assert", 20), ("jit-assert", 220)]
    )
    r = repro(*repro_args(REPLAY, "-boa", BASE, str(mch), out="b", workers=2), cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert rep["outcome"] == "no-crash" and rep["diagnosis"] is None
    kinds = sorted(
        (s["method_context"], s["signal"], s["kind"], s["delivered"])
        for s in rep["locate"]["stops_passed"]
    )
    # The fault and the breaks go to the replay's handlers (today's PAL catches SIGTRAP: a break in
    # the JIT's protected call becomes an exception, the compile fails).
    assert kinds == [
        (10, "SIGSEGV", "first-chance", True),
        (20, "SIGTRAP", "debug-break", True),
        (220, "SIGTRAP", "debug-break", True),
    ]
    # FailedCompile, as natively
    assert [p["exit_status"] for p in rep["locate"]["partitions"]] == [1, 1]
    assert "ERROR: SuperPMI: Assert Failure" in (tmp_path / "b" / "replay.stderr").read_text()


def test_clean_collection_is_no_crash(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-clean", 300)
    r = repro(*repro_args(REPLAY, BASE, str(mch), workers=2), cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "result: no crash" in r.stdout
    rep = report(tmp_path / "spmi-repro-no-crash")
    validate(rep)
    assert rep["outcome"] == "no-crash" and rep["repro"] is None
    assert [p["status"] for p in rep["locate"]["partitions"]] == ["exited", "exited"]
    assert not (tmp_path / "spmi-repro-no-crash" / "repro.mch").exists()


def test_native_bisection_when_debug_info_cannot_tell(cols: Collections, tmp_path: Path) -> None:
    """A stripped superpmi: the stop has no frames to read the method context from."""
    mch = seed_collection(cols)
    stripped = tmp_path / "superpmi"
    subprocess.run(["strip", "-o", str(stripped), REPLAY], check=True)
    r = repro(
        *repro_args(
            str(stripped), *SEED_OPTIONS, BASE, DIFF, str(mch), out="b", workers=2, verify_runs=1
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert rep["locate"]["method_context"] == 300
    assert rep["locate"]["method_context_source"].startswith(
        "native bisection with -c ranges over partition 2"
    )
    assert rep["locate"]["bisection"][0]["compile"] == "201-400"
    assert (tmp_path / "b" / "repro.mch").read_bytes() == mc_bytes(mch, 300)
    assert "native bisection" in (tmp_path / "b" / "report.md").read_text()


# ------------------------------------------------------------------------------------------ bad
# input, tool faults


def test_bad_inputs_are_one_line_errors(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-clean", 300)
    junk = tmp_path / "junk.mch"
    junk.write_bytes(b"\x11\xb4" + b"\0" * 300)
    script = tmp_path / "superpmi.sh"
    script.write_text(f'#!/bin/sh\nexec {REPLAY} "$@"\n')
    script.chmod(0o755)
    cases = {
        ("--", REPLAY, str(tmp_path / "missing" / "libclrjit.so"), str(mch)): "JIT not found",
        ("--", REPLAY, BASE, str(junk)): "junk.mch: record 1 at offset 0: bad magic",
        ("--", REPLAY, BASE, str(tmp_path / "none.mch")): "none.mch: collection not found",
        ("--", str(tmp_path / "superpmi"), BASE, str(mch)): "superpmi program not found",
        (
            "--gdb",
            str(tmp_path / "no-gdb"),
            "--",
            REPLAY,
            BASE,
            str(mch),
        ): "no-gdb not found: gdb is needed",
        ("--", str(script), BASE, str(mch)): "superpmi program is not an ELF executable",
        ("--", REPLAY, BASE): "ERROR: Missing name of an input file.",
        ("--", REPLAY, "-c", "5,3", BASE, str(mch)): "MCL list must be increasing",
        (
            "--workers",
            "0",
            "--",
            REPLAY,
            BASE,
            str(mch),
        ): "--workers: expected a whole number of at least 1, got '0'",
        ("--jit", BASE, "--", REPLAY, BASE, str(mch)): "go with --mch",
    }
    assert_refused(repro, cases, tmp_path)
    # nothing written for a command that was never run
    assert not list(tmp_path.glob("spmi-repro-*"))

    # A JIT that the replay cannot load: superpmi's JitFailedToInit (254) is an input error too.
    bad = tmp_path / "libbad.so"
    bad.write_text("not a shared library\n")
    r = repro(*repro_args(REPLAY, str(bad), str(mch), out="b"), cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "exit status 254 (JitFailedToInit): Startup - LoadLibrary failed" in r.stdout
    assert report(tmp_path / "b")["outcome"] == "input-error"


def _gdb_killer(tmp_path: Path, *, times: int) -> Path:
    """A gdb that is SIGKILLed once its replay runs (gdb has a child), the first `times` times it
    is started."""
    count = tmp_path / "gdb-starts"
    script = tmp_path / "gdb-killed"
    script.write_text(f"""#!/bin/bash
n=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )); echo $n > {count}
gdb "$@" <&0 &
pid=$!
if [ $n -le {times} ]; then
  (until pgrep -P $pid >/dev/null || ! kill -0 $pid 2>/dev/null; do sleep 0.02; done
   kill -9 $pid 2>/dev/null) &
fi
wait $pid
""")
    script.chmod(0o755)
    return script


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rpartition(b")")[2].split()[1])  # the field after the state
    except (OSError, ValueError, IndexError):
        return None


def _descends_from(pid: int, ancestor: int) -> bool:
    seen: set[int] = set()
    while pid > 1 and pid not in seen:
        if pid == ancestor:
            return True
        seen.add(pid)
        pid = _parent(pid) or 0
    return False


def _lldb_workers(ancestor: int) -> list[int]:
    """The lldb workers (spmi_dbg/driver/lldb/replay.py starts `python -P -m
    spmi_dbg.driver.lldb.worker`) below `ancestor` in the process tree: those of this test's own
    repro, not of another run on the machine."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"spmi_dbg.driver.lldb.worker" not in f.read():
                        continue
            except OSError:
                continue
            if _descends_from(int(pid), ancestor):
                out.append(int(pid))
    return out


def _has_child(pid: int) -> bool:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/task/{task}/children").read_text().split():
                return True
    return False


@contextlib.contextmanager
def _lldb_worker_killer() -> Iterator[list[int]]:
    """SIGKILL each lldb worker of this test process's children once it is at work (it has a child:
    the lldb-server that runs its replay); yields the pids killed."""
    killed: list[int] = []
    done = threading.Event()
    me = os.getpid()

    def killer() -> None:
        while not done.is_set():
            for pid in _lldb_workers(me):
                if pid not in killed and _has_child(pid):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            done.wait(0.02)

    t = threading.Thread(target=killer)
    t.start()
    try:
        yield killed
    finally:
        done.set()
        t.join()


def test_the_lldb_worker_killer_kills_only_this_tests_workers(tmp_path: Path) -> None:
    """Another run's worker (here one reparented away from this process, as any process not started
    by this test is) survives; this test's own is killed."""
    at_work = "import subprocess, time; subprocess.Popen(['sleep', '60']); time.sleep(60)"
    fake = [sys.executable, "-c", at_work, "spmi_dbg.driver.lldb.worker"]
    ours = subprocess.Popen(fake, start_new_session=True)  # a group of its own, child included
    started = subprocess.run(
        ["sh", "-c", f"setsid {shlex.join(fake)} >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
        check=True,
    )
    other = int(started.stdout)
    try:
        assert _lldb_workers(os.getpid()) == [ours.pid]
        with _lldb_worker_killer() as killed:
            ours.wait(timeout=30)
        assert killed == [ours.pid] and ours.returncode == -signal.SIGKILL
        os.kill(other, 0)  # still running
    finally:
        for group in (ours.pid, other):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
        ours.wait()


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_debugger_killed_mid_run_is_retried_then_a_tool_failure(
    cols: Collections, tmp_path: Path, debugger: str
) -> None:
    mch = cols.get("repro-hang", 400, inject=[("hang", 250)])
    argv = ["--workers", "1", "--timeout", "60", "--out", "b", "--", REPLAY, BASE, str(mch)]
    # How the debugger is killed differs: gdb is a program named with --gdb (a wrapper that kills
    # it), the lldb worker a Python process of spmi-dbg's own (killed from here, found by its
    # command line).
    if debugger == "gdb":
        r = repro("--gdb", str(_gdb_killer(tmp_path, times=99)), *argv, cwd=tmp_path)
    else:
        with _lldb_worker_killer() as killed:
            r = repro(*argv, cwd=tmp_path, debugger="lldb")
    assert r.returncode == 4, r.stdout + r.stderr
    # One retry with a fresh debugger: the wrapper counts gdb's starts, the killer the workers it
    # killed.
    assert (
        ((tmp_path / "gdb-starts").read_text().strip() == "2")
        if debugger == "gdb"
        else len(killed) == 2
    )
    rep = report(tmp_path / "b")
    validate(rep)
    assert rep["outcome"] == "tool-failure" and rep["failed_phase"] == "locate"
    part = rep["locate"]["partitions"][0]
    assert part["status"] == "tool-failure" and part["attempts"] == 2
    assert len(part["failures"]) == 2 and all("killed by SIGKILL" in f for f in part["failures"])
    assert "result: tool failure" in r.stdout
    assert no_replays_left(mch)  # the replay the dead debugger left behind was killed


def test_gdb_killed_once_is_retried(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-hang", 400, inject=[("hang", 250)])
    gdb = _gdb_killer(tmp_path, times=1)
    r = repro(
        *repro_args(
            REPLAY,
            BASE,
            str(mch),
            out="b",
            workers=1,
            verify_runs=1,
            options=("--gdb", str(gdb), "--timeout", "2"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    part = report(tmp_path / "b")["locate"]["partitions"][0]
    assert part["status"] == "hang" and part["attempts"] == 2 and len(part["failures"]) == 1


@pytest.mark.parametrize("workers", [3])
def test_crash_in_the_first_partition_cancels_the_others(
    cols: Collections, tmp_path: Path, workers: int
) -> None:
    mch = cols.get(
        "repro-early-hang", 300, arch="arm64", seed=2, inject=[("seed-arm64", 40), ("hang", 250)]
    )
    r = repro(
        *repro_args(
            *SEED_COMMAND,
            str(mch),
            out="b",
            workers=str(workers),
            verify_runs=1,
            options=("--timeout", "60"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    statuses = [p["status"] for p in rep["locate"]["partitions"]]
    # the hang did not run to its timeout
    assert statuses[0] == "fatal" and statuses[2] == "cancelled"
    assert rep["repro"]["method_contexts"] == [40]
    assert no_replays_left(mch)


def test_repro_sh_quotes_odd_paths(cols: Collections, tmp_path: Path) -> None:
    odd = tmp_path / 'it\'s a "dir" $HOME'
    odd.mkdir()
    mch = odd / "seed col.mch"
    mch.write_bytes(seed_collection(cols).read_bytes())
    base, diff = odd / "base jit.so", odd / "diff;jit.so"
    base.write_bytes(Path(BASE).read_bytes())
    diff.write_bytes(Path(DIFF).read_bytes())
    r = repro(
        *repro_args(
            REPLAY,
            *SEED_OPTIONS,
            str(base),
            str(diff),
            str(mch),
            out=str(odd / "out dir"),
            workers=2,
            verify_runs=1,
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    bundle = odd / "out dir"
    assert report(bundle)["diagnosis"]["faulting_module"]["role"] == "superpmi (replay host)"
    run = subprocess.run(
        ["sh", str(bundle / "repro.sh")], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 128 + signal.SIGSEGV or run.returncode == -signal.SIGSEGV, run.stderr
    assert f"Using jit({base}) with input ({bundle}/repro.mch)" in run.stdout


@pytest.mark.parametrize("phase", ["isolate", "verify"])
def test_a_later_phase_failure_still_writes_the_bundle(
    cols: Collections, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, phase: str
) -> None:
    """Locate runs for real; a later phase is made to fail (a full disk, a bug of ours)."""
    from spmi_dbg import cli
    from spmi_dbg.repro import pipeline

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    def bug(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(pipeline, phase, disk_full if phase == "verify" else bug)
    monkeypatch.chdir(tmp_path)
    mch = seed_collection(cols)
    rc = cli.main(["repro", "--workers", "2", "--out", "b", "--", *SEED_COMMAND, str(mch)])
    assert rc == 1  # a crash was found, but no verified repro
    bundle = tmp_path / "b"
    rep = report(bundle)
    assert rep["outcome"] == "not-verified" and rep["failed_phase"] == phase
    assert [p["status"] for p in rep["phases"]][-1] == "failed"
    assert json.loads((bundle / "diagnosis.json").read_text())["method_context"]["number"] == 300
    assert (bundle / "debugger.log").stat().st_size > 0 and (bundle / "replay.stdout").exists()
    md = (bundle / "report.md").read_text()
    if phase == "verify":
        assert "No space left on device" in rep["failure"] and f"- failed phase: {phase}:" in md
        assert (bundle / "repro.mch").read_bytes() == mc_bytes(mch, 300)  # isolate's result is kept
        assert (bundle / "repro.sh").exists()
    else:
        assert (
            rep["failure"] == "internal error: RuntimeError: a bug"
            and "RuntimeError" in rep["failure_traceback"]
        )
        assert not (bundle / "repro.mch").exists()


def test_a_crash_repro_keeps_only_the_jit_settings_it_needs(
    cols: Collections, tmp_path: Path
) -> None:
    """The seed crash with two JIT settings it does not need (it needs `-bug 91257`, not a JIT
    setting): repro.sh drops them, and the report says so."""
    mch = seed_collection(cols)
    settings = [
        "-jitoption",
        "JitStressRegs=1",
        "-jit2option",
        "force",
        "JitStressModeNames=STRESS_A STRESS_B",
    ]
    r = repro(
        *repro_args(
            REPLAY,
            *SEED_OPTIONS,
            *settings,
            BASE,
            DIFF,
            str(mch),
            out="b",
            workers=2,
            verify_runs=2,
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    validate(rep)
    js = rep["jit_settings"]
    assert js["needed"] == []
    assert js["dropped"] == ["JitStressRegs=1", "JIT2 force JitStressModeNames=STRESS_A STRESS_B"]
    assert js["summary"].startswith("fails with none of the given JIT settings")
    command = (tmp_path / "b" / "repro.sh").read_text().splitlines()[-1]
    assert "JitStressRegs" not in command and "STRESS_A" not in command and "-bug 91257" in command
    assert any(p["name"] == "minimize-options" and p["status"] == "ok" for p in rep["phases"])
    assert "It fails with none of the given JIT settings" in rep["issue"]["description"]
    # the crash's summary has the line the assert's has (issue 38 item 5)
    assert f"JIT settings: {js['summary']}" in r.stdout


def test_verify_runs_0_is_not_called_verified(cols: Collections, tmp_path: Path) -> None:
    """--verify-runs 0: the repro is replayed only under the debugger, which checks the bucket but
    verifies nothing; the summary says what was and was not run, and the exit status follows (1:
    crash found, repro not verified). Nothing is minimized: nothing says the record alone does not
    crash."""
    mch = seed_collection(cols)
    r = repro(*repro_args(*SEED_COMMAND, str(mch), out="b", workers=2, verify_runs=0), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    validate(rep)
    v = rep["verification"]
    assert rep["outcome"] == "not-verified" and rep["exit_code"] == 1 and not v["accepted"]
    assert v["runs"] == 0 and v["native_runs"] == [] and v["debugger_run"]["reproduced"] is True
    assert v["summary"].startswith(
        "no native run (--verify-runs 0): not verified; under the debugger: same bucket"
    )
    assert f"verification: {v['summary']}" in r.stdout.splitlines()
    assert "result: crash found, repro not verified (exit 1, " in r.stdout
    assert [p["name"] for p in rep["phases"]] == ["locate", "isolate", "verify"]
    assert "A 1-record repro collection is attached (NOT verified)." in rep["issue"]["description"]
