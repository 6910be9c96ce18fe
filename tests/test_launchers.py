"""`spmi-dbg gdb|lldb`: the debugger's own options pass through, a `-p` command is warned about
(with the same command without -p, which runs as printed), and `spmi why` after the program ended
says how it ended. Real gdb and real lldb, one fresh debugger per test (the launcher execs it)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .support.common import DEBUGGERS, ROOT, Collections, seed_collection
from .support.diagnosis import LLDB_SERVER
from .support.natives import BASE, DIFF, REPLAY, SEED_OPTIONS

BATCH = {
    "gdb": ["-batch", "-ex", "run", "-ex", "spmi why"],
    "lldb": ["-b", "-o", "run", "-o", "spmi why"],
}
FOUND = {"gdb": shutil.which("gdb"), "lldb": shutil.which("lldb-16") or shutil.which("lldb")}


def spmi_dbg() -> str:
    exe = Path(sys.executable).parent / "spmi-dbg"
    assert exe.is_file(), (
        f"{exe}: the spmi-dbg entry point is not installed beside the test interpreter"
    )
    return str(exe)


def launch(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def check_debugger(debugger: str) -> None:
    assert FOUND[debugger] is not None, (
        f"{debugger} is required (scripts/setup-debian.sh --test installs it)"
    )


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_the_debugger_s_options_pass_and_spmi_why_after_a_clean_exit(
    debugger: str, cols: Collections, tmp_path: Path
) -> None:
    """`spmi-dbg gdb -batch -ex run -ex 'spmi why' -- spmi-replay ...` on a collection that replays
    clean: the debugger ran the program (batch options honoured) and `spmi why` says it exited with
    status 0."""
    check_debugger(debugger)
    r = launch(
        spmi_dbg(),
        debugger,
        *BATCH[debugger],
        "--",
        REPLAY,
        "-c",
        "1-5",
        BASE,
        str(cols.clean()),
        cwd=tmp_path,
    )
    out = r.stdout + r.stderr
    assert "Loaded 5  Jitted 5" in out, out  # the program ran to its end under the debugger
    assert "spmi why: the program exited with status 0: nothing to diagnose" in out, out
    assert "no process" not in out and "warning" not in out, out


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_spmi_why_names_the_exit_status(debugger: str, tmp_path: Path) -> None:
    """The status is the program's own (3 here), read from the debugger (gdb's exited event, lldb's
    SBProcess::GetExitStatus); before any run (gdb: lldb -b stops at the first failed command) it is
    still "run the program first"."""
    check_debugger(debugger)
    first = ["-ex", "spmi why"] if debugger == "gdb" else []
    r = launch(
        spmi_dbg(),
        debugger,
        BATCH[debugger][0],
        *first,
        *BATCH[debugger][1:],
        "--",
        "/bin/sh",
        "-c",
        "exit 3",
        cwd=tmp_path,
    )
    out = r.stdout + r.stderr
    assert debugger == "lldb" or "spmi: no process (run the program first)" in out, out
    assert "spmi why: the program exited with status 3: nothing to diagnose" in out, out


def test_gdb_spmi_why_after_a_signal_and_after_kill(tmp_path: Path) -> None:
    """gdb: a program that died of a signal gdb let through is named by it; after `kill` it was
    killed (gdb's $_exitcode would still hold an earlier run's status: the exited event is what
    counts)."""
    check_debugger("gdb")
    r = launch(
        spmi_dbg(),
        "gdb",
        "-batch",
        "-ex",
        "run",
        "-ex",
        "spmi why",
        "-ex",
        "handle SIGTERM nostop noprint",
        "-ex",
        "run",
        "-ex",
        "spmi why",
        "-ex",
        "starti",
        "-ex",
        "kill",
        "-ex",
        "spmi why",
        "--",
        "/bin/sh",
        "-c",
        "test -e marker && kill -TERM $$; touch marker; exit 5",
        cwd=tmp_path,
    )
    out = r.stdout + r.stderr
    lines = [ln for ln in out.splitlines() if ln.startswith("spmi why:")]
    assert lines == [
        "spmi why: the program exited with status 5: nothing to diagnose (the spmi commands read a "
        "stopped process)",
        "spmi why: the program was terminated by SIGTERM: nothing to diagnose (the spmi commands "
        "read "
        "a stopped process)",
        "spmi why: the program was killed: nothing to diagnose (the spmi commands read a stopped "
        "process)",
    ], out


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_a_parallel_command_is_warned_about_and_shown_without_p(
    debugger: str, cols: Collections, tmp_path: Path
) -> None:
    """`-p`: the debugger sees only the parent; the warning comes before the debugger starts, with
    the same command without `-p`, which runs as printed."""
    check_debugger(debugger)
    clean = str(cols.clean())
    r = launch(
        spmi_dbg(),
        debugger,
        *BATCH[debugger],
        "--",
        REPLAY,
        "-c",
        "1-5",
        "-p",
        "2",
        BASE,
        clean,
        cwd=tmp_path,
    )
    err = r.stderr.splitlines()
    at = next(
        i
        for i, ln in enumerate(err)
        if ln.startswith(f"spmi-dbg {debugger}: warning: the command has -p")
    )
    assert "a crash in a worker process dies unseen" in err[at], r.stderr
    again = shlex.split(err[at + 1])
    assert again[1:] == [debugger, *BATCH[debugger], "--", REPLAY, "-c", "1-5", BASE, clean], again
    pasted = launch(*again, cwd=tmp_path)
    out = pasted.stdout + pasted.stderr
    assert "warning" not in pasted.stderr and "Loaded 5  Jitted 5" in out, out
    assert "spmi why: the program exited with status 0" in out, out


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_help_says_how_to_give_the_debugger_s_options(debugger: str, tmp_path: Path) -> None:
    r = launch(spmi_dbg(), debugger, "--help", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (
        f"usage: spmi-dbg {debugger} [--debug-dir DIR] [{debugger.upper()}_OPTIONS...] -- PROGRAM"
        in r.stdout
    )
    assert f"spmi-dbg {debugger} {shlex.join(BATCH[debugger])} -- superpmi" in r.stdout.replace(
        '"', "'"
    ), r.stdout
    assert "-p" in r.stdout and "worker" in r.stdout
    # Without --, a debugger option cannot be told from the command: refused, with the way to say
    # it.
    bad = launch(spmi_dbg(), debugger, BATCH[debugger][0], "/bin/true", cwd=tmp_path)
    assert bad.returncode == 2, bad.stderr
    assert bad.stderr.splitlines()[-1] == (
        f"spmi-dbg {debugger}: error: unrecognized arguments: "
        f"{BATCH[debugger][0]} ({debugger}'s own options go before --, the "
        "command after it)"
    )


def test_gdb_spmi_why_after_a_crash_was_continued(cols: Collections, tmp_path: Path) -> None:
    """The usual session: the seed crash stops, `spmi why` explains it, `continue` lets it die: then
    the death's signal is named (the process was running when it ended, so it was no `kill`)."""
    check_debugger("gdb")
    r = launch(
        spmi_dbg(),
        "gdb",
        "-batch",
        "-ex",
        "run",
        "-ex",
        "continue",
        "-ex",
        "spmi why",
        "-ex",
        "continue",
        "-ex",
        "spmi why",
        "--",
        REPLAY,
        *SEED_OPTIONS,
        "-c",
        "300",
        BASE,
        DIFF,
        str(seed_collection(cols)),
        cwd=tmp_path,
    )
    out = r.stdout + r.stderr
    assert "null map: CompileResult::CompileMethod of the base compile result (cr1)" in out, out
    assert out.rstrip().endswith(
        "spmi why: the program was terminated by SIGSEGV: nothing to diagnose (the spmi "
        "commands read a stopped process)"
    ), out


