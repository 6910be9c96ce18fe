"""The repro pipeline's pure parts: command parsing and partitions, ddmin, what counts as a
reproduction."""

from __future__ import annotations

import dataclasses
import itertools
import shlex
from pathlib import Path

import pytest

from spmi_dbg.analysis.facts import Diagnosis, Handling, HandlingKind, SignalFact
from spmi_dbg.analysis.signature import hang_signature
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.errors import InputError, UsageError
from spmi_dbg.repro import command
from spmi_dbg.repro.environment import EnvVar
from spmi_dbg.repro.expect import Expectation, expectation_of
from spmi_dbg.repro.minimize import ddmin
from spmi_dbg.repro.native import NativeRun
from spmi_dbg.superpmi_argv.era import EraEvidence
from spmi_dbg.superpmi_argv.grammar import ERA_TODAY

from .support.common import Collections
from .support.natives import BASE, DIFF, REPLAY

pytestmark = pytest.mark.unit  # none of these tests starts a process

# the commands are read as today's superpmi reads them: the binary is not asked (that starts it)
TODAY = EraEvidence(ERA_TODAY, "given by the test")


def from_argv_today(argv: list[str]) -> command.ReproCommand:
    return command.from_argv(argv, TODAY)


def test_command_drops_parallel_and_partitions_contiguously(cols: Collections) -> None:
    mch = str(cols.get("units-clean", 10))
    cmd = from_argv_today(
        [
            REPLAY,
            "-a",
            "-p",
            "4",
            "-target",
            "arm64",
            "-jitoption",
            "force",
            "JitStress=2",
            BASE,
            DIFF,
            mch,
        ]
    )
    assert cmd.options == ("-a", "-target", "arm64", "-jitoption", "force", "JitStress=2")
    assert cmd.jits == (BASE, DIFF) and cmd.count == 10 and cmd.selection is None
    assert cmd.notes == ("dropped `-p 4`: each partition runs sequentially under its own debugger",)
    assert [p.spec for p in cmd.partitions(3)] == ["1-4", "5-7", "8-10"]
    assert [p.spec for p in cmd.partitions(20)] == [str(i) for i in range(1, 11)]
    assert cmd.argv("5-7") == [REPLAY, *cmd.options, "-c", "5-7", BASE, DIFF, mch]
    assert cmd.argv(None, input="/x/repro.mch")[-1] == "/x/repro.mch"
    assert from_argv_today([REPLAY, "-parallel", BASE, mch]).options == ()


def test_command_selection_is_what_gets_partitioned(cols: Collections) -> None:
    mch = str(cols.get("units-clean", 10))
    cmd = from_argv_today([REPLAY, "-c", "2-4,8", BASE, mch])
    assert cmd.selection == (2, 3, 4, 8) and "-c" not in cmd.options
    assert [p.spec for p in cmd.partitions(2)] == ["2-3", "4,8"]
    with pytest.raises(InputError, match="-c asks for method context 11; the collection has 10"):
        from_argv_today([REPLAY, "-c", "5,11", BASE, mch])
    with pytest.raises(UsageError, match="MCL list must be increasing"):
        from_argv_today([REPLAY, "-c", "5,3", BASE, mch])


def test_a_debugger_locate_takes_pieces_in_order_when_each_holds_enough(
    cols: Collections, monkeypatch: pytest.MonkeyPatch
) -> None:
    mch = str(cols.get("units-pieces", 40))
    cmd = from_argv_today([REPLAY, BASE, mch])
    # a small collection: one partition per worker, as a native locate cuts it
    assert [p.spec for p in cmd.locate_partitions(2)] == [p.spec for p in cmd.partitions(2)]
    # pieces of a few bytes: LOCATE_PIECES_PER_WORKER per worker, contiguous and in order
    monkeypatch.setattr(command, "LOCATE_PIECE_BYTES", 64)
    pieces = cmd.locate_partitions(2)
    assert len(pieces) == 2 * command.LOCATE_PIECES_PER_WORKER
    assert [n for p in pieces for n in p.numbers] == list(range(1, 41))
    assert [p.index for p in pieces] == list(range(1, len(pieces) + 1))


def test_friendly_form_and_jitoptions(cols: Collections) -> None:
    mch = str(cols.get("units-clean", 10))
    form = command.FriendlyForm(
        mch,
        jit=DIFF,
        base_jit=BASE,
        target="arm64",
        jitoptions=["JitStdOutFile=x.txt"],
        extra=["-a"],
    )
    cmd = command.from_options(form, TODAY)
    assert cmd.jits == (BASE, DIFF) and Path(cmd.program).name == "spmi-replay"
    assert cmd.options == (
        "-a",
        "-target",
        "arm64",
        "-jitoption",
        "JitStdOutFile=x.txt",
        "-jit2option",
        "JitStdOutFile=x.txt",
    )
    with pytest.raises(UsageError, match="only superpmi options"):
        command.from_options(command.FriendlyForm(mch, jit=DIFF, extra=[BASE]), TODAY)
    with pytest.raises(UsageError, match="needs --jit"):
        command.from_options(command.FriendlyForm(mch), TODAY)


