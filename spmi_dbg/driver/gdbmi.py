"""Runs a replay under gdb through pygdbmi, to the stop that matters (issue 5, debugger-notes.md).

- Hardware faults (SIGSEGV/SIGBUS/SIGILL/SIGFPE) are caught by a `catch signal` catchpoint whose condition is
  the extension's `$_spmi_should_stop(...)` (spmi_dbg.gdb.passing): inside gdb, at the fault, the quick check
  and the signal policy (spmi_dbg.analysis.policy) decide. A fault the replay survives (a first-chance fault in
  the JIT's protected call) is noted in a file and passed on by gdb itself, with no stop and no MI round trip;
  the first fault it does not survive -- or the second chance of a fault whose handler declined it -- stops,
  and gets the full `spmi diagnose --json`.
- SIGTRAP (gdb's default stop) and SIGABRT stop: the quick check over MI (`spmi diagnose --json --quick`) and
  the same policy; a debug break nobody asked to stop at is resumed with `signal SIGTRAP` when the replay has a
  SIGTRAP handler (never a plain continue, which would swallow it), else absorbed as a debugger user's
  `continue` does (pc stepped over an aarch64 `brk`), since delivering it would kill the replay. Every other
  signal goes to the replay unseen. The replay's stdout/stderr go to files (the startup shell's redirections).
- After `timeout` seconds the replay is interrupted (-exec-interrupt), every thread's stack is captured
  and the stop diagnosed: a hang.
- A replay that exits is reported with its exit status (MI's exit codes are octal).
- gdb dying or not answering a request in time raises ToolFailure."""

from __future__ import annotations

import json
import os
import re
import shlex
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spmi_dbg.analysis.policy import PassedStop, decide
from spmi_dbg.analysis.procfs import caught_signals
from spmi_dbg.driver.loader import gdbinit_line
from spmi_dbg.driver.mi import MiChannel, Record, mi_quote
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.errors import ToolFailure

FAULTS = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE")  # caught by the conditional catchpoint
STOP_SIGNALS = ("SIGABRT",)  # plus SIGTRAP, stopped on by default
REQUEST_TIMEOUT = 30.0  # any single MI command
DIAGNOSE_TIMEOUT = 120.0  # the full diagnosis reads the collection and disassembles
STACK_FRAMES = 64  # per thread, for a hang

StopCallback = Callable[[PassedStop], None]


def run_replay(argv: list[str], *, timeout: float, stdout: Path, stderr: Path, transcript: Path,
               gdb: str = "gdb", cwd: str | None = None, cancel: threading.Event | None = None,
               on_stop: StopCallback | None = None, max_passes: int = 1_000_000,
               request_timeout: float = REQUEST_TIMEOUT) -> ReplayOutcome:
    """One fresh gdb on argv until a fatal stop, a hang, the replay's exit, or `cancel`. Every MI request
    must be answered within `request_timeout` seconds (the full diagnosis gets DIAGNOSE_TIMEOUT)."""
    start = time.monotonic()
    env = dict(os.environ, SHELL="/bin/sh")  # the redirections below are POSIX sh syntax
    notes = transcript.with_name(transcript.name + ".stops")  # the stops passed inside gdb, one JSON line each
    notes.write_bytes(b"")
    with open(transcript, "a", encoding="utf-8", errors="replace") as log:
        channel = MiChannel(gdb, log, cwd=cwd, env=env, request_timeout=request_timeout)
        notes_reader = _Notes(notes)
        run = _Run(channel, cancel, on_stop, max_passes, notes_reader)
        try:
            _setup(channel, argv, stdout, stderr, notes, max_passes)
            return run.until_outcome(start, timeout)
        finally:
            channel.close(run.inferior)
            notes_reader.close()


def _check(channel: MiChannel, command: str) -> str:
    reply = channel.request(command)
    if reply.error is not None:
        raise ToolFailure(f"gdb refused `{command}`: {reply.error}")
    return reply.console


