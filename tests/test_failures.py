"""superpmi's own failure lines as targets (spmi_dbg.failures) and the minimization of a command's
JIT settings (spmi_dbg.repro.jitoptions), on the replay core's real output and with real native
replays."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from spmi_dbg.driver.base import Replays
from spmi_dbg.errors import UsageError
from spmi_dbg.failures.output import Failure, parse_failures, parse_output
from spmi_dbg.failures.target import FailureTarget, first_match, no_such_failure, parse_target
from spmi_dbg.repro import command
from spmi_dbg.repro.failure_locate import FailureLocated, locate_failure, verify_failure
from spmi_dbg.repro.failure_run import reproduces, run_for_failures
from spmi_dbg.repro.isolate import isolate
from spmi_dbg.repro.jitoptions import JitSetting, minimize_settings, split_options

from .support.common import Collections
from .support.natives import BASE, DIFF, REPLAY, STRESS_SETTINGS

ASSERT_LINE = (
    "ISSUE: <ASSERT> #7 /src/jit/lower.cpp (1234) - Assertion failed 'op1 != nullptr' in "
    "'Foo:Bar(int):this' during 'Lowering nodeinfo' (IL size 40; hash 0x12345678; Tier0)"
)


@pytest.mark.unit
def test_parse_pairs_exception_lines_with_their_failed_compiles() -> None:
    stdout = [
        ASSERT_LINE,
        "MISSING: Method context 9 failed to replay: SuperPMI assertion failed (missing key "
        '"key" in map ResolveToken): token 60040a1',
    ]
    stderr = [
        "ERROR: Unexpected exception c0000005 was thrown.",
        "ERROR: Unexpected exception c0000005 was thrown.",
        "ERROR: Method 3 of size 10 failed to load and compile correctly by JIT1 (/j/base.so).",
        "ERROR: Method 3 of size 10 failed to load and compile correctly by JIT2 (/j/diff.so).",
        "ERROR: Exception thrown: DebugBreak or AV Exception 123",
        "ERROR: Method 7 of size 40 failed to load and compile correctly (/j/base.so).",
        "ERROR: main method 8 of size 12 failed to load and compile correctly.",
        "ERROR: Exception thrown: Null pointer in the near differ",
        "ERROR: Method 11 of size 5 failed to load and compile correctly (/j/base.so).",
    ]
    got = [(f.kind, f.method_context, f.jit, f.message) for f in parse_failures(stdout, stderr)]
    assert got == [
        ("error", 3, "JIT1", "Unexpected exception c0000005"),
        ("error", 3, "JIT2", "Unexpected exception c0000005"),
        # its DebugBreakorAV failure is the assert's, not an error
        ("assert", 7, None, "op1 != nullptr"),
        ("error", 8, "main", "Null pointer in the near differ"),
        (
            "missing",
            9,
            None,
            'SuperPMI assertion failed (missing key "key" in map ResolveToken): token 60040a1',
        ),
        ("error", 11, None, "(no exception line)"),
    ]
    a = parse_failures([ASSERT_LINE], [])[0]
    assert (a.file, a.source_line, a.method, a.phase) == (
        "/src/jit/lower.cpp",
        1234,
        "Foo:Bar(int):this",
        "Lowering nodeinfo",
    )
    assert a.key == "assert: op1 != nullptr (jit/lower.cpp:1234)"  # the repository tail
    m1 = parse_failures(
        [
            "MISSING: Method context 1 failed to replay: missing key in map ResolveToken: token "
            "60040a1"
        ],
        [],
    )[0]
    m2 = parse_failures(
        [
            "MISSING: Method context 2 failed to replay: missing key in map ResolveToken: token "
            "60040b7"
        ],
        [],
    )[0]
    assert m1.key == m2.key and "60040a1" in m1.message


@pytest.mark.unit
def test_targets() -> None:
    assert parse_target("crash") == FailureTarget("crash", None)
    assert parse_target("assert:op1 != nullptr") == FailureTarget("assert", "op1 != nullptr")
    assert parse_target("any:a:b") == FailureTarget("any", "a:b")
    for bad in ("asserts", "", "crash:x", "error:", "ASSERT"):
        with pytest.raises(UsageError, match="--failure"):
            parse_target(bad)
    failures = parse_failures(
        [ASSERT_LINE],
        [
            "ERROR: Exception thrown: boom",
            "ERROR: Method 2 of size 5 failed to load and compile correctly (j).",
        ],
    )
    assert (
        first_match(failures, parse_target("any")) == failures[0]
        and failures[0].method_context == 2
    )
    assert first_match(failures, parse_target("assert")) == failures[1]
    assert first_match(failures, parse_target("assert:lower.cpp")) == failures[1]
    assert first_match(failures, parse_target("error:boom")) == failures[0]
    assert first_match(failures, parse_target("missing")) is None
    line = no_such_failure(parse_target("assert:nothing like it"), failures)
    assert line.startswith("no such failure: a JIT assert containing 'nothing like it'; seen: ")
    assert "error: boom (method context 2)" in line and "\n" not in line
    assert no_such_failure(parse_target("missing"), []).endswith("superpmi reported no failures")


def test_the_replay_cores_failures_parse(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get(
        "failures",
        60,
        inject=[
            ("jit-null", 10),
            ("jit-assert", 20),
            ("missing", 30),
            ("ee-exception", 40),
            ("diff-assert", 50),
            ("stress-assert", 33),
        ],
    )
    run, failures = run_for_failures(
        [REPLAY, "-a", BASE, DIFF, str(mch)], timeout=120, workdir=tmp_path, name="all"
    )
    assert run.returncode == 1
    seen = {(f.kind, f.method_context, f.jit) for f in failures}
    assert seen == {
        ("error", 10, "JIT1"),
        ("error", 10, "JIT2"),
        ("assert", 20, None),
        ("missing", 30, None),
        ("assert", 50, None),
    }, failures
    assert all(f.message == "Unexpected exception c0000005" for f in failures if f.kind == "error")
    diff_assert = next(f for f in failures if f.method_context == 50)
    assert diff_assert.message == "multiplier != 0" and diff_assert.file is not None
    assert diff_assert.file.endswith("importer.cpp") and diff_assert.phase == "Importation"
    assert reproduces(failures, diff_assert.key, 50) and not reproduces(
        failures, diff_assert.key, 20
    )


@pytest.mark.unit
def test_settings_split_and_rebuild() -> None:
    opts = (
        "-a",
        "-jitoption",
        "JitStress=2",
        "-v",
        "q",
        "-jit2option",
        "force",
        "JitStressModeNames=A B",
        "-jitoption",
        "JitStdOutFile=/tmp/x y=z",
    )
    split = split_options(opts)
    assert split.fixed == ("-a", "-v", "q")
    assert split.settings == (
        JitSetting("-jitoption", False, "JitStress", "2"),
        JitSetting("-jit2option", True, "JitStressModeNames", "A B"),
        JitSetting("-jitoption", False, "JitStdOutFile", "/tmp/x y=z"),
    )
    assert split.options(split.settings) == opts[:1] + opts[3:5] + opts[1:3] + opts[5:]


@pytest.mark.unit
def test_minimize_settings_keeps_what_the_failure_needs() -> None:
    given = [
        JitSetting("-jitoption", False, "JitNoInline", "1"),
        JitSetting("-jitoption", False, "JitStress", "2"),
        JitSetting(
            "-jitoption", False, "JitStressModeNames", "STRESS_A STRESS_B STRESS_FOLD STRESS_C"
        ),
        JitSetting("-jitoption", False, "JitMinOpts", "0"),
        JitSetting("-jit2option", False, "JitStress", "2"),
    ]
    calls: list[list[JitSetting]] = []

    def fails(settings: list[JitSetting]) -> bool:
        calls.append(settings)
        d = {s.key: s.value for s in settings if s.flag == "-jitoption"}
        return (
            d.get("JitStress") == "2" and "STRESS_FOLD" in d.get("JitStressModeNames", "").split()
        )

    r = minimize_settings(given, fails)
    assert [s.text for s in r.needed] == ["JitStress=2", "JitStressModeNames=STRESS_FOLD"]
    assert r.dropped == [
        "JitNoInline=1",
        "JitStressModeNames element STRESS_A",
        "JitStressModeNames element STRESS_B",
        "JitStressModeNames element STRESS_C",
        "JitMinOpts=0",
        "JIT2 JitStress=2",
    ]
    assert r.summary().startswith(
        "fails with JitStress=2 JitStressModeNames=STRESS_FOLD; not needed: JitNoInline=1"
    )
    assert r.tests == len(calls) == len({tuple(c) for c in calls})  # each candidate replayed once

    calls.clear()
    # the caller has just seen all of them fail
    again = minimize_settings(given, fails, known_to_fail=True)
    assert again.needed == r.needed and given not in calls and again.tests == r.tests - 1

    none = minimize_settings(given, lambda s: False)
    assert none.needed == given and "did not reproduce" in none.notes[0]
    assert minimize_settings(given, lambda s: True).needed == []
    assert minimize_settings([], fails).summary() == "no JIT settings given"


def test_minimize_settings_with_real_replays(cols: Collections, tmp_path: Path) -> None:
    """Six settings, two needed, against the sample JIT's stress-only assert: each test is a native
    replay."""
    mch = cols.get("stress-min", 40, inject=[("stress-assert", 17)])
    split = split_options(STRESS_SETTINGS)
    _, all_failures = run_for_failures(
        [REPLAY, *split.options(split.settings), "-c", "17", BASE, str(mch)],
        timeout=60,
        workdir=tmp_path,
        name="all",
    )
    target = first_match(all_failures, parse_target("assert"))
    assert target is not None and target.method_context == 17 and "magic[divisor]" in target.message

    def fails(settings: list[JitSetting]) -> bool:
        argv = [REPLAY, *split.options(settings), "-c", "17", BASE, str(mch)]
        _, failures = run_for_failures(argv, timeout=60, workdir=tmp_path, name="min")
        return reproduces(failures, target.key, 17)

    r = minimize_settings(list(split.settings), fails)
    assert [s.text for s in r.needed] == ["JitStress=2", "JitStressModeNames=STRESS_FOLD"], (
        r.to_json()
    )
    assert (
        "JitStressRegs=1" in r.dropped and "JitStressModeNames element STRESS_MAKE_CSE" in r.dropped
    )


@dataclass(frozen=True)
class StressLocate:
    """A caught fault at 10, a JIT assert at 20, stress-only asserts at 33 and 61 and missing data
    at 50; the command with the stress settings and its two partitions."""

    mch: Path
    cmd: command.ReproCommand
    parts: list[command.Partition]
    work: Path

    def located(self, spec: str) -> FailureLocated:
        work = self.work / spec.replace(":", "_").replace(" ", "_")
        work.mkdir()
        return locate_failure(self.cmd, self.parts, parse_target(spec), timeout=60, workdir=work)


@pytest.fixture(scope="module")
def stress_locate(cols: Collections, tmp_path_factory: pytest.TempPathFactory) -> StressLocate:
    mch = cols.get(
        "failure-locate",
        80,
        inject=[
            ("jit-null", 10),
            ("jit-assert", 20),
            ("stress-assert", 33),
            ("missing", 50),
            ("stress-assert", 61),
        ],
    )
    stress = ["-jitoption", "JitStress=2", "-jitoption", "JitStressModeNames=STRESS_FOLD"]
    cmd = command.from_argv([REPLAY, *stress, BASE, str(mch)])
    return StressLocate(mch, cmd, cmd.partitions(2), tmp_path_factory.mktemp("failure-locate"))


@pytest.fixture(scope="module")
def stress_33(stress_locate: StressLocate) -> Failure:
    """The stress-only assert at 33, located by its text."""
    failure = stress_locate.located("assert:magic[divisor]").failure
    assert failure is not None
    return failure


def test_partitions_are_contiguous_by_the_records_bytes(stress_locate: StressLocate) -> None:
    # contiguous, by the records' bytes (the injected records are larger): 1-45 and 46-80
    assert [(p.first, p.last) for p in stress_locate.parts] == [(1, 45), (46, 80)]


def test_locate_the_first_jit_assert(stress_locate: StressLocate) -> None:
    assert_20 = stress_locate.located("assert").failure
    assert (
        assert_20 is not None
        and assert_20.method_context == 20
        and assert_20.message == "shiftAmount >= 0"
    )


def test_locate_an_assert_by_its_text(stress_33: Failure) -> None:
    assert stress_33.method_context == 33


def test_locate_a_failed_compile(stress_locate: StressLocate) -> None:
    error = stress_locate.located("error").failure
    assert error is not None and (error.method_context, error.message) == (
        10,
        "Unexpected exception c0000005",
    )


def test_locate_missing_data(stress_locate: StressLocate) -> None:
    missing = stress_locate.located("missing").failure
    assert missing is not None and missing.method_context == 50


def test_locate_no_such_failure_names_what_was_seen(stress_locate: StressLocate) -> None:
    none = stress_locate.located("assert:no such text")
    assert none.failure is None and not none.notes
    line = none.no_such_failure()
    assert line.startswith("no such failure: a JIT assert containing 'no such text'; seen: ")
    assert (
        "shiftAmount >= 0" in line
        and "(method context 33)" in line
        and "(method context 10)" in line
    )


@pytest.fixture(scope="module")
def isolated_33(stress_locate: StressLocate, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repro of the stress-only assert at 33: its record alone."""
    return isolate(str(stress_locate.mch), [33], tmp_path_factory.mktemp("bundle")).mch


