"""`spmi-dbg triage` end to end with real gdb: a collection with three distinct fatal crash kinds,
each repeated, plus a first-chance fault and a JIT assert: exactly three buckets, each with a
verified repro of its smallest member; the partition resumes after each crash instead of replaying
from the start."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .support.common import Collections, mc_bytes, run_cli
from .support.natives import BASE, REPLAY, SEED_COMMAND, STRESS_SETTINGS_3
from .support.pipeline import assert_refused, repro_args, triage, triage_collection, validate


@dataclass(frozen=True)
class ThreeKinds:
    """One triage of the three-kinds collection (2 workers, 1 verification run) into `tmp`/t."""

    result: subprocess.CompletedProcess[str]
    tmp: Path
    mch: Path
    data: dict[str, Any]

    @property
    def name(self) -> str:
        return self.mch.name

    def by_members(self) -> dict[tuple[int, ...], dict[str, Any]]:
        """The crash buckets by their method contexts."""
        return {
            tuple(int(m.rsplit(":", 1)[1]) for m in b["method_contexts"]): b
            for b in self.data["buckets"]
        }

    def bucket(self, *members: int) -> dict[str, Any]:
        """The crash bucket of exactly these method contexts."""
        return self.by_members()[members]

    def failure_buckets(self) -> dict[str, dict[str, Any]]:
        return {b["kind"]: b for b in self.data["failure_buckets"]}


@pytest.fixture(scope="module")
def three_kinds(cols: Collections, tmp_path_factory: pytest.TempPathFactory) -> ThreeKinds:
    tmp = tmp_path_factory.mktemp("three-kinds")
    mch = triage_collection(cols)
    r = triage(*repro_args(*SEED_COMMAND, str(mch), out="t", workers=2, verify_runs=1), cwd=tmp)
    assert r.returncode == 0, r.stdout + r.stderr
    return ThreeKinds(r, tmp, mch, json.loads((tmp / "t" / "triage.json").read_text()))


def test_three_kinds_crashes_in_order(three_kinds: ThreeKinds) -> None:
    data = three_kinds.data
    validate(data, "triage-3.json")
    assert [c["method_context"] for c in data["crashes"]] == [110, 150, 200, 300, 410, 450, 500]
    assert data["crashes"][0]["member"] == f"{three_kinds.name}:110"


def test_three_kinds_three_buckets(three_kinds: ThreeKinds) -> None:
    data, name = three_kinds.data, three_kinds.name
    # exactly three buckets
    assert set(three_kinds.by_members()) == {(150, 300, 450), (110, 410), (200, 500)}
    assert all(m.startswith(f"{name}:") for b in data["buckets"] for m in b["method_contexts"])


def test_each_buckets_smallest_member_shows_its_first_il_lines(three_kinds: ThreeKinds) -> None:
    """The bucket sections show the smallest member's IL size and first lines: the same lines
    `spmi-dbg mch il` prints for that record."""
    md = (three_kinds.tmp / "t" / "triage.md").read_text()
    for b in three_kinds.data["buckets"]:
        s = b["smallest"]
        il = run_cli("mch", "il", str(three_kinds.mch), str(s["method_context"]))
        assert il.returncode == 0, il.stderr
        first = [ln for ln in il.stdout.splitlines() if ln.startswith("IL_")][: len(s["il_head"])]
        assert s["il_head"] and s["il_head"] == first, (s, first)
        assert f"  {s['il_head'][0]}" in md
    assert md.count("its IL begins") == len(three_kinds.data["buckets"])


def test_three_kinds_coverage(three_kinds: ThreeKinds) -> None:
    cov = three_kinds.data["coverage"]
    assert len(cov) == 1 and cov[0]["method_contexts"] == 600 and cov[0]["crashed"] == 7
    assert (
        cov[0]["failed_compile"] == 2
        and cov[0]["not_reached"] == 0
        and cov[0]["replayed_clean"] == 591
    )


def test_the_seed_bucket_is_the_known_bug(three_kinds: ThreeKinds) -> None:
    seed = three_kinds.bucket(150, 300, 450)
    assert seed["signal"] == "SIGSEGV" and seed["null_map"]["member"] == "CompileMethod"
    assert [k["id"] for k in seed["known_bugs"]] == ["dotnet/runtime#91257"]
    sizes = {m["method_context"]: m["il_size"] for m in seed["members"]}
    assert seed["smallest"]["il_size"] == min(sizes.values())


def test_the_seeds_cause_is_said_once(three_kinds: ThreeKinds) -> None:
    seed = three_kinds.bucket(150, 300, 450)
    # the setup, said once for the triage (issue 27): the seed's three crashes are superpmi's
    (cause,) = three_kinds.data["causes"]
    assert (cause["kind"], cause["crashes"], cause["buckets"]) == (
        "asm-diffs-without-compile-method",
        3,
        [seed["bucket"]],
    )
    assert "why: asm-diffs-without-compile-method: " in three_kinds.result.stdout


def test_the_abort_and_the_stack_overflow_buckets(three_kinds: ThreeKinds) -> None:
    abort = three_kinds.bucket(110, 410)
    assert abort["signal"] == "SIGABRT" and abort["known_bugs"] == []
    overflow = three_kinds.bucket(200, 500)
    assert overflow["signature"].startswith("SIGSEGV | Compiler::fgMorphTree")


def test_each_bucket_has_a_verified_bundle_of_its_smallest_member(three_kinds: ThreeKinds) -> None:
    tmp = three_kinds.tmp
    # one verified bundle each, built from the smallest member
    for b in three_kinds.data["buckets"]:
        rep = b["repro"]
        assert rep["outcome"] == "verified" and rep["rate"] >= 0.5, b
        bundle = tmp / rep["bundle"]
        assert (bundle / "report.md").is_file() and (bundle / "repro.sh").is_file()
        validate(json.loads((bundle / "report.json").read_text()))
        assert b["smallest"]["method_context"] == rep["method_contexts"][-1]
    seed = three_kinds.bucket(150, 300, 450)
    small = seed["smallest"]["method_context"]
    repro_mch = tmp / seed["repro"]["bundle"] / "repro.mch"
    assert repro_mch.read_bytes() == mc_bytes(three_kinds.mch, small)


def test_the_state_dependent_member_keeps_its_poisoner(three_kinds: ThreeKinds) -> None:
    # The state-dependent member is repro'd with the record that poisoned it, found by ddmin in its
    # segment.
    poisoned = three_kinds.bucket(110, 410)["repro"]["method_contexts"]
    assert poisoned in ([100, 110], [400, 410])


def test_each_partition_resumes_after_each_crash(three_kinds: ThreeKinds) -> None:
    # Each partition resumed after each of its crashes: segments start right after the crash, and a
    # partition's segments are the replays of one debugger session.
    data = three_kinds.data
    crashed = {c["method_context"] for c in data["crashes"]}
    for p in range(1, data["engine"]["partitions"] + 1):
        segs = [s for s in data["segments"] if s["partition"] == p]
        last = int(segs[0]["compile"].split("-")[1])
        starts = [int(s["compile"].split("-")[0]) for s in segs]
        assert all(s["compile"].endswith(f"-{last}") for s in segs)
        assert starts[1:] == [n + 1 for n in sorted(crashed) if starts[0] <= n < last]
    # 2 per worker, by bytes
    assert data["engine"]["name"] == "local" and data["engine"]["partitions"] == 4


def test_stops_passed_on_and_superpmis_own_failures_are_summarised(
    three_kinds: ThreeKinds,
) -> None:
    # The stops passed on and what superpmi said itself are summarised; the failures superpmi
    # reported are buckets too.
    data, name = three_kinds.data, three_kinds.name
    assert [(g["key"], g["method_contexts"]) for g in data["first_chance"]] == [
        ("SIGSEGV first-chance in Compiler::gtFoldDivByConst", [f"{name}:50"])
    ]
    asserts = data["reported_by_superpmi"]["asserts"]
    assert [(g["expr"], g["method_contexts"]) for g in asserts] == [
        ("shiftAmount >= 0", [f"{name}:60"])
    ]
    assert data["bundle_kinds"] == ["crash", "assert"]
    assert set(three_kinds.failure_buckets()) == {"assert", "error"}


def test_each_bundle_verifies_in_a_debugger_a_partition_left(three_kinds: ThreeKinds) -> None:
    """The verification's replay under the debugger ran in a gdb the partitions started (its
    symbols read): its transcript has the run, not gdb's setup (LocalEngine lends its sessions)."""
    for b in three_kinds.data["buckets"]:
        log = (three_kinds.tmp / b["repro"]["bundle"] / "debugger.log").read_text()
        verify = log[log.index("==== verify") :]  # verify, or verify-minimized
        assert "-exec-run" in verify, b["bucket"]
        assert "-gdb-set mi-async on" not in verify, b["bucket"]
        assert "-file-exec-and-symbols" not in verify, b["bucket"]


