"""The bundled core as a specimen of .NET Core 3.1's superpmi (SPMI_REPLAY_ERA=3.1,
native/replay/README.md "The 3.1 era"): each behaviour of 3.1 the tool depends on, checked against
what the real superpmi 3.1.23 printed (the transcripts of ../shared/real-superpmi/, read through
tests/support/real.py). Lines are compared by shape where the content cannot be the same (our paths,
numbers, method names and JIT messages against theirs), byte for byte where it can."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from spmi_dbg.failures.output import ASSERT_EXCEPTION, parse_output

from .support.common import Collections
from .support.natives import BASE, DIFF, REPLAY, REPLAY_O0
from .support.real import Reference, reference

ERA31 = {**os.environ, "SPMI_REPLAY_ERA": "3.1"}


@pytest.fixture(scope="module")
def ref() -> Reference:
    return reference()


def era31(
    *args: str, program: str = REPLAY, timeout: float = 120, stdbuf: bool = False
) -> subprocess.CompletedProcess[str]:
    """The core in the 3.1 era, stdout and stderr apart through pipes (as a program sees them)."""
    argv = [program, *args]
    if stdbuf:
        argv = ["stdbuf", "-o0", "-e0", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=ERA31)


_PATH = re.compile(r"(\{(?:bin|collections|tmp)\}|/)[^\s(),']*")
_QUOTED = re.compile(r"'[^']*'")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_LIST = re.compile(r"N(?:,N)+")


def shape(line: str) -> str:
    """A line with its content abstracted: paths P, quoted text 'Q', numbers N, lists N,..."""
    line = _PATH.sub("P", line)
    line = _QUOTED.sub("'Q'", line)
    line = _NUMBER.sub("N", line)
    return _LIST.sub("N,...", line)


def shapes(text: str) -> list[str]:
    return [shape(line) for line in text.splitlines()]


def dedup(lines: list[str]) -> list[str]:
    """Runs of the same shape (progress lines) as one."""
    out: list[str] = []
    for line in lines:
        if not out or out[-1] != line:
            out.append(line)
    return out


@pytest.fixture(scope="module")
def mixed31(cols: Collections) -> Path:
    """1,200 sample method contexts with one of each 3.1 scenario's trigger."""
    return cols.get(
        "era31",
        1200,
        inject=[("jit-assert", 543), ("null-map", 700), ("missing", 8), ("jit-null", 900)],
    )


def test_a_clean_range_prints_what_31_prints(cols: Collections, ref: Reference) -> None:
    """01: header, index list, JIT startup, a progress line every 500 (printed before the next
    method context loads, so none after the last), the summary without `Missing`, total time."""
    theirs = ref.transcript("01-clean-release-1-1200")
    r = era31("-c", "1-1200", BASE, str(cols.clean()))
    assert r.returncode == theirs.rc == 0, r.stderr
    assert r.stderr == theirs.stderr == ""
    assert shapes(r.stdout) == shapes(theirs.stdout)
    assert "Loaded 1200  Jitted 1200  FailedCompile 0 Excluded 0\n" in r.stdout


def test_a_whole_replay_says_index_count_minus_1_and_nothing_in_the_list(
    cols: Collections, ref: Reference
) -> None:
    theirs = ref.transcript("02-clean-checked-whole")
    r = era31(BASE, str(cols.clean()))
    assert r.returncode == 0
    assert r.stdout.splitlines()[1] == theirs.stdout.splitlines()[1] == " indexCount=-1 ()"
    assert dedup(shapes(r.stdout)) == dedup(shapes(theirs.stdout))


def test_today_prints_its_own_lines(cols: Collections) -> None:
    """Without the variable the core is today's superpmi: the era is chosen at run time."""
    r = subprocess.run([REPLAY, BASE, str(cols.clean())], capture_output=True, text=True)
    assert " indexCount=-1 (replay all)" in r.stdout and " Missing 0" in r.stdout


def test_an_assert_has_no_number_and_its_error_line_names_it(mixed31: Path, ref: Reference) -> None:
    """06: `ISSUE: <ASSERT> <file> (<line>) - Assertion failed '...' in '...' (IL size N)` and an
    empty line on stdout; on stderr the exception and `main method N of size S failed ...`; exit 1.
    The tool's parser pairs them by IL size as it does on the real transcript."""
    theirs = ref.transcript("06-assert-stressregs400-c543")
    r = era31("-c", "543", BASE, str(mixed31))
    assert r.returncode == theirs.rc == 1
    assert shapes(r.stdout) == shapes(theirs.stdout)
    assert r.stderr == theirs.stderr.replace("of size 844", f"of size {il_size(r.stdout)}")
    assert "#543" not in r.stdout and "during '" not in r.stdout
    out = parse_output(r.stdout.splitlines(), r.stderr.splitlines())
    assert [(f.kind, f.method_context) for f in out.failures] == [("assert", 543)]
    assert out.failed_compiles[0].message == ASSERT_EXCEPTION


