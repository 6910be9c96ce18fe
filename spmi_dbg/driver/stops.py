"""Running a replay under a debugger to the stop that matters, with superpmi's signal semantics
(debugger-notes.md "Signals", "First and second chance"): a stop the replay survives (a first-chance fault
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


# Runs inside gdb after `run`. PASS and STOP_FIRST are set by the caller. A debug break is resumed
# without delivering SIGTRAP unless the program has a SIGTRAP handler (debugger-notes.md: pass SIGTRAP
# with `signal SIGTRAP` only to a program that handles it; superpmi's DEBUG_BREAK expects the debugger to
# absorb it, and on aarch64 the pc must step over `brk`).
_GDB_LOOP = r'''
import gdb, json, time

def _catches(proc, signo):
    mask = proc.caught_signals()
    return mask is not None and bool(mask & (1 << (signo - 1)))

from spmi_dbg.gdb.view import GdbProcess
from spmi_dbg.analysis import diagnose
passed = []
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
    quick = diagnose(GdbProcess(), full=False)
    kind = quick.handling["kind"]
    if not STOP_FIRST and kind in PASS and quick.signal is not None and len(passed) < MAX_PASSES \
            and time.monotonic() < deadline:
        proc = GdbProcess()
        deliver = kind != "debug-break" or _catches(proc, quick.signal["signo"])
        passed.append({"signal": quick.signal["name"], "kind": kind, "frame": (quick.folded or ["?"])[0],
                       "method_context": (quick.method_context or {}).get("number"), "delivered": deliver})
        if deliver:
            gdb.execute("signal " + quick.signal["name"], to_string=True)
        else:  # resume past the break without the signal, as a debugger user does
            if proc.arch == "aarch64":
                gdb.execute("set $pc = $pc + 4", to_string=True)  # brk is re-executed otherwise
            gdb.execute("continue", to_string=True)
        continue
    result = {"outcome": "stop", "passed": passed, "diagnosis": diagnose(GdbProcess()).to_json()}
print(MARK + json.dumps(result))
'''

PASS_KINDS = ("first-chance", "debug-break")


def run_gdb(argv: list[str], *, stop_first: bool = False, timeout: float = 120.0, max_passes: int = 10000,
            cwd: str | None = None, gdb: str = "gdb") -> StopsResult:
    """One fresh gdb on argv; returns the diagnosis of the first stop the replay would not survive
    (or of the very first stop with stop_first=True)."""
    with tempfile.TemporaryDirectory(prefix="spmi-dbg-gdb-") as tmp:
        script = Path(tmp) / "loop.py"
        script.write_text(f"MARK = {MARK!r}\nPASS = {PASS_KINDS!r}\nSTOP_FIRST = {stop_first!r}\n"
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
    from spmi_dbg.driver.lldb_session import LldbSession

    preload()
    with tempfile.TemporaryDirectory(prefix="spmi-dbg-lldb-") as tmp:
        session = LldbSession(argv, Path(tmp) / "stdout", Path(tmp) / "stderr", cwd=cwd)
        from spmi_dbg.lldb.view import LldbProcess  # importable once LldbSession found the lldb module

        passed: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        try:
            while True:
                st = session.state()
                if st.state == "exited":
                    return StopsResult("exited", passed=passed, exit_status=st.exit_status)
                if st.state == "crashed":
                    return StopsResult("signaled", passed=passed, signal=st.signo)
                view = LldbProcess(session.target)
                quick = diagnose(view, full=False)
                kind = quick.handling["kind"]
                if not stop_first and kind in PASS_KINDS and quick.signal is not None and \
                        len(passed) < max_passes and time.monotonic() < deadline:
                    signo = int(quick.signal["signo"])
                    mask = view.caught_signals()
                    deliver = kind != "debug-break" or (mask is not None and bool(mask & (1 << (signo - 1))))
                    passed.append({"signal": quick.signal["name"], "kind": kind,
                                   "frame": (quick.folded or ["?"])[0],
                                   "method_context": (quick.method_context or {}).get("number"),
                                   "delivered": deliver})
                    session.resume(deliver=deliver, step_over_brk=not deliver and view.arch == "aarch64")
                    continue
                return StopsResult("stop", diagnose(view).to_json(), passed)
        finally:
            session.kill()