def test_the_asserts_failure_bucket_gets_a_verified_bundle(three_kinds: ThreeKinds) -> None:
    # (by default) the assert's gets a verified bundle, the failed compile's none.
    fbs, name = three_kinds.failure_buckets(), three_kinds.name
    assert fbs["assert"]["method_contexts"] == [f"{name}:60"]
    assert fbs["assert"]["failure"]["message"] == "shiftAmount >= 0"
    assert fbs["assert"]["repro"]["outcome"] == "verified"
    assert_bundle = three_kinds.tmp / fbs["assert"]["repro"]["bundle"]
    assert (assert_bundle / "repro.mch").read_bytes() == mc_bytes(three_kinds.mch, 60)
    assert_report = json.loads((assert_bundle / "report.json").read_text())
    validate(assert_report)
    assert assert_report["title"].startswith("Assertion failed 'shiftAmount >= 0' in '")
    assert assert_report["diagnosis"]["assertion"]["expr"] == "shiftAmount >= 0"
    assert fbs["error"]["method_contexts"] == [f"{name}:50"] and fbs["error"]["repro"] is None


def test_triage_md_and_the_result_line(three_kinds: ThreeKinds) -> None:
    md = (three_kinds.tmp / "t" / "triage.md").read_text()
    assert "## JIT asserts and failed compiles" in md
    assert "3 crash bucket(s), 7 crash(es)" in md and "dotnet/runtime#91257" in md
    assert "result: 3 crash bucket(s), 7 crash(es)" in three_kinds.result.stdout


