"""spmi-replay, the replay core, run as a real process on sample collections: command line, console
lines, exit codes and signals for every crash class of native/README.md (superpmi-conventions.md
1-2)."""

from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
from pathlib import Path

import pytest

from spmi_dbg.mch import encode as E
from spmi_dbg.mch import packets as P
from spmi_dbg.mch.collection import Collection

from .support.common import Collections, build_collection, mc_bytes
from .support.natives import BASE, DIFF, SEED_OPTIONS
from .support.replay import LOADED, replay, summary

# ------------------------------------------------------------------------------------------ command
# line


def test_help_and_usage_errors(cols: Collections) -> None:
    mch = str(cols.clean())
    # no arguments, a switch without its value, a setting without `=`: superpmi prints only its
    # usage (transcript 08c)
    for args in [(), ("-c",), ("-jitoption", "JitDump", BASE, mch), ("-", BASE, mch)]:
        r = replay(*args)
        assert r.returncode == 255, (args, r.stderr)
        assert r.stdout.startswith("SuperPMI is a JIT compiler testing tool.\n") and r.stderr == ""
    # today's superpmi with no JIT: libclrjit.so beside itself (there is none beside the core)
    r = replay(mch)
    assert r.returncode == 254 and "Using default JIT: " in r.stdout, r.stdout + r.stderr

    cases = {
        ("-zzz", BASE, mch): "ERROR: Unknown switch '-zzz' passed as argument.",
        (BASE, "input.txt"): "ERROR: Unknown file type passed as argument, 'input.txt'.",
        (BASE, BASE, BASE, mch): "ERROR: Too many JITs specified.",
        (
            "-p",
            "2",
            "-c",
            "3",
            BASE,
            mch,
        ): "ERROR: Cannot use method context list in parallel mode.",
        (
            "-stride",
            "0",
            "2",
            BASE,
            mch,
        ): "ERROR: Incorrect offset/increment specified for -stride. "
        "Offset and increment both must be > 0.",
        ("-skipCleanup", BASE, mch): "ERROR: -skipCleanup requires -parallel.",
        ("-c", "5,3", BASE, mch): "ERROR: MCL list must be increasing.. found 5 -> 3",
        ("-c", "abc", BASE, mch): "ERROR: Arg 'abc' is invalid, needed method context list.",
        ("-c", "0,3", BASE, mch): "ERROR: MCL list needs to start from 1!",
        (
            "-p",
            "65",
            BASE,
            mch,
        ): "ERROR: Invalid workers count specified, workers count cannot be more than 64.",
        ("-c", "1-3", "-m", "0" * 32, BASE, mch): (
            "ERROR: Cannot use both method context list and method context hash."
        ),
        ("-repeatCount", "0", BASE, mch): (
            "ERROR: Invalid repeat count specified. Repeat count must be between 1 and INT_MAX."
        ),
        # -target needs 6 chars
        ("-targ", "arm64", BASE, mch): "ERROR: Unknown switch '-targ' passed as argument.",
    }
    for args, line in cases.items():
        r = replay(*args)
        assert r.returncode == 255, (args, r.stderr)
        assert line in r.stderr.splitlines(), (args, r.stderr)
        assert "SuperPMI is a JIT compiler testing tool." in r.stdout, args

    # Names superpmi accepts for -target, rejected because the sample JIT has no such backend.
    r = replay("-target", "x86", BASE, mch)
    assert r.returncode == 255 and "supports only x64 (amd64) and arm64" in r.stderr


