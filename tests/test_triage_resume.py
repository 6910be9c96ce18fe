"""`spmi-dbg triage` picking up after deaths, with real gdb and real processes: a partition's task
finding the journal a dead worker left (`running` set, the lock free) counts the death, halves a
window that died twice and gives up on a single method context that did, and goes on; a coordinator
SIGKILL'd mid-run is continued by `--resume` without replaying its finished partitions, leaving no
process behind; `--resume` where there is no triage is a one-line error."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.driver.select import pick
from spmi_dbg.repro.command import ReproCommand, from_argv
from spmi_dbg.triage import journal as journals
from spmi_dbg.triage.coverage import coverage
from spmi_dbg.triage.journal import DEATHS_BEFORE_SPLIT, Journal, Running
from spmi_dbg.triage.plan import TriagePartition, member_names, plan_partitions
from spmi_dbg.triage.task import KILLER_REASON, PartitionTask, run_partition

from .support.common import Collections, replaying, wait_for
from .support.natives import BASE, REPLAY, SEED_COMMAND
from .support.pipeline import no_replays_left, repro_args, triage, validate
from .test_repro_failure import failures_collection

# The worker-death collection: 40 method contexts, seed crashes at 12 and 30, a JIT assert and a
# failed compile.
SEED_AT = (12, 30)
ASSERT_AT, NULL_AT = 5, 25
# The --resume collection: 300 method contexts in partitions of 100; the hang's replay runs when the
# coordinator dies.
HANG = 150
TIMEOUT = "6"


@pytest.fixture(scope="module")
def small(cols: Collections) -> Path:
    return cols.get(
        "resume-deaths",
        40,
        arch="arm64",
        seed=2,
        inject=[
            ("seed-arm64", SEED_AT[0]),
            ("seed-arm64", SEED_AT[1]),
            ("jit-assert", ASSERT_AT),
            ("jit-null", NULL_AT),
        ],
    )


def _one_partition(mch: Path) -> tuple[ReproCommand, TriagePartition]:
    cmd = from_argv([*SEED_COMMAND, str(mch)])
    parts = plan_partitions([cmd], 1, partition_methods=cmd.count)
    assert [(p.spec, p.methods) for p in parts] == [("1-40", 40)]
    return cmd, parts[0]


def _run(cmd: ReproCommand, p: TriagePartition, directory: Path) -> dict[str, Any]:
    task = PartitionTask(cmd, p, pick("gdb"), 30.0, str(directory), 1000)
    returned = run_partition(task, where="test-worker")
    saved = journals.read(directory, p.index)
    # saved as returned
    assert saved is not None and journals.with_records(saved).to_json() == returned.to_json()
    out = returned.to_json()
    # those are in the records
    assert saved.failures == [] and all(s.outcome is None for s in saved.segments)
    return out


def _check_accounted(
    out: dict[str, Any], mch: Path, crashed: int, not_reached: int, failed: int
) -> None:
    j = Journal.from_json(out)
    assert j.done and j.accounted == 40 and j.running is None and j.window_end is None
    [cov] = coverage([j], member_names([str(mch)]))
    assert (
        cov.method_contexts,
        cov.crashed,
        sum(cov.not_reached.values()),
        cov.failed_compile,
        cov.partitions,
    ) == (40, crashed, not_reached, failed, 1)
    assert cov.replayed_clean == 40 - crashed - not_reached - failed


def test_a_window_that_killed_its_worker_twice_is_halved(small: Path, tmp_path: Path) -> None:
    cmd, p = _one_partition(small)
    directory = tmp_path / "partitions"
    directory.mkdir()
    dead = "the worker replaying -c 1-40 (gone (pid 1)) died; replayed again from 1"
    # As the second worker to die left it: the first death counted, its own replay of the whole
    # window running.
    journals.save(
        directory,
        Journal(
            p,
            running=Running(1, 40, "1-40", "gone (pid 2)"),
            deaths={"1-40": DEATHS_BEFORE_SPLIT - 1},
            notes=[dead],
            attempts=2,
        ),
    )
    out = _run(cmd, p, directory)
    assert out["deaths"] == {"1-40": 2} and out["attempts"] == 3
    assert out["notes"] == [
        dead,
        "the worker replaying -c 1-40 (gone (pid 2)) died; replayed again from 1",
    ]
    # The first replay is the first half; after the crash in it the rest is one window again.
    assert [s["compile"] for s in out["segments"]] == ["1-20", "13-40", "31-40"]
    assert [s["outcome"]["kind"] for s in out["segments"]] == ["fatal", "fatal", "exited"]
    assert all(s["by"] == "test-worker" for s in out["segments"])
    assert [
        (c["method_context"], c["segment"], c["expectation"]["signal"]) for c in out["crashes"]
    ] == [(SEED_AT[0], 1, "SIGSEGV"), (SEED_AT[1], 2, "SIGSEGV")]
    assert out["killers"] == [] and out["not_reached"] == [] and out["tool_failures"] == []
    assert sorted({f["method_context"] for f in out["failures"]} | set(out["failed_compiles"])) == [
        ASSERT_AT,
        NULL_AT,
    ]
    _check_accounted(out, small, crashed=2, not_reached=0, failed=2)
    assert (directory / "p1" / "seg-1.stdout").is_file() and not (
        directory / "p1" / "seg-4.stdout"
    ).exists()


def test_a_method_context_that_killed_its_worker_twice_is_given_up(
    small: Path, tmp_path: Path
) -> None:
    cmd, p = _one_partition(small)
    directory = tmp_path / "partitions"
    directory.mkdir()
    # The halvings of 12-40 (each window died twice) narrowed the replay to method context 12 alone,
    # which killed its worker once already and was running when the next worker died too.
    deaths = {"12-40": 2, "12-25": 2, "12-18": 2, "12-14": 2, "12-12": 1}
    journals.save(
        directory,
        Journal(
            p,
            accounted=SEED_AT[0] - 1,
            window_end=SEED_AT[0],
            running=Running(12, 12, "12", "gone"),
            deaths=deaths,
            attempts=9,
        ),
    )
    out = _run(cmd, p, directory)
    assert out["deaths"] == deaths | {"12-12": 2} and out["attempts"] == 10
    assert out["killers"] == [SEED_AT[0]]
    assert out["not_reached"] == [{"compile": "12", "reason": KILLER_REASON}]
    # the rest, after the killer
    assert [s["compile"] for s in out["segments"]] == ["13-40", "31-40"]
    assert [c["method_context"] for c in out["crashes"]] == [SEED_AT[1]]
    assert set(out["failed_compiles"]) | {f["method_context"] for f in out["failures"]} == {NULL_AT}
    _check_accounted(out, small, crashed=1, not_reached=1, failed=1)
    # A done journal is returned as it is, without a replay.
    path = journals.journal_path(directory, p.index)
    before = path.read_bytes()
    again = run_partition(PartitionTask(cmd, p, pick("gdb"), 30.0, str(directory), 1000))
    assert again.to_json() == out
    assert path.read_bytes() == before and len(list((directory / "p1").glob("seg-*.stdout"))) == 2


# --resume after the coordinator was SIGKILL'd


@pytest.fixture(scope="module")
def hanging(cols: Collections) -> Path:
    """A hang in partition 2 of 3 (the largest: it starts first) and two crashes of other kinds
    elsewhere."""
    return cols.get(
        "resume-hang",
        300,
        arch="arm64",
        seed=5,
        inject=[("seed-arm64", 40), ("hang", HANG), ("poison", 250), ("poison-crash", 260)],
    )


def _args(mch: Path, out: str, *extra: str) -> list[str]:
    return [
        "--workers",
        "2",
        "--partition-methods",
        "100",
        "--timeout",
        TIMEOUT,
        "--failure",
        "missing",
        "--out",
        out,
        *extra,
        "--",
        *SEED_COMMAND,
        str(mch),
    ]


def _journals(parts: Path) -> dict[int, dict[str, Any]]:
    out = {}
    for f in parts.glob("p[0-9]*.json"):
        with contextlib.suppress(OSError, ValueError):
            out[int(f.stem[1:])] = json.loads(f.read_text())
    return out


def _descendants(pid: int) -> dict[int, tuple[str, str]]:
    """pid -> (start time, command line) of every process under `pid`."""
    out: dict[int, tuple[str, str]] = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
                with contextlib.suppress(OSError):
                    started = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[19]
                    cmdline = (
                        Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                    )
                    out[int(child)] = (started, cmdline)
                    out |= _descendants(int(child))
    return out


def _alive(procs: dict[int, tuple[str, str]]) -> list[str]:
    """Those of `procs` still running (the same process: same start time; a zombie is not
    running)."""
    alive = []
    for pid, (started, cmdline) in procs.items():
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if fields[19] == started and fields[0] != "Z":
                alive.append(f"{pid}: {cmdline}")
    return alive


def _buckets(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "buckets": sorted(
            (b["bucket"], b["kind"], b["signal"], b["method_contexts"]) for b in data["buckets"]
        ),
        "crashes": [(c["member"], c["bucket"], c["kind"]) for c in data["crashes"]],
        "coverage": data["coverage"],
    }


@pytest.fixture(scope="module")
def resume_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the reference triage (ref/) and the killed then resumed one (t/) run."""
    return tmp_path_factory.mktemp("resume")