def test_the_spmi_command_takes_no_abbreviations_either(tmp_path: Path) -> None:
    """`spmi diagnose --js` is not `--json` (as every spmi-dbg parser); the usage error comes first,
    process or not."""
    check_debugger("gdb")
    r = launch(
        spmi_dbg(), "gdb", "-batch", "-ex", "spmi diagnose --js", "--", "/bin/true", cwd=tmp_path
    )
    assert "spmi: unrecognized arguments: --js" in r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_the_readmes_batch_lines_diagnose_a_crash(
    debugger: str, cols: Collections, tmp_path: Path
) -> None:
    """The README's one-line `spmi-dbg gdb|lldb` batch examples, as printed there, on a crash: each
    prints the diagnosis (lldb skips `-o` commands after a crash: the README's line uses `-k`)."""
    readme = (ROOT / "README.md").read_text()
    (line,) = [x for x in readme.splitlines() if x.startswith(f"spmi-dbg {debugger} -b")]
    words = shlex.split(line)
    words = words[: words.index("--") + 1]
    mch = cols.get("readme-batch", 30, inject=[("jit-null", 5)])
    r = subprocess.run(
        [spmi_dbg(), *words[1:], REPLAY, "-bug", "56506", "-c", "5", BASE, str(mch)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "LLDB_DEBUGSERVER_PATH": LLDB_SERVER},
    )
    assert "SIGSEGV at address" in r.stdout and "faulting module: " in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_a_p_parent_that_exits_1_is_named_as_the_lost_worker_pattern(
    debugger: str, cols: Collections, tmp_path: Path
) -> None:
    """`spmi why` after a -p parent exited 1 (a worker died of a null map, 3.1 era: not reported):
    not only "exited with status 1", but the pattern and what to do."""
    check_debugger(debugger)
    mch = cols.get("lost-worker", 40, inject=[("null-map", 10)])
    r = subprocess.run(
        [spmi_dbg(), debugger, *BATCH[debugger], "--", REPLAY, "-p", "2", BASE, str(mch)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "SPMI_REPLAY_ERA": "3.1", "LLDB_DEBUGSERVER_PATH": LLDB_SERVER},
    )
    out = r.stdout + r.stderr
    assert "spmi why: the program exited with status 1: nothing to diagnose" in out, out
    assert "a superpmi -p parent exits 1 without a word when a worker dies" in out, out
    assert "dotnet/runtime#56506" in out
