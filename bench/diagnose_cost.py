#!/usr/bin/env python3
"""Cost of the diagnosis inside the debuggers (issue 4, "Performance"): goals < 50 ms for a full
diagnosis (`spmi diagnose --json`), < 2 ms for the quick first-chance check run at every stop the
replay survives.

In one run (each stage in a fresh debugger, or a fresh process for lldb's in-process SB API, as
run_lldb):
  - builds (once, cached in --dir: bench/README.md) an arm64 sample collection with the seed crash
    (`seed-arm64`) at 150 of 200, and an x64 collection with a first-chance JIT fault (`jit-null`)
    at every other method context;
  - at the seed crash stop of spmi-replay (-O2 -g) `-a -target arm64 -bug 91257`: the time of
    `spmi diagnose --json` run as a debugger command (gdb.execute /
    SBCommandInterpreter.HandleCommand): the first call at the stop (cold: the debugger's lazy
    symbol reading and the Python imports are paid there) and warm repeats; diagnose(view,
    full=True) + json.dumps called directly; and the same call split by where its time goes
    ("sections"), cold and warm;
  - at each first-chance stop of the replay over the second collection: policy.check_stop as the
    run-to-the-fatal-stop loops call it (GdbProcess()/LldbProcess() construction included; a fault
    in a JIT takes its fast path), then the signal passed on; per-stop median/p90/max; the quick
    diagnosis alone (diagnose(view, full=False), what check_stop falls back to when the fast path
    cannot decide) timed apart at the same stops, and in a second run split by sections.
  --profile adds a cProfile of the cold full diagnosis and of the quick checks, in each debugger.

The sections time one real diagnose() call: while it runs, every function of
spmi_dbg/analysis/diagnosis.py's namespace (and of the spmi_dbg modules it imports whole) and every
read of the debugger's view is wrapped and timed, each exclusively of the wrapped calls inside it
("analysis: _handling", "debugger: Frame.function", ..., the rest "diagnose() itself"). Nothing is
replayed by hand, so the split follows diagnosis.py as it is; the wrappers add a little (a few
microseconds per call) to the sum, which is why the sections' sum is not the diagnosis' own time.

  - the full diagnosis at a stack overflow (~21,000 frames with the default 8 MB stack), by
    sections: only the innermost OVERFLOW_FRAMES (256) are read, as diagnose() does.

--quick (CI, seconds; not a measurement): --repeat 1 --stops 3 and the same stages and lines.

Usage: bench/diagnose_cost.py [--quick] [--dir /tmp/spmi-bench] [--repeat 20] [--stops 100]
                              [--profile] [--no-stack-overflow]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import ROOT, USER_ENV, cached_collection, common_arguments, figure, native, parse

from spmi_dbg.driver.lldb import sbapi
from spmi_dbg.errors import SpmiDbgError

BENCH = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


SEED_N = 150
# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^full diagnosis, worst cold: [\d.]+ ms: goal < 50 ms (met|NOT met)$",
    r"^quick check, worst median: [\d.]+ ms: goal < 2 ms (met|NOT met)$",
]
LLDB_SERVER = "/usr/lib/llvm-16/bin/lldb-server"


# ------------------------------------------------------------------------------------ measuring
# (any debugger)


class Clock:
    """Exclusive times (ms) of the wrapped calls: a call's time less that of the wrapped calls
    inside it."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self._inner: list[float] = []

    def call(self, name: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        self._inner.append(0.0)
        try:
            return fn(*args, **kw)
        finally:
            elapsed = time.perf_counter() - t0
            inner = self._inner.pop()
            self.times[name] = self.times.get(name, 0.0) + (elapsed - inner) * 1e3
            if self._inner:
                self._inner[-1] += elapsed

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kw: Any) -> Any:
            return self.call(name, fn, *args, **kw)

        return timed


VIEW_MODULES = ("spmi_dbg.ext.gdb.view", "spmi_dbg.ext.lldb.view")