def test_prefix_matching_in_superpmis_order(cols: Collections, tmp_path: Path) -> None:
    mch = str(cols.clean())
    # -c = -compile, -f = -failingMCList, -v = -verbosity, -TARGETx = -target (6 chars compared),
    # -boeX = -boe.
    r = replay(
        "-c",
        "3-4",
        "-f",
        str(tmp_path / "f.mcl"),
        "-v",
        "n",
        "-TARGETx",
        "amd64",
        "-boeX",
        BASE,
        mch,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Loaded 2  Jitted 2  FailedCompile 0 Excluded 0 Missing 0\n"
    assert (tmp_path / "f.mcl").read_bytes() == b""
    r = replay("-compile", "1", "-verbosity", "q", BASE, mch)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""


def test_jit_that_cannot_be_loaded_is_jit_failed_to_init(cols: Collections, tmp_path: Path) -> None:
    r = replay(str(tmp_path / "nojit.so"), str(cols.clean()))
    assert r.returncode == 254  # SpmiResult::JitFailedToInit (-2)
    assert "ERROR: Startup - LoadLibrary failed to load" in r.stderr


def test_unreadable_input_is_a_general_failure(tmp_path: Path) -> None:
    r = replay(BASE, str(tmp_path / "missing.mch"))
    assert r.returncode == 255 and r.stderr.startswith("ERROR: ")


# ------------------------------------------------------------------------------------------ clean
# replay


def test_clean_replay_progress_summary_and_mct_input(cols: Collections) -> None:
    mch = cols.clean()
    r = replay(BASE, str(mch))
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0] == f"Using jit({BASE}) with input ({mch})"
    assert lines[1] == " indexCount=-1 (replay all)"
    assert re.fullmatch(r"Jit startup took \d+\.\d+ms", lines[2])
    progress = [ln for ln in lines if "per second" in ln]
    assert len(progress) == 2
    assert re.fullmatch(
        r" 41\.7% - Loaded 500  Jitted 500  FailedCompile 0 at \d+ per second", progress[0]
    )
    assert re.fullmatch(
        r" 83\.3% - Loaded 1000  Jitted 1000  FailedCompile 0 at \d+ per second", progress[1]
    )
    assert lines[-2] == "Loaded 1200  Jitted 1200  FailedCompile 0 Excluded 0 Missing 0"
    assert re.fullmatch(r"Total time: \d+\.\d+ms", lines[-1])

    # The .mct on the command line opens its collection.
    r = replay("-v", "n", "-c", "7", BASE, str(mch) + ".mct")
    assert (
        r.returncode == 0
        and r.stdout == "Loaded 1  Jitted 1  FailedCompile 0 Excluded 0 Missing 0\n"
    )


def test_selection_with_and_without_index(cols: Collections, tmp_path: Path) -> None:
    mch = cols.clean()
    noidx = tmp_path / "noidx.mch"
    noidx.write_bytes(mch.read_bytes())  # no .mct beside it: records are found by hopping headers
    mcl = tmp_path / "pick.mcl"
    mcl.write_bytes(b"3\r\n17\r\n1100\r\n")
    for path in (mch, noidx):
        r = replay("-v", "ewmin", "-c", "5,9-11,1200", BASE, str(path))
        assert summary(r.stdout) == (5, 5, 0, 0, 0)
        r = replay("-v", "ewmin", "-c", str(mcl), BASE, str(path))
        assert summary(r.stdout) == (3, 3, 0, 0, 0)
        # past the end: stops at the last one
        r = replay("-v", "ewmin", "-c", "1199-1300", BASE, str(path))
        assert summary(r.stdout) == (2, 2, 0, 0, 0)
        r = replay("-v", "ewmin", "-stride", "2", "500", BASE, str(path))  # 2, 502, 1002
        assert summary(r.stdout) == (3, 3, 0, 0, 0)


# ------------------------------------------------------------------------------------------
# per-context outcomes


