"""The real-debugger runs of tests/test_debug_diagnosis.py: the crash classes' collections (built
once per module, small) and one fresh debugger per (debugger, case) run through the product's
drivers (tests.harness.stops), cached so that the per-debugger tests and the gdb-vs-lldb comparison
share them."""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.sample.build import SampleSpec, build

from ..harness.stops import StopsResult, run_gdb, run_lldb
from .natives import BASE, DIFF, REPLAY, REPLAY_O0

LLDB_SERVER = "/usr/lib/llvm-16/bin/lldb-server"
INSTALL_HINT = ".ci/run installs gdb and lldb-16 (scripts/setup-debian.sh --test)"

# Where the triggers are (method context numbers) in the module's collections.
SEED_N = 150  # of 200, arm64
POISON_N, POISON_CRASH_N = 60, 140  # of 200
ASSERT_N = 70  # of 200
JIT_NULL_N = 90  # of 200
STACK_OVERFLOW_N = 5  # of 10


def gdb_path() -> str:
    path = shutil.which("gdb")
    if path is None:
        pytest.fail(f"gdb is not installed: these tests need a real gdb ({INSTALL_HINT})")
    return path


def gdb_batch(*commands: str, args: Sequence[str] = (), gdb: str | None = None) -> list[str]:
    """The argv of gdb -batch without the user's init file or auto-loading: each command an -ex,
    then `--args ARGS` when given."""
    argv = [gdb or gdb_path(), "-q", "-nx", "-batch", "-iex", "set auto-load off"]
    for c in commands:
        argv += ["-ex", c]
    return [*argv, "--args", *args] if args else argv


def lldb_path() -> str:
    path = shutil.which("lldb-16") or shutil.which("lldb")
    if path is None:
        pytest.fail(f"lldb-16 is not installed: these tests need a real lldb ({INSTALL_HINT})")
    return path


def require(debugger: str) -> None:
    if debugger == "gdb":
        gdb_path()
        return
    lldb_path()
    from spmi_dbg.driver.lldb.sbapi import LldbUnavailable, import_lldb

    try:
        import_lldb()
    except LldbUnavailable as e:
        pytest.fail(f"lldb's Python module is not usable: {e} ({INSTALL_HINT})")
    if not os.path.exists(LLDB_SERVER):
        pytest.fail(f"{LLDB_SERVER} is missing: lldb cannot launch a process ({INSTALL_HINT})")