def test_shell_line_quotes_what_needs_quoting(cols: Collections, tmp_path: Path) -> None:
    odd = tmp_path / "it's a dir"
    odd.mkdir()
    jit = odd / "lib jit.so"
    jit.write_bytes(Path(BASE).read_bytes())
    cmd = from_argv_today(
        [REPLAY, "-jitoption", "JitDisasm=Foo:Bar*", str(jit), str(cols.get("units-clean", 10))]
    )
    cmd = dataclasses.replace(cmd, env=(EnvVar("DOTNET_JitStdOutFile", "a b'$(x)\".txt", "jit"),))
    line = cmd.shell_line('"$here/repro.mch"')
    # the recorded environment only: env -i, PATH and HOME from the shell, then the variables
    assert shlex.split(line.replace('"$here/repro.mch"', "R")) == [
        "env",
        "-i",
        "PATH=$PATH",
        "HOME=$HOME",
        "DOTNET_JitStdOutFile=a b'$(x)\".txt",
        REPLAY,
        "-jitoption",
        "JitDisasm=Foo:Bar*",
        str(jit),
        "R",
    ]


def test_ddmin_finds_minimal_culprits() -> None:
    items = list(range(1, 200))
    calls = 0

    def needs(*culprits: int):  # type: ignore[no-untyped-def]
        def fails(subset: list[int]) -> bool:
            nonlocal calls
            calls += 1
            return all(c in subset for c in culprits)

        return fails

    assert ddmin(items, needs(100)) == [100]
    assert calls < 40
    assert ddmin(items, needs(3, 150)) == [3, 150]
    assert ddmin(items, needs()) == []
    for a, b in itertools.combinations([1, 50, 199], 2):
        assert ddmin(items, needs(a, b)) == [a, b]


def _native(rc: int | None, sig: str | None, timed_out: bool = False) -> NativeRun:
    return NativeRun([], rc, sig, timed_out, 0.1)


def _diagnosis(
    bucket: str, signal: str | None = None, frames: list[str] | None = None
) -> Diagnosis:
    return Diagnosis(
        1,
        "gdb",
        "x86_64",
        None if signal is None else SignalFact(signal, 11, None, None, False, ""),
        Handling(HandlingKind.FATAL, ""),
        None,
        None,
        None,
        None,
        None,
        signature_frames=frames or [],
        bucket=bucket,
    )


def test_what_counts_as_a_reproduction() -> None:
    crash = Expectation("crash", "SIGSEGV", "abc")
    assert _native(-11, "SIGSEGV").matches(crash)
    assert not _native(-6, "SIGABRT").matches(crash) and not _native(0, None).matches(crash)
    assert not _native(None, None, True).matches(crash)
    hang = Expectation("hang", None, "h")
    assert _native(None, None, True).matches(hang) and not _native(-11, "SIGSEGV").matches(hang)

    fatal = ReplayOutcome("fatal", diagnosis=_diagnosis("abc", "SIGSEGV"))
    assert crash.matches_outcome(fatal) and expectation_of(fatal) == crash
    assert not crash.matches_outcome(ReplayOutcome("fatal", diagnosis=_diagnosis("xyz")))
    assert not crash.matches_outcome(ReplayOutcome("exited", exit_status=0))
    died = ReplayOutcome("signaled", signal="SIGSEGV")
    assert expectation_of(died) == Expectation("crash", "SIGSEGV", None)
    assert Expectation("crash", "SIGSEGV", None).matches_outcome(died)
    assert Expectation("crash", "SIGSEGV", None).matches_outcome(fatal)

    hung = ReplayOutcome(
        "hang",
        diagnosis=_diagnosis("of-the-SIGINT", frames=["Compiler::optCanonicalizeLoops", "main"]),
    )
    assert hung.diagnosis is not None
    sig, bucket = hang_signature(hung.diagnosis)
    assert sig == "hang | Compiler::optCanonicalizeLoops <- main"
    assert expectation_of(hung) == Expectation("hang", None, bucket) and Expectation(
        "hang", None, bucket
    ).matches_outcome(hung)


def test_partitions_share_the_replay_cost_by_bytes(cols: Collections) -> None:
    """Issue 29 item 1: a record of ~60 KB (method context 2) outweighs the eight small ones after
    it, so the first of two partitions ends with it."""
    mch = str(cols.get("units-heavy", 10, inject=[("stack-overflow", 2)]))
    cmd = from_argv_today([REPLAY, BASE, mch])
    assert [p.spec for p in cmd.partitions(2)] == ["1-2", "3-10"]
    assert [p.spec for p in cmd.partitions(10)] == [str(i) for i in range(1, 11)]


def test_an_experiments_failure_is_its_own_a_phases_is_the_runs(cols: Collections) -> None:
    """phase(): a failure stops the run and is the report's failed_phase; experiment(): it stays in
    its record and the run goes on, with the fallback after the `with`."""
    from spmi_dbg.driver.gdb.driver import GdbDriver
    from spmi_dbg.repro.phase import PhaseFailed, experiment, phase
    from spmi_dbg.repro.result import ReproOptions, ReproResult

    cmd = from_argv_today([REPLAY, BASE, str(cols.get("units", 5))])
    result = ReproResult(ReproOptions(command=cmd, debugger=GdbDriver("gdb")), [])

    def regression() -> str | None:
        with experiment(result, "regression", None) as ph:
            ph.detail = "started"
            raise InputError("x.mch", "gone")
        return None

    assert regression() is None
    assert result.error_phase is None and result.error is None
    assert [(p.name, p.status, p.detail) for p in result.phases] == [
        ("regression", "failed", "x.mch: gone")
    ]
    with pytest.raises(PhaseFailed), phase(result, "verify", None):
        raise OSError(5, "I/O error")
    assert (result.error_phase, result.error) == ("verify", "[Errno 5] I/O error")
    assert result.phases[-1].status == "failed"