def test_failures_misses_and_recorded_exceptions(cols: Collections, tmp_path: Path) -> None:
    mch = cols.mixed()
    fail = tmp_path / "fail.mcl"
    r = replay("-v", "ewmin", "-f", str(fail), "-r", str(tmp_path / "repro"), BASE, str(mch))
    assert r.returncode == 1  # Error > Misses
    err = r.stderr.splitlines()
    out = r.stdout.splitlines()
    # jit-null: a SIGSEGV inside the JIT, caught by the protected region (first chance).
    assert err[0] == "ERROR: Unexpected exception c0000005 was thrown."
    assert re.fullmatch(
        r"ERROR: Method 10 of size \d+ failed to load and compile correctly "
        rf"\({re.escape(BASE)}\)\.",
        err[1],
    )
    # jit-assert: doAssert -> ISSUE line, then DebugBreakorAV(0x7b) -> 0xE042107B.
    assert any(
        re.fullmatch(r"ISSUE: <ASSERT> #20 \S+ \(\d+\) - .*shiftAmount >= 0.*", ln) for ln in out
    ), out
    assert "ERROR: Exception thrown: DebugBreak or AV Exception 123" in err
    assert any(ln.startswith("ERROR: Method 20 of size ") for ln in err)
    # missing: a call token without a ResolveToken record.
    assert any(
        re.fullmatch(
            r"MISSING: Method context 30 failed to replay: SuperPMI assertion failed "
            r'\(missing key "key" in map ResolveToken\): token [0-9a-f]+',
            ln,
        )
        for ln in out
    ), out
    # ee-exception (40) is a success; diff-assert (50) only asserts in the diff JIT.
    assert not any("#40" in ln or " 40 " in ln or "#50" in ln for ln in out + err)
    assert summary(r.stdout) == (120, 120, 3, 0, 1)
    assert fail.read_bytes() == b"10\r\n20\r\n30\r\n"
    # -r: each error (not the miss) is written out with the record's own bytes.
    assert (tmp_path / "repro-10.mc").read_bytes() == mc_bytes(mch, 10)
    assert (tmp_path / "repro-20.mc").exists() and not (tmp_path / "repro-30.mc").exists()
    assert f"Wrote out repro to '{tmp_path / 'repro-10.mc'}'" in out

    # The repro replays alone as method context #1 with the same failure.
    r = replay("-v", "ewmin", BASE, str(tmp_path / "repro-10.mc"))
    assert r.returncode == 1 and "ERROR: Method 1 of size" in r.stderr

    # Only misses: exit 3. Only the diff JIT asserts on 50.
    assert replay("-c", "30,40", BASE, str(mch)).returncode == 3
    assert replay("-c", "50", BASE, str(mch)).returncode == 0
    r = replay("-v", "ewmin", "-c", "50", DIFF, str(mch))
    assert r.returncode == 1 and "multiplier != 0" in r.stdout


def test_two_jits_report_which_one_failed(cols: Collections) -> None:
    r = replay("-v", "ewmin", "-c", "50", BASE, DIFF, str(cols.mixed()))
    assert r.returncode == 1
    assert re.search(
        rf"^ERROR: Method 50 of size \d+ failed to load and compile correctly by JIT2 "
        rf"\({re.escape(DIFF)}\)\.$",
        r.stderr,
        re.M,
    ), r.stderr
    r = replay("-v", "ewmin", "-c", "10", BASE, DIFF, str(cols.mixed()))
    assert re.search(
        r"^ERROR: Method 10 of size \d+ failed to load and compile correctly by JIT1 ",
        r.stderr,
        re.M,
    )
    assert re.search(
        r"^ERROR: Method 10 of size \d+ failed to load and compile correctly by JIT2 ",
        r.stderr,
        re.M,
    )


def test_assert_with_boa_and_no_debugger_does_not_trap(cols: Collections) -> None:
    r = replay("-boa", "-c", "20", BASE, str(cols.mixed()))
    assert r.returncode == 1  # no SIGTRAP: nobody is tracing the process
    assert re.search(
        r"^ERROR: SuperPMI: Assert Failure \(PID \d+, Thread \d+/[0-9a-f]+\)$", r.stderr, re.M
    )
    assert re.search(r"^\S+importer\.cpp, Line: \d+$", r.stderr, re.M)
    assert "ERROR: Exception thrown: DebugBreak or AV Exception 123" in r.stderr
    assert "ISSUE: <ASSERT> #20 " in r.stdout


def test_boe_breaks_unconditionally(cols: Collections) -> None:
    # the debug break in main, outside every protected call: today's PAL cannot re-run the trap and
    # aborts (3.1's superpmi, with no SIGTRAP handler, dies of the trap: tests/test_era31.py)
    r = replay("-boe", BASE, str(cols.mixed()))
    assert r.returncode == -signal.SIGABRT
    assert r.stdout.splitlines()[-1] == "HINT: to repro add '-c 10' to cmdline"
    r = replay("-boe", "-c", "10", BASE, str(cols.mixed()))
    assert r.returncode == -signal.SIGABRT and "HINT" not in r.stdout


