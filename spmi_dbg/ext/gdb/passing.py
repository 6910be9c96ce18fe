"""`$_spmi_should_stop(NOTES, MAX_PASSES, SIGNO[, ABSORB[, BREAKS]])`: the signal policy
(spmi_dbg.analysis.policy.check_stop) as the condition of a gdb `catch signal SIGxxx` catchpoint
(one per fault signal, SIGNO its number: a remote target such as qemu's gdbstub gives no $_siginfo
to read it from). gdb evaluates it at every such signal before anything else happens: false (0) lets
gdb pass the signal on to the replay at once (`handle ... nostop noprint pass`: the replay's own
handler runs), without a stop, a frame print or an MI round trip; true (1) makes the catchpoint
stop, and that is the fatal stop. The MI driver asks the same function at the stops gdb makes itself
(SIGTRAP, SIGABRT) with ABSORB=1: then a debug break the replay has no handler for answers 2 (resume
without the signal) or 3 (the same, past an aarch64 `brk`): policy.Verdict. BREAKS=1 makes a debug
break the stop (a run with -boa/-boe that is meant to stop in the assert).

Each stop passed on is noted as one JSON line in the file NOTES (read by the driver as it goes); a
stop that is not passed gets a line saying why, when the reason is not in its diagnosis (a second
chance, the pass limit). Any error of ours also stops (the safe side): its line names it. A notes
file that cannot be written (a failing disk) stops too, with its errno in `$_spmi_stop_errno`: the
driver asks for it at a stop and never takes such a stop for the replay's.

This is what makes a passed first-chance fault cost about what the quick check costs
(docs/debugger-notes.md: a stop passed through MI costs 3-4 ms, through gdb's own stop machinery ~1
ms)."""

from __future__ import annotations

import dataclasses
import errno
import json
import time
from typing import IO, Any

import gdb

from spmi_dbg.analysis.policy import PassedStop, StopNote, Verdict, check_stop
from spmi_dbg.analysis.view import with_stop_signal
from spmi_dbg.ext.gdb.view import GdbProcess

FUNCTION = "_spmi_should_stop"
# set to the errno when the notes could not be written (the driver sets it back to 0)
STOP_ERRNO = "_spmi_stop_errno"


class _State:
    def __init__(self) -> None:
        self.path: str | None = None
        self.out: IO[str] | None = None
        self.pid: int | None = None
        self.previous: PassedStop | None = None
        self.passes = 0

    def open(self, path: str, pid: int) -> IO[str]:
        """The notes file; the stops passed so far belong to one replay process: a new file (a new
        gdb run of the driver) or a new process (a session's next replay, the inferior run again)
        starts afresh, so a fault is never taken for the second chance of another process's."""
        if self.out is None or path != self.path:
            if self.out is not None:
                self.out.close()
            self.path, self.out = path, open(path, "a", encoding="utf-8")
            self.pid = None
        if pid != self.pid:
            self.pid, self.previous, self.passes = pid, None, 0
        return self.out


_state = _State()


def _write(out: IO[str], note: StopNote) -> None:
    out.write(json.dumps(note.to_json()) + "\n")
    out.flush()


class ShouldStop(gdb.Function):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__(FUNCTION)

    def invoke(
        self, notes: Any, max_passes: Any, signo: Any = None, absorb: Any = 0, breaks: Any = 0
    ) -> int:
        try:
            return self._decide(notes, max_passes, signo, absorb, breaks)
        except OSError as e:
            # the notes file cannot be written (a failing disk): the driver must not take this
            # stop for a fatal one, nor lose a stop passed on; it reads why from here
            gdb.set_convenience_variable(STOP_ERRNO, e.errno or errno.EIO)
            return int(Verdict.STOP)

    def _decide(self, notes: Any, max_passes: Any, signo: Any, absorb: Any, breaks: Any) -> int:
        t0 = time.perf_counter()
        out = _state.open(notes.string(), gdb.selected_inferior().pid)
        stop_signal = int(signo) if signo is not None else None
        try:
            process = with_stop_signal(GdbProcess(), stop_signal)
            d = check_stop(
                process,
                previous=_state.previous,
                passes_left=_state.passes < int(max_passes),
                stop_at_break=bool(int(breaks)),
            )
        except Exception as e:  # a bug of ours or a gdb error: stop, the driver diagnoses in full
            _write(
                out,
                StopNote(
                    stop=f"the quick check failed ({type(e).__name__}: {e}); stopped to be safe",
                    signal=stop_signal,
                ),
            )
            return int(Verdict.STOP)
        verdict = d.verdict
        # a catchpoint only delivers
        if verdict == Verdict.STOP or (verdict != Verdict.PASS and not int(absorb)):
            _write(out, StopNote(stop=d.note, signal=stop_signal, second_chance=d.second_chance))
            return int(Verdict.STOP)
        assert d.passed is not None
        passed = dataclasses.replace(d.passed, seconds=time.perf_counter() - t0)
        _state.previous = passed
        _state.passes += 1
        _write(out, StopNote(passed=passed))
        return int(verdict)


_registered = False


def register() -> None:
    global _registered
    if not _registered:
        ShouldStop()
        _registered = True
