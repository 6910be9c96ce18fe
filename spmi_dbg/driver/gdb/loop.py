"""The MI event loop of one replay under gdb, from `-exec-run` (or `-exec-continue`) to its
outcome (issue 5, docs/debugger-notes.md):

- Hardware faults (SIGSEGV/SIGBUS/SIGILL/SIGFPE) are caught by a `catch signal` catchpoint whose
  condition is the extension's `$_spmi_should_stop(...)` (spmi_dbg.ext.gdb.passing; setup.py sets
  it): inside gdb, at the fault, the quick check and the signal policy (spmi_dbg.analysis.policy)
  decide. A fault the replay survives (a first-chance fault in the JIT's protected call) is noted in
  a file and passed on by gdb itself, with no stop and no MI round trip; the first fault it does
  not survive -- or the second chance of a fault whose handler declined it -- stops, and gets the
  full `spmi diagnose --json`.
- SIGTRAP (gdb's default stop) and SIGABRT stop: the loop asks the same function over MI
  (`-data-evaluate-expression $_spmi_should_stop(...)`), so the quick check and the policy run once,
  inside gdb; a debug break nobody asked to stop at is resumed with `signal SIGTRAP` when the replay
  has a SIGTRAP handler (never a plain continue, which would swallow it), else absorbed as a
  debugger user's `continue` does (pc stepped over an aarch64 `brk`), since delivering it would kill
  the replay. Every other signal goes to the replay unseen.
- After the request's `timeout` seconds the replay is interrupted (-exec-interrupt), every thread's
  stack is captured and the stop diagnosed: a hang.
- A replay that exits is reported with its exit status (MI's exit codes are octal)."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.analysis.policy import StopNote, Verdict
from spmi_dbg.analysis.stacks import ThreadStack
from spmi_dbg.driver.gdb import ask
from spmi_dbg.driver.gdb.mi import MiChannel, Record, mi_quote
from spmi_dbg.driver.gdb.setup import should_stop
from spmi_dbg.driver.outcome import OutcomeKind, ReplayOutcome, RunClock
from spmi_dbg.driver.request import ReplayWatch
from spmi_dbg.errors import ToolFailure


class StopNotes:
    """The stops passed inside gdb (spmi_dbg.ext.gdb.passing writes one JSON line each), read as
    they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_bytes(b"")
        self._file = open(path, encoding="utf-8")
        self._partial = ""

    @classmethod
    def beside(cls, transcript: Path) -> StopNotes:
        """The notes file of a transcript: `<transcript>.stops`."""
        return cls(transcript.with_name(transcript.name + ".stops"))

    def read(self) -> list[StopNote]:
        text = self._partial + self._file.read()
        lines = text.split("\n")
        self._partial = lines.pop()
        out: list[StopNote] = []
        for line in lines:
            try:
                out.append(StopNote.from_json(json.loads(line)))
            except ValueError:  # a torn or foreign line (JSONDecodeError, FactJsonError)
                continue
        return out

    def close(self) -> None:
        self._file.close()


def _reasons(payload: dict[str, Any]) -> list[str]:
    reasons = payload.get("reason") or []
    return [reasons] if isinstance(reasons, str) else [str(r) for r in reasons]


@dataclass(frozen=True)
class RunRules:
    """How a run treats its stops: how many first-chance stops it passes on, whether a debug break
    stops it (an assert sought with -boa), whether the replay is a qemu guest (`remote`: MI's pids
    are the stub's, /proc says nothing of the guest)."""

    max_passes: int
    stop_at_break: bool = False
    remote: bool = False