def il_size(stdout: str) -> int:
    m = re.search(r"\(IL size (\d+)\)", stdout)
    assert m, stdout
    return int(m.group(1))


def test_boa_goes_on_without_a_debugger(mixed31: Path, ref: Reference) -> None:
    theirs = ref.transcript("06c-assert-stressregs400-c543-boa")
    r = era31("-boa", "-c", "543", BASE, str(mixed31))
    assert r.returncode == theirs.rc == 1
    assert shapes(r.stdout) == shapes(theirs.stdout)
    assert shapes(r.stderr) == shapes(theirs.stderr)


def test_boe_loses_the_issue_line_when_piped(mixed31: Path, ref: Reference) -> None:
    """06d: -boe traps in main after the failed compile (SIGTRAP, 133 in a shell): piped,
    block-buffered stdout never got the ISSUE line out; stderr has both ERROR lines."""
    theirs = ref.transcript("06d-assert-stressregs400-c543-boe")
    r = era31("-boe", "-c", "543", BASE, str(mixed31))
    assert r.returncode == -signal.SIGTRAP and theirs.rc == 128 + signal.SIGTRAP
    assert "ISSUE: <ASSERT>" not in r.stdout
    assert shapes(r.stderr) == shapes(theirs.stderr)


def test_a_null_map_kills_the_process_and_piped_stdout_is_lost(
    mixed31: Path, ref: Reference
) -> None:
    """09: the JIT asks for a map the record never had: SIGSEGV, and piped (block-buffered) stdout
    is empty; under stdbuf the header lines are there (09's stdout.unbuffered)."""
    theirs = ref.transcript("09-checked-on-reljit-segv")
    r = era31("-c", "700-710", BASE, str(mixed31))
    assert r.returncode == -signal.SIGSEGV and theirs.rc == 128 + signal.SIGSEGV
    assert r.stdout == theirs.stdout == "" and r.stderr == theirs.stderr == ""
    u = era31("-c", "700-710", BASE, str(mixed31), stdbuf=True)
    assert u.returncode == -signal.SIGSEGV
    assert shapes(u.stdout) == shapes(theirs.stdout_unbuffered or "")


def test_the_o0_core_reports_the_null_map_as_missing(mixed31: Path, ref: Reference) -> None:
    """05: 3.1's superpmi_O0 keeps GetIndex's `this != nullptr` check that the -O2 build drops: the
    same record is MISSING there, exit 3 (one source, crash or not by optimization level)."""
    theirs = ref.transcript("05-jitstress1-O0-missing")
    line = next(x for x in theirs.stdout.splitlines() if "There is no such LWM" in x)
    r = era31("-c", "700", BASE, str(mixed31), program=REPLAY_O0)
    assert r.returncode == 3, r.stdout + r.stderr
    ours = next(x for x in r.stdout.splitlines() if x.startswith("MISSING: "))
    assert ours == line.replace("Method context 4 ", "Method context 700 ")


def test_a_fault_in_the_jit_kills_the_process(mixed31: Path) -> None:
    """3.1 installs no handler for hardware faults (SigCgt 0 for SIGSEGV): today's core turns the
    same fault into a failed compile."""
    r = era31("-c", "900", BASE, str(mixed31))
    assert r.returncode == -signal.SIGSEGV
    today = subprocess.run(
        [REPLAY, "-c", "900", BASE, str(mixed31)], capture_output=True, text=True, timeout=60
    )
    assert today.returncode == 1 and "c0000005" in today.stderr


def test_missing_data_counts_as_a_failed_compile_and_exits_3(mixed31: Path, ref: Reference) -> None:
    theirs = ref.transcript("04d-jitstress1-c8-missing")
    r = era31("-c", "8", BASE, str(mixed31))
    assert r.returncode == theirs.rc == 3
    ours, recorded = shapes(r.stdout), shapes(theirs.stdout)
    assert ours[:3] == recorded[:3] and ours[4:] == recorded[4:]
    assert ours[3].startswith("MISSING: Method context N failed to replay: ")
    assert "Loaded 1  Jitted 1  FailedCompile 1 Excluded 0" in r.stdout


