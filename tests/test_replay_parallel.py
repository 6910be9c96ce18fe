"""spmi-replay -p: workers are re-runs of the executable with -stride, per-worker ParallelSuperPMI-*
temp files, merged results; a worker that dies leaves the parent with the 2023 symptoms of
dotnet/runtime#91257 (superpmi-conventions.md 1.3)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .support.common import Collections
from .support.natives import BASE, DIFF, REPLAY, SEED_OPTIONS
from .support.replay import replay, summary


def env_with_tmp(tmp: Path) -> dict[str, str]:
    return dict(os.environ, TMPDIR=str(tmp))


def test_parallel_matches_sequential_and_cleans_up(cols: Collections, tmp_path: Path) -> None:
    mch = str(cols.mixed())
    work = tmp_path / "tmp"
    work.mkdir()
    seq = replay(
        "-a",
        "-v",
        "ewmin",
        "-f",
        str(tmp_path / "seq.mcl"),
        "-details",
        str(tmp_path / "seq.csv"),
        BASE,
        DIFF,
        mch,
    )
    par = replay(
        "-a",
        "-p",
        "3",
        "-f",
        str(tmp_path / "par.mcl"),
        "-details",
        str(tmp_path / "par.csv"),
        BASE,
        DIFF,
        mch,
        env=env_with_tmp(work),
    )
    assert seq.returncode == par.returncode == 1
    assert summary(par.stdout) == summary(seq.stdout)
    # merged and sorted
    assert (tmp_path / "par.mcl").read_bytes() == (tmp_path / "seq.mcl").read_bytes()
    seq_rows = (tmp_path / "seq.csv").read_text().splitlines()
    par_rows = (tmp_path / "par.csv").read_text().splitlines()
    assert par_rows[0] == seq_rows[0] and sorted(par_rows[1:]) == sorted(seq_rows[1:])
    # Worker output: MISSING and ISSUE lines passed through, ERROR lines re-logged by the parent.
    assert any(
        ln.startswith("MISSING: Method context 30 failed to replay: ")
        for ln in par.stdout.splitlines()
    )
    assert any(ln.startswith("ISSUE: <ASSERT> #20 ") for ln in par.stdout.splitlines())
    assert "ERROR: Unexpected exception c0000005 was thrown." in par.stderr.splitlines()
    lines = par.stdout.splitlines()
    assert (
        lines[0]
        == f"Using child ({os.path.realpath(REPLAY)}) with args ( -applyDiff {BASE} {DIFF} {mch})"
    )
    assert (
        lines[1] == f" failingMCList={tmp_path / 'par.mcl'}"
        and lines[2] == " workerCount=3, skipCleanup=0."
    )
    assert re.fullmatch(r"Total time: \d+\.\d+ms", lines[-1])
    assert list(work.iterdir()) == []  # temp files deleted


def test_worker_killed_by_the_seed_crash(cols: Collections, tmp_path: Path) -> None:
    mch = str(cols.seed_arm64())
    work = tmp_path / "tmp"
    work.mkdir()
    r = replay(
        *SEED_OPTIONS,
        "-p",
        "2",
        "-f",
        str(tmp_path / "f.mcl"),
        "-baseMetricsSummary",
        str(tmp_path / "base.csv"),
        "-diffMetricsSummary",
        str(tmp_path / "diff.csv"),
        "-skipCleanup",
        BASE,
        DIFF,
        mch,
        env=env_with_tmp(work),
    )
    # The worker with context 700 (even numbers: worker 1) died of SIGSEGV before writing its
    # summary.
    assert (
        "ERROR: Couldn't load base metrics summary created by child process"
        in r.stderr.splitlines()
    )
    assert r.returncode == 255  # GeneralFailure
    assert summary(r.stdout)[0] == 600  # only the surviving worker's summary line
    assert not (tmp_path / "base.csv").exists()

    names = sorted(p.name for p in work.iterdir())
    rand = re.fullmatch(r"ParallelSuperPMI-(\d+)-0\.mcl", names[0])
    assert rand, names
    R = rand.group(1)
    assert names == sorted(
        [
            f"ParallelSuperPMI-{R}-0.mcl",
            f"ParallelSuperPMI-{R}-1.mcl",
            f"ParallelSuperPMI-BaseMetricsSummary-{R}-0.csv",
            f"ParallelSuperPMI-DiffMetricsSummary-{R}-0.csv",
            f"ParallelSuperPMI-stdout-{R}-0.txt",
            f"ParallelSuperPMI-stdout-{R}-1.txt",
            f"ParallelSuperPMI-stderr-{R}-0.txt",
            f"ParallelSuperPMI-stderr-{R}-1.txt",
        ]
    )
    # The dead worker's output stops at its last progress line (workers run with -v ewmin: no
    # progress).
    dead = (work / f"ParallelSuperPMI-stdout-{R}-1.txt").read_text()
    assert "Loaded" not in dead and "ISSUE: <ASM_DIFF>" in dead


def test_signal_death_counts_as_exit_code_1(cols: Collections, tmp_path: Path) -> None:
    # Without metrics summaries the parent only sees the worker's exit status: the 2023 PAL turned a
    # signal death into exit code 1, which outranks the other worker's Diffs (2).
    r = replay(
        *SEED_OPTIONS,
        "-p",
        "2",
        BASE,
        DIFF,
        str(cols.seed_arm64()),
        env=env_with_tmp(tmp_path),
    )
    assert r.returncode == 1 and r.stderr == ""
    assert list(tmp_path.iterdir()) == []


def test_parallel_misses_and_clean(cols: Collections, tmp_path: Path) -> None:
    r = replay("-p", "2", "-v", "n", BASE, str(cols.clean()), env=env_with_tmp(tmp_path))
    assert (
        r.returncode == 0
        and r.stdout == "Loaded 1200  Jitted 1200  FailedCompile 0 Excluded 0 Missing 0\n"
    )
    mch = str(cols.get("missonly", 40, inject=[("missing", 3), ("missing", 4)]))
    r = replay("-p", "2", "-v", "ewmin", BASE, mch, env=env_with_tmp(tmp_path))
    assert r.returncode == 3 and summary(r.stdout) == (40, 40, 2, 0, 2)
