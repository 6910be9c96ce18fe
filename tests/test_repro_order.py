"""The crash a repro reports is the one the user's command dies at (issue 26 item 2): the first in
the command's order, for any number of workers and whatever the timing. Here partition 2 of 2
crashes at its first record at once while partition 1 crashes only near its end: the answer is
still partition 1's; `--first-found` takes the first in time and says what it did not wait for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .support.common import Collections
from .support.natives import BASE, REPLAY
from .support.pipeline import report, repro, repro_args

EARLY, LATE = 590, 601  # in the command's order: 590 first; in time (2 workers): 601 first


@pytest.fixture(scope="module")
def col(cols: Collections) -> Path:
    """Two JIT faults that kill the process (-bug 56506: no fault handler around the JIT)."""
    return cols.get("order", 1200, inject=[("jit-null", EARLY), ("jit-null", LATE)])


def run(col: Path, tmp_path: Path, *extra: str) -> tuple[int, dict[str, object], str]:
    r = repro(
        *repro_args(REPLAY, "-bug", "56506", BASE, str(col), out="b", verify_runs=1, options=extra),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    loc = rep["locate"]
    assert isinstance(loc, dict)
    return int(loc["method_context"]), loc, r.stdout


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_the_answer_is_the_commands_first_crash(col: Path, tmp_path: Path, workers: int) -> None:
    n, loc, out = run(col, tmp_path, "--workers", str(workers))
    assert n == EARLY, loc
    parts = loc["partitions"]
    assert isinstance(parts, list)
    winner = next(p for p in parts if p["partition"] == loc["winner"])
    before = [p for p in parts if p["partition"] < loc["winner"]]
    after = [p for p in parts if p["partition"] > loc["winner"]]
    assert winner["status"] == "fatal"
    assert all(p["status"] == "exited" for p in before)  # ran to their end: no earlier crash
    # after it: cancelled, or already ended (a crash there comes later in the command's order)
    assert all(p["status"] in ("cancelled", "fatal", "exited", "not run") for p in after)
    assert "--first-found" not in out


def test_first_found_takes_the_first_in_time_and_says_so(col: Path, tmp_path: Path) -> None:
    """Whatever the timing: the answer is one of the command's crashes, and the note names exactly
    the partitions before the winner that were cut short (none when every one of them ended)."""
    n, loc, out = run(col, tmp_path, "--workers", "2", "--first-found")
    assert n in (EARLY, LATE), loc
    parts = loc["partitions"]
    assert isinstance(parts, list)
    cut = sorted(
        (int(p["partition"]), str(p["compile"]))
        for p in parts
        if p["partition"] < loc["winner"] and p["status"] not in ("exited", "fatal")
    )
    said = loc["first_found"]
    named = sorted(
        (int(i), spec)
        for i, spec in re.findall(r"partition (\d+) \(-c ([^)]*)\) was cancelled", str(said))
    )
    assert named == cut, loc
    assert (said is None) == (not cut)
    if said is not None:
        assert f"note: {said}" in out
    if n == LATE:  # the partition of the command's first crash did not end: it is named
        assert cut, loc


def test_a_crash_is_said_when_the_failure_sought_is_not_there(col: Path, tmp_path: Path) -> None:
    """Issue 26 item 3: `--failure assert` on a command that dies before any assert: not "no such
    failure" (2) but the crash, with its method context and bucket, exit 1."""
    r = repro(
        *repro_args(
            REPLAY, "-bug", "56506", BASE, str(col), out="f", options=("--failure", "assert")
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    rep = report(tmp_path / "f")
    assert rep["outcome"] == "crashed"
    why = str(rep["failure"])
    assert why.startswith(f"no JIT assert before superpmi died: SIGSEGV at method context {EARLY} ")
    assert "(in bucket " in why and "run without --failure for the crash" in why
    assert "result: superpmi crashed before the failure sought (exit 1" in r.stdout
    assert "no such failure" not in r.stdout
