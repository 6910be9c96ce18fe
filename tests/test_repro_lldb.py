"""`spmi-dbg repro --debugger lldb` end to end: real lldb 16 (SB API, in the worker process), the replay core as
real processes, the same crash classes as the gdb tests. lldb 16 cannot read the seed's method context at -O2
(debugger-notes.md): there the pipeline bisects natively, and the tests say so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .test_report import validate
from .test_repro import (
    BASE,
    DIFF,
    REPLAY,
    SEED_OPTIONS,
    Collections,
    assert_seed_diagnosis,
    cols,
    mc_bytes,
    no_replays_left,
    report,
    repro,
    seed_collection,
)
from .test_repro_core import make_core
from .test_repro_fromlog import render_fixture

__all__ = ["cols"]


def lldb(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return repro("--debugger", "lldb", *args, cwd=cwd, timeout=timeout)


def check_seed(bundle: Path, mch: Path) -> dict[str, object]:
    rep = report(bundle)
    validate(rep)
    assert rep["outcome"] == "verified" and rep["exit_code"] == 0
    d = json.loads((bundle / "diagnosis.json").read_text())
    assert d["debugger"].startswith("lldb 16")
    assert_seed_diagnosis(d)
    assert (bundle / "repro.mch").read_bytes() == mc_bytes(mch, 300)
    assert rep["verification"]["accepted"] and rep["verification"]["debugger_run"]["reproduced"]
    return rep


def test_seed_crash_in_a_p_worker(cols: Collections, tmp_path: Path) -> None:
    mch = seed_collection(cols)
    r = lldb("--workers", "2", "--out", "b", "--", REPLAY, *SEED_OPTIONS, "-p", BASE, DIFF, str(mch), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = check_seed(tmp_path / "b", mch)
    assert rep["locate"]["winner"] == 2  # type: ignore[index]
    assert any("dropped `-p`" in n for n in rep["command"]["notes"])  # type: ignore[index]
    # lldb 16 at -O2 has no frame for the inlined InvokeNearDiffer: the number comes from the bisection.
    assert rep["locate"]["method_context_source"].startswith("native bisection")  # type: ignore[index]
    assert "# fatal stop: SIGSEGV near-null" in (tmp_path / "b" / "debugger.log").read_text()
    assert "method context: 300" in r.stdout and "verification: 4/4 runs" in r.stdout


def test_same_bucket_as_gdb(cols: Collections, tmp_path: Path) -> None:
    mch = seed_collection(cols)
    argv = ["--workers", "2", "--verify-runs", "0", "--", REPLAY, *SEED_OPTIONS, BASE, DIFF, str(mch)]
    a = lldb("--out", "l", *argv, cwd=tmp_path)
    b = repro("--out", "g", *argv, cwd=tmp_path)
    assert a.returncode == 0 and b.returncode == 0, a.stdout + b.stdout
    assert report(tmp_path / "l")["diagnosis"]["bucket"] == report(tmp_path / "g")["diagnosis"]["bucket"]


def test_state_dependent_crash_is_minimized(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-poison", 400, inject=[("poison", 100), ("poison-crash", 200)])
    r = lldb("--workers", "2", "--out", "b", "--", REPLAY, BASE, str(mch), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert rep["diagnosis"]["signal"]["name"] == "SIGABRT"
    assert rep["locate"]["method_context"] == 200
    assert rep["minimization"]["method_contexts"] == [100, 200] and rep["repro"]["records"] == 2
    assert (tmp_path / "b" / "repro.mch").read_bytes() == mc_bytes(mch, 100) + mc_bytes(mch, 200)
    assert rep["verification"]["accepted"]


def test_hang(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-hang", 400, inject=[("hang", 250)])
    r = lldb("--workers", "2", "--timeout", "3", "--verify-runs", "1", "--out", "b", "--", REPLAY, BASE, str(mch),
             cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    d = rep["diagnosis"]
    assert d["hang"] is True and d["signature"].startswith("hang | Compiler::optCanonicalizeLoops")
    assert rep["locate"]["method_context"] == 250
    assert {p["partition"]: p["status"] for p in rep["locate"]["partitions"]} == {1: "exited", 2: "hang"}
    threads = rep["locate"]["hang_threads"]
    assert threads and "Compiler::optCanonicalizeLoops" in [f["function"] for f in threads[0]["frames"][:3]]
    assert rep["verification"]["debugger_run"]["reproduced"]
    assert no_replays_left(mch) and no_replays_left(tmp_path / "b" / "repro.mch")


def test_first_chance_faults_and_asserts_are_passed_on(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-lldb-mixed", 400, arch="arm64", seed=2,
                   inject=[("jit-null", 50), ("jit-assert", 120), ("seed-arm64", 300)])
    r = lldb("--workers", "1", "--verify-runs", "1", "--out", "b", "--", REPLAY, "-boa", *SEED_OPTIONS, BASE, DIFF,
             str(mch), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert rep["locate"]["method_context"] == 300  # neither 50 nor 120: the replay survives those
    passed = [(s["method_context"], s["signal"], s["kind"], s["delivered"]) for s in rep["locate"]["stops_passed"]]
    assert ("SIGSEGV", "first-chance", True) in {p[1:] for p in passed}
    assert ("SIGTRAP", "debug-break", False) in {p[1:] for p in passed}  # absorbed: no SIGTRAP handler
    assert all(p[1] != "SIGSEGV" or p[0] in (50, None) for p in passed)
    err = (tmp_path / "b" / "replay.stderr").read_text()
    assert "ERROR: Unexpected exception c0000005 was thrown." in err  # the replay's own handler ran
    assert "ERROR: SuperPMI: Assert Failure" in err


def test_from_log(cols: Collections, tmp_path: Path) -> None:
    log, big = render_fixture(tmp_path, cols)
    r = lldb("--from-log", str(log), "--workers", "2", "--verify-runs", "1", "--out", "b", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert rep["outcome"] == "verified" and rep["locate"]["method_context"] == 300
    assert (tmp_path / "b" / "repro.mch").read_bytes() == mc_bytes(big, 300)
    assert rep["command"]["from_log"]["line"] == 14


def test_core_file(cols: Collections, tmp_path: Path) -> None:
    mch = seed_collection(cols)
    argv = [REPLAY, *SEED_OPTIONS, BASE, DIFF, str(mch)]
    core = make_core(argv, tmp_path)
    r = lldb("--core", str(core), "--verify-runs", "1", "--out", "b", "--", *argv, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = check_seed(tmp_path / "b", mch)
    assert any(n.startswith("post-mortem: the fatal stop is the core file") for n in rep["locate"]["notes"])  # type: ignore[index]
    assert "# lldb worker: core" in (tmp_path / "b" / "debugger.log").read_text()
    # Without the command: lldb cannot read it from the core, and says what to do.
    r = lldb("--core", str(core), cwd=tmp_path)
    assert r.returncode == 3 and "give the superpmi command after --" in r.stderr, r.stderr


def test_lldb_missing_names_the_packages(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-clean", 300)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = str(Path(sys.executable).parent)  # no lldb-16 to ask for its module path
    r = subprocess.run([sys.executable, "-m", "spmi_dbg", "repro", "--debugger", "lldb", "--", REPLAY, BASE, str(mch)],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert r.returncode == 3, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("usage:")]
    assert len(lines) == 1 and "lldb-16 python3-lldb-16 liblldb-16-dev" in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def _workers() -> list[int]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"spmi_dbg.driver.lldb_worker" in f.read():
                        out.append(int(pid))
            except OSError:
                continue
    return out


def test_worker_killed_mid_run_is_retried_then_a_tool_failure(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-hang", 400, inject=[("hang", 250)])
    killed: list[int] = []
    done = threading.Event()

    def killer() -> None:  # SIGKILL each lldb worker of this run 1.5 s after it appears
        seen: dict[int, float] = {}
        while not done.is_set():
            now = time.monotonic()
            for pid in _workers():
                seen.setdefault(pid, now)
                if pid not in killed and now - seen[pid] > 1.5:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            time.sleep(0.05)

    t = threading.Thread(target=killer)
    t.start()
    try:
        r = lldb("--workers", "1", "--timeout", "60", "--out", "b", "--", REPLAY, BASE, str(mch), cwd=tmp_path)
    finally:
        done.set()
        t.join()
    assert r.returncode == 4, r.stdout + r.stderr
    assert len(killed) == 2  # one retry with a fresh worker
    part = report(tmp_path / "b")["locate"]["partitions"][0]
    assert part["status"] == "tool-failure" and part["attempts"] == 2
    assert all("killed by SIGKILL" in f for f in part["failures"])
    assert no_replays_left(mch)