def test_box_breaks_on_superpmi_exceptions(cols: Collections) -> None:
    # missing data raises an SPMI exception inside the JIT's protected call: with no debugger the
    # PAL turns the break into an exception (EXCEPTION_BREAKPOINT), and the compile fails
    r = replay("-box", "-c", "30", BASE, str(cols.mixed()))
    assert r.returncode == 1 and "80000003" in r.stderr, r.stderr
    assert replay("-box", "-c", "1-9", BASE, str(cols.mixed())).returncode == 0


def test_log_file(cols: Collections, tmp_path: Path) -> None:
    log = tmp_path / "spmi.log"
    r = replay("-w", str(log), "-c", "10", BASE, str(cols.mixed()))
    assert r.returncode == 1
    text = log.read_bytes().decode()
    assert re.search(
        r"^ - \S+ \[\S+\.cpp:\d+\] - ERROR - Unexpected exception c0000005 was thrown\.\r$",
        text,
        re.M,
    )
    assert re.search(
        r"^ - main \[superpmi\.cpp:\d+\] - INFO - Loaded 1  Jitted 1  FailedCompile 1 ", text, re.M
    )


def test_failure_limit(cols: Collections) -> None:
    r = replay("-v", "ewmin", "-failureLimit", "2", BASE, str(cols.mixed()))
    assert "ERROR: More than 2 methods failed. Skip compiling remaining methods." in r.stderr
    assert summary(r.stdout) == (20, 20, 2, 0, 0)


def test_badcode_is_a_successful_compile(cols: Collections) -> None:
    # Since dotnet/runtime#89626 (July 2023) CORJIT_BADCODE is not a replay failure.
    il = cols.root / "bad.il"
    il.write_text(
        ".method Sample.Bad:Unknown(1)\n  .noverify\n  ldarg.0\n  .bytes A5\n  ret\n.end\n"
    )
    mch = str(cols.get("badcode", 3, corpus=[str(il)]))
    r = replay("-v", "ewmin", BASE, mch)
    assert r.returncode == 0 and r.stderr == "" and summary(r.stdout) == (3, 3, 0, 0, 0)


def test_corrupt_record_is_low_integrity(cols: Collections) -> None:
    mch = cols.get("corrupt", 100, inject=[("corrupt", 60)])
    r = replay("-v", "ewmin", "-f", "/dev/null", BASE, str(mch))
    assert r.returncode == 255  # GeneralFailure, no summary
    assert r.stderr == "ERROR: Method 60 is of low integrity.\n"
    assert "Loaded" not in r.stdout
    assert replay("-c", "1-59,61-100", BASE, str(mch)).returncode == 0

    # Broken framing (a bad end canary) is reported the same way.
    bad = mch.parent / "badframe.mch"
    data = bytearray(mch.read_bytes())
    with Collection.open(mch) as col:
        rec = col.locate(42)
    data[rec.offset + rec.size - 1] ^= 0xFF
    bad.write_bytes(bytes(data))
    r = replay("-v", "ewmin", BASE, str(bad))
    assert r.returncode == 255 and r.stderr == "ERROR: Method 42 is of low integrity.\n"


# ------------------------------------------------------------------------------------------ fatal
# crash classes


def test_poison_then_poison_crash_aborts_but_alone_it_does_not(cols: Collections) -> None:
    mch = str(cols.get("poison", 300, inject=[("poison", 100), ("poison-crash", 200)]))
    r = replay("-v", "ewmin", BASE, mch)
    assert r.returncode == -signal.SIGABRT and "Loaded" not in r.stdout
    assert replay("-c", "100,200", BASE, mch).returncode == -signal.SIGABRT
    assert replay("-c", "200", BASE, mch).returncode == 0
    assert replay("-c", "1-199", BASE, mch).returncode == 0


def test_hang_is_killed_by_a_timeout(cols: Collections) -> None:
    mch = str(cols.get("hang", 20, inject=[("hang", 7)]))
    with pytest.raises(subprocess.TimeoutExpired):
        replay("-c", "7", BASE, mch, timeout=3)
    assert replay("-c", "1-6,8-20", BASE, mch).returncode == 0


def test_stack_overflow_kills_the_process(cols: Collections) -> None:
    mch = str(cols.get("stackov", 10, inject=[("stack-overflow", 5)]))
    r = replay("-v", "ewmin", BASE, mch)
    # no alternate signal stack: not caught, even inside the JIT
    assert r.returncode == -signal.SIGSEGV
    assert "Loaded" not in r.stdout


