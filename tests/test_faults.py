"""Nothing lost under faults (issue 37): a run the system stops -- here a full disk, a tmpfs of a
few KiB in a mount namespace of the test's own (`unshare`, no root needed) -- ends in one line and
exit 5 (never a traceback), keeps what it wrote, and a resume once there is room gives the exact
accounting of an uninterrupted run."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spmi_dbg import exits
from spmi_dbg.outdir import exchange, publish, stage
from spmi_dbg.repro.arguments import pipeline_errors
from spmi_dbg.tempfiles import host_tag

from .support.builds import history
from .support.common import Collections, killed_at, run_cli, wait_for, whole_texts
from .support.faultdisk import FailingDisk, build_shim
from .support.natives import BASE, DIFF, REPLAY, SEED_OPTIONS
from .support.pipeline import no_replays_left, triage, triage_collection
from .test_repro_failure import failures_collection

COUNTS = ("method_contexts", "replayed_clean", "crashed", "failed_compile", "not_reached")


def test_a_full_disk_stops_triage_in_one_line_and_a_resume_is_exact(
    cols: Collections, tmp_path: Path
) -> None:
    mch = failures_collection(cols)
    args = ["--partition-methods", "50", "--", REPLAY, BASE, str(mch)]
    ref = triage("--out", "ref", *args, cwd=tmp_path)
    expected = json.loads((tmp_path / "ref" / "triage.json").read_text())["coverage"]
    disk = tmp_path / "disk"
    disk.mkdir()
    out = disk / "t"
    run = shlex.join([sys.executable, "-m", "spmi_dbg", "triage", "--out", str(out), *args])
    resume = shlex.join(
        [sys.executable, "-m", "spmi_dbg", "triage", "--resume", "--out", str(out), *args]
    )
    script = (
        f"mount -t tmpfs -o size=48k tmpfs {shlex.quote(str(disk))} || exit 99\n"
        f"{run} >full.out 2>full.err; echo $? >full.rc\n"
        # what the full disk left, as a later look at it finds it: every journal whole JSON
        f"cat {shlex.quote(str(out))}/partitions/p*.json >journals.txt 2>/dev/null\n"
        f"mount -o remount,size=64m {shlex.quote(str(disk))}\n"
        f"{resume} >resume.out 2>resume.err; echo $? >resume.rc\n"
        f"cp {shlex.quote(str(out))}/triage.json resumed.json\n"
    )
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    full_err = (tmp_path / "full.err").read_text()
    assert (tmp_path / "full.rc").read_text().strip() == "5", full_err
    lines = [x for x in full_err.splitlines() if x.startswith("spmi-dbg triage: error: ")]
    assert "Traceback" not in full_err and len(lines) == 1, full_err
    assert "No space left on device (ENOSPC)" in lines[0] and "--resume" in lines[0], lines[0]
    for text in filter(None, (tmp_path / "journals.txt").read_text().split("\n")):
        json.loads(text)  # no journal torn
    assert (tmp_path / "resume.rc").read_text().strip() == str(ref.returncode), (
        tmp_path / "resume.err"
    ).read_text()
    data = json.loads((tmp_path / "resumed.json").read_text())
    assert [{k: c[k] for k in COUNTS} for c in data["coverage"]] == [
        {k: c[k] for k in COUNTS} for c in expected
    ]


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_shim(tmp_path_factory.mktemp("shim"))


@pytest.mark.parametrize(
    ("code", "span", "seed"),
    [(errno.EIO, 0, 3), (errno.EDQUOT, 0, 5), (errno.EIO, 2, 7)],
    ids=["EIO-for-good", "EDQUOT-for-good", "EIO-for-a-moment"],
)
def test_a_failing_disk_stops_triage_in_one_line_or_gives_the_exact_answer(
    cols: Collections, tmp_path: Path, shim: Path, code: int, span: int, seed: int
) -> None:
    """Writes in --out fail (EIO, EDQUOT) from a write the seed picks among those an uninterrupted
    run makes there, for good or for a moment: the run ends in the uninterrupted run's answer, or
    in exit 5 and one line naming the error and how to go on (the --resume command, or a plain run
    again when the plan itself could not be written), with no journal torn; going on on a sound
    disk gives the exact answer."""
    mch = failures_collection(cols)
    args = ["--partition-methods", "50", "--", REPLAY, BASE, str(mch)]
    counting = FailingDisk(shim, tmp_path / "ref", tmp_path / "ref.count")
    (tmp_path / "ref").mkdir()
    ref = run_cli("triage", "--out", "ref/t", *args, cwd=tmp_path, timeout=600, env=counting.env())
    expected = _accounting(tmp_path / "ref" / "t")
    start = random.Random(seed).randrange(counting.writes())
    said = f"seed {seed}: {errno.errorcode[code]} from write {start} of {counting.writes()}"
    disk = FailingDisk(shim, tmp_path / "d", tmp_path / "d.count", code, start, span)
    (tmp_path / "d").mkdir()
    faulty = run_cli("triage", "--out", "d/t", *args, cwd=tmp_path, timeout=600, env=disk.env())
    assert "Traceback" not in faulty.stderr, f"{said}\n{faulty.stderr}"
    for journal in (tmp_path / "d" / "t" / "partitions").glob("p[0-9]*.json"):
        json.loads(journal.read_text())  # none torn
    if faulty.returncode == exits.INCOMPLETE:
        (line,) = [x for x in faulty.stderr.splitlines() if x.startswith("spmi-dbg triage: error:")]
        assert f"({errno.errorcode[code]})" in line, f"{said}\n{line}"
        # --resume once the plan is written; before, a plain run again
        resume = "resume: spmi-dbg triage --resume" in line
        assert resume or "run it again: spmi-dbg triage --out" in line, f"{said}\n{line}"
        again = triage(*(["--resume"] if resume else []), "--out", "d/t", *args, cwd=tmp_path)
        assert again.returncode == ref.returncode, f"{said}\n{again.stdout}{again.stderr}"
    else:
        assert faulty.returncode == ref.returncode, f"{said}\n{faulty.stdout}{faulty.stderr}"
    assert _accounting(tmp_path / "d" / "t") == expected, said


@pytest.mark.parametrize("code", [errno.EIO, errno.ENOSPC], ids=["EIO", "ENOSPC"])
def test_repro_on_a_failing_disk_leaves_no_half_bundle_and_says_so_in_one_line(
    cols: Collections, tmp_path: Path, shim: Path, code: int
) -> None:
    """The bundle's directory fails every write: exit 5, one line naming the error (never
    "not verified": the repro was verified, the disk failed), no half bundle; run again on a sound
    disk, the verified repro."""
    mch = cols.get("faults-crash", 200, inject=[("jit-null", 150)])
    argv = ["repro", "--out", "d/b", "--", REPLAY, "-bug", "56506", BASE, str(mch)]
    (tmp_path / "d").mkdir()
    disk = FailingDisk(shim, tmp_path / "d", tmp_path / "d.count", code, start=0)
    faulty = run_cli(*argv, cwd=tmp_path, timeout=600, env=disk.env())
    assert faulty.returncode == exits.INCOMPLETE, faulty.stdout + faulty.stderr
    (line,) = [x for x in faulty.stderr.splitlines() if x.startswith("spmi-dbg repro: error:")]
    assert "Traceback" not in faulty.stderr
    assert f"({errno.errorcode[code]})" in line and "run it again" in line, line
    assert not (tmp_path / "d" / "b").exists() and os.listdir(tmp_path / "d") == []
    again = run_cli(*argv, cwd=tmp_path, timeout=600)
    assert again.returncode == exits.VERIFIED, again.stdout + again.stderr
    assert json.loads((tmp_path / "d" / "b" / "report.json").read_text())["outcome"] == "verified"


class ClosedClientError(Exception):
    """distributed's error of a client whose scheduler went away (its name and module only)."""