def _setup(channel: MiChannel, argv: list[str], stdout: Path, stderr: Path, notes: Path, max_passes: int) -> None:
    # mi-async: gdb keeps reading commands while the replay runs, so -exec-interrupt is heard.
    # The *stopped records need no argument values (the analysis reads frames itself): cheaper stops.
    for command in ("-gdb-set mi-async on", "-gdb-set pagination off", "-gdb-set startup-with-shell on",
                    "-gdb-set print frame-info short-location", "-gdb-set print frame-arguments none",
                    "-gdb-set print entry-values no"):
        _check(channel, command)
    _check(channel, "-interpreter-exec console " + mi_quote("handle all nostop noprint pass"))
    _check(channel, "-interpreter-exec console " + mi_quote(f"handle {' '.join(STOP_SIGNALS)} stop print pass"))
    _check(channel, "-interpreter-exec console " + mi_quote(gdbinit_line()))
    _check(channel, "-interpreter-exec console " + mi_quote(f"catch signal {' '.join(FAULTS)}"))
    _check(channel, "-interpreter-exec console " + mi_quote(
        f"condition $bpnum $_spmi_should_stop({json.dumps(str(notes))}, {max_passes})"))
    _check(channel, "-file-exec-and-symbols " + mi_quote(argv[0]))
    args = " ".join(shlex.quote(a) for a in argv[1:])
    redirect = f"> {shlex.quote(str(stdout))} 2> {shlex.quote(str(stderr))} < /dev/null"
    _check(channel, "-interpreter-exec console " + mi_quote(f"set args {args} {redirect}"))


