"""`--debugger lldb`: a replay (or a core file) under lldb's SB API, in a worker process of its own
(spmi_dbg.driver.lldb.worker), with the same call shape and ReplayOutcome as the gdb driver
(spmi_dbg.driver.gdb.replay).

The worker holds liblldb, its lldb-server and the analysis; this side only starts it, reads its JSON
lines and keeps the clock: the worker enforces the hang timeout itself, and a worker that dies, or
says nothing for `request_timeout` seconds past the partition's deadline, is a ToolFailure (the
pipeline retries once with a fresh one). `cancel` kills the worker and its replay."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spmi_dbg.analysis.policy import PassedStop
from spmi_dbg.driver.lldb.sbapi import import_lldb
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.qemu import QemuTarget, library_dirs
from spmi_dbg.driver.qemu import kill as qemu_kill
from spmi_dbg.driver.qemu import start as qemu_start
from spmi_dbg.errors import ToolFailure

REQUEST_TIMEOUT = 30.0
DIAGNOSE_TIMEOUT = 120.0  # the full diagnosis after the fatal stop or the interrupt of a hang
STARTUP_TIMEOUT = 60.0  # importing lldb, loading the program's symbols


def check_available() -> None:
    """Raise LldbUnavailable (naming the Debian packages) unless lldb's Python module and
    lldb-server are here."""
    import_lldb()


def run_replay(
    argv: list[str],
    *,
    timeout: float,
    stdout: Path,
    stderr: Path,
    transcript: Path,
    cwd: str | None = None,
    cancel: threading.Event | None = None,
    on_stop: Callable[[PassedStop], None] | None = None,
    max_passes: int = 1_000_000,
    request_timeout: float = REQUEST_TIMEOUT,
    qemu: QemuTarget | None = None,
    debug_dirs: tuple[str, ...] = (),
    stop_at_break: bool = False,
) -> ReplayOutcome:
    """`stop_at_break`: the first debug break is the stop (-boa/-boe runs). With `qemu`, argv is a
    guest program: it runs under qemu's gdbstub, and lldb attaches with gdb-remote."""
    request: dict[str, Any] = {
        "mode": "replay",
        "argv": argv,
        "timeout": timeout,
        "stdout": str(stdout),
        "stderr": str(stderr),
        "cwd": cwd,
        "max_passes": max_passes,
        "request_timeout": request_timeout,
        "transcript": str(transcript),
        "debug_dirs": list(debug_dirs),
        "stop_at_break": stop_at_break,
    }
    worker = _Worker(request, transcript, cwd)
    guest = None
    if qemu is not None:
        guest, port = qemu_start(qemu, argv, stdout=stdout, stderr=stderr, cwd=cwd)
        request["qemu"] = {
            "port": port,
            "sysroot": qemu.sysroot,
            "dirs": library_dirs(argv),
            "pid": guest.pid,
        }
        worker.inferior = guest.pid
    try:
        return worker.run(timeout + DIAGNOSE_TIMEOUT + request_timeout, cancel, on_stop)
    finally:
        if guest is not None:
            qemu_kill(guest)


def diagnose_core(
    core: Path,
    program: str | None,
    *,
    transcript: Path,
    cwd: str | None = None,
    request_timeout: float = REQUEST_TIMEOUT,
    argv: list[str] | None = None,
    debug_dirs: tuple[str, ...] = (),
) -> tuple[ReplayOutcome, str | None]:
    """Post-mortem in lldb: the full diagnosis of the core file (lldb does not tell the command
    line)."""
    request = {
        "mode": "core",
        "core": str(core),
        "program": program,
        "request_timeout": request_timeout,
        "transcript": str(transcript),
        "debug_dirs": list(debug_dirs),
        "argv": list(argv or []),
    }
    return _Worker(request, transcript, cwd).run(
        DIAGNOSE_TIMEOUT + request_timeout, None, None
    ), None


class _Worker:
    def __init__(self, request: dict[str, Any], transcript: Path, cwd: str | None) -> None:
        self.request = request
        self.transcript = transcript
        self.cwd = cwd
        self.inferior: int | None = None

    def run(
        self,
        budget: float,
        cancel: threading.Event | None,
        on_stop: Callable[[PassedStop], None] | None,
    ) -> ReplayOutcome:
        start = time.monotonic()
        with open(self.transcript, "a", encoding="utf-8", errors="replace") as log:
            log.write(
                f"# lldb worker: {self.request.get('mode')} "
                f"{' '.join(self.request.get('argv') or [])}\n"
            )
            log.flush()
            try:
                # -P: the working directory (the user's, holding anything: a directory named lldb or
                # spmi_dbg) is not put on the worker's sys.path, where it would shadow lldb's module
                # and ours.
                proc = subprocess.Popen(
                    [sys.executable, "-P", "-m", "spmi_dbg.driver.lldb.worker"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    cwd=self.cwd,
                    start_new_session=True,
                    env=dict(os.environ),
                )
            except OSError as e:
                raise ToolFailure(f"cannot start the lldb worker: {e.strerror}") from None
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write((json.dumps(self.request) + "\n").encode())
            proc.stdin.close()
            return self._read(proc, start, budget, cancel, on_stop)
        finally:
            self._close(proc)

    def _read(
        self,
        proc: subprocess.Popen[bytes],
        start: float,
        budget: float,
        cancel: threading.Event | None,
        on_stop: Callable[[PassedStop], None] | None,
    ) -> ReplayOutcome:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        buf = b""
        passed: list[PassedStop] = []
        deadline = start + STARTUP_TIMEOUT + budget
        while True:
            if cancel is not None and cancel.is_set():
                return ReplayOutcome("cancelled", passed=passed, seconds=time.monotonic() - start)
            left = deadline - time.monotonic()
            if left <= 0:
                raise ToolFailure(
                    f"the lldb worker (pid {proc.pid}) did not answer within {budget:g} s"
                )
            ready, _, _ = select.select([fd], [], [], min(0.1, left))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                code = proc.wait(timeout=10)
                how = (
                    f"was killed by {signal.Signals(-code).name}"
                    if code < 0
                    else f"exited with status {code}"
                )
                raise ToolFailure(
                    f"the lldb worker (pid {proc.pid}) {how} without an outcome (see its log: "
                    f"{self.transcript})"
                )
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                record = json.loads(line)
                event = record.get("event")
                if event == "started":
                    self.inferior = int(record["pid"]) or None
                elif event == "passed":
                    stop = PassedStop.from_json(record["stop"])
                    passed.append(stop)
                    if on_stop is not None:
                        on_stop(stop)
                elif event == "error":
                    raise ToolFailure(f"lldb: {record.get('message')}")
                elif event == "outcome":
                    return _outcome(record["outcome"])

    def _close(self, proc: subprocess.Popen[bytes]) -> None:
        """The replay (a tracee left behind keeps running), then the worker's process group
        (lldb-server too)."""
        if self.inferior:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.inferior, signal.SIGKILL)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # lldb-server, if it outlived the worker
        if proc.stdout is not None:
            proc.stdout.close()


def _outcome(data: dict[str, Any]) -> ReplayOutcome:
    try:
        return ReplayOutcome.from_json(data)
    except (KeyError, TypeError, ValueError) as e:
        raise ToolFailure(
            f"the lldb worker's outcome could not be read ({type(e).__name__}: {e})"
        ) from None