# ------------------------------------------------------------------------------------------ asm
# diffs


def test_asm_diffs_between_base_and_diff_jit(cols: Collections, tmp_path: Path) -> None:
    mch = cols.clean()
    fail = tmp_path / "diffs.mcl"
    r = replay("-a", "-f", str(fail), BASE, DIFF, str(mch))
    assert r.returncode == 2, r.stderr  # Diffs
    diffs = re.findall(r"^ISSUE: <ASM_DIFF> main method (\d+) of size \d+ differs$", r.stdout, re.M)
    loaded, jitted, failed, _excluded, missing, ndiffs = summary(r.stdout)
    assert (loaded, jitted, failed, missing) == (1200, 1200, 0, 0) and ndiffs == len(diffs) > 50
    assert re.search(
        r"^ \d+\.\d% - Loaded 500  Jitted 500  Diffs \d+  FailedCompile 0 at \d+ per second$",
        r.stdout,
        re.M,
    )
    # With no -diffsInfo, the contexts with diffs go to the -f list.
    assert fail.read_bytes() == b"".join(b"%s\r\n" % d.encode() for d in diffs)
    # The same JIT twice: no diffs.
    r = replay("-a", "-v", "ewmin", BASE, BASE, str(mch))
    assert r.returncode == 0 and summary(r.stdout)[5] == 0
    # -a with one JIT and no stored compile result in the records.
    r = replay("-a", "-v", "ewmin", "-c", "1", BASE, str(mch))
    assert "ERROR: method 1 is missing a compileResult, cannot do diffing" in r.stderr


def test_one_jit_against_the_stored_compile_result(tmp_path: Path) -> None:
    # Records with a stored compile result (random code bytes): -a with one JIT diffs against it.
    mch = tmp_path / "stored.mch"
    build_collection(mch, count=20, with_compile_result=True)
    r = replay("-a", "-v", "ewmin", BASE, str(mch))
    assert r.returncode == 2, r.stderr
    assert (
        len(re.findall(r"^ISSUE: <ASM_DIFF> main method \d+ of size \d+ differs$", r.stdout, re.M))
        == 20
    )
    assert summary(r.stdout) == (20, 20, 0, 0, 0, 20)


def test_diffs_info_details_and_metrics_summaries(cols: Collections, tmp_path: Path) -> None:
    mch = cols.mixed()
    r = replay(
        "-a",
        "-v",
        "ewmin",
        "-diffsInfo",
        str(tmp_path / "d.csv"),
        "-details",
        str(tmp_path / "det.csv"),
        "-baseMetricsSummary",
        str(tmp_path / "b.csv"),
        "-diffMetricsSummary",
        str(tmp_path / "m.csv"),
        BASE,
        DIFF,
        str(mch),
    )
    assert r.returncode == 1
    diffs = re.findall(r"^ISSUE: <ASM_DIFF> main method (\d+) ", r.stdout, re.M)
    rows = (tmp_path / "d.csv").read_text().splitlines()
    assert rows[0] == "Context,Base size,Diff size,Base instructions,Diff instructions,Context size"
    assert [row.split(",")[0] for row in rows[1:]] == diffs
    det = (tmp_path / "det.csv").read_text().splitlines()
    assert det[0] == (
        "Context,Context size,Method full name,Tier name,Base result,Diff result,MinOpts,Has diff,"
        "Base instructions,Diff instructions"
    )
    assert len(det) == 121 and det[10].startswith("10,") and ",Error,Error," in det[10]
    assert ',"' in det[1] and ":" in det[1].split('"')[1]  # "Namespace.Class:Method"
    assert ",Miss,Miss," in det[30] and ",Success,Error," in det[50]
    base = (tmp_path / "b.csv").read_text().splitlines()
    assert base[0] == (
        "Successful compiles,Failing compiles,Missing compiles,Contexts with diffs,Code bytes,"
        "Diffed code bytes,Executed instructions,Diff executed instructions,Name"
    )
    assert base[1].startswith(f"117,2,1,{len(diffs)},") and base[1].endswith(",Overall")
    assert [row.rsplit(",", 1)[1] for row in base[1:]] == ["Overall", "MinOpts", "FullOpts"]
    assert (tmp_path / "m.csv").read_text().splitlines()[1].startswith(f"116,3,1,{len(diffs)},")

    r = replay("-details", str(tmp_path / "r.csv"), "-c", "1-3", BASE, str(mch))
    rows = (tmp_path / "r.csv").read_text().splitlines()
    assert rows[0] == "Context,Context size,Method full name,Tier name,Result,MinOpts,Instructions"
    assert (
        len(rows) == 4
        and rows[1].startswith("1,")
        and rows[1].endswith(",FullOpts,Success,False,0")
    )