class _Notes:
    """The stops passed inside gdb (spmi_dbg.gdb.passing writes one JSON line each), read as they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open(path, encoding="utf-8")
        self._partial = ""

    def read(self) -> list[dict[str, Any]]:
        text = self._partial + self._file.read()
        lines = text.split("\n")
        self._partial = lines.pop()
        out: list[dict[str, Any]] = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out

    def close(self) -> None:
        self._file.close()


class _Run:
    def __init__(self, channel: MiChannel, cancel: threading.Event | None, on_stop: StopCallback | None,
                 max_passes: int, notes: _Notes | None = None) -> None:
        self.channel = channel
        self.cancel = cancel
        self.on_stop = on_stop
        self.max_passes = max_passes
        self.notes = notes
        self.inferior: int | None = None
        self.passed: list[PassedStop] = []
        self.stop_notes: list[str] = []  # why the catchpoint stopped, when its diagnosis does not say

    def until_outcome(self, start: float, timeout: float) -> ReplayOutcome:
        reply = self.channel.request("-exec-run")
        if reply.error is not None:
            raise ToolFailure(f"gdb could not start the replay: {reply.error}")
        running = time.monotonic()
        deadline = running + timeout
        while True:
            self._read_notes()
            if self.cancel is not None and self.cancel.is_set():
                return self._outcome("cancelled", start, running)
            now = time.monotonic()
            if now >= deadline:
                return self._hang(start, running, timeout)
            event = self.channel.next_event(min(0.1, deadline - now))
            if event is None:
                continue
            done = self._event(event, start, running)
            if done is not None:
                return done

    def _read_notes(self) -> None:
        if self.notes is None:
            return
        for record in self.notes.read():
            if "passed" in record:
                stop = PassedStop.from_json(record["passed"])
                self.passed.append(stop)
                if self.on_stop is not None:
                    self.on_stop(stop)
            elif "stop" in record:
                self.stop_notes.append(str(record["stop"]))

    def _outcome(self, kind: str, start: float, running: float, **kw: Any) -> ReplayOutcome:
        self._read_notes()
        kw["notes"] = self.stop_notes + list(kw.get("notes") or [])
        return ReplayOutcome(kind, passed=self.passed, seconds=time.monotonic() - start,
                             startup_seconds=running - start, **kw)

    def _event(self, event: Record, start: float, running: float) -> ReplayOutcome | None:
        message = event.get("message")
        payload = event.get("payload") or {}
        if message == "thread-group-started":
            self.inferior = int(payload.get("pid", 0)) or None
            return None
        if message != "stopped":
            return None
        reasons = payload.get("reason") or []
        reasons = [reasons] if isinstance(reasons, str) else list(reasons)
        if "exited-normally" in reasons:
            return self._outcome("exited", start, running, exit_status=0)
        if "exited" in reasons:
            return self._outcome("exited", start, running, exit_status=int(str(payload.get("exit-code", "0")), 8))
        if "exited-signalled" in reasons:
            sig = str(payload.get("signal-name"))
            self._read_notes()
            notes = [f"the replay died of {sig} after it was passed on"] if self.passed else []
            return self._outcome("signaled", start, running, signal=sig, notes=notes)
        if not reasons:  # the fault catchpoint (MI gives its stops no reason): its condition said "fatal"
            return self._outcome("fatal", start, running, diagnosis=self._diagnose(quick=False))
        if "signal-received" not in reasons:
            diag = self._diagnose(quick=False)
            return self._outcome("fatal", start, running, diagnosis=diag,
                                 notes=[f"stopped for {', '.join(reasons)}"])
        return self._signal_stop(payload, start, running)

    def _signal_stop(self, payload: dict[str, Any], start: float, running: float) -> ReplayOutcome | None:
        """SIGTRAP or SIGABRT (faults go through the catchpoint): the same policy over MI."""
        t0 = time.monotonic()
        sig = str(payload.get("signal-name"))
        frame = payload.get("frame") or {}
        pc = int(frame["addr"], 16) if frame.get("addr") else None
        quick = self._diagnose(quick=True)
        self._read_notes()
        arch = "aarch64" if "aarch64" in str(frame.get("arch") or "") else str(quick.get("arch") or "")
        d = decide(quick, pc=pc, arch=arch, caught_mask=caught_signals(self.inferior),
                   previous=self.passed[-1] if self.passed else None,
                   passes_left=len(self.passed) < self.max_passes)
        if not d.stop and d.passed is not None:
            self._resume(sig, d.deliver, d.step_over_brk)
            d.passed.seconds = time.monotonic() - t0
            self.passed.append(d.passed)
            if self.on_stop is not None:
                self.on_stop(d.passed)
            return None
        diag = self._diagnose(quick=False)
        return self._outcome("fatal", start, running, diagnosis=diag, notes=[d.note] if d.note else [])

    def _resume(self, sig: str, deliver: bool, step_over_brk: bool) -> None:
        """Pass the stop's signal on with `signal SIGxxx`, or absorb it (a debug break the replay has no handler
        for), stepping over an aarch64 `brk`, which would trap again."""
        if deliver:
            command = "-interpreter-exec console " + mi_quote(f"signal {sig}")
        else:
            if step_over_brk:
                _check(self.channel, "-interpreter-exec console " + mi_quote("set $pc = $pc + 4"))
            command = "-exec-continue"
        reply = self.channel.request(command)
        if reply.error is not None:
            raise ToolFailure(f"gdb could not resume after {sig}: {reply.error}")

    def _diagnose(self, *, quick: bool) -> dict[str, Any]:
        command = "spmi diagnose --json" + (" --quick" if quick else "")
        reply = self.channel.request("-interpreter-exec console " + mi_quote(command),
                                     None if quick else max(DIAGNOSE_TIMEOUT, self.channel.request_timeout))
        if reply.error is not None:
            raise ToolFailure(f"`{command}` failed in gdb: {reply.error}")
        for line in reversed(reply.console.splitlines()):
            if line.startswith("{"):
                try:
                    data: dict[str, Any] = json.loads(line)
                    return data
                except json.JSONDecodeError:
                    break
        raise ToolFailure(f"`{command}` gave no JSON: {reply.console[-300:]!r}")

    def _hang(self, start: float, running: float, timeout: float) -> ReplayOutcome:
        reply = self.channel.request("-exec-interrupt")
        if reply.error is not None:
            raise ToolFailure(f"gdb could not interrupt the replay: {reply.error}")
        wait_until = time.monotonic() + self.channel.request_timeout
        while True:
            left = wait_until - time.monotonic()
            event = self.channel.next_event(left) if left > 0 else None
            if event is None:
                raise ToolFailure(f"gdb did not stop the replay within {self.channel.request_timeout:g} s of "
                                  "-exec-interrupt")
            if event.get("message") == "stopped":
                reasons = (event.get("payload") or {}).get("reason") or []
                if any(str(r).startswith("exited") for r in ([reasons] if isinstance(reasons, str) else reasons)):
                    return self._event(event, start, running) or self._outcome("exited", start, running)
                break
            self._event(event, start, running)
        threads = self._stacks()
        diag = self._diagnose(quick=False)
        return self._outcome("hang", start, running, diagnosis=diag, threads=threads,
                             notes=[f"no exit and no fatal stop within --timeout {timeout:g} s: interrupted"])

    def _stacks(self) -> list[dict[str, Any]]:
        info = self.channel.request("-thread-info")
        out: list[dict[str, Any]] = []
        for t in (info.payload or {}).get("threads") or []:
            tid = t.get("id")
            reply = self.channel.request(f"-stack-list-frames --thread {tid} 0 {STACK_FRAMES - 1}")
            frames: list[dict[str, Any]] = []
            for f in (reply.payload or {}).get("stack") or []:
                f = f.get("frame", f) if isinstance(f, dict) else {}
                frames.append({"level": int(f.get("level", len(frames))), "function": f.get("func"),
                               "pc": f.get("addr"), "file": f.get("file"), "line": f.get("line"),
                               "module": f.get("from")})
            out.append({"id": tid, "target_id": t.get("target-id"), "name": t.get("name"), "frames": frames})
        return out


_CORE_BY = re.compile(r"Core was generated by `(.*)'\.")


def diagnose_core(core: Path, program: str | None, *, transcript: Path, gdb: str = "gdb", cwd: str | None = None,
                  request_timeout: float = REQUEST_TIMEOUT) -> tuple[ReplayOutcome, str | None]:
    """Post-mortem: one fresh gdb on `program` (None: gdb finds it from the core) and `core`, the extension's
    full `spmi diagnose --json`. Returns the outcome (kind "fatal") and the command line the core names
    ("Core was generated by `...`": the kernel keeps only its first 80 characters)."""
    start = time.monotonic()
    with open(transcript, "a", encoding="utf-8", errors="replace") as log:
        channel = MiChannel(gdb, log, cwd=cwd, env=dict(os.environ), request_timeout=request_timeout)
        try:
            for command in ("-gdb-set pagination off", "-gdb-set print frame-info short-location",
                            "-gdb-set print frame-arguments none", "-gdb-set print entry-values no"):
                _check(channel, command)
            _check(channel, "-interpreter-exec console " + mi_quote(gdbinit_line()))
            if program is not None:
                _check(channel, "-file-exec-and-symbols " + mi_quote(program))
            reply = channel.request("-target-select core " + str(core).replace(" ", "\\ "), DIAGNOSE_TIMEOUT)
            if reply.error is not None:
                raise ToolFailure(f"gdb could not open the core file {core}: {reply.error}")
            m = _CORE_BY.search(reply.console + reply.log)
            opened = time.monotonic()
            diag = _Run(channel, None, None, 0)._diagnose(quick=False)
            outcome = ReplayOutcome("fatal", diagnosis=diag, seconds=time.monotonic() - start,
                                    startup_seconds=opened - start,
                                    notes=[f"post-mortem: diagnosed from the core file {core}"])
            return outcome, (m.group(1) if m else None)
        finally:
            channel.close(None)
