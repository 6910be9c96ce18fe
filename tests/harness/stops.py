"""A test and bench harness over the product's drivers (spmi_dbg.driver): a replay under a debugger
to the stop that matters, with superpmi's signal semantics (docs/debugger-notes.md "Signals", "First
and second chance"): a stop the replay survives (a first-chance fault inside the JIT's protected
call, a debug break nobody asked to stop at) is noted and its signal passed on -- never swallowed;
the first stop it does not survive is diagnosed in full.

`run_gdb` and `run_lldb` run the product's own drivers (spmi_dbg.driver.select.GdbDriver /
LldbDriver, or with `stop_first` / `max_passes` their run_replay functions) and give their
ReplayOutcome as a StopsResult of JSON data. `run_gdb_loop` is the in-gdb Python loop (0.5 ms per
stop, no MI round trips) that bench/stop_cost.py measures against the MI driver: the same policy
(spmi_dbg.analysis.policy.check_stop) and the same JSON."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.driver.base import Driver
from spmi_dbg.driver.gdb.driver import GdbDriver
from spmi_dbg.driver.lldb.driver import LldbDriver
from spmi_dbg.driver.loader import python_bootstrap
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.request import MAX_PASSES, DebuggerSetup, ReplayRequest
from spmi_dbg.errors import ToolFailure

MARK = "SPMI-DBG-RESULT "


@dataclass
class StopsResult:
    # "stop" (diagnosis of the reported stop), "exited", "signaled", "timeout", "error"
    outcome: str
    diagnosis: dict[str, Any] | None = None
    passed: list[dict[str, Any]] = field(default_factory=list)  # quick notes of the stops passed on
    exit_status: int | None = None
    signal: int | None = None
    detail: str = ""
    # the driver's ReplayOutcome.kind (a "stop" is "fatal" or "hang"); "" from run_gdb_loop
    kind: str = ""
    replay: ReplayOutcome | None = None  # the driver's typed outcome, as it returned it


def passed_note(
    signal_name: str, kind: str, frame: str, method_context: int | None, delivered: bool
) -> dict[str, Any]:
    """What the tests compare of a stop passed on (pc, fault address and timing vary from run to
    run)."""
    return {
        "signal": signal_name,
        "kind": kind,
        "frame": frame,
        "method_context": method_context,
        "delivered": delivered,
    }


def from_outcome(o: ReplayOutcome) -> StopsResult:
    """A driver's ReplayOutcome as a StopsResult: "fatal" and "hang" are the stop that matters."""
    passed = [
        passed_note(p.signal, str(p.kind), p.frame, p.method_context, p.delivered) for p in o.passed
    ]
    detail = f"{o.seconds:.2f} s" + "".join(f"; {n}" for n in o.notes)
    if o.kind in ("fatal", "hang"):
        return StopsResult(
            "stop",
            None if o.diagnosis is None else o.diagnosis.to_json(),
            passed,
            detail=detail,
            kind=o.kind,
            replay=o,
        )
    if o.kind == "exited":
        return StopsResult(
            "exited", passed=passed, exit_status=o.exit_status, detail=detail, kind=o.kind, replay=o
        )
    if o.kind == "signaled":
        signo = (
            int(signal.Signals[o.signal])
            if o.signal is not None and o.signal in signal.Signals.__members__
            else None
        )
        return StopsResult(
            "signaled", passed=passed, signal=signo, detail=detail, kind=o.kind, replay=o
        )
    return StopsResult(
        "error",
        passed=passed,
        detail=f"unexpected outcome {o.kind}: {detail}",
        kind=o.kind,
        replay=o,
    )


def _tail(path: Path, size: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-size:]
    except OSError:
        return ""


def _run(driver: Driver, argv: list[str], timeout: float) -> StopsResult:
    with tempfile.TemporaryDirectory(prefix="spmi-dbg-harness-") as tmp:
        out, err, transcript = (
            Path(tmp) / "stdout",
            Path(tmp) / "stderr",
            Path(tmp) / "debugger.log",
        )
        try:
            o = driver.run_replay(ReplayRequest(tuple(argv), timeout, out, err, transcript))
        except ToolFailure as e:
            return StopsResult("error", detail=f"{e}\n{_tail(transcript)}")
        return from_outcome(o)


def run_gdb(
    argv: list[str],
    *,
    stop_first: bool = False,
    timeout: float = 120.0,
    max_passes: int | None = None,
    cwd: str | None = None,
    gdb: str = "gdb",
) -> StopsResult:
    """One fresh gdb on argv through the product's MI driver; the diagnosis of the first stop the
    replay would not survive (or of the very first stop with stop_first=True: the driver's
    max_passes=0)."""
    return _run(GdbDriver(gdb, _config(stop_first, max_passes, cwd)), argv, timeout)


