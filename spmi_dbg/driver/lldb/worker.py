"""One replay (or one core file) under lldb, driven through its SB API: `python -m
spmi_dbg.driver.lldb.worker`. The parent (spmi_dbg.driver.lldb.replay) writes one JSON request to
stdin; this process answers with JSON lines on stdout: `started` (the replay's pid), `passed` (a
stop passed on, as it happens), then `outcome` (the same ReplayOutcome the gdb driver gives). lldb,
its lldb-server and the analysis live in this process only: a crash or hang of lldb costs one
partition (the parent retries it), never the pipeline.

The signal policy is spmi_dbg.analysis.policy's, as in gdb: the quick check at each stop, then the
signal passed on (lldb delivers the stop's signal on Continue unless it is suppressed), a debug
break absorbed when the replay has no SIGTRAP handler, the fatal stop diagnosed in full. lldb runs
in asynchronous mode, so the hang timeout is ours: on expiry the replay is stopped (SBProcess.Stop),
every thread's stack captured and the stop diagnosed."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
import time
from typing import IO, Any

from spmi_dbg import shell
from spmi_dbg.analysis import diagnose, preload
from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.analysis.policy import PassedStop, check_stop, mark_second_chance
from spmi_dbg.analysis.stacks import thread_stacks
from spmi_dbg.analysis.view import signal_name
from spmi_dbg.driver.lldb.request import GuestLink, WorkerRequest
from spmi_dbg.driver.lldb.sbapi import death_signal, ensure_server, import_lldb, launch, resume
from spmi_dbg.driver.outcome import ReplayOutcome, RunClock
from spmi_dbg.errors import SpmiDbgError

STOP_SIGNALS = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT", "SIGTRAP")
KEEP = ("SIGSTOP", "SIGKILL", "SIGINT")  # lldb's own: left as they are
# seconds (SBListener.WaitForEvent takes whole seconds; it returns as soon as an event comes)
POLL = 1


class _Out:
    def __init__(self, stream: IO[str], transcript: IO[str]) -> None:
        self.stream = stream
        self.transcript = transcript

    def send(self, record: dict[str, Any]) -> None:
        self.stream.write(json.dumps(record) + "\n")
        self.stream.flush()

    def log(self, line: str) -> None:
        self.transcript.write(line + "\n")
        self.transcript.flush()


class Worker:
    def __init__(self, request: WorkerRequest, out: _Out) -> None:
        self.lldb = import_lldb()
        self.req = request
        self.out = out
        self.debugger: Any = None
        self.target: Any = None
        self.process: Any = None
        self.passed: list[PassedStop] = []
        self.notes: list[str] = []
        self.delivered: int | None = None  # the signal the last resume delivered to the replay

    # -- set-up
    # ---------------------------------------------------------------------------------------------
    def _debugger(self) -> None:
        preload()
        ensure_server()
        self.debugger = self.lldb.SBDebugger.Create(False)
        self.debugger.SetAsync(True)
        dirs = self.req.config.debug_dirs
        # separate debug files, by gnu_debuglink and by build-id (before the target loads its
        # modules)
        if dirs:
            self.debugger.HandleCommand(
                "settings set target.debug-file-search-paths "
                + " ".join(shell.quote(d) for d in dirs)
            )

    def _target(self, program: str) -> None:
        from spmi_dbg.ext.lldb.view import warm_up  # imports lldb: only after import_lldb

        err = self.lldb.SBError()
        self.target = self.debugger.CreateTarget(program, None, None, True, err)
        if not self.target.IsValid():
            raise RuntimeError(f"lldb cannot load {program}: {err.GetCString()}")
        warm_up(self.target)

    def _signals(self) -> None:
        signals = self.process.GetUnixSignals()
        for i in range(signals.GetNumSignals()):
            signo = signals.GetSignalAtIndex(i)
            name = signals.GetSignalAsCString(signo)
            if name in STOP_SIGNALS:
                signals.SetShouldStop(signo, True)
                signals.SetShouldSuppress(signo, False)  # a Continue delivers it to the replay
            # everything else goes to the replay unseen (gdb's `handle all nostop ...`)
            elif name not in KEEP:
                signals.SetShouldStop(signo, False)
                signals.SetShouldNotify(signo, False)
                signals.SetShouldSuppress(signo, False)

    def _launch(self) -> None:
        self.process = launch(
            self.lldb,
            self.target,
            list(self.req.run.argv),
            str(self.req.run.stdout),
            str(self.req.run.stderr),
            self.req.config.cwd,
            self.req.run.environment() if self.req.run.env is not None else None,
        )
        self._signals()

    # -- the run
    # --------------------------------------------------------------------------------------------
    def _connect(self, qemu: GuestLink) -> None:
        """The guest waiting under qemu's gdbstub (spmi_dbg.driver.qemu started it): gdb-remote, the
        guest's libraries from the sysroot, the JITs from their directories; resumed from its entry
        point."""
        lldb = self.lldb
        # what the view's argv() reads: /proc knows nothing of the guest
        launch = self.target.GetLaunchInfo()
        launch.SetArguments(list(self.req.run.argv[1:]), False)
        self.target.SetLaunchInfo(launch)
        ret = lldb.SBCommandReturnObject()
        interp = self.debugger.GetCommandInterpreter()
        interp.HandleCommand(f"platform select remote-linux --sysroot {qemu.sysroot}", ret)
        interp.HandleCommand("settings set target.exec-search-paths " + " ".join(qemu.dirs), ret)
        err = lldb.SBError()
        self.process = self.target.ConnectRemote(
            self.debugger.GetListener(), f"connect://127.0.0.1:{qemu.port}", "gdb-remote", err
        )
        if not err.Success() or not self.process.IsValid():
            raise RuntimeError(
                f"lldb could not attach to qemu's gdbstub on port {qemu.port}: {err.GetCString()}"
            )
        self._wait_stopped(self.req.config.request_timeout)
        self._signals()
        self.process.Continue()

    def _wait_stopped(self, seconds: float) -> None:
        listener = self.debugger.GetListener()
        event = self.lldb.SBEvent()
        until = time.monotonic() + seconds
        while self.process.GetState() != self.lldb.eStateStopped:
            if time.monotonic() > until:
                raise RuntimeError("the guest did not stop at its entry point after the attach")
            listener.WaitForEvent(1, event)
        while listener.PeekAtNextEvent(event):  # the attach's own stop: not one of the replay's
            listener.GetNextEvent(event)

    def replay(self) -> ReplayOutcome:
        start = time.monotonic()
        self._debugger()
        self._target(self.req.run.program)
        if self.req.guest is not None:
            self._connect(self.req.guest)
        else:
            self._launch()
        running = time.monotonic()
        if self.req.guest is None:  # under qemu the parent owns the process (the stub says pid 1)
            self.out.send(
                {
                    "event": "started",
                    "pid": int(self.process.GetProcessID()),
                    "startup_seconds": running - start,
                }
            )
        self.out.log(
            f"# launched {' '.join(self.req.run.argv)} (pid {self.process.GetProcessID()})"
        )
        deadline = running + self.req.run.timeout
        listener = self.debugger.GetListener()
        event = self.lldb.SBEvent()
        lldb = self.lldb

        self.clock = RunClock(start, running, self.passed)

        # states come as events only (a state read directly would be handled again as its event)
        while True:
            now = time.monotonic()
            if now >= deadline:
                return self._hang(self.req.run.timeout)
            if (
                not listener.WaitForEvent(POLL, event)
                or not lldb.SBProcess.EventIsProcessEvent(event)
                or lldb.SBProcess.GetRestartedFromEvent(event)
            ):
                continue
            state = lldb.SBProcess.GetStateFromEvent(event)
            if state == lldb.eStateExited:
                return self._exited()
            if state in (lldb.eStateStopped, lldb.eStateCrashed):
                verdict = self._stop()
                if verdict is not None:
                    return self.clock.outcome(
                        "fatal", diagnosis=verdict[0], notes=[*self.notes, *verdict[1]]
                    )
            elif state in (lldb.eStateDetached, lldb.eStateInvalid):
                raise RuntimeError(
                    f"lldb lost the replay (state {lldb.SBDebugger.StateAsCString(state)})"
                )

    def _exited(self) -> ReplayOutcome:
        status = int(self.process.GetExitStatus())
        self.out.log(f"# exited: status {status} {self.process.GetExitDescription() or ''!r}")
        signo = death_signal(self.process, self.delivered)
        if signo is not None:
            name = signal_name(signo)
            return self.clock.outcome(
                "signaled",
                signal=name,
                notes=[*self.notes, f"the replay died of {name} after it was passed on"]
                if self.passed
                else self.notes,
            )
        return self.clock.outcome("exited", exit_status=status, notes=self.notes)

    def _stop(self) -> tuple[Diagnosis, list[str]] | None:
        """A stop: pass it on (None) or diagnose it in full (the diagnosis and why)."""
        from spmi_dbg.ext.lldb.view import LldbProcess  # imports lldb: only after import_lldb

        t0 = time.monotonic()
        view = LldbProcess(self.target)
        thread = self.process.GetSelectedThread()
        if not thread.IsValid() or thread.GetStopReason() != self.lldb.eStopReasonSignal:
            # the thread the signal stopped, if not selected
            for i in range(self.process.GetNumThreads()):
                t = self.process.GetThreadAtIndex(i)
                if t.GetStopReason() == self.lldb.eStopReasonSignal:
                    self.process.SetSelectedThread(t)
                    thread = t
                    break
        if not thread.IsValid() or thread.GetStopReason() != self.lldb.eStopReasonSignal:
            reason = thread.GetStopDescription(200) if thread.IsValid() else "no thread"
            return diagnose(view), [f"stopped for {reason}"]
        d = check_stop(
            view,
            previous=self.passed[-1] if self.passed else None,
            passes_left=len(self.passed) < self.req.config.max_passes,
            stop_at_break=self.req.run.stop_at_break,
        )
        if d.stop or d.passed is None:
            full = diagnose(view)
            if d.second_chance:
                full = mark_second_chance(full, d.note)
            self.out.log(
                f"# fatal stop: {full.signature} [{full.bucket}]"
                + (f": {d.note}" if d.note else "")
            )
            return full, [d.note] if d.note else []
        signo = int(thread.GetStopReasonDataAtIndex(0))
        self._resume(thread, signo, d.deliver, d.step_over_brk)
        self.delivered = signo if d.deliver else None
        passed = dataclasses.replace(d.passed, seconds=time.monotonic() - t0)
        self.passed.append(passed)
        self.out.send({"event": "passed", "stop": passed.to_json()})
        self.out.log(
            f"# passed on: {passed.signal} ({passed.kind}) in {passed.frame}, method context "
            f"{passed.method_context}, pc {passed.pc:#x}"
            if passed.pc is not None
            else f"# passed on: {passed.signal} ({passed.kind}) in {passed.frame}"
        )
        return None

    def _resume(self, thread: Any, signo: int, deliver: bool, step_over_brk: bool) -> None:
        err = resume(self.process, thread, signo, deliver=deliver, step_over_brk=step_over_brk)
        if err.Fail():
            raise RuntimeError(f"lldb could not resume the replay: {err.GetCString()}")

    def _hang(self, timeout: float) -> ReplayOutcome:
        from spmi_dbg.ext.lldb.view import LldbProcess  # imports lldb: only after import_lldb

        lldb = self.lldb
        self.out.log(f"# --timeout {timeout:g} s: interrupting")
        # qemu-user's stub hears an interrupt only at a syscall or a signal: SIGINT goes to the
        # guest
        if self.req.guest is not None:
            os.kill(self.req.guest.pid, signal.SIGINT)
        else:
            self.process.Stop()
        listener = self.debugger.GetListener()
        event = lldb.SBEvent()
        until = time.monotonic() + self.req.config.request_timeout
        while self.process.GetState() not in (
            lldb.eStateStopped,
            lldb.eStateExited,
            lldb.eStateCrashed,
        ):
            if time.monotonic() > until:
                raise RuntimeError("lldb did not stop the replay after SBProcess.Stop")
            listener.WaitForEvent(1, event)
        if self.process.GetState() == lldb.eStateExited:
            return self.clock.outcome(
                "exited", exit_status=int(self.process.GetExitStatus()), notes=self.notes
            )
        threads = thread_stacks(LldbProcess(self.target))
        # the replay's main thread, not whichever lldb selected after the interrupt
        self.process.SetSelectedThread(self.process.GetThreadAtIndex(0))
        return self.clock.outcome(
            "hang",
            diagnosis=diagnose(LldbProcess(self.target)),
            threads=threads,
            notes=[
                *self.notes,
                f"no exit and no fatal stop within --timeout {timeout:g} s: interrupted",
            ],
        )

    def core(self) -> ReplayOutcome:
        from spmi_dbg.ext.lldb.view import LldbProcess  # imports lldb: only after import_lldb

        start = time.monotonic()
        self._debugger()
        self._target(self.req.program or "")
        argv = list(self.req.argv)
        # lldb tells no command line of a core: the diagnosis reads the command's (its JITs, -c,
        # -target)
        if argv:
            launch = self.target.GetLaunchInfo()
            launch.SetArguments(argv[1:], False)
            self.target.SetLaunchInfo(launch)
        self.process = self.target.LoadCore(str(self.req.core))
        if not self.process.IsValid():
            raise RuntimeError(f"lldb could not open the core file {self.req.core}")
        clock = RunClock(start, time.monotonic())
        return clock.outcome(
            "fatal",
            diagnosis=diagnose(LldbProcess(self.target)),
            notes=[f"post-mortem: diagnosed from the core file {self.req.core}"],
        )

    def close(self) -> None:
        if self.process is not None and self.process.IsValid() and self.req.replay is not None:
            self.process.Kill()
        if self.debugger is not None:
            self.lldb.SBDebugger.Destroy(self.debugger)


def main() -> int:
    request = WorkerRequest.from_json(json.loads(sys.stdin.readline()))
    with open(request.transcript, "a", encoding="utf-8", errors="replace") as transcript:
        out = _Out(sys.stdout, transcript)
        worker: Worker | None = None
        try:
            worker = Worker(request, out)
            result = worker.replay() if request.replay is not None else worker.core()
            out.send({"event": "outcome", "outcome": result.to_json()})
        except Exception as e:  # reported to the parent as a tool failure, never as a result
            said = (
                str(e)
                if isinstance(e, (RuntimeError, SpmiDbgError))
                else f"{type(e).__name__}: {e}"
            )
            out.log(f"# lldb worker failed: {said}")
            out.send({"event": "error", "message": said})
            return 1
        finally:
            if worker is not None:
                worker.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