def test_arm64_literal_pool_is_split_before_diffing(cols: Collections) -> None:
    mch = str(cols.get("bigconst", 4, arch="arm64", corpus=["bigconst.il"]))
    r = replay("-a", "-v", "ewmind", "-target", "arm64", "-c", "1", BASE, BASE, mch)
    assert r.returncode == 0, r.stderr
    # The near differ's debug line: the hot code was cut at nativeSizeOfCode and the rest became ro
    # data.
    sizes = re.findall(r"^HCS1 (\d+) CCS1 0 RDS1 (\d+) ", r.stdout, re.M)
    assert sizes and int(sizes[0][1]) >= 16, r.stdout  # two 64-bit constants (plus alignment)
    r = replay("-a", "-v", "ewmind", "-target", "x64", "-c", "1", BASE, BASE, mch)
    assert re.search(r"^HCS1 \d+ CCS1 0 RDS1 0 ", r.stdout, re.M)  # no split for an x64 target


# ------------------------------------------------------------------------------------------ the
# seed crash


def test_seed_crash_with_bug_91257(cols: Collections) -> None:
    mch = str(cols.seed_arm64())
    r = replay(*SEED_OPTIONS, BASE, DIFF, mch)
    # a real fault outside any protected region: the process dies
    assert r.returncode == -signal.SIGSEGV
    assert "Loaded 500  Jitted 500  Diffs" in r.stdout and "Loaded 1000" not in r.stdout
    assert LOADED.search(r.stdout) is None
    # Up to the crash, progress and diffs were printed and nothing was lost.
    diffs = [int(n) for n in re.findall(r"^ISSUE: <ASM_DIFF> main method (\d+) ", r.stdout, re.M)]
    assert diffs and max(diffs) < 700 and len([d for d in diffs if d > 500]) > 0


def test_seed_context_without_the_bug_switch_is_a_success(cols: Collections) -> None:
    mch = str(cols.seed_arm64())
    r = replay("-a", "-target", "arm64", "-v", "ewmin", BASE, DIFF, mch)
    assert r.returncode == 2 and r.stderr == ""
    assert summary(r.stdout)[:5] == (1200, 1200, 0, 0, 0)
    # Without -a, or without the arm64 target, even -bug 91257 does not reach the null map.
    assert replay("-bug", "91257", "-c", "700", BASE, mch).returncode == 0
    assert (
        replay("-a", "-bug", "91257", "-target", "x64", "-c", "700", BASE, DIFF, mch).returncode
        == 0
    )
    # The recorded target is used when -target is absent.
    assert replay("-a", "-bug", "91257", "-c", "700", BASE, DIFF, mch).returncode == -signal.SIGSEGV


# ------------------------------------------------------------------------------------------
# configuration


def test_jit_config_lookup_order(cols: Collections) -> None:
    plain = str(cols.clean())
    recorded = str(cols.get("config", 5, config=[("JitMinOpts", 0, 0), ("JitDisasmSummary", 1, 0)]))

    def tier(mch: str, *args: str, env: dict[str, str] | None = None) -> str:
        r = replay("-v", "q", "-c", "2", *args, BASE, mch, env=env)
        m = re.search(r"^JIT compiled \S+ \[(\w+), IL size=\d+, code size=\d+\]$", r.stdout, re.M)
        assert m, (args, r.stdout, r.stderr)
        return m.group(1)

    assert tier(plain, "-jitoption", "JitDisasmSummary=1") == "FullOpts"
    assert (
        tier(plain, "-jitoption", "JitDisasmSummary=1", "-jitoption", "JitMinOpts=1") == "MinOpts"
    )
    assert (
        tier(plain, env=dict(os.environ, DOTNET_JitDisasmSummary="1", COMPlus_JitMinOpts="1"))
        == "MinOpts"
    )
    # Recorded values win over plain -jitoption and the environment, not over -jitoption force.
    assert tier(recorded) == "FullOpts"
    assert (
        tier(recorded, "-jitoption", "JitMinOpts=1", env=dict(os.environ, DOTNET_JitMinOpts="1"))
        == "FullOpts"
    )
    assert tier(recorded, "-jitoption", "force", "JitMinOpts=1") == "MinOpts"
    assert (
        tier(
            recorded,
            "-ignoreStoredConfig",
            "-jitoption",
            "JitMinOpts=1",
            "-jitoption",
            "JitDisasmSummary=1",
        )
        == "MinOpts"
    )