ClosedClientError.__module__ = "distributed.client"


def test_a_lost_cluster_is_one_line_and_says_how_to_resume(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["spmi-dbg", "triage", "--scheduler", "tls://10.0.0.1:8786", "--out", "t", "--", "x"]
    monkeypatch.setattr(sys, "argv", argv)

    def lost() -> int:
        raise ClosedClientError("Failed to reconnect to the scheduler")

    assert pipeline_errors("triage", lost) == exits.INCOMPLETE
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("spmi-dbg triage: error: the dask cluster at tls://10.0.0.1:8786 went")
    assert "resume: spmi-dbg triage --resume --scheduler tls://10.0.0.1:8786 --out t -- x" in line

    def other() -> int:
        raise RuntimeError("a bug of ours")

    with pytest.raises(RuntimeError):  # anything else is not hidden
        pipeline_errors("triage", other)


def test_a_bundle_is_replaced_in_one_step_and_a_kill_between_two_steps_loses_nothing(
    tmp_path: Path,
) -> None:
    """publish() swaps the new output with the old in one step where the file system can
    (RENAME_EXCHANGE): `out` never goes missing. The two-step fallback, killed between its renames,
    leaves the old output aside: the next run's stage() puts it back (issue 37 item 4)."""
    out = tmp_path / "bundle"
    for content in ("first", "second"):
        staged = stage(out)
        (staged / "report.md").write_text(content)
        publish(staged, out)
        assert (out / "report.md").read_text() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]  # no leftovers
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    assert exchange(a, b) and (b / "x").read_text() == "a" and not (a / "x").exists()
    # a run killed after moving the old output aside: a dead pid's temporary name
    dead = subprocess.Popen(["true"])
    dead.wait()
    aside = tmp_path / f".bundle.spmi-tmp-{host_tag()}-{dead.pid}-abc123"
    aside.mkdir()
    out.rename(aside / "previous")
    assert not out.exists()
    staged = stage(out)
    assert (out / "report.md").read_text() == "second"  # put back before anything else
    assert not aside.exists()
    shutil.rmtree(staged)


