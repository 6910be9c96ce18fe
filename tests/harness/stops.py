"""A test and bench harness (not the product's driver: that is spmi_dbg.driver): a replay under a debugger to
the stop that matters, with superpmi's signal semantics (docs/debugger-notes.md "Signals", "First and second
chance"): a stop the replay survives (a first-chance fault
inside the JIT's protected call, a debug break nobody asked to stop at) is noted and its signal passed on
— never swallowed; the first stop it does not survive is diagnosed in full.

`GDB_SCRIPT` runs inside gdb's Python (0.5 ms per stop, no MI round trips); `run_lldb` drives lldb through
the SB API in this process. Both print/return the same JSON made by spmi_dbg.analysis."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.driver.loader import python_bootstrap

MARK = "SPMI-DBG-RESULT "


@dataclass
class StopsResult:
    outcome: str  # "stop" (diagnosis of the reported stop), "exited", "signaled", "timeout", "error"
    diagnosis: dict[str, Any] | None = None
    passed: list[dict[str, Any]] = field(default_factory=list)  # quick notes of the stops passed on
    exit_status: int | None = None
    signal: int | None = None
    detail: str = ""


# Runs inside gdb after `run`. STOP_FIRST, MAX_PASSES and TIMEOUT are set by the caller. Each stop gets
# spmi_dbg.analysis.policy.check_stop (the quick check, then the decision), as in the drivers.
_GDB_LOOP = r'''
import gdb, json, time

from spmi_dbg.gdb.view import GdbProcess
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
                  "exit_status": None if code is None else int(code), "signal": None if sig is None else int(sig)}
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
'''

def run_gdb(argv: list[str], *, stop_first: bool = False, timeout: float = 120.0, max_passes: int = 10000,
            cwd: str | None = None, gdb: str = "gdb") -> StopsResult:
    """One fresh gdb on argv; returns the diagnosis of the first stop the replay would not survive
    (or of the very first stop with stop_first=True)."""
    with tempfile.TemporaryDirectory(prefix="spmi-dbg-gdb-") as tmp:
        script = Path(tmp) / "loop.py"
        script.write_text(f"MARK = {MARK!r}\nSTOP_FIRST = {stop_first!r}\n"
                          f"MAX_PASSES = {max_passes}\nTIMEOUT = {timeout!r}\n" + _GDB_LOOP)
        out_file, err_file = Path(tmp) / "stdout", Path(tmp) / "stderr"
        args = " ".join(shlex.quote(a) for a in argv[1:])  # `run ARGS` replaces --args, so they go here
        # The shell is kept (it costs ~0.2 s) because it is what redirects the replay's output to files.
        cmd = [gdb, "-q", "-nx", "-batch", "-iex", "set auto-load off", "-ex", "set pagination off",
               "-ex", "set confirm off",
               "-ex", "python " + python_bootstrap("spmi_dbg.gdb"),
               "-ex", f"run {args} > {out_file} 2> {err_file} < /dev/null", "-ex", f"source {script}",
               "-ex", "kill", argv[0]]
        start = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 30, cwd=cwd,
                               env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        except subprocess.TimeoutExpired:
            return StopsResult("timeout", detail=f"gdb did not finish in {timeout + 30:.0f} s")
        for line in r.stdout.splitlines():
            if line.startswith(MARK):
                data = json.loads(line[len(MARK):])
                return StopsResult(data["outcome"], data.get("diagnosis"), data.get("passed", []),
                                   data.get("exit_status"), data.get("signal"),
                                   detail=f"{time.monotonic() - start:.2f} s")
        return StopsResult("error", detail=(r.stdout + r.stderr)[-2000:])


def run_lldb(argv: list[str], *, stop_first: bool = False, timeout: float = 120.0, max_passes: int = 10000,
             cwd: str | None = None) -> StopsResult:
    """The same over lldb's SB API, in this process (one fresh SBDebugger per call)."""
    from spmi_dbg.analysis import diagnose, preload
    from spmi_dbg.analysis.policy import PassedStop, check_stop
    from spmi_dbg.driver.lldb_session import LldbSession

    preload()
    with tempfile.TemporaryDirectory(prefix="spmi-dbg-lldb-") as tmp:
        session = LldbSession(argv, Path(tmp) / "stdout", Path(tmp) / "stderr", cwd=cwd)
        from spmi_dbg.lldb.view import LldbProcess  # importable once LldbSession found the lldb module

        passed: list[dict[str, Any]] = []
        previous: PassedStop | None = None
        deadline = time.monotonic() + timeout
        try:
            while True:
                st = session.state()
                if st.state == "exited":
                    return StopsResult("exited", passed=passed, exit_status=st.exit_status)
                if st.state == "crashed":
                    return StopsResult("signaled", passed=passed, signal=st.signo)
                view = LldbProcess(session.target)
                d = check_stop(view, previous=previous,
                               passes_left=len(passed) < max_passes and time.monotonic() < deadline)
                if not stop_first and not d.stop and d.passed is not None:
                    previous = d.passed
                    passed.append({"signal": d.passed.signal, "kind": d.passed.kind, "frame": d.passed.frame,
                                   "method_context": d.passed.method_context, "delivered": d.deliver})
                    session.resume(deliver=d.deliver, step_over_brk=d.step_over_brk)
                    continue
                return StopsResult("stop", diagnose(view).to_json(), passed)
        finally:
            session.kill()