@pytest.fixture(scope="module")
def expected(hanging: Path, resume_dir: Path) -> dict[str, Any]:
    """The buckets, crashes and coverage of the same triage run without a kill."""
    ref = triage(*_args(hanging, "ref"), cwd=resume_dir)
    assert ref.returncode == 0, ref.stdout + ref.stderr
    return _buckets(json.loads((resume_dir / "ref" / "triage.json").read_text()))


@dataclass(frozen=True)
class Killed:
    """A triage whose coordinator was SIGKILL'd inside the hang's replay: the processes under it
    then, and the partitions' journals it left (those done, as bytes; the replays interrupted)."""

    procs: dict[int, tuple[str, str]]
    left: dict[int, dict[str, Any]]
    done: dict[int, bytes]
    interrupted: dict[int, dict[str, Any]]


@pytest.fixture(scope="module")
def killed(hanging: Path, resume_dir: Path) -> Killed:
    parts = resume_dir / "t" / "partitions"
    proc = subprocess.Popen(
        [sys.executable, "-m", "spmi_dbg", "triage", *_args(hanging, "t")],
        cwd=resume_dir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=dict(os.environ, COLUMNS="200"),
    )
    try:

        def hang_running_and_one_done() -> dict[int, dict[str, Any]] | None:
            js = _journals(parts)
            running = [j["running"] for j in js.values() if j.get("running")]
            hang = any(r["from"] <= HANG <= r["to"] for r in running)
            return js if hang and any(j["done"] for j in js.values()) else None

        wait_for(hang_running_and_one_done)
        wait_for(lambda: replaying(HANG, hanging))  # inside the hang's replay (TIMEOUT seconds)
        # its debuggers (each in a session of its own) and their replays
        procs = _descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)  # the coordinator alone, as the OOM killer would
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    left = _journals(parts)
    done = {i: journals.journal_path(parts, i).read_bytes() for i, j in left.items() if j["done"]}
    interrupted = {i: j["running"] for i, j in left.items() if not j["done"] and j.get("running")}
    return Killed(procs, left, done, interrupted)