def test_progress_piped_is_plain_lines_on_stderr(three_kinds: ThreeKinds) -> None:
    # Progress, piped: plain lines on stderr, the first naming the engine, the last the whole tally.
    stderr = three_kinds.result.stderr
    progress = [ln for ln in stderr.splitlines() if ln.startswith("triage: ")]
    assert (
        progress[0] == "triage: 4 partition(s), 600 method contexts, on this machine (2 worker(s))"
    ), stderr
    assert (
        progress[-1].startswith("triage: 600/600 method contexts (100.0%): ")
        and ", 7 crashed, " in progress[-1]
        and ", 4/4 partitions, ETA " in progress[-1]
    ), progress


def test_the_output_directory_holds_the_triage_and_its_bundles(three_kinds: ThreeKinds) -> None:
    data = three_kinds.data
    assert sorted(p.name for p in (three_kinds.tmp / "t").iterdir()) == sorted(
        ["triage.json", "triage.md", "triage.sarif", "partitions"]
        + [f"bucket-{b['bucket']}" for b in data["buckets"]]
        + [f"bucket-{b['bucket']}" for b in data["failure_buckets"] if b["repro"]]
    )


def test_max_crashes_and_no_crash(cols: Collections, tmp_path: Path) -> None:
    mch = triage_collection(cols)
    r = triage(
        *repro_args(
            *SEED_COMMAND,
            str(mch),
            out="t",
            workers=1,
            verify_runs=0,
            options=("--max-crashes", "2"),
        ),
        cwd=tmp_path,
    )
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    assert [c["method_context"] for c in data["crashes"]] == [110, 150] and data[
        "stopped_at_max_crashes"
    ]
    assert r.returncode in (0, 1), r.stdout + r.stderr
    # One count (issue 26 item 5): the last progress line says what the coverage says.
    (cov,) = data["coverage"]
    progress = r.stderr.splitlines()  # the progress lines go to stderr
    last = [x for x in progress if re.match(r"triage: \d+/\d+ method contexts", x)][-1]
    m = re.match(
        r"triage: (\d+)/(\d+) method contexts \([\d.]+%\): (\d+) replayed clean, (\d+) crashed, "
        r"(\d+) failed compile\(s\)(?:, (\d+) not reached)?;",
        last,
    )
    assert m, last
    accounted, total, clean, crashed, failed, unreached = (int(g or 0) for g in m.groups())
    assert (accounted, total) == (cov["method_contexts"], cov["method_contexts"])
    assert (clean, crashed, failed, unreached) == (
        cov["replayed_clean"],
        cov["crashed"],
        cov["failed_compile"],
        cov["not_reached"],
    ), (last, cov)
    assert unreached > 0  # stopped at --max-crashes: the rest is said, not dropped
    clean = cols.get("repro-clean", 300)
    r = triage(*repro_args(REPLAY, BASE, str(clean), out="c", workers=2), cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    data = json.loads((tmp_path / "c" / "triage.json").read_text())
    assert data["buckets"] == [] and data["crashes"] == []
    assert "No crash" in (tmp_path / "c" / "triage.md").read_text()


def test_triage_bad_inputs_are_one_line_errors(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("repro-clean", 300)
    cases = {
        ("--", REPLAY, BASE, str(tmp_path / "none.mch")): "none.mch: collection not found",
        (
            "--max-crashes",
            "0",
            "--",
            REPLAY,
            BASE,
            str(mch),
        ): "--max-crashes: expected a whole number of at least 1, got '0'",
        ("--", REPLAY, str(tmp_path / "nojit.so"), str(mch)): "JIT not found",
    }
    assert_refused(triage, cases, tmp_path)
    assert not (tmp_path / "spmi-triage").exists()


def test_failure_buckets_with_stress_settings(cols: Collections, tmp_path: Path) -> None:
    """Two members of one stress-only assert and a failed compile, no crash: with --failure
    assert,error each failure bucket gets a verified bundle from its smallest member, with only the
    JIT settings it needs."""
    mch = cols.get(
        "triage-failures",
        120,
        inject=[("stress-assert", 30), ("jit-null", 50), ("stress-assert", 90)],
    )
    settings = STRESS_SETTINGS_3
    r = triage(
        *repro_args(
            REPLAY,
            *settings,
            BASE,
            str(mch),
            out="t",
            workers=2,
            verify_runs=1,
            options=("--failure", "assert,error"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    data: dict[str, Any] = json.loads((tmp_path / "t" / "triage.json").read_text())
    validate(data, "triage-3.json")
    assert data["buckets"] == [] and data["bundle_kinds"] == ["assert", "error"]
    fbs = {b["kind"]: b for b in data["failure_buckets"]}
    a = fbs["assert"]
    assert a["method_contexts"] == [f"{mch.name}:30", f"{mch.name}:90"] and a["count"] == 2
    sizes = {m["method_context"]: m["il_size"] for m in a["members"]}
    assert a["smallest"]["method_context"] == min(sizes, key=lambda n: (sizes[n], n))
    assert a["repro"]["outcome"] == "verified" and a["repro"]["method_contexts"] == [
        a["smallest"]["method_context"]
    ]
    assert (
        a["jit_settings"] == "fails with JitStress=2 JitStressModeNames=STRESS_FOLD; not needed: "
        "JitStressModeNames element STRESS_MAKE_CSE; JitStressRegs=1"
    )
    script = (tmp_path / a["repro"]["bundle"] / "repro.sh").read_text().splitlines()[-1]
    assert "JitStressRegs" not in script and "JitStressModeNames=STRESS_FOLD " in script
    e = fbs["error"]
    assert e["method_contexts"] == [f"{mch.name}:50"] and e["repro"]["outcome"] == "verified"
    assert "assert bucket assert-" in r.stdout and "error bucket error-" in r.stdout

    bad = triage("--failure", "crash,nope", "--", REPLAY, BASE, str(mch), cwd=tmp_path)
    assert (
        bad.returncode == 3 and len(bad.stderr.strip().splitlines()) == 1 and "'nope'" in bad.stderr
    )


def test_progress_on_a_terminal(cols: Collections, tmp_path: Path) -> None:
    """On a terminal: one rich progress bar over all partitions (method contexts, rate, crashes,
    partitions)."""
    mch = cols.get(
        "triage-tty", 300, arch="arm64", seed=2, inject=[("seed-arm64", 100), ("seed-arm64", 250)]
    )
    leader, follower = os.openpty()
    argv = [
        sys.executable,
        "-m",
        "spmi_dbg",
        "triage",
        "--workers",
        "2",
        "--verify-runs",
        "0",
        "--failure",
        "missing",
        "--out",
        "t",
        "--",
        *SEED_COMMAND,
        str(mch),
    ]
    proc = subprocess.Popen(
        argv,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
        env=dict(os.environ, COLUMNS="160", TERM="xterm"),
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # the terminal's other end is closed: the triage is over
            break
        if not chunk:
            break
        shown += chunk
    out, _ = proc.communicate(timeout=300)
    os.close(leader)
    assert proc.returncode == 0, out
    text = shown.decode(errors="replace")
    assert "triage: 4 partition(s) on this machine (2 worker(s))" in text
    assert "300/300 method contexts" in text and "2 crash(es)" in text and "partitions" in text, (
        text[-2000:]
    )
    assert "\x1b[" in text  # drawn (rich's control sequences), not plain lines