@pytest.mark.parametrize("seed", [11, 29, 47])
def test_triage_killed_at_a_random_point_resumes_to_the_same_accounting(
    cols: Collections, tmp_path: Path, seed: int
) -> None:
    """kill -9 of the whole triage (coordinator, debuggers and replays: its session) at a point the
    seed picks -- after some partitions are done, or in the middle of a replay --, its output
    directory moved, then `--resume` there:
    the same crashes, buckets and coverage as an uninterrupted run. The point is chosen by what the
    journals show, never by a time."""
    rng = random.Random(seed)
    mch = triage_collection(cols)
    args = ["--workers", "2", "--partition-methods", "100", "--", REPLAY, *SEED_OPTIONS, BASE]
    args += [DIFF, str(mch)]
    ref = triage("--out", "ref", *args, cwd=tmp_path)
    expected = _accounting(tmp_path / "ref")
    done_before = rng.randrange(0, 5)  # of 6 partitions
    mid_replay = rng.random() < 0.5
    parts = tmp_path / "t" / "partitions"

    def the_point() -> bool:  # (if the triage ends first, the resume must change nothing)
        js = [json.loads(t) for t in whole_texts(parts.glob("p[0-9]*.json"))]
        done = sum(j.get("done", False) for j in js)
        return done >= done_before and (not mid_replay or any(j.get("running") for j in js))

    killed_at(["triage", "--out", "t", *args], tmp_path, the_point)
    wait_for(lambda: no_replays_left(mch) or None)
    moved = tmp_path / "moved $(x) 'q'"  # as after a full disk: the journals go with it
    (tmp_path / "t").rename(moved)
    again = triage("--resume", "--out", str(moved), *args, cwd=tmp_path)
    said = f"seed {seed}: killed after {done_before} partition(s) done, mid-replay {mid_replay}"
    assert again.returncode == ref.returncode, f"{said}\n{again.stdout}{again.stderr}"
    assert _accounting(moved) == expected, said