def test_verify_accepts_the_isolated_stress_assert(
    stress_locate: StressLocate, stress_33: Failure, isolated_33: Path, tmp_path: Path
) -> None:
    native = Replays(None, 60, tmp_path)
    v = verify_failure(stress_locate.cmd, isolated_33, stress_33, native, runs=3)
    assert v.accepted and v.reproduced == 3, v.to_json()


def test_verify_refuses_it_without_the_stress_settings(
    stress_locate: StressLocate, stress_33: Failure, isolated_33: Path, tmp_path: Path
) -> None:
    native = Replays(None, 60, tmp_path)
    plain = command.from_argv([REPLAY, BASE, str(stress_locate.mch)])
    v = verify_failure(plain, isolated_33, stress_33, native, runs=2, label="plain")
    assert (
        not v.accepted
        and v.reproduced == 0
        and v.summary() == "0/2 runs reported the same assert (not accepted)"
    )


def test_verify_accepts_the_same_assert_in_another_method(
    stress_locate: StressLocate, stress_33: Failure, tmp_path: Path
) -> None:
    # the same assert in another method: the record is 1 there
    other = isolate(str(stress_locate.mch), [61], tmp_path / "other")
    native = Replays(None, 60, tmp_path)
    v = verify_failure(stress_locate.cmd, other.mch, stress_33, native, runs=1, label="o")
    assert v.accepted


