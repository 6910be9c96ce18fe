"""The data half of tests/real/test_failures_real.py: every parser of superpmi's output on what the
real superpmi 3.1.23 printed (the transcripts of ../shared/real-superpmi/, stdout and stderr
captured apart through pipes): its failure lines (asserts without `#N`, paired with their failed
compile by IL size; -boa; -boe's lost ISSUE line; missing data), the progress lines, the exit
statuses, the `-p` parent's summary that hides a dead child, and a 3.1-style superpmi.py log of
such a run (`--from-log`)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from spmi_dbg.failures.output import parse_output
from spmi_dbg.repro.display import methods_done
from spmi_dbg.repro.fromlog import lost_worker, parse_log
from spmi_dbg.repro.native import SPMI_RESULTS, NativeRun

from ..support.real import Reference, Transcript
from ..support.real31 import assert_the_543_assert, method_names

pytestmark = pytest.mark.unit  # none of these tests starts a process


def parsed(t: Transcript, *, unbuffered: bool = False):  # type: ignore[no-untyped-def]
    out = (t.stdout_unbuffered or "") if unbuffered else t.stdout
    err = (t.stderr_unbuffered or "") if unbuffered else t.stderr
    return parse_output(out.splitlines(), err.splitlines())


def names(reference: Reference) -> dict[int, str]:
    return method_names(reference.api_map)


def test_a_31_assert_takes_its_number_from_the_failed_compile(reference: Reference) -> None:
    t = reference.transcript("06-assert-stressregs400-c543")
    assert t.rc == 1
    assert_the_543_assert(t.stdout, t.stderr)


def test_within_a_range_only_the_asserting_record_fails(reference: Reference) -> None:
    out = parsed(reference.transcript("06b-assert-stressregs400-c540-545"))
    assert [(f.kind, f.method_context, f.source_line) for f in out.failures] == [
        ("assert", 543, 6080)
    ]


def test_39_asserts_of_a_whole_replay_pair_each_with_its_own_record(reference: Reference) -> None:
    t = reference.transcript("07a-whole-stressregs800")
    assert t.rc == 1 and t.stdout.count("ISSUE: <ASSERT> ") == 39
    out = parsed(t)
    assert len(out.failures) == 39 and all(f.kind == "assert" for f in out.failures)
    assert len(out.failed_compiles) == 39 and out.unpaired == [] and out.awaiting == []
    first = [(f.method_context, Path(f.file or "").name, f.source_line) for f in out.failures[:4]]
    assert first == [
        (503, "codegenxarch.cpp", 3928),
        (1210, "codegenlinear.cpp", 1164),
        (1308, "codegenlinear.cpp", 1164),
        (1540, "codegenxarch.cpp", 5052),
    ]
    recorded = names(reference)  # the pairing by IL size agrees with mcs -dumpMap's names
    for f in out.failures:
        assert f.method is not None and f.method.split("(")[0] == recorded[f.method_context], f
    # 1561 and 1749 share IL size 70: each assert still went to its own record
    assert {f.il_size for f in out.failures if f.method_context in (1561, 1749)} == {70}


@pytest.mark.parametrize(
    ("name", "mc", "file", "line"),
    [
        ("07a-assert-stressregs800-c503", 503, "codegenxarch.cpp", 3928),
        ("07a2-assert-stressregs800-c1210", 1210, "codegenlinear.cpp", 1164),
        ("07a3-assert-stressregs800-c1540", 1540, "codegenxarch.cpp", 5052),
        ("07b-assert-ssastress-c389", 389, "flowgraph.cpp", 20783),
        ("07c-assert-vnmapsellimit-c4", 4, "valuenum.cpp", 2339),
    ],
)
def test_each_recorded_assert_is_parsed(
    reference: Reference, name: str, mc: int, file: str, line: int
) -> None:
    """07b: the JIT's own stdout line before the ISSUE line is not a failure."""
    out = parsed(reference.transcript(name))
    assert [
        (f.kind, f.method_context, Path(f.file or "").name, f.source_line) for f in out.failures
    ] == [("assert", mc, file, line)]


def test_boa_without_a_debugger_goes_on_and_the_output_is_the_same(reference: Reference) -> None:
    t = reference.transcript("06c-assert-stressregs400-c543-boa")
    assert t.rc == 1 and t.stderr.startswith("ERROR: SuperPMI: Assert Failure (PID ")
    assert "gentree.cpp, Line: 6080" in t.stderr
    assert "Loaded 1  Jitted 1  FailedCompile 1 Excluded 0" in t.stdout
    out = parsed(t)
    assert [(f.kind, f.method_context, f.source_line) for f in out.failures] == [
        ("assert", 543, 6080)
    ]


def test_boe_loses_the_issue_line_when_piped(reference: Reference) -> None:
    """-boe traps in main after the failed compile (SIGTRAP, 133): piped, block-buffered stdout
    never got the ISSUE line out; the failed compile on stderr stays one that awaits it, never
    settled as a plain error."""
    t = reference.transcript("06d-assert-stressregs400-c543-boe")
    assert t.rc == 128 + signal.SIGTRAP
    piped = parsed(t)
    assert [(f.kind, f.method_context) for f in piped.failures] == [("error", 543)]
    assert piped.awaiting == piped.failures
    whole = parsed(t, unbuffered=True)
    assert [(f.kind, f.method_context) for f in whole.failures] == [("assert", 543)]