@contextlib.contextmanager
def stack_limit(size: int) -> Iterator[None]:
    """A smaller stack for the debugged replay (inherited through gdb / the lldb worker and
    lldb-server): the stack overflow happens after ~1,300 JIT frames instead of ~21,000, which the
    full diagnosis walks (seconds at 8 MB)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    resource.setrlimit(resource.RLIMIT_STACK, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_STACK, (soft, hard))


class Runs:
    """The module's collections (built once, small) and the debugger runs (each one fresh debugger,
    cached)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cols: dict[str, Path] = {}
        self._runs: dict[tuple[str, str], StopsResult] = {}

    def col(self, name: str) -> Path:
        specs: dict[str, dict[str, Any]] = {
            "seed": dict(methods=200, seed=2, arch="arm64", injections=[("seed-arm64", SEED_N)]),
            "state": dict(
                methods=200,
                seed=1,
                injections=[("poison", POISON_N), ("poison-crash", POISON_CRASH_N)],
            ),
            "assert": dict(methods=200, seed=1, injections=[("jit-assert", ASSERT_N)]),
            "null": dict(methods=200, seed=1, injections=[("jit-null", JIT_NULL_N)]),
            "stackov": dict(methods=10, seed=1, injections=[("stack-overflow", STACK_OVERFLOW_N)]),
        }
        if name not in self._cols:
            out = self.root / f"{name}.mch"
            build(out, SampleSpec(**specs[name]))
            self._cols[name] = out
        return self._cols[name]

    def cases(self) -> dict[str, tuple[list[str], bool]]:
        """case -> (argv, stop_first: diagnose the very first stop, the driver's max_passes=0)."""
        seed_args = ["-a", "-target", "arm64", "-bug", "91257", BASE, DIFF]
        return {
            "seed": ([REPLAY, *seed_args, str(self.col("seed"))], False),
            "seed-O0": ([REPLAY_O0, *seed_args, str(self.col("seed"))], False),
            "seed-no-bug": (
                [REPLAY, "-a", "-target", "arm64", BASE, DIFF, str(self.col("seed"))],
                False,
            ),
            "state": ([REPLAY, BASE, str(self.col("state"))], False),
            "state-alone": (
                [REPLAY, "-c", str(POISON_CRASH_N), BASE, str(self.col("state"))],
                False,
            ),
            "assert-first": ([REPLAY, "-boa", BASE, str(self.col("assert"))], True),
            "assert-run": ([REPLAY, "-boa", BASE, str(self.col("assert"))], False),
            "null-first": ([REPLAY, BASE, str(self.col("null"))], True),
            "null-run": ([REPLAY, BASE, str(self.col("null"))], False),
            "stackov": ([REPLAY, BASE, str(self.col("stackov"))], False),
        }

    def run(self, debugger: str, case: str) -> StopsResult:
        """One fresh debugger through the product's driver (spmi_dbg.driver.select's GdbDriver /
        LldbDriver)."""
        key = (debugger, case)
        if key not in self._runs:
            require(debugger)
            argv, stop_first = self.cases()[case]
            with stack_limit(1 << 20) if case == "stackov" else contextlib.nullcontext():
                r = (
                    run_gdb(argv, stop_first=stop_first, timeout=60, gdb=gdb_path())
                    if debugger == "gdb"
                    else run_lldb(argv, stop_first=stop_first, timeout=60)
                )
            assert r.outcome not in ("error", "timeout"), (
                f"{debugger} {case}: {r.outcome}: {r.detail}"
            )
            self._runs[key] = r
        return self._runs[key]

    def stop(self, debugger: str, case: str) -> dict[str, Any]:
        """The full diagnosis (ReplayOutcome.diagnosis.to_json()) of the fatal stop the run ended at
        (never a hang: no case here hangs)."""
        r = self.run(debugger, case)
        assert r.outcome == "stop" and r.kind == "fatal" and r.diagnosis is not None, (
            debugger,
            case,
            r,
        )
        return r.diagnosis


# "X (frame N)", "X at frame N)", "X, frame N)": a frame the diagnosis names, with its number
FRAME_REF = re.compile(r"([A-Za-z_][\w:<>~]*)(?: \(| at |, )frame (\d+)\)")


def bt_functions(bt: str, debugger: str) -> dict[int, str]:
    """The debugger's own `bt`: frame number -> its line."""
    pattern = r"^#(\d+) +(.*)$" if debugger == "gdb" else r"^\s*\*?\s*frame #(\d+): (.*)$"
    return {int(m.group(1)): m.group(2) for m in re.finditer(pattern, bt, re.M)}


def assert_the_debuggers_frame_numbers(o: dict[str, str], debugger: str) -> list[dict[str, Any]]:
    """Every "frame N" of `spmi why` and every frame `spmi diagnose --json` numbers is the frame the
    debugger's own `bt` numbers N (a session's outputs of the three commands); the frames."""
    frames = bt_functions(o["bt"], debugger)
    refs = FRAME_REF.findall(o["spmi why"])
    assert refs, o["spmi why"]
    for function, number in refs:
        assert function.split("::")[-1] in frames.get(int(number), ""), (function, number, o["bt"])
    d = json.loads(o["spmi diagnose --json"])
    for f in d["frames"]:
        if f["hidden"]:
            assert debugger == "gdb" and f["number"] is None
        elif f["number"] is not None:
            assert f["function"].split("::")[-1] in frames[f["number"]], (f, o["bt"])
    return list(d["frames"])