def _accounting(out: Path) -> dict[str, object]:
    data = json.loads((out / "triage.json").read_text())
    return {
        "coverage": [{k: c[k] for k in COUNTS} for c in data["coverage"]],
        "crashes": sorted((c["member"], c["bucket"]) for c in data["crashes"]),
        "buckets": sorted((b["bucket"], tuple(b["method_contexts"])) for b in data["buckets"]),
    }


@pytest.mark.parametrize("point", ["locating", "verifying"])
def test_repro_killed_leaves_no_half_bundle_and_runs_again(
    cols: Collections, tmp_path: Path, point: str
) -> None:
    """kill -9 of the whole repro while it locates (a replay of the collection runs) or verifies (a
    replay of the isolated repro runs): no bundle, or the earlier one whole, never a half one; the
    next run removes the killed run's leftovers and gives the verified repro."""
    mch = cols.get("faults-crash", 200, inject=[("jit-null", 150)])
    argv = ["--out", "b", "--", REPLAY, "-bug", "56506", BASE, str(mch)]

    def the_point() -> bool:
        running = _replays()
        if point == "locating":
            return any(str(mch) in c for c in running)
        return any("repro.mch" in c for c in running)

    killed_at(["repro", *argv], tmp_path, the_point)
    bundle = tmp_path / "b"
    if bundle.exists():  # only ever whole
        json.loads((bundle / "report.json").read_text())
    again = run_cli("repro", *argv, cwd=tmp_path, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads((bundle / "report.json").read_text())["locate"]["method_context"] == 150
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]  # the killed run's leftovers gone


def _replays() -> list[str]:
    """The command lines of the spmi-replay processes running now."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                if "spmi-replay" in cmd:
                    out.append(cmd)
    return out


def test_bisect_killed_mid_search_leaves_no_half_answer_and_runs_again(
    cols: Collections, tmp_path: Path
) -> None:
    """kill -9 of the whole bisect while a build's replay runs: no bisect.json, or a whole one; the
    next run gives the uninterrupted run's answer."""
    mch = cols.get("bisect-diff-assert", 20, inject=[("diff-assert", BISECT_AT)])
    b, d = Path(BASE), Path(DIFF)
    h = history(tmp_path, [b, b, None, b, d, d, d])
    jit = tmp_path / "cmd" / "libclrjit.so"
    jit.parent.mkdir()
    shutil.copyfile(DIFF, jit)
    args = ["--build", "Checked", "--store", str(h.store), "--repo", str(h.repo)]
    args += ["--good", h.hashes[0], "--bad", h.hashes[-1], "--"]
    args += [REPLAY, "-c", str(BISECT_AT), str(jit), str(mch)]
    ref = run_cli("bisect", "--out", "ref", *args, cwd=tmp_path)
    answer = _answer(tmp_path / "ref")
    killed_at(
        ["bisect", "--out", "o", *args], tmp_path, lambda: any(str(mch) in c for c in _replays())
    )
    if (tmp_path / "o" / "bisect.json").exists():
        json.loads((tmp_path / "o" / "bisect.json").read_text())  # whole
    again = run_cli("bisect", "--out", "o", *args, cwd=tmp_path)
    assert again.returncode == ref.returncode, again.stdout + again.stderr
    assert _answer(tmp_path / "o") == answer


BISECT_AT = 7


def _answer(out: Path) -> tuple[object, ...]:
    data = json.loads((out / "bisect.json").read_text())
    return (data["first_bad"]["build"], data["last_good"]["build"], data["range"], data["exact"])