class Timed:
    """A debugger view object (process, thread, frame, value) whose attribute reads and method calls
    are timed as "debugger: <Class>.<name>"; the view objects they return are wrapped in turn."""

    def __init__(self, inner: Any, clock: Clock) -> None:
        self._inner, self._clock = inner, clock
        self._kind = type(inner).__name__.removeprefix("Gdb").removeprefix("Lldb")

    def __getattr__(self, name: str) -> Any:
        label = f"debugger: {self._kind}.{name}"
        value = self._clock.call(label, getattr, self._inner, name)
        if callable(value):
            return lambda *args, **kw: _timed_view(
                self._clock.call(label, value, *args, **kw), self._clock
            )
        return _timed_view(value, self._clock)


def _timed_view(value: Any, clock: Clock) -> Any:
    if type(value).__module__ in VIEW_MODULES:
        return Timed(value, clock)
    if isinstance(value, list | tuple) and value and type(value[0]).__module__ in VIEW_MODULES:
        return type(value)(Timed(v, clock) for v in value)
    return value


def analysis_functions() -> list[tuple[Any, str]]:
    """(module, function name) of every function diagnose() can call by a global name: those of
    spmi_dbg/analysis/diagnosis.py's namespace and of the spmi_dbg modules it imports whole."""
    import inspect

    from spmi_dbg.analysis import diagnosis as D

    out = [
        (D, name) for name, obj in vars(D).items() if inspect.isfunction(obj) and name != "diagnose"
    ]
    for mod in vars(D).values():
        if inspect.ismodule(mod) and mod.__name__.startswith("spmi_dbg."):
            out += [
                (mod, name)
                for name, obj in vars(mod).items()
                if inspect.isfunction(obj) and obj.__module__ == mod.__name__
            ]
    return out


def diagnose_by_sections(process: Any, full: bool) -> dict[str, float]:
    """diagnose(process, full=...) with its time split (ms, exclusive) by where it goes: each call
    into the debugger's view ("debugger: Frame.function", ...) and each analysis function diagnose()
    reaches by a global name ("analysis: _handling", ...), the rest "diagnose() itself"; with full,
    json.dumps of the result. The functions are wrapped for the call, so the split follows
    diagnosis.py as it is."""
    from spmi_dbg.analysis import diagnose

    clock = Clock()
    patched = analysis_functions()
    saved = [(mod, name, getattr(mod, name)) for mod, name in patched]
    for mod, name, fn in saved:
        setattr(mod, name, clock.wrap(f"analysis: {name}", fn))
    try:
        d = clock.call("diagnose() itself", diagnose, Timed(process, clock), full=full)
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)
    if full:  # the quick check's result is not serialised by the loops (only a few fields are kept)
        clock.call("json", lambda: json.dumps(d.to_json()))
    return clock.times


def profile_text(fn: Callable[[], Any], top: int = 18) -> str:
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    lines = out.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("ncalls")), 0)
    return "\n".join(line.replace(str(ROOT) + "/", "") for line in lines[start:] if line.strip())


def ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def seed_stage(
    process_factory: Callable[[], Any], command: Callable[[str], str], mode: str, repeat: int
) -> dict[str, Any]:
    """At the seed crash stop."""
    from spmi_dbg.analysis import diagnose

    out: dict[str, Any] = {}
    if mode == "seed-command":
        t0 = time.perf_counter()
        text = command("spmi diagnose --json")
        out["command_cold"] = ms_since(t0)
        out["bucket"] = json.loads(text)["bucket"]
        out["frames"] = len(json.loads(text)["frames"])
        warm = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            command("spmi diagnose --json")
            warm.append(ms_since(t0))
        out["command_warm"] = warm
        direct = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            json.dumps(diagnose(process_factory(), full=True).to_json())
            direct.append(ms_since(t0))
        out["direct_warm"] = direct
        out["sections_warm"] = [
            diagnose_by_sections(process_factory(), True) for _ in range(repeat)
        ]
    elif mode == "seed-preloaded":
        # What the first call would cost if the extension imported its lazy dependencies when it is
        # loaded (before any stop) instead of at the first diagnosis.
        import capstone  # noqa: F401

        import spmi_dbg.mch.collection  # noqa: F401

        t0 = time.perf_counter()
        command("spmi diagnose --json")
        out["command_cold"] = ms_since(t0)
    elif mode.endswith("-sections-cold"):
        t0 = time.perf_counter()
        out["sections_cold"] = diagnose_by_sections(process_factory(), True)
        out["total"] = ms_since(t0)
        thread = process_factory().selected_thread()
        out["frames"] = len(thread.frames()) if thread is not None else 0  # all of them (not timed)
    elif mode == "seed-profile":
        out["profile"] = profile_text(
            lambda: json.dumps(diagnose(process_factory(), full=True).to_json())
        )
    return out


