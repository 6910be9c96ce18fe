"""Nothing lost under faults (issue 37): a run the system stops -- here a full disk, a tmpfs of a
few KiB in a mount namespace of the test's own (`unshare`, no root needed) -- ends in one line and
exit 5 (never a traceback), keeps what it wrote, and a resume once there is room gives the exact
accounting of an uninterrupted run."""

from __future__ import annotations

import json
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

from .support.common import Collections
from .support.natives import BASE, REPLAY
from .support.pipeline import triage
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
