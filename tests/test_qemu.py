"""Linux Arm64 processes debugged from this x64 machine (issue 7): the native core cross-built for
aarch64 (scripts/build-aarch64.sh), run under qemu-aarch64's gdbstub and driven by gdb-multiarch
through the same driver and the same in-debugger analysis. No $_siginfo over the stub: the fault
address comes from the faulting instruction and the registers, and the report says so."""

from __future__ import annotations

import json
import resource
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from .support.common import DEBUGGERS, Collections, aarch64_native, mc_bytes, seed_collection
from .support.natives import BASE, REPLAY, SEED_COMMAND, SEED_OPTIONS
from .support.pipeline import (
    assert_null_map,
    assert_refused,
    report,
    repro,
    repro_args,
    triage,
    triage_collection,
    validate,
)

Q_REPLAY = aarch64_native("bin/spmi-replay")
Q_BASE = aarch64_native("jit/libsamplejit_base.so")
Q_DIFF = aarch64_native("jit/libsamplejit_diff.so")
SYSROOT = "/usr/aarch64-linux-gnu"


def tools() -> None:
    for tool in ("qemu-aarch64", "gdb-multiarch"):
        assert shutil.which(tool), f"{tool} is required (setup-debian.sh --test installs it)"


@pytest.mark.unit
def test_the_arm64_build_is_arm64() -> None:
    from spmi_dbg.elf import elf_build_id

    for path in (Q_REPLAY, Q_BASE, Q_DIFF):
        assert elf_build_id(path)[1] == "aarch64", path


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_seed_crash_under_qemu(cols: Collections, tmp_path: Path, debugger: str) -> None:
    """gdb-multiarch, or lldb 16 as the alternative (gdb-remote to the same stub, the same analysis
    in the worker)."""
    tools()
    mch = seed_collection(cols)
    r = repro(
        *repro_args(
            Q_REPLAY,
            *SEED_OPTIONS,
            "-p",
            Q_BASE,
            Q_DIFF,
            str(mch),
            out="q",
            workers=2,
            verify_runs=2,
            options=("--qemu", "aarch64"),
        ),
        cwd=tmp_path,
        debugger=debugger,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "q")
    validate(rep)
    d = rep["diagnosis"]
    assert d["arch"] == "aarch64" and d["debugger"].startswith(
        "gdb" if debugger == "gdb" else "lldb 16"
    )
    assert d["method_context"]["number"] == 300 and rep["locate"]["method_context"] == 300
    assert d["method_context"]["name"]
    assert_null_map(d, "CompileResult", "CompileMethod")
    assert d["null_map"]["role"].startswith("base compile result")
    assert (
        d["signal"]["name"] == "SIGSEGV"
        and d["signal"]["address"] == 0x14
        and d["signal"]["near_null"]
    )
    assert "computed from the faulting instruction and the registers" in d["signal"]["source"]
    assert d["instruction"]["text"].startswith("ldr")  # an Arm64 load through the null map pointer
    # The .mch is the same file on both architectures: the repro is record 300's bytes.
    assert (tmp_path / "q" / "repro.mch").read_bytes() == mc_bytes(mch, 300)
    assert rep["command"]["emulator"] == ["qemu-aarch64", "-L", SYSROOT]
    assert rep["issue"]["configuration"]["emulator"]["version"].startswith("qemu-aarch64 version")
    assert "computed from the faulting instruction" in (tmp_path / "q" / "report.md").read_text()
    # repro.sh runs the Arm64 replay under qemu, from anywhere.
    run = subprocess.run(
        [str(tmp_path / "q" / "repro.sh")], capture_output=True, cwd="/", timeout=60
    )
    assert run.returncode == -signal.SIGSEGV
    # The same crash, the same bucket as the x64 build under gdb, with either debugger (lldb 16 over
    # qemu's stub unwinds one unnamed frame past main: the signature stops at main).
    x64 = repro(
        *repro_args(*SEED_COMMAND, str(mch), out="x", workers=2, verify_runs=1), cwd=tmp_path
    )
    assert x64.returncode == 0, x64.stdout
    assert report(tmp_path / "x")["diagnosis"]["bucket"] == d["bucket"]