def first_chance_loop(
    process_factory: Callable[[], Any],
    resume: Callable[[str], None],
    alive: Callable[[], bool],
    mode: str,
    max_stops: int,
) -> dict[str, Any]:
    """At each stop: what the driver's loops ask (policy.check_stop: the fast path for a fault in a
    JIT, else the quick diagnosis and the decision), timed, then the signal passed on as told; and
    the quick diagnosis alone (diagnose(full=False), what check_stop falls back to), timed apart."""
    import cProfile

    from spmi_dbg.analysis import diagnose
    from spmi_dbg.analysis.policy import PassedStop, check_stop

    times: list[float] = []
    quick_times: list[float] = []
    sections: list[dict[str, float]] = []
    kinds: dict[str, int] = {}
    previous: PassedStop | None = None
    prof = cProfile.Profile() if mode == "fc-profile" else None
    while alive() and len(times) < max_stops:
        if mode == "fc-sections":
            sections.append(diagnose_by_sections(process_factory(), False))
            times.append(sum(sections[-1].values()))
        else:
            if prof is not None:
                prof.enable()
            t0 = time.perf_counter()
            d = check_stop(process_factory(), previous=previous, passes_left=True)
            times.append(ms_since(t0))
            if prof is not None:
                prof.disable()
        t0 = time.perf_counter()
        quick = diagnose(process_factory(), full=False)
        quick_times.append(ms_since(t0))
        kind = str(quick.handling.kind)
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind not in ("first-chance", "debug-break") or quick.signal is None:
            break
        if mode != "fc-sections":
            if d.stop or d.passed is None:
                break
            previous = d.passed
        resume(quick.signal.name)
    out: dict[str, Any] = {"times": times, "kinds": kinds, "quick_times": quick_times}
    if sections:
        out["sections"] = sections
    if prof is not None:
        import io
        import pstats

        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(18)
        lines = s.getvalue().splitlines()
        start = next((i for i, line in enumerate(lines) if line.strip().startswith("ncalls")), 0)
        out["profile"] = "\n".join(
            line.replace(str(ROOT) + "/", "") for line in lines[start:] if line.strip()
        )
    return out


# ------------------------------------------------------------------------------------ inside gdb


def gdb_stage(mode: str, out_path: str, repeat: int, max_stops: int) -> None:
    """Runs in gdb's Python (after `run` reached the first stop)."""
    import gdb

    from spmi_dbg.ext.gdb.view import GdbProcess

    def alive() -> bool:
        inf = gdb.selected_inferior()
        return bool(inf.pid) and bool(inf.threads())

    if not mode.startswith("fc-"):
        res = seed_stage(GdbProcess, lambda c: str(gdb.execute(c, to_string=True)), mode, repeat)
    else:
        res = first_chance_loop(
            GdbProcess, lambda s: gdb.execute("signal " + s, to_string=True), alive, mode, max_stops
        )
    res["debugger"] = f"gdb {gdb.VERSION.split()[0]}"
    Path(out_path).write_text(json.dumps(res))


def run_gdb_stage(
    argv: list[str], mode: str, out: Path, repeat: int, max_stops: int
) -> dict[str, Any]:
    from spmi_dbg.driver.loader import gdbinit_line

    call = (
        f"import sys; sys.path.insert(0, {str(BENCH)!r}); import diagnose_cost; "
        f"diagnose_cost.gdb_stage({mode!r}, {str(out)!r}, {repeat}, {max_stops})"
    )
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "replay.out"
        cmd = [
            "gdb",
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
            gdbinit_line(),
            "-ex",
            "run " + " ".join(shlex.quote(a) for a in argv[1:]) + f" > {log} 2>&1 < /dev/null",
            "-ex",
            "python " + call,
            "-ex",
            "kill",
            argv[0],
        ]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=USER_ENV)
    if not out.exists():
        raise SystemExit(f"gdb stage {mode} failed:\n{(r.stdout + r.stderr)[-3000:]}")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


