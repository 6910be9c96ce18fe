"""spmi-replay under a real gdb: first-chance faults the core survives, the fatal second chance, and
the debug break of -boa that only happens when a debugger is attached (debugger-notes.md,
"Signals")."""

from __future__ import annotations

import re
import shutil
import subprocess

from .support.common import Collections
from .support.natives import BASE, DIFF, REPLAY, SEED_OPTIONS

GDB = shutil.which("gdb")


def gdb(commands: list[str], *args: str) -> str:
    assert GDB is not None, "gdb is required (.ci/run installs it)"
    cmd = [
        GDB,
        "-q",
        "-nx",
        "-batch",
        "-ex",
        "set startup-with-shell off",
        "-ex",
        "set pagination off",
    ]
    for c in commands:
        cmd += ["-ex", c]
    r = subprocess.run([*cmd, "--args", REPLAY, *args], capture_output=True, text=True, timeout=120)
    return r.stdout + r.stderr


def test_jit_fault_is_a_first_chance_signal(cols: Collections) -> None:
    out = gdb(["run", "bt", "continue"], "-c", "10", BASE, str(cols.mixed()))
    assert out.count("Program received signal SIGSEGV") == 1, out
    # The context number is in the frame.
    assert re.search(r"JitInstance::CompileMethod \(.*mcIndex=(mcIndex@entry=)?10\b", out), out
    assert "ERROR: Unexpected exception c0000005 was thrown." in out
    assert "exited with code 01" in out  # passed on: the core caught it and went on


def test_boa_breaks_only_under_a_debugger(cols: Collections) -> None:
    out = gdb(["run", "bt", "continue"], "-boa", "-c", "20", BASE, str(cols.mixed()))
    assert "Program received signal SIGTRAP" in out, out
    assert "DebugBreakorAV" in out and "MyICJI::doAssert" in out
    assert "ERROR: SuperPMI: Assert Failure" in out
    assert "exited with code 01" in out
    # Without -boa the assert is reported but there is no break, debugger or not.
    out = gdb(["run"], "-c", "20", BASE, str(cols.mixed()))
    assert "SIGTRAP" not in out and "exited with code 01" in out


def test_seed_crash_first_and_second_chance(cols: Collections) -> None:
    out = gdb(
        ["run", "bt", "continue", "continue"],
        *SEED_OPTIONS,
        "-c",
        "700",
        BASE,
        DIFF,
        str(cols.seed_arm64()),
    )
    stops = re.findall(
        r"Program received signal SIGSEGV, Segmentation fault\.\n(0x[0-9a-f]+ in )?(\S+)", out
    )
    # same pc, twice: the handler declined the first
    assert len(stops) == 2 and stops[0] == stops[1], out
    assert (
        "CompileResult::repCompileMethod" in out and "NearDiffer::compare" in out and "main" in out
    )
    assert "Program terminated with signal SIGSEGV" in out