def run_lldb(
    argv: list[str],
    *,
    stop_first: bool = False,
    timeout: float = 120.0,
    max_passes: int | None = None,
    cwd: str | None = None,
) -> StopsResult:
    """The same through the product's lldb driver (a fresh worker process, with its own SBDebugger,
    per call)."""
    return _run(LldbDriver(_config(stop_first, max_passes, cwd)), argv, timeout)


def _config(stop_first: bool, max_passes: int | None, cwd: str | None) -> DebuggerSetup:
    """The drivers' set-up: stops passed on before the stop (stop_first: none)."""
    passes = 0 if stop_first else max_passes if max_passes is not None else MAX_PASSES
    return DebuggerSetup(cwd=cwd, max_passes=passes)


# run_gdb_loop's script: runs inside gdb after `run`. STOP_FIRST, MAX_PASSES and TIMEOUT are set by
# the caller. Each stop gets spmi_dbg.analysis.policy.check_stop (the quick check, then the
# decision), as in the drivers.
_GDB_LOOP = r"""
import gdb, json, time

from spmi_dbg.ext.gdb.view import GdbProcess
from spmi_dbg.analysis import diagnose
from spmi_dbg.analysis.policy import check_stop
passed = []
previous = None
result = None
deadline = time.monotonic() + TIMEOUT
while result is None:
    inf = gdb.selected_inferior()
    if inf.pid == 0 or not inf.threads():
        code = gdb.convenience_variable("_exitcode")
        sig = gdb.convenience_variable("_exitsignal")
        result = {"outcome": "signaled" if sig is not None else "exited", "passed": passed,
                  "exit_status": None if code is None else int(code),
                  "signal": None if sig is None else int(sig)}
        break
    d = check_stop(GdbProcess(), previous=previous,
                   passes_left=len(passed) < MAX_PASSES and time.monotonic() < deadline)
    if not STOP_FIRST and not d.stop and d.passed is not None:
        previous = d.passed
        passed.append({"signal": d.passed.signal, "kind": d.passed.kind, "frame": d.passed.frame,
                       "method_context": d.passed.method_context, "delivered": d.deliver})
        if d.deliver:
            gdb.execute("signal " + d.passed.signal, to_string=True)
        else:  # resume past the break without the signal, as a debugger user does
            if d.step_over_brk:
                gdb.execute("set $pc = $pc + 4", to_string=True)  # brk is re-executed otherwise
            gdb.execute("continue", to_string=True)
        continue
    result = {"outcome": "stop", "passed": passed, "diagnosis": diagnose(GdbProcess()).to_json()}
print(MARK + json.dumps(result))
"""


def run_gdb_loop(
    argv: list[str],
    *,
    stop_first: bool = False,
    timeout: float = 120.0,
    max_passes: int = 10000,
    cwd: str | None = None,
    gdb: str = "gdb",
) -> StopsResult:
    """One fresh gdb on argv running the in-gdb loop (`_GDB_LOOP`, not the product's MI driver): the
    diagnosis of the first stop the replay would not survive (or of the very first stop with
    stop_first=True). What bench/stop_cost.py measures against the MI driver."""
    with tempfile.TemporaryDirectory(prefix="spmi-dbg-gdb-") as tmp:
        script = Path(tmp) / "loop.py"
        script.write_text(
            f"MARK = {MARK!r}\nSTOP_FIRST = {stop_first!r}\n"
            f"MAX_PASSES = {max_passes}\nTIMEOUT = {timeout!r}\n" + _GDB_LOOP
        )
        out_file, err_file = Path(tmp) / "stdout", Path(tmp) / "stderr"
        # `run ARGS` replaces --args, so they go here
        args = " ".join(shlex.quote(a) for a in argv[1:])
        # The shell is kept (it costs ~0.2 s) because it is what redirects the replay's output to
        # files.
        cmd = [
            gdb,
            "-q",
            "-nx",
            "-batch",
            "-iex",
            "set auto-load off",
            "-ex",
            "set pagination off",
            "-ex",
            "set confirm off",
            "-ex",
            "python " + python_bootstrap("spmi_dbg.ext.gdb"),
            "-ex",
            f"run {args} > {out_file} 2> {err_file} < /dev/null",
            "-ex",
            f"source {script}",
            "-ex",
            "kill",
            argv[0],
        ]
        start = time.monotonic()
        try:
            r = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=timeout + 30,
                cwd=cwd,
                env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
            )
        except subprocess.TimeoutExpired:
            return StopsResult("timeout", detail=f"gdb did not finish in {timeout + 30:.0f} s")
        for line in r.stdout.splitlines():
            if line.startswith(MARK):
                data = json.loads(line[len(MARK) :])
                return StopsResult(
                    data["outcome"],
                    data.get("diagnosis"),
                    data.get("passed", []),
                    data.get("exit_status"),
                    data.get("signal"),
                    detail=f"{time.monotonic() - start:.2f} s",
                )
        return StopsResult("error", detail=(r.stdout + r.stderr)[-2000:])