# ------------------------------------------------------------------------------------ lldb (SB API,
# in-process)


@dataclass
class LldbStop:
    state: str  # "stopped", "exited", "crashed"
    signo: int | None
    exit_status: int | None


class LldbSession:
    """One target, launched synchronously; stdout/stderr of the inferior go to files (this bench's
    lldb stages: lldb in this process, as tests.harness.stops.run_lldb; the product drives lldb from
    a worker process)."""

    def __init__(self, argv: list[str], stdout: Path, stderr: Path, cwd: str | None = None) -> None:
        self.lldb = sbapi.import_lldb()
        sbapi.ensure_server()
        lldb = self.lldb
        self.debugger: Any = lldb.SBDebugger.Create(False)
        self.debugger.SetAsync(False)
        self.target: Any = self.debugger.CreateTarget(argv[0])
        if not self.target.IsValid():
            raise SpmiDbgError(f"lldb cannot load {argv[0]}")
        self._index_anchors()
        self.process: Any = sbapi.launch(lldb, self.target, argv, str(stdout), str(stderr), cwd)
        signals = self.process.GetUnixSignals()
        # SIGTRAP reaches the program (superpmi's -boa/-boe debug breaks) when we resume after a
        # stop.
        signals.SetShouldSuppress(5, False)
        self._delivered: int | None = None  # the signal the last resume delivered to the program

    def _index_anchors(self) -> None:
        from spmi_dbg.ext.lldb.view import warm_up

        warm_up(self.target)

    def state(self) -> LldbStop:
        lldb = self.lldb
        st = self.process.GetState()
        if st == lldb.eStateExited:
            signo = sbapi.death_signal(self.process, self._delivered)
            if signo is not None:
                return LldbStop("crashed", signo, None)
            return LldbStop("exited", None, int(self.process.GetExitStatus()))
        thread = self.process.GetSelectedThread()
        if thread.IsValid() and thread.GetStopReason() == lldb.eStopReasonSignal:
            return LldbStop("stopped", int(thread.GetStopReasonDataAtIndex(0)), None)
        return LldbStop("stopped", None, None)

    def resume(self, *, deliver: bool = True, step_over_brk: bool = False) -> None:
        """Continue. With deliver, the signal the thread stopped with reaches the program; without,
        it is suppressed for this resume (a debug break the debugger absorbs; on aarch64 the pc
        steps over brk)."""
        thread = self.process.GetSelectedThread()
        signo = (
            int(thread.GetStopReasonDataAtIndex(0))
            if thread.IsValid() and thread.GetStopReason() == self.lldb.eStopReasonSignal
            else None
        )
        self._delivered = signo if deliver else None
        sbapi.resume(self.process, thread, signo, deliver=deliver, step_over_brk=step_over_brk)

    def kill(self) -> None:
        if self.process.IsValid():
            self.process.Kill()
        self.lldb.SBDebugger.Destroy(self.debugger)


def lldb_stage(argv: list[str], mode: str, out_path: str, repeat: int, max_stops: int) -> None:
    """Runs in a fresh process of this script: lldb through its SB API, as run_lldb does."""
    with tempfile.TemporaryDirectory() as tmp:
        session = LldbSession(argv, Path(tmp) / "stdout", Path(tmp) / "stderr")
        import lldb

        from spmi_dbg.ext.lldb.view import LldbProcess

        try:

            def factory() -> Any:
                return LldbProcess(session.target)

            if not mode.startswith("fc-"):
                interp = session.debugger.GetCommandInterpreter()
                loaded = lldb.SBCommandReturnObject()
                interp.HandleCommand("command script import spmi_dbg.ext.lldb", loaded)
                if not loaded.Succeeded():
                    raise SystemExit(f"lldb: {loaded.GetError()}")

                def command(c: str) -> str:
                    r = lldb.SBCommandReturnObject()
                    interp.HandleCommand(c, r)
                    if not r.Succeeded():
                        raise SystemExit(f"lldb: {c}: {r.GetError()}")
                    return str(r.GetOutput())

                res = seed_stage(factory, command, mode, repeat)
            else:
                res = first_chance_loop(
                    factory,
                    lambda s: session.resume(),
                    lambda: session.state().state == "stopped",
                    mode,
                    max_stops,
                )
            m = lldb.SBDebugger.GetVersionString().split()
            res["debugger"] = f"lldb {m[2] if len(m) > 2 else '?'}"
        finally:
            session.kill()
    Path(out_path).write_text(json.dumps(res))


