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
import time
from pathlib import Path
from typing import Any

from spmi_dbg.analysis.policy import PassedStop
from spmi_dbg.driver.leftovers import LeaderSession
from spmi_dbg.driver.lldb.request import GuestLink, WorkerRequest
from spmi_dbg.driver.lldb.sbapi import import_lldb
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.qemu import QemuTarget, library_dirs, start_replay
from spmi_dbg.driver.qemu import kill as qemu_kill
from spmi_dbg.driver.request import (
    DEFAULT_SETUP,
    NO_WATCH,
    DebuggerSetup,
    ReplayRequest,
    ReplayWatch,
)
from spmi_dbg.errors import ToolFailure

DIAGNOSE_TIMEOUT = 120.0  # the full diagnosis after the fatal stop or the interrupt of a hang
STARTUP_TIMEOUT = 60.0  # importing lldb, loading the program's symbols


def check_available() -> None:
    """Raise LldbUnavailable (naming the Debian packages) unless lldb's Python module and
    lldb-server are here."""
    import_lldb()


def run_replay(
    request: ReplayRequest,
    watch: ReplayWatch = NO_WATCH,
    *,
    config: DebuggerSetup = DEFAULT_SETUP,
    qemu: QemuTarget | None = None,
) -> ReplayOutcome:
    """With `qemu`, argv is a guest program: it runs under qemu's gdbstub, and lldb attaches with
    gdb-remote."""
    config = config.for_request(request)
    transcript = request.log()
    guest = None
    link = None
    if qemu is not None:
        argv = list(request.argv)
        guest, port = start_replay(qemu, request, config.cwd)
        link = GuestLink(port, qemu.sysroot, tuple(library_dirs(argv)), guest.pid)
    worker = _Worker(WorkerRequest(transcript, config, replay=request, guest=link))
    if guest is not None:
        worker.inferior = guest.pid
    try:
        budget = request.timeout + DIAGNOSE_TIMEOUT + config.request_timeout
        return worker.run(budget, watch)
    finally:
        if guest is not None:
            qemu_kill(guest)


def diagnose_core(
    core: Path,
    program: str | None,
    *,
    transcript: Path,
    config: DebuggerSetup = DEFAULT_SETUP,
    argv: list[str] | None = None,
) -> tuple[ReplayOutcome, str | None]:
    """Post-mortem in lldb: the full diagnosis of the core file (lldb does not tell the command
    line)."""
    request = WorkerRequest(transcript, config, core=core, program=program, argv=tuple(argv or ()))
    return _Worker(request).run(DIAGNOSE_TIMEOUT + config.request_timeout, NO_WATCH), None


class _Worker:
    def __init__(self, request: WorkerRequest) -> None:
        self.request = request
        self.transcript = request.transcript
        self.inferior: int | None = None

    def run(self, budget: float, watch: ReplayWatch) -> ReplayOutcome:
        start = time.monotonic()
        with open(self.transcript, "a", encoding="utf-8", errors="replace") as log:
            said = self.request.replay or self.request
            mode = "core" if self.request.replay is None else "replay"
            log.write(f"# lldb worker: {mode} {' '.join(said.argv)}\n")
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
                    cwd=self.request.config.cwd,
                    start_new_session=True,
                    env=dict(os.environ),
                )
            except OSError as e:
                raise ToolFailure(f"cannot start the lldb worker: {e.strerror}") from None
        assert proc.stdin is not None and proc.stdout is not None
        session = LeaderSession.of(proc.pid)
        try:
            proc.stdin.write((json.dumps(self.request.to_json()) + "\n").encode())
            proc.stdin.close()
            return self._read(proc, start, budget, watch)
        finally:
            self._close(proc, session)

    def _read(
        self,
        proc: subprocess.Popen[bytes],
        start: float,
        budget: float,
        watch: ReplayWatch,
    ) -> ReplayOutcome:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        buf = b""
        passed: list[PassedStop] = []
        deadline = start + STARTUP_TIMEOUT + budget
        while True:
            if watch.cancel is not None and watch.cancel.is_set():
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
                    if watch.on_stop is not None:
                        watch.on_stop(stop)
                elif event == "error":
                    raise ToolFailure(f"lldb: {record.get('message')}")
                elif event == "outcome":
                    return _outcome(record["outcome"])

    def _close(self, proc: subprocess.Popen[bytes], session: LeaderSession | None) -> None:
        """The replay (a tracee left behind keeps running), then the worker's process group
        (lldb-server too)."""
        if self.inferior:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.inferior, signal.SIGKILL)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        if session is not None:  # a replay whose pid a worker that died early never said
            session.kill()
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