def test_debug_breaks_and_first_chance_faults_under_qemu(cols: Collections, tmp_path: Path) -> None:
    """-boe makes superpmi `brk` after a failed compile (unconditionally; -boa breaks only when
    TracerPid says a debugger is attached, which a qemu guest never sees): SIGTRAP through the stub.
    The guest has no SIGTRAP handler (and /proc cannot tell for a guest): the break is absorbed, the
    pc stepped over `brk`, which would trap again forever otherwise."""
    tools()
    mch = cols.get(
        "qemu-mixed",
        400,
        arch="arm64",
        seed=2,
        inject=[("jit-null", 50), ("jit-assert", 120), ("seed-arm64", 300)],
    )
    r = repro(
        *repro_args(
            Q_REPLAY,
            "-boe",
            *SEED_OPTIONS,
            Q_BASE,
            Q_DIFF,
            str(mch),
            out="q",
            workers=1,
            verify_runs=1,
            options=("--qemu", "aarch64"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "q")
    assert rep["locate"]["method_context"] == 300
    passed = {
        (s["method_context"], s["signal"], s["kind"], s["delivered"])
        for s in rep["locate"]["stops_passed"]
    }
    assert (50, "SIGSEGV", "first-chance", True) in passed
    traps = {p for p in passed if p[1] == "SIGTRAP"}
    # absorbed, never delivered
    assert traps and all(p[2:] == ("debug-break", False) for p in traps), passed
    assert {p[0] for p in traps} <= {50, 120}  # after each failed compile
    err = (tmp_path / "q" / "replay.stderr").read_text() + (
        tmp_path / "q" / "replay.stdout"
    ).read_text()
    assert "ERROR: Unexpected exception c0000005 was thrown." in err
    assert "ERROR: Method 120 of size" in err  # the replay went on past each break


def _core_limit() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def test_arm64_core_file(cols: Collections, tmp_path: Path) -> None:
    """A guest core written by qemu-user, diagnosed here: the PIE executable and its libraries
    relocated."""
    tools()
    mch = seed_collection(cols)
    argv = [Q_REPLAY, *SEED_OPTIONS, Q_BASE, Q_DIFF, str(mch)]
    run = subprocess.run(
        ["qemu-aarch64", "-L", SYSROOT, *argv],
        cwd=tmp_path,
        preexec_fn=_core_limit,
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == -signal.SIGSEGV
    for host_core in tmp_path.glob("core*"):  # qemu's own (host) core, if the kernel wrote one
        host_core.unlink()
    cores = list(tmp_path.glob("qemu_spmi-replay_*.core"))
    assert len(cores) == 1, list(tmp_path.iterdir())
    r = repro(
        *repro_args(
            *argv, out="c", verify_runs=1, options=("--qemu", "aarch64", "--core", str(cores[0]))
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "c")
    d = rep["diagnosis"]
    assert d["method_context"]["number"] == 300 and d["null_map"]["member"] == "CompileMethod"
    assert d["folded"][:2] == ["CompileResult::repCompileMethod", "NearDiffer::compare"]
    notes = rep["locate"]["partitions"][0]["notes"]
    assert any("PIE executable was relocated by 0x" in n for n in notes), notes
    assert (tmp_path / "c" / "repro.mch").read_bytes() == mc_bytes(mch, 300)
    assert json.loads((tmp_path / "c" / "diagnosis.json").read_text())["arch"] == "aarch64"


def test_qemu_bad_inputs(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-clean", 300)
    cases = {
        (
            "--qemu",
            "aarch64",
            "--sysroot",
            str(tmp_path),
            "--",
            Q_REPLAY,
            Q_BASE,
            str(mch),
        ): "no lib/ directory",
        (
            "--qemu",
            "aarch64",
            "--debugger",
            "lldb",
            "--core",
            str(mch),
            "--",
            Q_REPLAY,
            Q_BASE,
            str(mch),
        ): "guest core files are read with gdb-multiarch",
        ("--sysroot", SYSROOT, "--", REPLAY, BASE, str(mch)): "--sysroot goes with --qemu",
        ("--qemu", "aarch64", "--", REPLAY, BASE, str(mch)): "spmi-replay is built for x86_64",
        (
            "--",
            Q_REPLAY,
            Q_BASE,
            str(mch),
        ): "built for aarch64, and this machine is x86_64 (add --qemu aarch64)",
    }
    assert_refused(repro, cases, tmp_path)


def test_triage_under_qemu_gives_the_x64_buckets(cols: Collections, tmp_path: Path) -> None:
    """Three crash kinds (one a stack overflow, whose fault address under qemu comes from the
    instruction): the Arm64 process under qemu and the x64 one bucket them identically."""
    tools()
    mch = triage_collection(cols)
    buckets = {}
    for name, argv in (
        ("arm64", ["--qemu", "aarch64", "--", Q_REPLAY, *SEED_OPTIONS, Q_BASE, Q_DIFF, str(mch)]),
        ("x64", ["--", *SEED_COMMAND, str(mch)]),
    ):
        r = triage("--workers", "2", "--verify-runs", "1", "--out", name, *argv, cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        data = json.loads((tmp_path / name / "triage.json").read_text())
        buckets[name] = {b["bucket"]: b["method_contexts"] for b in data["buckets"]}
    assert buckets["arm64"] == buckets["x64"] and len(buckets["x64"]) == 3


def test_hang_under_qemu(cols: Collections, tmp_path: Path) -> None:
    """qemu-user's stub hears gdb's interrupt only at a syscall or a signal: the driver sends the
    guest SIGINT through qemu instead, and the hang is diagnosed like on x64."""
    tools()
    mch = cols.get("repro-hang", 400, inject=[("hang", 250)])
    r = repro(
        *repro_args(
            Q_REPLAY,
            Q_BASE,
            str(mch),
            out="h",
            workers=2,
            verify_runs=1,
            options=("--qemu", "aarch64", "--timeout", "3"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "h")
    assert rep["diagnosis"]["hang"] is True and rep["locate"]["method_context"] == 250
    assert rep["diagnosis"]["signature"].startswith("hang | Compiler::optCanonicalizeLoops")
    assert rep["verification"]["debugger_run"]["reproduced"]
    # no qemu left behind
    assert subprocess.run(["pgrep", "-f", str(mch)], capture_output=True).returncode == 1
