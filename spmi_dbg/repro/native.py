"""Native replays (no debugger) and what a reproduction must look like (docs/superpmi-conventions.md
1.2): a replay killed by a signal shows as a negative return code; a hang is a run that outlives its
timeout. Core dumps are disabled in the child (core_pattern may drop `core` files in the working
directory)."""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spmi_dbg.analysis.view import signal_name
from spmi_dbg.repro.expect import Expectation

# superpmi's exit statuses (docs/superpmi-conventions.md 1.2: SpmiResult; -1 and -2 seen as 255 and
# 254), the same in 3.1 and today. 255 is also a usage error and a -c past the collection's end (3.1
# then prints only its two header lines); 3 is missing data and no other failure.
SPMI_RESULTS = {
    0: "Success",
    1: "Error: failed compiles",
    2: "Diffs",
    3: "Misses: missing data only",
    254: "JitFailedToInit",
    255: "GeneralFailure",
}


@dataclass
class NativeRun:
    argv: list[str]
    returncode: int | None
    signal: str | None
    timed_out: bool
    seconds: float
    # killed on purpose before its end (its `poll` said so): not a crash, not a hang
    stopped: bool = False

    def matches(self, expected: Expectation) -> bool:
        if expected.kind == "hang":
            return self.timed_out
        if self.signal is None:
            return False
        return expected.signal is None or self.signal == expected.signal

    def describe(self) -> str:
        if self.stopped:
            return f"stopped after {self.seconds:.1f} s (no longer needed)"
        if self.timed_out:
            return f"still running after {self.seconds:.1f} s (killed)"
        if self.signal is not None:
            return f"killed by {self.signal}"
        name = SPMI_RESULTS.get(self.returncode) if self.returncode is not None else None
        return f"exit status {self.returncode}" + (f" ({name})" if name else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "returncode": self.returncode,
            "signal": self.signal,
            "timed_out": self.timed_out,
            "stopped": self.stopped,
            "seconds": round(self.seconds, 4),
        }


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: the replay and anything it started
    proc.wait()


def _no_core() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """proc's exit status, waited for without polling: Popen.wait(timeout) sleeps in steps of up
    to 50 ms between looks, a large share of a replay of a few milliseconds (bisect's probes, a
    storm's sweep); a pidfd wakes the wait at the exit itself. Raises TimeoutExpired as wait
    does."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # no pidfd (Linux < 5.3): Popen's own wait
        return proc.wait(timeout=timeout)
    try:
        waiter = select.poll()
        waiter.register(fd, select.POLLIN)
        if not waiter.poll(int(timeout * 1000) + 1):
            raise subprocess.TimeoutExpired(proc.args, timeout)
    finally:
        os.close(fd)
    return proc.wait()


def run_native(
    argv: list[str],
    *,
    timeout: float,
    stdout: Path | None = None,
    stderr: Path | None = None,
    cwd: str | None = None,
    poll: tuple[float, Callable[[], bool]] | None = None,
) -> NativeRun:
    """`poll` = (seconds, stop): every so many seconds while the replay runs, `stop()` may end it
    early (the run is then `stopped`, with no signal or timeout to report)."""
    start = time.monotonic()
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(stdout, "wb")) if stdout is not None else subprocess.DEVNULL
        err = stack.enter_context(open(stderr, "wb")) if stderr is not None else subprocess.DEVNULL
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_no_core,
        )
        deadline = start + timeout
        while True:
            step = (
                deadline - time.monotonic()
                if poll is None
                else min(poll[0], deadline - time.monotonic())
            )
            try:
                rc = _wait(proc, max(step, 0.0))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    _kill(proc)
                    return NativeRun(argv, None, None, True, time.monotonic() - start)
                if poll is not None and poll[1]():
                    _kill(proc)
                    return NativeRun(
                        argv, None, None, False, time.monotonic() - start, stopped=True
                    )
    return NativeRun(
        argv, rc, signal_name(-rc) if rc < 0 else None, False, time.monotonic() - start
    )