class MiRun:
    """One replay's events, read until its outcome. `before_diagnose`: called once at a stop,
    before anything is read there (the session's symbol check); `start`: when the run began
    (default: now)."""

    def __init__(
        self,
        channel: MiChannel,
        watch: ReplayWatch,
        notes: StopNotes,
        rules: RunRules,
        *,
        before_diagnose: Callable[[], None] | None = None,
        start: float | None = None,
    ) -> None:
        self.channel = channel
        self.watch = watch
        self.notes = notes
        self.max_passes = rules.max_passes
        self.stop_at_break = rules.stop_at_break
        self.remote = rules.remote
        self.before_diagnose = before_diagnose
        self.inferior: int | None = None
        # why the catchpoint stopped, when its diagnosis does not say
        self.stop_notes: list[str] = []
        self.stop_signal: int | None = None  # the signal of the catchpoint's stop
        self.second_chance: str | None = None  # the note, when the stop is a fault's second chance
        began = time.monotonic() if start is None else start
        self.clock = RunClock(began, began)  # and the stops passed on

    def until_outcome(self, timeout: float, run: str = "-exec-run") -> ReplayOutcome:
        reply = self.channel.request(run)
        if reply.error is not None:
            raise ToolFailure(f"gdb could not start the replay: {reply.error}")
        self.clock.running = time.monotonic()
        deadline = self.clock.running + timeout
        while True:
            self._read_notes()
            if self.watch.cancel is not None and self.watch.cancel.is_set():
                return self._outcome("cancelled")
            now = time.monotonic()
            if now >= deadline:
                return self._hang(timeout)
            event = self.channel.next_event(min(0.1, deadline - now))
            if event is None:
                continue
            done = self._event(event)
            if done is not None:
                return done

    def _read_notes(self) -> None:
        for note in self.notes.read():
            if note.passed is not None:
                self.clock.passed.append(note.passed)
                if self.watch.on_stop is not None:
                    self.watch.on_stop(note.passed)
                continue
            if note.stop:
                self.stop_notes.append(note.stop)
            self.stop_signal = note.signal
            self.second_chance = (note.stop or "") if note.second_chance else None

    def _outcome(
        self,
        kind: OutcomeKind,
        *,
        diagnosis: Diagnosis | None = None,
        notes: Sequence[str] = (),
        exit_status: int | None = None,
        signal: str | None = None,
        threads: Sequence[ThreadStack] = (),
    ) -> ReplayOutcome:
        self._read_notes()
        return self.clock.outcome(
            kind,
            diagnosis=diagnosis,
            notes=[*self.stop_notes, *notes],
            second_chance=self.second_chance,
            exit_status=exit_status,
            signal=signal,
            threads=threads,
        )

    def _event(self, event: Record) -> ReplayOutcome | None:
        message = event.get("message")
        payload = event.get("payload") or {}
        if message == "thread-group-started":
            if not self.remote:  # qemu's stub says pid 1: the process is ours (the qemu we started)
                self.inferior = int(payload.get("pid", 0)) or None
            return None
        if message != "stopped":
            return None
        reasons = _reasons(payload)
        if "exited-normally" in reasons:
            return self._outcome("exited", exit_status=0)
        if "exited" in reasons:
            return self._outcome("exited", exit_status=int(str(payload.get("exit-code", "0")), 8))
        if "exited-signalled" in reasons:
            sig = str(payload.get("signal-name"))
            self._read_notes()
            notes = (
                [f"the replay died of {sig} after it was passed on"] if self.clock.passed else []
            )
            return self._outcome("signaled", signal=sig, notes=notes)
        # the fault catchpoint (MI gives its stops no reason): its condition said "fatal"
        if not reasons:
            self._read_notes()
            return self._outcome("fatal", diagnosis=self._diagnose(self.stop_signal))
        if "signal-received" not in reasons:
            notes = [f"stopped for {', '.join(reasons)}"]
            return self._outcome("fatal", diagnosis=self._diagnose(), notes=notes)
        return self._signal_stop(payload)

    def _signal_stop(self, payload: dict[str, Any]) -> ReplayOutcome | None:
        """SIGTRAP or SIGABRT (faults go through the catchpoint): the same policy, asked of the same
        function inside gdb (`$_spmi_should_stop`, which notes a stop passed on in the notes file as
        the catchpoint does)."""
        sig = str(payload.get("signal-name"))
        signo = int(getattr(signal, sig, 0))
        expression = should_stop(
            self.notes.path, self.max_passes, signo, 1, int(self.stop_at_break)
        )
        reply = self.channel.request("-data-evaluate-expression " + mi_quote(expression))
        if reply.error is not None:
            raise ToolFailure(f"gdb could not evaluate `{expression}`: {reply.error}")
        verdict = Verdict(int(str((reply.payload or {}).get("value", "1")).split()[0]))
        self._read_notes()
        if verdict != Verdict.STOP:
            self._resume(sig, verdict == Verdict.PASS, verdict == Verdict.ABSORB_STEP_OVER_BRK)
            return None
        return self._outcome("fatal", diagnosis=self._diagnose(sig))

    def _resume(self, sig: str, deliver: bool, step_over_brk: bool) -> None:
        """Pass the stop's signal on with `signal SIGxxx`, or absorb it (a debug break the replay
        has no handler for), stepping over an aarch64 `brk`, which would trap again."""
        if deliver:
            reply = self.channel.console(f"signal {sig}")
        else:
            if step_over_brk:
                self.channel.must_console("set $pc = $pc + 4")
            reply = self.channel.request("-exec-continue")
        if reply.error is not None:
            raise ToolFailure(f"gdb could not resume after {sig}: {reply.error}")

    def _diagnose(self, sig: str | int | None = None) -> Diagnosis:
        self._check_notes_written()
        self._at_stop()
        return ask.diagnosis(self.channel, sig)

    def _check_notes_written(self) -> None:
        """A stop made because the extension could not write its notes file (a failing disk) is
        not the replay's: raised as that error (a system stop), never diagnosed as a crash."""
        reply = self.channel.request("-data-evaluate-expression $_spmi_stop_errno")
        value = str((reply.payload or {}).get("value", ""))
        if reply.error is not None or not value.lstrip("-").isdigit() or int(value) == 0:
            return  # void (never set) or 0: the notes are whole
        self.channel.must_console("set $_spmi_stop_errno = 0")  # a session's next replay
        code = int(value)
        raise OSError(code, os.strerror(code), str(self.notes.path))

    def _at_stop(self) -> None:
        if self.before_diagnose is not None:
            self.before_diagnose()

    def _hang(self, timeout: float) -> ReplayOutcome:
        exited = self._interrupt()
        if exited is not None:
            return exited
        self._at_stop()  # the stacks need every library's symbols too
        threads = ask.stacks(self.channel)
        return self._outcome(
            "hang",
            diagnosis=ask.diagnosis(self.channel),
            threads=threads,
            notes=[f"no exit and no fatal stop within --timeout {timeout:g} s: interrupted"],
        )

    def _interrupt(self) -> ReplayOutcome | None:
        """The running replay stopped; its outcome instead if it exited meanwhile."""
        if self.remote and self.inferior:
            # qemu-user's gdbstub reads gdb's interrupt only when the guest makes a syscall or gets
            # a signal (a spinning JIT does neither): a SIGINT to qemu goes to the guest, and the
            # stub reports that stop.
            os.kill(self.inferior, signal.SIGINT)
        else:
            reply = self.channel.request("-exec-interrupt")
            if reply.error is not None:
                raise ToolFailure(f"gdb could not interrupt the replay: {reply.error}")
        wait_until = time.monotonic() + self.channel.request_timeout
        while True:
            left = wait_until - time.monotonic()
            event = self.channel.next_event(left) if left > 0 else None
            if event is None:
                raise ToolFailure(
                    f"gdb did not stop the replay within {self.channel.request_timeout:g} s of "
                    "-exec-interrupt"
                )
            if event.get("message") == "stopped":
                if any(r.startswith("exited") for r in _reasons(event.get("payload") or {})):
                    return self._event(event) or self._outcome("exited")
                return None
            self._event(event)