def test_partitions_after_the_first_match_are_stopped_not_waited_for(
    cols: Collections, tmp_path: Path
) -> None:
    """An assert in the first partition, a hang in the third: the hang's partition is stopped once
    the first partition has its match (it is not run into its timeout), and the answer is the
    assert."""
    mch = cols.get("failure-race", 80, inject=[("jit-assert", 5), ("hang", 50)])
    cmd = command.from_argv([REPLAY, BASE, str(mch)])
    parts = cmd.partitions(4)
    located = locate_failure(cmd, parts, parse_target("assert"), timeout=120, workdir=tmp_path)
    assert located.failure is not None and located.failure.method_context == 5
    hang = next(r for r in located.runs if 50 in r.partition.numbers)
    assert hang.run.stopped and not hang.run.timed_out and hang.run.signal is None
    assert any("was stopped early" in n for n in located.notes)


ASSERT_31 = (
    "ISSUE: <ASSERT> /_/src/src/jit/codegenlinear.cpp (1164) - Assertion failed '(node->gtRegNum "
    "!= REG_NA)' "
    "in '{method}' (IL size {il})"
)


def _assert31(method: str, il: int) -> str:
    return ASSERT_31.format(method=method, il=il)


def _failed31(mc: int, il: int) -> list[str]:
    return [
        "ERROR: Exception thrown: DebugBreak or AV Exception 123",
        f"ERROR: main method {mc} of size {il} failed to load and compile correctly.",
    ]