@pytest.mark.parametrize(
    ("name", "missing"),
    [
        ("04d-jitstress1-c8-missing", [8]),
        ("05-jitstress1-O0-missing", [4, 8]),
        ("13b-jitoption-JITMinOpts", None),
    ],
)
def test_missing_data_only_exits_3(
    reference: Reference, name: str, missing: list[int] | None
) -> None:
    t = reference.transcript(name)
    assert t.rc == 3
    out = parsed(t)
    assert out.failures and {f.kind for f in out.failures} == {"missing"}
    assert out.failed_compiles == []
    if missing is not None:
        assert [f.method_context for f in out.failures] == missing
    else:
        assert len(out.failures) == 97  # its notes: 97 MISSING
    assert native(t).describe() == "exit status 3 (Misses: missing data only)"


def test_the_null_lwm_of_an_O0_build_is_missing_data(reference: Reference) -> None:
    """superpmi_O0 reports the null map the -O2 build dies of as MISSING ('no such LWM')."""
    out = parsed(reference.transcript("05-jitstress1-O0-missing"))
    four = next(f for f in out.failures if f.method_context == 4)
    assert "There is no such LWM (in GetIndex)" in four.message


def native(t: Transcript) -> NativeRun:
    """The recorded run as our native runner would have seen it (a signal as a shell's 128+N)."""
    sig = t.rc - 128 if t.rc > 128 and t.rc - 128 in (4, 5, 6, 7, 8, 11) else None
    return NativeRun(
        t.argv,
        None if sig is not None else t.rc,
        signal.Signals(sig).name if sig is not None else None,
        False,
        0.0,
    )


def test_every_recorded_exit_status_is_named(reference: Reference) -> None:
    """What superpmi exited with across the transcripts: 0, 1, 2, 3, 254, 255, and death by
    SIGSEGV (139) or SIGTRAP (133); each is one our table names or a signal."""
    seen: dict[int, str] = {}
    for t in reference.all_transcripts():
        if t.program in ("superpmi", "superpmi_O0"):
            seen[t.rc] = native(t).describe()
    assert set(seen) == {0, 1, 2, 3, 133, 139, 254, 255}
    for rc, said in seen.items():
        if rc in SPMI_RESULTS:
            assert said == f"exit status {rc} ({SPMI_RESULTS[rc]})"
    assert seen[139] == "killed by SIGSEGV" and seen[133] == "killed by SIGTRAP"


def test_a_c_past_the_end_prints_two_lines_and_no_failure(reference: Reference) -> None:
    t = reference.transcript("08a-past-end-c40000")
    assert t.rc == 255 and t.stderr == "" and len(t.stdout.splitlines()) == 2
    assert parsed(t).failures == []


@pytest.mark.parametrize(
    ("name", "last"),
    [
        ("01-clean-release-1-1200", 1200),
        ("02-clean-checked-whole", 5657),
        ("10a-asmdiff-official-vs-checked-1-600", 600),
        ("12b-repro-stressregs400-whole", 5657),
    ],
)
def test_progress_lines_count_the_methods_done(
    reference: Reference, tmp_path: Path, name: str, last: int
) -> None:
    """The repro's progress bars read superpmi's ` NN% - Loaded N ...` lines (and its summary):
    with -a they have `Matching N` between, and the -r line comes among them."""
    t = reference.transcript(name)
    stdout = tmp_path / "stdout"
    stdout.write_text(t.stdout)
    assert methods_done(stdout) == last
    progress = [line for line in t.stdout.splitlines() if "% - Loaded " in line]
    assert progress, t.stdout[:500]
    stdout.write_text("\n".join(progress[:1]) + "\n")
    assert methods_done(stdout) == 500


def log_of(t: Transcript, temp: str) -> str:
    """A 3.1-style superpmi.py log of the recorded run: superpmi.py's own lines, `Invoking:` and
    superpmi's output as the user saved it."""
    argv = [a.replace("{bin}", "/core_root").replace("{collections}", "/mch") for a in t.argv]
    return (
        "\n".join(
            [
                "Starting SuperPMI replay.",
                "",
                f"Temp Location: {temp}",
                "",
                f"Invoking: {' '.join(argv)}",
                *(
                    line.replace("{bin}", "/core_root").replace("{collections}", "/mch")
                    for line in t.stdout.splitlines()
                ),
                *t.stderr.splitlines(),
            ]
        )
        + "\n"
    )


def test_a_p_parent_that_lost_its_children_is_a_lost_worker(reference: Reference) -> None:
    """09c: both children died of SIGSEGV, the parent printed `Loaded 0 ...` and exited 1 without a
    word of a crash: the log reader calls that run fatal (a -p run lost a worker); 03's clean -p run
    is not."""
    lost = reference.transcript("09c-parallel2-checked-on-reljit")
    assert lost.rc == 1 and "Loaded 0  Jitted 0  FailedCompile 0 Excluded 0" in lost.stdout
    assert parsed(lost).failures == []
    (run,) = parse_log(log_of(lost, "/tmp/x"))
    assert run.argv[0] == "/core_root/superpmi" and run.mch == "/mch/api-reljit.mch"
    assert run.loaded == 0
    said = lost_worker(run, 5514)
    assert said is not None and "counts 0 of 5,514 method contexts" in said
    clean = reference.transcript("03-parallel2-checked")
    (run,) = parse_log(log_of(clean, "/tmp/y"))
    assert run.loaded == 5657 and lost_worker(run, 5657) is None and run.failures == []


def test_a_3_1_log_of_an_assert_hints_its_method_context(reference: Reference) -> None:
    """The ERROR line of 3.1's assert (no `#N` in its ISSUE line) names the record the log reader
    replays first."""
    (run,) = parse_log(log_of(reference.transcript("07a-whole-stressregs800"), "/tmp/z"))
    assert run.hints[:3] == [503, 1210, 1308] and len(run.hints) == 39
    assert run.loaded == 5657