@dataclass(frozen=True)
class Resumed:
    """`--resume` of the killed triage: its result, triage.json and the journals after it."""

    result: subprocess.CompletedProcess[str]
    data: dict[str, Any]
    after: dict[int, dict[str, Any]]


@pytest.fixture(scope="module")
def resumed(hanging: Path, resume_dir: Path, killed: Killed) -> Resumed:
    r = triage(*_args(hanging, "t", "--resume"), cwd=resume_dir)
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads((resume_dir / "t" / "triage.json").read_text())
    return Resumed(r, data, _journals(resume_dir / "t" / "partitions"))


def test_the_triage_killed_has_three_buckets(hanging: Path, expected: dict[str, Any]) -> None:
    assert sorted((kind, signal, members) for _, kind, signal, members in expected["buckets"]) == [
        ("crash", "SIGABRT", [f"{hanging.name}:260"]),
        ("crash", "SIGSEGV", [f"{hanging.name}:40"]),
        ("hang", None, [f"{hanging.name}:{HANG}"]),
    ]


def test_the_coordinator_was_killed_with_debuggers_and_replays_running(killed: Killed) -> None:
    procs = killed.procs
    assert any(Path(cmdline.split(" ")[0]).name == "gdb" for _, cmdline in procs.values()), procs
    assert any(
        Path(cmdline.split(" ")[0]).name == "spmi-replay" for _, cmdline in procs.values()
    ), procs