def run_lldb_stage(
    argv: list[str], mode: str, out: Path, repeat: int, max_stops: int
) -> dict[str, Any]:
    env = dict(USER_ENV, LLDB_DEBUGSERVER_PATH=os.environ.get("LLDB_DEBUGSERVER_PATH", LLDB_SERVER))
    r = subprocess.run(
        [
            sys.executable,
            __file__,
            "--lldb-stage",
            mode,
            "--stage-out",
            str(out),
            "--repeat",
            str(repeat),
            "--stops",
            str(max_stops),
            "--",
            *argv,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    if not out.exists():
        raise SystemExit(f"lldb stage {mode} failed:\n{(r.stdout + r.stderr)[-3000:]}")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


# ------------------------------------------------------------------------------------ driver


def collections(root: Path, stops: int) -> tuple[Path, Path, Path]:
    seed = cached_collection(
        root / "diag-seed-200.mch",
        methods=200,
        seed=2,
        arch="arm64",
        injections=[("seed-arm64", SEED_N)],
    )
    fc = cached_collection(
        root / f"diag-jit-null-{stops}.mch",
        methods=2 * stops,
        seed=1,
        injections=[("jit-null", 2 * i) for i in range(1, stops + 1)],
    )
    so = cached_collection(
        root / "diag-stack-overflow-10.mch", methods=10, seed=1, injections=[("stack-overflow", 5)]
    )
    return seed, fc, so


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def median_sections(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return {k: statistics.median(r.get(k, 0.0) for r in rows) for k in keys}


def shown(columns: list[dict[str, float]], at_least: float) -> list[tuple[str, list[float]]]:
    """The rows of a sections table: each section that reaches `at_least` ms in some column, the
    largest first, then one row for the others together; each row's value in each column."""
    keys = {k for c in columns for k in c}
    big = sorted(
        (k for k in keys if max(c.get(k, 0.0) for c in columns) >= at_least),
        key=lambda k: -max(c.get(k, 0.0) for c in columns),
    )
    rows = [(k, [c.get(k, 0.0) for c in columns]) for k in big]
    rest = keys - set(big)
    if rest:
        rows.append(
            (f"({len(rest)} other sections)", [sum(c.get(k, 0.0) for k in rest) for c in columns])
        )
    return rows


def arguments() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    common_arguments(ap)
    ap.add_argument("--repeat", type=int, default=20, help="warm repeats at the seed stop")
    ap.add_argument("--stops", type=int, default=100, help="first-chance stops for the quick check")
    ap.add_argument("--profile", action="store_true", help="also print cProfile output")
    ap.add_argument(
        "--no-stack-overflow",
        action="store_true",
        help="skip the full diagnosis at a stack overflow (~21,000 frames: seconds)",
    )
    ap.add_argument("--lldb-stage", help=argparse.SUPPRESS)
    ap.add_argument("--stage-out", help=argparse.SUPPRESS)
    ap.add_argument("argv", nargs="*", help=argparse.SUPPRESS)
    return ap


Results = dict[str, dict[str, Any]]  # debugger -> stage (mode) -> its results


def run_stages(a: argparse.Namespace, seed: Path, fc: Path, so: Path) -> Results:
    """Each stage in a fresh debugger, gdb's then lldb's, each stage's wall time added."""
    replay, base, diff = (
        native("bin/spmi-replay"),
        native("jit/libsamplejit_base.so"),
        native("jit/libsamplejit_diff.so"),
    )
    seed_argv = [replay, "-a", "-target", "arm64", "-bug", "91257", base, diff, str(seed)]
    fc_argv = [replay, base, str(fc)]
    so_argv = [replay, base, str(so)]
    modes = ["seed-command", "seed-sections-cold", "seed-preloaded", "fc-quick", "fc-sections"]
    if not a.no_stack_overflow:
        modes.append("so-sections-cold")
    if a.profile:
        modes += ["seed-profile", "fc-profile"]
    res: Results = {"gdb": {}, "lldb": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for dbg, runner in (("gdb", run_gdb_stage), ("lldb", run_lldb_stage)):
            for mode in modes:
                argv = {"seed": seed_argv, "fc": fc_argv, "so": so_argv}[mode.split("-")[0]]
                t0 = time.perf_counter()
                res[dbg][mode] = runner(
                    argv, mode, Path(tmp) / f"{dbg}-{mode}.json", a.repeat, a.stops
                )
                res[dbg][mode]["wall"] = time.perf_counter() - t0
    return res


def row(res: Results, label: str, f: Callable[[dict[str, Any]], str]) -> None:
    """One line of a table: the label, then gdb's and lldb's value."""
    print(f"  {label:<46}{f(res['gdb']):>14}{f(res['lldb']):>14}")


def print_full_diagnosis(res: Results, repeat: int) -> None:
    """The full diagnosis at the seed crash stop: cold, warm, and where its time goes."""
    g, lv = res["gdb"], res["lldb"]
    names = (g["seed-command"]["debugger"], lv["seed-command"]["debugger"])
    print(
        f"\nFull diagnosis at the seed crash stop (goal < 50 ms)      {names[0]:>14}{names[1]:>14}"
    )
    row(res, "frames at the stop", lambda r: str(r["seed-command"]["frames"]))
    row(
        res,
        "`spmi diagnose --json`, first call (cold)",
        lambda r: f"{r['seed-command']['command_cold']:.1f} ms",
    )
    row(
        res,
        "... first call, capstone + collection reader preloaded",
        lambda r: f"{r['seed-preloaded']['command_cold']:.1f} ms",
    )
    row(
        res,
        f"`spmi diagnose --json`, warm (median of {repeat})",
        lambda r: f"{statistics.median(r['seed-command']['command_warm']):.1f} ms",
    )
    row(
        res,
        "diagnose(full=True) + json.dumps, warm",
        lambda r: f"{statistics.median(r['seed-command']['direct_warm']):.1f} ms",
    )
    print("  where the time goes (ms): cold = first diagnosis at the stop, warm = median")
    cold = {d: res[d]["seed-sections-cold"]["sections_cold"] for d in res}
    warm = {d: median_sections(res[d]["seed-command"]["sections_warm"]) for d in res}
    for k, (cg, wg, cl, wl) in shown([cold["gdb"], warm["gdb"], cold["lldb"], warm["lldb"]], 0.5):
        print(f"    {k:<44}{cg:>7.2f}/{wg:<6.2f}{cl:>7.2f}/{wl:<6.2f}")
    print(
        f"    {'sum':<44}{sum(cold['gdb'].values()):>7.2f}/{sum(warm['gdb'].values()):<6.2f}"
        f"{sum(cold['lldb'].values()):>7.2f}/{sum(warm['lldb'].values()):<6.2f}"
    )
    buckets = {g["seed-command"]["bucket"], lv["seed-command"]["bucket"]}
    print(
        f"  bucket: {', '.join(sorted(buckets))}"
        + ("" if len(buckets) == 1 else "  (the debuggers DISAGREE)")
    )


def print_stack_overflow(res: Results) -> None:
    """The full diagnosis at the stack overflow, by sections."""
    print("\nFull diagnosis at a stack overflow (8 MB stack; the innermost 256 frames are read)")
    row(res, "frames at the stop", lambda r: str(r["so-sections-cold"]["frames"]))
    row(
        res,
        "diagnosis (by sections), first call",
        lambda r: f"{r['so-sections-cold']['total']:.0f} ms",
    )
    so_cold = {d: res[d]["so-sections-cold"]["sections_cold"] for d in res}
    for k, (sg, sl) in shown([so_cold["gdb"], so_cold["lldb"]], 10):
        print(f"    {k:<44}{sg:>11.0f} ms{sl:>11.0f} ms")


def print_quick_check(res: Results) -> None:
    """The quick check per first-chance stop, and the quick diagnosis alone by sections."""
    print(
        "\nQuick check per first-chance stop, policy.check_stop as the loops call it (goal < 2 ms)"
    )
    row(
        res,
        "stops (of which first-chance)",
        lambda r: (
            f"{len(r['fc-quick']['times'])} ({r['fc-quick']['kinds'].get('first-chance', 0)})"
        ),
    )
    row(res, "first stop", lambda r: f"{r['fc-quick']['times'][0]:.2f} ms")
    row(res, "median", lambda r: f"{statistics.median(r['fc-quick']['times']):.2f} ms")
    row(res, "p90", lambda r: f"{pct(r['fc-quick']['times'], 0.9):.2f} ms")
    row(res, "max", lambda r: f"{max(r['fc-quick']['times']):.2f} ms")
    row(res, "whole replay under the debugger (wall)", lambda r: f"{r['fc-quick']['wall']:.2f} s")
    row(
        res,
        "the quick diagnosis alone, median",
        lambda r: f"{statistics.median(r['fc-quick']['quick_times']):.2f} ms",
    )
    print("  the quick diagnosis: where its time goes (ms, median per stop)")
    qs = {d: median_sections(res[d]["fc-sections"]["sections"]) for d in res}
    for k, (qg, ql) in shown([qs["gdb"], qs["lldb"]], 0.05):
        print(f"    {k:<44}{qg:>14.3f}{ql:>14.3f}")
    print(f"    {'sum':<44}{sum(qs['gdb'].values()):>14.3f}{sum(qs['lldb'].values()):>14.3f}")


def print_verdicts(res: Results) -> None:
    """The two goals' lines and figures: the worse debugger counts."""
    g, lv = res["gdb"], res["lldb"]
    verdict_full = max(g["seed-command"]["command_cold"], lv["seed-command"]["command_cold"])
    verdict_quick = max(statistics.median(r["fc-quick"]["times"]) for r in (g, lv))
    print(
        f"\nfull diagnosis, worst cold: {verdict_full:.1f} ms: goal < 50 ms "
        f"{'met' if verdict_full < 50 else 'NOT met'}"
    )
    print(
        f"quick check, worst median: {verdict_quick:.2f} ms: goal < 2 ms "
        f"{'met' if verdict_quick < 2 else 'NOT met'}"
    )
    figure("full diagnosis, worst cold", verdict_full, "< 50", "ms")
    figure("quick check per stop, worst median", verdict_quick, "< 2", "ms")


def print_profiles(res: Results) -> None:
    """--profile: each debugger's cProfile of the cold full diagnosis and of the quick checks."""
    for dbg in ("gdb", "lldb"):
        print(
            f"\n--- cProfile, {res[dbg]['seed-command']['debugger']}: cold full diagnosis at "
            "the seed stop"
        )
        print(res[dbg]["seed-profile"]["profile"])
        print(
            f"\n--- cProfile, {res[dbg]['seed-command']['debugger']}: quick checks at "
            f"{len(res[dbg]['fc-profile']['times'])} first-chance stops"
        )
        print(res[dbg]["fc-profile"]["profile"])


def main() -> int:
    ap = arguments()
    a = ap.parse_args()
    if a.lldb_stage:
        lldb_stage(a.argv, a.lldb_stage, a.stage_out, a.repeat, a.stops)
        return 0
    a = parse(ap, quick={"repeat": 1, "stops": 3})
    seed, fc, so = collections(a.dir, a.stops)
    res = run_stages(a, seed, fc, so)
    print(
        f"spmi-replay -O2 -g; {seed.name} (seed crash at {SEED_N}), {fc.name}; capstone, cffi as "
        "installed"
    )
    print_full_diagnosis(res, a.repeat)
    if not a.no_stack_overflow:
        print_stack_overflow(res)
    print_quick_check(res)
    print_verdicts(res)
    if a.profile:
        print_profiles(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
