"""A bucket's repro bundle runs with every option of the triage (a new ReproOptions field included):
only its collection, its own bundle directory and its target are the bucket's (triage/pipeline.py
_bundle_jobs)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

import pytest

from spmi_dbg.failures.output import Failure
from spmi_dbg.failures.target import FailureTarget
from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.result import ReproOptions
from spmi_dbg.triage.failure_buckets import FailureBucket, FailureMember
from spmi_dbg.triage.pipeline import _bundle_jobs
from spmi_dbg.triage.result import TriageOptions, TriageResult
from spmi_dbg.triage.run import TriageRun

from .support.common import Collections
from .support.natives import BASE, REPLAY
from .support.pipeline import repro_args, triage


def _command(collection: str) -> ReproCommand:
    return ReproCommand("/bin/superpmi", ("/jit/libclrjit.so",), collection, ("-v", "q"), 10)


def _every_option_set(command: ReproCommand) -> ReproOptions:
    """ReproOptions with each field away from its default (the debugger is only carried, never used
    here)."""
    values: dict[str, Any] = {
        "command": command,
        "debugger": object(),
        "out": Path("/triage/out"),
        "workers": 3,
        "timeout": 77.0,
        "verify_runs": 5,
        "core": Path("/cores/core.1"),
        "redact": True,
        "debug_dirs": ("/debug",),
        "failure": FailureTarget("error", "boom"),
    }
    # a field added later: any value that is not its default
    for f in dataclasses.fields(ReproOptions):
        if f.name not in values:
            values[f.name] = object()
    return ReproOptions(**values)


@pytest.mark.unit
def test_a_bucket_bundle_keeps_every_option_of_the_triage() -> None:
    first, second = _command("/c/a.mch"), _command("/c/b.mch")
    repro = _every_option_set(first)
    opts = TriageOptions(
        repro, Path("/triage/out"), bundle_kinds=frozenset({"assert"}), commands=[first, second]
    )
    failure = Failure(
        "assert", 4, "ISSUE: <ASSERT> #4 x.cpp (1) - Assertion failed 'x' in 'M' during 'P'", "x"
    )
    result = TriageResult(opts, cast(TriageRun, None))
    result.failure_buckets = [
        FailureBucket(
            "assert-0123456789",
            failure.key,
            [FailureMember(4, "M", 12, failure, second.input, "b:4")],
        )
    ]
    [job] = _bundle_jobs(opts, result, {c.input: c for c in opts.commands})
    got = job.options
    assert got.command is second and got.out == Path("/triage/out/bucket-assert-0123456789")
    assert got.failure == FailureTarget("assert") and got.core is None and job.failure is failure
    for f in dataclasses.fields(ReproOptions):
        if f.name not in ("command", "out", "failure", "core"):
            assert getattr(got, f.name) is getattr(repro, f.name), (
                f"--{f.name} was not carried to the bundle"
            )


def test_the_summary_says_why_a_bucket_has_no_repro_and_each_failure_once(
    cols: Collections, tmp_path: Path
) -> None:
    """Issue 26 item 6: a missing-data bucket (not bundled by default) says why it has no repro and
    how to get one, instead of `repro -: -`; superpmi's own lines are said once, as buckets."""
    mch = cols.get(
        "summary-failures", 200, inject=[("missing", 50), ("missing", 120), ("jit-assert", 60)]
    )
    r = triage(*repro_args(REPLAY, BASE, str(mch), out="t"), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    (missing,) = [x for x in lines if x.startswith("missing bucket ")]
    assert missing.endswith(
        "no repro (this triage bundles crash, assert: --failure crash,assert,missing bundles "
        "these too)"
    ), missing
    assert "repro -: -" not in r.stdout
    assert not [x for x in lines if x.startswith("reported by superpmi")]


def test_a_long_member_list_is_cut_with_its_count_and_a_file_that_has_it_all(
    cols: Collections, tmp_path: Path
) -> None:
    """Issue 26 item 6: 25 crashes of one bucket: the summary and triage.md show the first ones, the
    count and members/<bucket>.txt, which lists them all."""
    at = list(range(10, 260, 10))
    mch = cols.get("many-members", 260, inject=[("jit-null", n) for n in at])
    r = triage(
        *repro_args(REPLAY, "-bug", "56506", BASE, str(mch), out="t", verify_runs=1), cwd=tmp_path
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("bucket ")]
    bucket = line.split()[1].rstrip(":")
    assert f"... (25 in all: members/{bucket}.txt)" in line, line
    listed = (tmp_path / "t" / "members" / f"{bucket}.txt").read_text().splitlines()
    assert [int(x.rsplit(":", 1)[-1]) for x in listed] == at
    md = (tmp_path / "t" / "triage.md").read_text()
    assert "- method contexts (25): " in md and f"(25 in all: members/{bucket}.txt)" in md
    assert max(len(x) for x in md.splitlines()) < 1000


def test_a_storm_is_said_once_while_the_triage_runs(
    cols: Collections, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 27 item 2: most method contexts crash in one bucket (the 3.1 era's null map in every
    other record): a `triage: systematic: ...` line, once, with no cause established on the
    specimen (its JIT asks from its importer: no Checked-on-Release evidence), also in the notes."""
    monkeypatch.setenv("SPMI_REPLAY_ERA", "3.1")
    mch = cols.get("storm", 120, inject=[("null-map", n) for n in range(2, 121, 2)])
    r = triage(
        *repro_args(
            REPLAY,
            BASE,
            str(mch),
            out="t",
            verify_runs=1,
            options=("--env", "SPMI_REPLAY_ERA", "--max-crashes", "30"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    said = [x for x in r.stderr.splitlines() if x.startswith("triage: systematic: ")]
    assert len(said) == 1 and " method contexts replayed so far crash in one bucket (" in said[0]
    assert "crash in one bucket (" in said[0] and "no cause established (SIGSEGV" in said[0]
    assert f"note: {said[0].removeprefix('triage: ')}" in r.stdout


def test_no_storm_is_said_for_scattered_crashes(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("no-storm", 300, inject=[("jit-null", n) for n in (50, 150, 250)])
    r = triage(
        *repro_args(REPLAY, "-bug", "56506", BASE, str(mch), out="t", verify_runs=1), cwd=tmp_path
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "systematic" not in r.stdout + r.stderr
