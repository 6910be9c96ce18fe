"""`spmi-dbg repro --debugger lldb` where it has no gdb twin: real lldb 16 (SB API, in the worker
process), the replay core as real processes. The crash classes both debuggers go through are
parametrized by debugger in tests/test_repro.py, test_repro_core.py and test_repro_fromlog.py (lldb
16 cannot read the seed's method context at -O2, debugger-notes.md: there the pipeline bisects
natively, and those tests say so)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .support.common import Collections, seed_collection
from .support.natives import BASE, DIFF, REPLAY, SEED_COMMAND, SEED_OPTIONS
from .support.pipeline import report, repro


def lldb(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return repro(*args, cwd=cwd, timeout=timeout, debugger="lldb")


def test_same_bucket_as_gdb(cols: Collections, tmp_path: Path) -> None:
    mch = seed_collection(cols)
    argv = [
        "--workers",
        "2",
        "--verify-runs",
        "1",
        "--",
        *SEED_COMMAND,
        str(mch),
    ]
    a = lldb("--out", "l", *argv, cwd=tmp_path)
    b = repro("--out", "g", *argv, cwd=tmp_path)
    assert a.returncode == 0 and b.returncode == 0, a.stdout + b.stdout
    assert (
        report(tmp_path / "l")["diagnosis"]["bucket"]
        == report(tmp_path / "g")["diagnosis"]["bucket"]
    )


def test_first_chance_faults_and_asserts_are_passed_on(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get(
        "repro-lldb-mixed",
        400,
        arch="arm64",
        seed=2,
        inject=[("jit-null", 50), ("jit-assert", 120), ("seed-arm64", 300)],
    )
    r = lldb(
        "--workers",
        "1",
        "--verify-runs",
        "1",
        "--out",
        "b",
        "--",
        REPLAY,
        "-boa",
        *SEED_OPTIONS,
        BASE,
        DIFF,
        str(mch),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert rep["locate"]["method_context"] == 300  # neither 50 nor 120: the replay survives those
    passed = [
        (s["method_context"], s["signal"], s["kind"], s["delivered"])
        for s in rep["locate"]["stops_passed"]
    ]
    assert ("SIGSEGV", "first-chance", True) in {p[1:] for p in passed}
    # delivered: today's superpmi catches SIGTRAP (its PAL makes the break an exception)
    assert ("SIGTRAP", "debug-break", True) in {p[1:] for p in passed}
    assert all(p[1] != "SIGSEGV" or p[0] in (50, None) for p in passed)
    err = (tmp_path / "b" / "replay.stderr").read_text()
    assert "ERROR: Unexpected exception c0000005 was thrown." in err  # the replay's own handler ran
    assert "ERROR: SuperPMI: Assert Failure" in err


def test_lldb_missing_names_the_packages(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-clean", 300)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = str(Path(sys.executable).parent)  # no lldb-16 to ask for its module path
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "spmi_dbg",
            "repro",
            "--debugger",
            "lldb",
            "--",
            REPLAY,
            BASE,
            str(mch),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert r.returncode == 3, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("usage:")]
    assert len(lines) == 1 and "lldb-16 python3-lldb-16 liblldb-16-dev" in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_triage_under_lldb_gives_the_gdb_buckets(cols: Collections, tmp_path: Path) -> None:
    """lldb's session is a fresh worker per replay (select.FreshSession): the same crashes and
    buckets as gdb's session that runs its inferior again, each replay's transcript in its own file.
    The working directory holds a directory named `lldb` (the --out of the lldb run): it must not
    shadow lldb's Python module in the worker."""
    mch = cols.get(
        "triage-lldb",
        200,
        arch="arm64",
        seed=2,
        inject=[("seed-arm64", 40), ("stack-overflow", 90), ("seed-arm64", 150)],
    )
    argv = [
        "--workers",
        "2",
        "--verify-runs",
        "0",
        "--failure",
        "missing",
        "--",
        *SEED_COMMAND,
        str(mch),
    ]
    found = {}
    for debugger in ("lldb", "gdb"):
        chosen = ["--debugger", "lldb"] if debugger == "lldb" else []
        r = subprocess.run(
            [sys.executable, "-m", "spmi_dbg", "triage", *chosen, "--out", debugger, *argv],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=300,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        data = json.loads((tmp_path / debugger / "triage.json").read_text())
        assert data["debugger"] == debugger
        found[debugger] = {b["bucket"]: b["method_contexts"] for b in data["buckets"]}
        for seg in data["segments"]:  # every replay's debugger transcript is its own file
            log = tmp_path / debugger / "partitions" / f"p{seg['partition']}"
            assert any(log.glob("seg-*.debugger.log"))
    assert found["lldb"] == found["gdb"] and len(found["gdb"]) == 2
    assert sorted(m for ms in found["gdb"].values() for m in ms) == sorted(
        f"{mch.name}:{n}" for n in (40, 90, 150)
    )