def test_a_c_past_the_end_prints_the_two_header_lines_and_exits_255(
    cols: Collections, ref: Reference
) -> None:
    theirs = ref.transcript("08a-past-end-c40000")
    r = era31("-c", "40000", BASE, str(cols.clean()))
    assert r.returncode == 255 and theirs.rc == 255
    assert shapes(r.stdout) == shapes(theirs.stdout) and r.stderr == theirs.stderr == ""


def test_a_jit_that_does_not_load_exits_254(
    cols: Collections, tmp_path: Path, ref: Reference
) -> None:
    theirs = ref.transcript("11b-jit-file-missing")
    r = era31("-c", "1-10", str(tmp_path / "guid.so"), str(cols.clean()))
    assert r.returncode == 254 and theirs.rc == 254
    assert shapes(r.stdout) == shapes(theirs.stdout)


def test_mc_index_is_the_count_loaded(mixed31: Path) -> None:
    """3.1's main passes the count loaded to MethodContext::Initialize: at the first compile of
    `-c 100`, mc->index is 1 and the compile's mcIndex 100 (today's core: 100 and 100)."""

    def read(env: dict[str, str]) -> tuple[int, int]:
        r = subprocess.run(
            [
                "gdb",
                "-nx",
                "-q",
                "-batch",
                "-ex",
                "break JitInstance::CompileMethod",
                "-ex",
                "run",
                "-ex",
                'printf "index=%d mcIndex=%d\\n", mc->index, mcIndex',
                "-ex",
                "kill",
                "--args",
                REPLAY_O0,
                "-c",
                "100",
                BASE,
                str(mixed31),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        m = re.search(r"index=(\d+) mcIndex=(\d+)", r.stdout)
        assert m, r.stdout + r.stderr
        return int(m.group(1)), int(m.group(2))

    assert read(ERA31) == (1, 100)
    assert read({k: v for k, v in os.environ.items() if k != "SPMI_REPLAY_ERA"}) == (100, 100)


def test_a_p_parent_says_nothing_of_a_dead_worker(mixed31: Path, ref: Reference) -> None:
    """09c: a worker dies of SIGSEGV; the parent prints its child line, the worker count, a summary
    without the dead worker's method contexts and exits 1, and names no crash. 03: a clean -p run
    prints the same lines and exits 0."""
    theirs = ref.transcript("09c-parallel2-checked-on-reljit")
    r = era31("-p", "2", BASE, str(mixed31))
    assert r.returncode == theirs.rc == 1, r.stdout + r.stderr
    ours = shapes(r.stdout)
    assert ours[:2] == shapes(theirs.stdout)[:2]
    # the surviving worker's assert (543, odd: worker 1) is passed on; the dead one (700 and 900)
    # is not mentioned
    assert ours[2:] == [
        "ISSUE: <ASSERT> P (N) - Assertion failed 'Q' in 'Q' (IL size N)",
        "Loaded N  Jitted N  FailedCompile N Excluded N",
        "Total time: Nms",
    ]
    loaded = int(r.stdout.splitlines()[3].split()[1])
    assert loaded < 1200
    assert "SIGSEGV" not in r.stderr and "signal" not in r.stderr.lower()


def test_a_clean_p_run(cols: Collections, ref: Reference) -> None:
    theirs = ref.transcript("03-parallel2-checked")
    r = era31("-p", "2", BASE, str(cols.clean()))
    assert r.returncode == theirs.rc == 0
    assert shapes(r.stdout) == shapes(theirs.stdout)
    assert "Loaded 1200  Jitted 1200  FailedCompile 0 Excluded 0\n" in r.stdout


def test_asm_diffs_print_matching_and_diffs(cols: Collections, ref: Reference) -> None:
    """10a: with -a the progress lines count `Matching N` and the summary ends `Diffs N`."""
    theirs = ref.transcript("10a-asmdiff-official-vs-checked-1-600")
    r = era31("-a", "-c", "1-600", BASE, DIFF, str(cols.clean()))
    ours = shapes(r.stdout)
    recorded = shapes(theirs.stdout)
    progress = [line for line in ours if "% - Loaded" in line]
    assert progress == [line for line in recorded if "% - Loaded" in line]
    assert ours[-2] == recorded[-2] == "Loaded N  Jitted N  FailedCompile N Excluded N Diffs N"
    diffs = int(r.stdout.splitlines()[-2].rsplit(" ", 1)[1])
    assert r.returncode == (2 if diffs else 0)