@pytest.mark.unit
def test_31_asserts_pair_with_failed_compiles_by_il_size_in_each_streams_order() -> None:
    stdout = [_assert31("A:a()", 70), "", _assert31("B:b()", 30), "", _assert31("C:c()", 70), ""]
    stderr = [
        *_failed31(12, 70),
        *_failed31(15, 30),
        "ERROR: Exception thrown: SuperPMI assertion 'x' failed",
        "ERROR: main method 16 of size 5 failed to load and compile correctly.",
        *_failed31(19, 70),
    ]
    out = parse_output(stdout, stderr)
    got = [(f.kind, f.method_context, f.method, f.jit) for f in out.failures]
    assert got == [
        ("assert", 12, "A:a()", None),
        ("assert", 15, "B:b()", None),
        ("error", 16, None, None),
        ("assert", 19, "C:c()", None),
    ]
    assert out.failures[2].message == "SuperPMI assertion 'x' failed" and out.awaiting == []
    # The record's name decides between two failed compiles of the same size, where the caller can
    # name them.
    named = parse_output(
        [_assert31("C:c()", 70)],
        [*_failed31(12, 70), *_failed31(19, 70)],
        name_of={12: "A:a", 19: "C:c"}.get,
    )
    assert [(f.kind, f.method_context) for f in named.failures] == [("error", 12), ("assert", 19)]
    assert named.awaiting == [named.failures[0]]
    # An ISSUE line whose failed compile is not there: no number to give it.
    lone = parse_output([_assert31("A:a()", 70)], [])
    assert lone.failures == [] and lone.unpaired == [_assert31("A:a()", 70)]