def test_stress_assert_and_jit_stdout_file(cols: Collections, tmp_path: Path) -> None:
    mch = str(cols.get("stress", 60, inject=[("stress-assert", 33)]))
    assert replay(BASE, mch).returncode == 0
    stress = ("-jitoption", "JitStress=2", "-jitoption", "JitStressModeNames=STRESS_FOLD")
    r = replay(*stress, BASE, mch)
    assert r.returncode == 1, r.stderr
    issues = [ln for ln in r.stdout.splitlines() if ln.startswith("ISSUE: <ASSERT>")]
    assert len(issues) == 1 and issues[0].startswith("ISSUE: <ASSERT> #33 "), r.stdout
    assert "magic[divisor] != 0" in issues[0]
    assert "ERROR: Method 33 of size " in r.stderr
    # The same settings from the environment; an allow list without the mode turns it off.
    assert (
        replay(
            BASE,
            mch,
            env=dict(os.environ, DOTNET_JitStress="2", DOTNET_JitStressModeNames="STRESS_FOLD"),
        ).returncode
        == 1
    )
    assert (
        replay(
            *stress, "-jitoption", "JitStressModeNamesAllow=STRESS_MAKE_CSE", BASE, mch
        ).returncode
        == 0
    )

    # JitStdOutFile takes the JIT's own output (appended); superpmi's lines stay on stdout.
    out = tmp_path / "jit out.txt"
    out.write_text("earlier\n")
    r = replay(
        "-c",
        "1-3",
        "-jitoption",
        "JitDisasmSummary=1",
        "-jitoption",
        f"JitStdOutFile={out}",
        BASE,
        mch,
    )
    assert (
        r.returncode == 0 and "JIT compiled" not in r.stdout and summary(r.stdout)[:3] == (3, 3, 0)
    ), r.stdout
    text = out.read_text().splitlines()
    assert (
        text[0] == "earlier" and len([ln for ln in text if ln.startswith("JIT compiled ")]) == 3
    ), text


# ------------------------------------------------------------------------------------------ damaged
# maps


def packets_of(record: bytes) -> list[tuple[int, bytes]]:
    payload = record[6:-2]
    out, pos = [], 0
    while pos < len(payload):
        pid, size = struct.unpack_from("<BI", payload, pos)
        out.append((pid, payload[pos + 5 : pos + 5 + size]))
        pos += 6 + size
    return out


def record_of(packets: list[tuple[int, bytes]]) -> bytes:
    payload = b"".join(struct.pack("<BI", pid, len(m)) + m + b"B" for pid, m in packets)
    return b"mc" + struct.pack("<I", len(payload)) + payload + b"42"


