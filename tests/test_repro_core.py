"""`spmi-dbg repro --core`: post-mortem on a real core file of the seed crash (real gdb, or lldb 16
with
--debugger lldb; real processes), then isolate and verify live."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from .support.common import BUNDLE_FILES, DEBUGGERS, Collections, mc_bytes, seed_collection
from .support.natives import BASE, DIFF, REPLAY, SEED_COMMAND, SEED_OPTIONS
from .support.pipeline import assert_seed_diagnosis, make_core, report, repro, repro_args, validate


def check_seed_bundle(bundle: Path, mch: Path, debugger: str = "gdb") -> dict[str, object]:
    for name in BUNDLE_FILES:
        assert (bundle / name).is_file(), name
    rep = report(bundle)
    assert rep["outcome"] == "verified" and rep["exit_code"] == 0
    d = json.loads((bundle / "diagnosis.json").read_text())
    assert_seed_diagnosis(d)
    assert (bundle / "repro.mch").read_bytes() == mc_bytes(mch, 300)
    assert rep["verification"]["accepted"] and rep["verification"]["debugger_run"]["reproduced"]
    assert rep["locate"]["partitions"][0]["status"] == "fatal"
    assert any(
        n.startswith("post-mortem: the fatal stop is the core file") for n in rep["locate"]["notes"]
    )
    log = (bundle / "debugger.log").read_text()
    if debugger == "gdb":
        # the MI transcript
        assert d["debugger"].startswith("gdb ") and "-target-select core" in log
    else:
        # the worker's log
        assert d["debugger"].startswith("lldb 16") and "# lldb worker: core" in log
    return rep


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_core_with_the_command(cols: Collections, tmp_path: Path, debugger: str) -> None:
    mch = seed_collection(cols)
    argv = [*SEED_COMMAND, str(mch)]
    core = make_core(argv, tmp_path)
    r = repro(
        *repro_args(*argv, out="b", verify_runs=1, options=("--core", str(core))),
        cwd=tmp_path,
        debugger=debugger,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = check_seed_bundle(tmp_path / "b", mch, debugger)
    validate(rep)
    assert "method context: 300" in r.stdout
    # The same diagnosis as the live run under the same debugger finds (same bucket).
    live = repro(
        *repro_args(*argv, out="live", workers=2, verify_runs=1), cwd=tmp_path, debugger=debugger
    )
    assert live.returncode == 0, live.stdout + live.stderr
    assert (
        report(tmp_path / "live")["diagnosis"]["bucket"]
        == report(tmp_path / "b")["diagnosis"]["bucket"]
    )
    # Without the command: lldb cannot read it from a core at all, gdb reads only its first 80
    # characters (this one is longer): both say what to do.
    r = repro("--core", str(core), cwd=tmp_path, debugger=debugger)
    assert r.returncode == 3 and "give the superpmi command after --" in r.stderr, r.stderr


def test_core_names_its_own_short_command(cols: Collections, tmp_path: Path) -> None:
    """No command after --: the core's own (80-character) command line is used when it is
    complete."""
    mch = tmp_path / "s.mch"
    shutil.copyfile(seed_collection(cols), mch)
    for name, target in (("r", REPLAY), ("b.so", BASE), ("d.so", DIFF)):
        os.symlink(target, tmp_path / name)
    core = make_core(["./r", *SEED_OPTIONS, "b.so", "d.so", "s.mch"], tmp_path)
    r = repro("--core", core.name, "--verify-runs", "1", "--out", "b", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = check_seed_bundle(tmp_path / "b", mch)
    assert rep["command"]["input"] == str(mch)  # type: ignore[index]


def test_core_with_a_truncated_command_asks_for_it(cols: Collections, tmp_path: Path) -> None:
    mch = seed_collection(cols)
    core = make_core([*SEED_COMMAND, str(mch)], tmp_path)
    r = repro("--core", str(core), cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("usage:")]
    assert len(lines) == 1 and "give the superpmi command after --" in lines[0], r.stderr
    r = repro("--core", str(tmp_path / "no-core"), "--", REPLAY, BASE, str(mch), cwd=tmp_path)
    assert r.returncode == 3 and "no-core: core file not found" in r.stderr, r.stderr


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_core_with_relative_jit_paths_names_the_jit(
    cols: Collections, tmp_path: Path, debugger: str
) -> None:
    """A fatal fault in the JIT (`-bug 56506`: not converted, as on Linux) from a command with
    relative paths: the post-mortem names the JIT's role as the live run does (the base JIT), never
    "not on the command line"; with the command given after --, and (gdb) from the core's own
    command line, resolved against its directory."""
    shutil.copyfile(cols.get("core-jit-null", 30, inject=[("jit-null", 12)]), tmp_path / "n.mch")
    for name, target in (("r", REPLAY), ("b.so", BASE)):
        os.symlink(target, tmp_path / name)
    argv = ["./r", "-bug", "56506", "./b.so", "n.mch"]
    core = make_core(argv, tmp_path)
    live = repro(
        *repro_args(*argv, out="live", workers=1, verify_runs=1), cwd=tmp_path, debugger=debugger
    )
    assert live.returncode == 0, live.stdout + live.stderr
    runs = [("given", ["--", *argv])] + ([("core's own", [])] if debugger == "gdb" else [])
    for out, command in runs:
        r = repro(
            "--core",
            core.name,
            "--verify-runs",
            "1",
            "--out",
            out,
            *command,
            cwd=tmp_path,
            debugger=debugger,
        )
        assert r.returncode == 0, out + r.stdout + r.stderr
        rep = report(tmp_path / out)
        validate(rep)
        fm = rep["diagnosis"]["faulting_module"]
        assert (
            fm["role"]
            == "JIT (JIT1)"
            == report(tmp_path / "live")["diagnosis"]["faulting_module"]["role"]
        ), fm
        assert os.path.samefile(fm["path"], BASE)
        assert (
            "faulting module: JIT (JIT1): " in r.stdout
            and "not on the command line" not in r.stdout
        )
        assert rep["diagnosis"]["bucket"] == report(tmp_path / "live")["diagnosis"]["bucket"]