def test_the_killed_coordinator_left_partitions_done_and_one_interrupted(killed: Killed) -> None:
    done, interrupted = killed.done, killed.interrupted
    assert (
        done and len(done) < 3 and any(r["from"] <= HANG <= r["to"] for r in interrupted.values())
    )


def test_resume_finds_what_a_triage_without_the_kill_finds(
    resumed: Resumed, expected: dict[str, Any]
) -> None:
    assert "Traceback" not in resumed.result.stderr
    validate(resumed.data, "triage-3.json")
    assert _buckets(resumed.data) == expected
    [cov] = resumed.data["coverage"]
    assert cov["method_contexts"] == 300 and cov["not_reached"] == 0 and cov["crashed"] == 3


def test_resume_does_not_replay_the_finished_partitions(
    resumed: Resumed, killed: Killed, resume_dir: Path
) -> None:
    data = resumed.data
    assert (
        data["engine"]["resumed_partitions"] == sorted(killed.done)
        and data["engine"]["partitions"] == 3
    )
    parts = resume_dir / "t" / "partitions"
    for i, before in killed.done.items():  # finished before the kill: not replayed, not rewritten
        assert journals.journal_path(parts, i).read_bytes() == before


def test_resume_counts_each_interrupted_replay_as_a_death(resumed: Resumed, killed: Killed) -> None:
    after = resumed.after
    # each interrupted replay counted once as its worker's death
    for i, running in killed.interrupted.items():
        window = f"{running['from']}-{running['to']}"
        assert after[i]["done"] and after[i]["deaths"] == {window: 1}, after[i]
        assert any(f"died; replayed again from {running['from']}" in n for n in after[i]["notes"])
        # the first replay after the kill
        replayed_again = after[i]["segments"][len(killed.left[i]["segments"])]
        assert (
            replayed_again["compile"].startswith(f"{running['from']}-")
            and replayed_again["by"] != running["by"]
        )
    notes = resumed.data["notes"]
    assert sum("died; replayed again from" in n for n in notes) == len(killed.interrupted)


def test_resume_leaves_no_process_behind(resumed: Resumed, killed: Killed, hanging: Path) -> None:
    deadline = time.monotonic() + 10
    while _alive(killed.procs) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive(killed.procs) == []
    assert no_replays_left(hanging)