def test_damaged_maps_are_low_integrity_never_a_crash(cols: Collections, tmp_path: Path) -> None:
    good = mc_bytes(cols.clean(), 5)
    packets = packets_of(good)
    assert record_of(packets) == good

    def with_map(i: int, new_map: bytes) -> bytes:
        return record_of([*packets[:i], (packets[i][0], new_map), *packets[i + 1 :]])

    variants: dict[str, bytes] = {}
    for i, (pid, m) in enumerate(packets):
        hdr = 4 if m[:4] in (b"LWM1", b"DWM1") else 0
        count, buflen = struct.unpack_from("<II", m, hdr)
        for what, value in (
            ("count+1", count + 1),
            ("count-1", max(count - 1, 0)),
            ("count huge", 0x7FFFFFFF),
        ):
            variants[f"{pid} {what}"] = with_map(
                i, m[:hdr] + struct.pack("<I", value) + m[hdr + 4 :]
            )
        variants[f"{pid} buflen+1"] = with_map(
            i, m[: hdr + 4] + struct.pack("<I", buflen + 1) + m[hdr + 8 :]
        )
        variants[f"{pid} truncated"] = with_map(i, m[:-1])
        variants[f"{pid} dense tag"] = with_map(i, b"DWM1" + m[hdr:])
    variants["unknown packet 250"] = record_of([*packets, (250, b"LWM1" + struct.pack("<I", 0))])
    variants["unread packet 50 (GetEEInfo), bad map"] = record_of([*packets, (50, b"LWM1\x01")])
    for name, rec in variants.items():
        path = tmp_path / "one.mc"
        path.write_bytes(rec)
        r = replay("-v", "ewmin", BASE, str(path))
        assert r.returncode in (0, 1, 3, 255), (name, r.returncode, r.stderr)  # never a signal
        if r.returncode == 255:
            assert r.stderr.splitlines()[-1] == "ERROR: Method 1 is of low integrity.", (
                name,
                r.stderr,
            )
        if name.startswith(("unknown", "unread")) or "truncated" in name or "count huge" in name:
            assert r.returncode == 255, name


def test_legacy_and_dense_map_layouts(cols: Collections, tmp_path: Path) -> None:
    packets = packets_of(mc_bytes(cols.clean(), 5))
    # Untagged keyed maps (older collections) read like LWM1 ones.
    untagged = [(pid, m[4:] if m[:4] == b"LWM1" else m) for pid, m in packets]
    # A DWM1 dense map (SigInstHandleMap, 184) and the old untagged form with keys 0..n-1.
    dense = b"DWM1" + struct.pack("<IIQQ", 2, 0, 0x1234, 0x5678)
    legacy = struct.pack("<IIIIQQ", 2, 0, 1, 0, 0x5678, 0x1234)
    bad_key = struct.pack("<IIIIQQ", 2, 0, 1, 2, 0x5678, 0x1234)
    cases = {
        "untagged": (untagged, 0),
        "dense": ([*packets, (184, dense)], 0),
        "legacy dense": ([*packets, (184, legacy)], 0),
        "illegal dense key": ([*packets, (184, bad_key)], 255),
    }
    for name, (pk, rc) in cases.items():
        path = tmp_path / "one.mc"
        path.write_bytes(record_of(pk))
        r = replay("-v", "ewmin", BASE, str(path))
        assert r.returncode == rc, (name, r.stdout, r.stderr)


def test_near_differ_exceptions_are_caught_and_not_errors(
    cols: Collections, tmp_path: Path
) -> None:
    # A stored compile result whose CompileMethod map exists but is empty: on Arm64 the near
    # differ's repCompileMethod misses in Get (the experiment in dotnet/runtime#91257 that turned
    # the crash into a caught SuperPMI exception).
    code = E.BlobBuffer()
    hot = code.add(bytes(range(16)))
    stored = [
        (P.CR_AllocMem, E.lwm([(E.u32(0), E.alloc_mem_value(16, hot, 0x10000))], code)),
        (P.CR_CompileMethod, b"LWM1" + struct.pack("<I", 0)),
    ]
    path = tmp_path / "stored.mc"
    path.write_bytes(record_of([*packets_of(mc_bytes(cols.clean(), 5)), *stored]))
    fail = tmp_path / "f.mcl"
    r = replay("-a", "-target", "arm64", "-v", "ewmin", "-f", str(fail), BASE, str(path))
    assert r.returncode == 0, r.stderr  # not counted as an error
    assert r.stderr.splitlines() == [
        f"ERROR: main method 1 of size {il_size(cols.clean(), 5)} failed to load and compile "
        "correctly.",
        "ERROR: Exception thrown: SuperPMI assertion 'index != -1' failed (Didn't find Item (in "
        "Get))",
    ]
    assert fail.read_bytes() == b"1\r\n"
    assert summary(r.stdout) == (1, 1, 0, 0, 0, 0)


def il_size(path: Path, number: int) -> int:
    with Collection.open(path) as col:
        return int(col.method_context(number).il_size)