@pytest.mark.unit
def test_31_jit2_and_near_differ_lines() -> None:
    stderr = [
        "ERROR: Exception thrown: one",
        "ERROR: Exception thrown: two",
        "ERROR: JIT2 main method 4 of size 9 failed to load and compile correctly.",
        "ERROR: main method 4 of size 9 failed to load and compile correctly.",
        "ERROR: main method 6 of size 3 failed to load and compile correctly.",
        "ERROR: Exception thrown: near differ trouble",
        "ERROR: main method 8 of size 2 failed to load and compile correctly.",
    ]
    got = [(f.method_context, f.jit, f.message) for f in parse_output([], stderr).failed_compiles]
    assert got == [
        (4, "JIT2", "two"),
        (4, None, "one"),
        (6, "main", "near differ trouble"),
        (8, None, "(no exception line)"),
    ]


@pytest.mark.unit
def test_a_running_replays_match_waits_for_an_issue_line_still_to_come(tmp_path: Path) -> None:
    """stderr is ahead of stdout: an error that may still be an assert is not taken, for any
    target."""
    from spmi_dbg.repro.failure_locate import _OutputReader

    out, err = tmp_path / "o", tmp_path / "e"
    out.write_text("")
    err.write_text(
        "\n".join(
            [
                *_failed31(5, 40),
                "ERROR: Exception thrown: boom",
                "ERROR: main method 9 of size 1 failed to load and compile correctly.",
                "",
            ]
        )
    )
    reader = _OutputReader(out, err)
    assert not reader.poll(parse_target("error")) and not reader.poll(parse_target("any"))
    out.write_text(_assert31("M:m()", 40) + "\n")
    assert reader.poll(parse_target("assert")) and reader.poll(parse_target("error:boom"))
    assert [(f.kind, f.method_context) for f in reader.final()] == [("assert", 5), ("error", 9)]