def test_resume_where_there_is_no_triage(small: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (empty, tmp_path / "missing"):
        r = triage(
            *repro_args(REPLAY, BASE, str(small), out=str(out), options=("--resume",)), cwd=tmp_path
        )
        assert r.returncode == 3, r.stdout + r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
        assert (
            lines[0] == f"spmi-dbg triage: error: {out}: --resume: no triage to resume here (no "
            "partitions/plan.json)"
        )
        assert r.stdout == ""
    assert list(empty.iterdir()) == []


def _finished_clean_triage(cols: Collections, tmp_path: Path, per: int) -> list[str]:
    """A complete triage of a clean 30-method collection into tmp_path/t, partitions of `per`; its
    arguments."""
    mch = cols.get("resume-clean", 30)
    argv = ["--partition-methods", str(per), "--out", "t", "--", REPLAY, BASE, str(mch)]
    first = triage(*argv, cwd=tmp_path)
    assert first.returncode == 2, first.stdout + first.stderr
    return argv


# "[]": a traceback from run.replay_partitions before ddc383d
@pytest.mark.parametrize("text", ["{}", "[]"])
def test_resume_with_a_broken_journal(cols: Collections, tmp_path: Path, text: str) -> None:
    """A journal broken by a foreign hand is that partition's failure, named in triage.json; never a
    traceback."""
    argv = _finished_clean_triage(cols, tmp_path, 30)
    path = tmp_path / "t" / "partitions" / "p1.json"
    path.write_text(text)
    r = triage("--resume", *argv, cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 4, r.stdout + r.stderr
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    [failure] = data["engine"]["task_failures"]
    assert (
        failure["partition"] == 1
        and f"{path}: not a partition journal of this spmi-dbg" in failure["why"]
    )
    assert data["coverage"][0]["not_reached"] == 30 and path.read_text() == text


@pytest.mark.parametrize("how", ["not-an-object", "another-collection", "no-partitions"])
def test_resume_with_a_broken_plan(cols: Collections, tmp_path: Path, how: str) -> None:
    """A plan.json broken by a foreign hand is one error line naming it, as an unreadable one is."""
    argv = _finished_clean_triage(cols, tmp_path, 15)
    path = tmp_path / "t" / "partitions" / "plan.json"
    saved = json.loads(path.read_text())
    assert [p["compile"] for p in saved["partitions"]] == ["1-15", "16-30"]
    broken = (
        [saved]
        if how == "not-an-object"
        else saved | {"partitions": [saved["partitions"][0] | {"collection": "/elsewhere/x.mch"}]}
        if how == "another-collection"
        else saved | {"partitions": []}
    )
    path.write_text(json.dumps(broken))
    for journal in path.parent.glob("p[0-9]*.json"):
        journal.unlink()
    r = triage("--resume", *argv, cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 3, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "plan.json" in lines[0] and "--resume" in lines[0], r.stderr


def test_a_moved_output_directory_resumes_exactly(cols: Collections, tmp_path: Path) -> None:
    """The journals name their replays' records where the output directory was: moved (after a full
    disk, say), a resume finds them where it is now; a record that cannot be read makes its
    partition replayed again, never counted clean (issue 37 item 1)."""
    mch = failures_collection(cols)
    argv = ["--partition-methods", "50", "--", REPLAY, BASE, str(mch)]
    first = triage("--out", "t", *argv, cwd=tmp_path)
    assert first.returncode in (0, 1, 2), first.stdout + first.stderr
    expected = json.loads((tmp_path / "t" / "triage.json").read_text())["coverage"]
    assert expected[0]["failed_compile"] > 0
    (tmp_path / "t").rename(tmp_path / "moved")
    again = triage("--resume", "--out", "moved", *argv, cwd=tmp_path)
    assert again.returncode == first.returncode, again.stdout + again.stderr
    data = json.loads((tmp_path / "moved" / "triage.json").read_text())
    assert [{k: c[k] for k in COUNTS} for c in data["coverage"]] == [
        {k: c[k] for k in COUNTS} for c in expected
    ]
    assert not any("cannot be read" in n for n in data["notes"]), data["notes"]
    # a lost record: its partition is replayed again, and says so
    parts = tmp_path / "moved" / "partitions"
    next(parts.glob("p1/seg-*.json")).unlink()
    lost = triage("--resume", "--out", "moved", *argv, cwd=tmp_path)
    assert lost.returncode == first.returncode, lost.stdout + lost.stderr
    data = json.loads((tmp_path / "moved" / "triage.json").read_text())
    assert [{k: c[k] for k in COUNTS} for c in data["coverage"]] == [
        {k: c[k] for k in COUNTS} for c in expected
    ]
    assert 1 not in data["engine"]["resumed_partitions"]
    assert any("partition 1 replayed again" in n for n in data["notes"]), data["notes"]


COUNTS = ("method_contexts", "replayed_clean", "crashed", "failed_compile", "not_reached")
