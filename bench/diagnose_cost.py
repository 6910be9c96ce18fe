#!/usr/bin/env python3
"""Cost of the diagnosis inside the debuggers (issue 4, "Performance"): goals < 50 ms for a full diagnosis
(`spmi diagnose --json`), < 2 ms for the quick first-chance check run at every stop the replay survives.

In one run (each stage in a fresh debugger, or a fresh process for lldb's in-process SB API, as run_lldb):
  - builds (once, cached in --dir) an arm64 sample collection with the seed crash (`seed-arm64`) at 150 of 200,
    and an x64 collection with a first-chance JIT fault (`jit-null`) at every other method context;
  - at the seed crash stop of spmi-replay (-O2 -g) `-a -target arm64 -bug 91257`: the time of
    `spmi diagnose --json` run as a debugger command (gdb.execute / SBCommandInterpreter.HandleCommand):
    the first call at the stop (cold: the debugger's lazy symbol reading and the Python imports are
    paid there) and warm repeats; diagnose(view, full=True) + json.dumps called directly; and the same
    steps diagnose() takes, timed one by one ("sections": where the time goes), cold and warm;
  - at each first-chance stop of the replay over the second collection: diagnose(view, full=False) as
    the run-to-the-fatal-stop loops do (GdbProcess()/LldbProcess() construction included), then the
    signal passed on; per-stop median/p90/max, and in a second run the same check by sections.
  --profile adds a cProfile of the cold full diagnosis and of the quick checks, in each debugger.

The sections replay diagnose()'s steps with its own (private) helpers: keep them in step with
spmi_dbg/analysis/diagnosis.py. Their sum is close to, not exactly, one diagnose() call.

  - the full diagnosis at a stack overflow (~21,000 frames with the default 8 MB stack), by sections: only
    the innermost OVERFLOW_FRAMES (256) are read, as diagnose() does.

Usage: bench/diagnose_cost.py [--dir /tmp/spmi-bench-diag] [--repeat 20] [--stops 100] [--profile]
                              [--no-stack-overflow]
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
from pathlib import Path
from typing import Any

from _common import ROOT, USER_ENV, native

BENCH = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


SEED_N = 150
LLDB_SERVER = "/usr/lib/llvm-16/bin/lldb-server"


# ------------------------------------------------------------------------------------ measuring (any debugger)

class Sections:
    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self._t = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.times[name] = self.times.get(name, 0.0) + (now - self._t) * 1e3
        self._t = now


def diagnose_by_sections(process: Any, full: bool) -> dict[str, float]:
    """diagnose(process, full=...) step by step (spmi_dbg/analysis/diagnosis.py), each step timed in ms."""
    from spmi_dbg.analysis import asserts
    from spmi_dbg.analysis import diagnosis as D
    from spmi_dbg.analysis import frames as F
    from spmi_dbg.analysis.facts import Diagnosis, FrameInfo, MethodContextFact
    from spmi_dbg.analysis.instruction import decode
    from spmi_dbg.analysis.mcnumber import find_method_context
    from spmi_dbg.analysis.nullmap import find_null_map
    from spmi_dbg.analysis.signature import signature
    from spmi_dbg.replay import parse_command

    t = Sections()
    sig = process.signal()
    t("signal info")
    thread = process.selected_thread()
    overflow = full and sig is not None and D.stack_overflow(process, sig)
    limit = D.OVERFLOW_FRAMES if overflow else (None if full else D.QUICK_FRAMES)
    frames = thread.frames(limit) if thread is not None else []
    t("unwind (frame list)")
    argv = process.argv()
    cmd = parse_command(argv) if argv else None
    t("argv + command line")
    module = D._faulting_module(process, frames, cmd.jits if cmd else [], argv[0] if argv else None)
    t("faulting module")
    handling = D._handling(process, sig, frames, module)
    t("handling (first/second chance)")
    found, _ = find_method_context(frames)
    t("method context (stack)")
    if full and found is not None and cmd is not None and cmd.input:
        D._add_collection_facts(MethodContextFact(found.number, found.source), cmd.input, [])
        t("method context (collection: name, IL size)")
    nm = find_null_map(process, frames, sig.address if sig else None)
    t("null map")
    insn = decode(process, frames[0].pc) if (full and frames) else None
    t("instruction (capstone)")
    assertion = asserts.from_frames(process, frames)
    t("assert text")
    infos = [FrameInfo(i, F.short_name(f.function), f.file, f.line, f.module, f.inlined)
             for i, f in enumerate(frames)]
    t("frame list (file, line, module)")
    folded = F.fold(frames)
    d = Diagnosis(D.SCHEMA_VERSION, process.debugger, process.arch, None, handling, module, None, nm, insn,
                  assertion, infos, [f.name for f in folded], [f.name for f in folded if not f.inlined])
    d.signature, d.bucket = signature(d)
    t("fold + signature")
    if full:  # the quick check's result is not serialised by the loops (only a few fields are kept)
        json.dumps(d.to_json())
        t("json")
    return t.times


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


def seed_stage(process_factory: Callable[[], Any], command: Callable[[str], str], mode: str,
               repeat: int) -> dict[str, Any]:
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
        out["sections_warm"] = [diagnose_by_sections(process_factory(), True) for _ in range(repeat)]
    elif mode == "seed-preloaded":
        # What the first call would cost if the extension imported its lazy dependencies when it is loaded
        # (before any stop) instead of at the first diagnosis.
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
        out["profile"] = profile_text(lambda: json.dumps(diagnose(process_factory(), full=True).to_json()))
    return out


def first_chance_loop(process_factory: Callable[[], Any], resume: Callable[[str], None],
                      alive: Callable[[], bool], mode: str, max_stops: int) -> dict[str, Any]:
    """At each stop: the quick check (timed), then the signal passed on, as the driver's loops do."""
    import cProfile

    from spmi_dbg.analysis import diagnose

    times: list[float] = []
    sections: list[dict[str, float]] = []
    kinds: dict[str, int] = {}
    prof = cProfile.Profile() if mode == "fc-profile" else None
    while alive() and len(times) < max_stops:
        if mode == "fc-sections":
            sections.append(diagnose_by_sections(process_factory(), False))
            quick = diagnose(process_factory(), full=False)  # for the kind and signal only, not timed
            times.append(sum(sections[-1].values()))
        else:
            if prof is not None:
                prof.enable()
            t0 = time.perf_counter()
            quick = diagnose(process_factory(), full=False)
            times.append(ms_since(t0))
            if prof is not None:
                prof.disable()
        kinds[quick.handling["kind"]] = kinds.get(quick.handling["kind"], 0) + 1
        if quick.handling["kind"] not in ("first-chance", "debug-break") or quick.signal is None:
            break
        resume(quick.signal["name"])
    out: dict[str, Any] = {"times": times, "kinds": kinds}
    if sections:
        out["sections"] = sections
    if prof is not None:
        import io
        import pstats

        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(18)
        lines = s.getvalue().splitlines()
        start = next((i for i, line in enumerate(lines) if line.strip().startswith("ncalls")), 0)
        out["profile"] = "\n".join(line.replace(str(ROOT) + "/", "") for line in lines[start:] if line.strip())
    return out


# ------------------------------------------------------------------------------------ inside gdb

def gdb_stage(mode: str, out_path: str, repeat: int, max_stops: int) -> None:
    """Runs in gdb's Python (after `run` reached the first stop)."""
    import gdb

    from spmi_dbg.gdb.view import GdbProcess

    def alive() -> bool:
        inf = gdb.selected_inferior()
        return bool(inf.pid) and bool(inf.threads())

    if not mode.startswith("fc-"):
        res = seed_stage(GdbProcess, lambda c: str(gdb.execute(c, to_string=True)), mode, repeat)
    else:
        res = first_chance_loop(GdbProcess, lambda s: gdb.execute("signal " + s, to_string=True), alive, mode,
                                max_stops)
    res["debugger"] = f"gdb {gdb.VERSION.split()[0]}"
    Path(out_path).write_text(json.dumps(res))


def run_gdb_stage(argv: list[str], mode: str, out: Path, repeat: int, max_stops: int) -> dict[str, Any]:
    from spmi_dbg.driver.loader import gdbinit_line

    call = (f"import sys; sys.path.insert(0, {str(BENCH)!r}); import diagnose_cost; "
            f"diagnose_cost.gdb_stage({mode!r}, {str(out)!r}, {repeat}, {max_stops})")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "replay.out"
        cmd = ["gdb", "-q", "-nx", "-batch", "-iex", "set auto-load off", "-ex", "set pagination off",
               "-ex", "set confirm off", "-ex", gdbinit_line(),
               "-ex", "run " + " ".join(shlex.quote(a) for a in argv[1:]) + f" > {log} 2>&1 < /dev/null",
               "-ex", "python " + call, "-ex", "kill", argv[0]]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                           env=USER_ENV)
    if not out.exists():
        raise SystemExit(f"gdb stage {mode} failed:\n{(r.stdout + r.stderr)[-3000:]}")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


# ------------------------------------------------------------------------------------ lldb (SB API, in-process)

def lldb_stage(argv: list[str], mode: str, out_path: str, repeat: int, max_stops: int) -> None:
    """Runs in a fresh process of this script: lldb through its SB API, as run_lldb does."""
    from spmi_dbg.driver.lldb_session import LldbSession

    with tempfile.TemporaryDirectory() as tmp:
        session = LldbSession(argv, Path(tmp) / "stdout", Path(tmp) / "stderr")
        import lldb

        from spmi_dbg.lldb.view import LldbProcess

        try:
            def factory() -> Any:
                return LldbProcess(session.target)

            if not mode.startswith("fc-"):
                interp = session.debugger.GetCommandInterpreter()
                loaded = lldb.SBCommandReturnObject()
                interp.HandleCommand("command script import spmi_dbg.lldb", loaded)
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
                res = first_chance_loop(factory, lambda s: session.resume(),
                                        lambda: session.state().state == "stopped", mode, max_stops)
            m = lldb.SBDebugger.GetVersionString().split()
            res["debugger"] = f"lldb {m[2] if len(m) > 2 else '?'}"
        finally:
            session.kill()
    Path(out_path).write_text(json.dumps(res))


def run_lldb_stage(argv: list[str], mode: str, out: Path, repeat: int, max_stops: int) -> dict[str, Any]:
    env = dict(USER_ENV, LLDB_DEBUGSERVER_PATH=os.environ.get("LLDB_DEBUGSERVER_PATH", LLDB_SERVER))
    r = subprocess.run([sys.executable, __file__, "--lldb-stage", mode, "--stage-out", str(out),
                        "--repeat", str(repeat), "--stops", str(max_stops), "--", *argv],
                       capture_output=True, text=True, timeout=600, env=env)
    if not out.exists():
        raise SystemExit(f"lldb stage {mode} failed:\n{(r.stdout + r.stderr)[-3000:]}")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


# ------------------------------------------------------------------------------------ driver



def collections(root: Path, stops: int) -> tuple[Path, Path, Path]:
    from spmi_dbg.sample.build import build

    root.mkdir(parents=True, exist_ok=True)
    seed = root / "seed-200.mch"
    if not seed.exists():
        build(seed, methods=200, seed=2, arch="arm64", injections=[("seed-arm64", SEED_N)])
    fc = root / f"jit-null-{stops}.mch"
    if not fc.exists():
        build(fc, methods=2 * stops, seed=1, injections=[("jit-null", 2 * i) for i in range(1, stops + 1)])
    so = root / "stack-overflow-10.mch"
    if not so.exists():
        build(so, methods=10, seed=1, injections=[("stack-overflow", 5)])
    return seed, fc, so


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def median_sections(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return {k: statistics.median(r.get(k, 0.0) for r in rows) for k in keys}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp/spmi-bench-diag", help="where the collections are cached")
    ap.add_argument("--repeat", type=int, default=20, help="warm repeats at the seed stop")
    ap.add_argument("--stops", type=int, default=100, help="first-chance stops for the quick check")
    ap.add_argument("--profile", action="store_true", help="also print cProfile output")
    ap.add_argument("--no-stack-overflow", action="store_true",
                    help="skip the full diagnosis at a stack overflow (~21,000 frames: seconds)")
    ap.add_argument("--lldb-stage", help=argparse.SUPPRESS)
    ap.add_argument("--stage-out", help=argparse.SUPPRESS)
    ap.add_argument("argv", nargs="*", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.lldb_stage:
        lldb_stage(a.argv, a.lldb_stage, a.stage_out, a.repeat, a.stops)
        return 0

    replay, base, diff = native("bin/spmi-replay"), native("jit/libsamplejit_base.so"), \
        native("jit/libsamplejit_diff.so")
    seed, fc, so = collections(Path(a.dir), a.stops)
    seed_argv = [replay, "-a", "-target", "arm64", "-bug", "91257", base, diff, str(seed)]
    fc_argv = [replay, base, str(fc)]
    so_argv = [replay, base, str(so)]
    modes = ["seed-command", "seed-sections-cold", "seed-preloaded", "fc-quick", "fc-sections"]
    if not a.no_stack_overflow:
        modes.append("so-sections-cold")
    if a.profile:
        modes += ["seed-profile", "fc-profile"]
    res: dict[str, dict[str, Any]] = {"gdb": {}, "lldb": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for dbg, runner in (("gdb", run_gdb_stage), ("lldb", run_lldb_stage)):
            for mode in modes:
                argv = {"seed": seed_argv, "fc": fc_argv, "so": so_argv}[mode.split("-")[0]]
                t0 = time.perf_counter()
                res[dbg][mode] = runner(argv, mode, Path(tmp) / f"{dbg}-{mode}.json", a.repeat, a.stops)
                res[dbg][mode]["wall"] = time.perf_counter() - t0

    g, lv = res["gdb"], res["lldb"]
    names = (g["seed-command"]["debugger"], lv["seed-command"]["debugger"])

    def row(label: str, f: Callable[[dict[str, Any]], str]) -> None:
        print(f"  {label:<46}{f(g):>14}{f(lv):>14}")

    print(f"spmi-replay -O2 -g; {seed.name} (seed crash at {SEED_N}), {fc.name}; capstone, cffi as installed")
    print(f"\nFull diagnosis at the seed crash stop (goal < 50 ms)      {names[0]:>14}{names[1]:>14}")
    row("frames at the stop", lambda r: str(r["seed-command"]["frames"]))
    row("`spmi diagnose --json`, first call (cold)", lambda r: f"{r['seed-command']['command_cold']:.1f} ms")
    row("... first call, capstone + collection reader preloaded",
        lambda r: f"{r['seed-preloaded']['command_cold']:.1f} ms")
    row(f"`spmi diagnose --json`, warm (median of {a.repeat})",
        lambda r: f"{statistics.median(r['seed-command']['command_warm']):.1f} ms")
    row("diagnose(full=True) + json.dumps, warm",
        lambda r: f"{statistics.median(r['seed-command']['direct_warm']):.1f} ms")
    print("  where the time goes (ms): cold = first diagnosis at the stop, warm = median")
    cold = {d: res[d]["seed-sections-cold"]["sections_cold"] for d in res}
    warm = {d: median_sections(res[d]["seed-command"]["sections_warm"]) for d in res}
    for k in cold["gdb"]:
        print(f"    {k:<44}{cold['gdb'][k]:>7.2f}/{warm['gdb'].get(k, 0):<6.2f}"
              f"{cold['lldb'].get(k, 0):>7.2f}/{warm['lldb'].get(k, 0):<6.2f}")
    print(f"    {'sum':<44}{sum(cold['gdb'].values()):>7.2f}/{sum(warm['gdb'].values()):<6.2f}"
          f"{sum(cold['lldb'].values()):>7.2f}/{sum(warm['lldb'].values()):<6.2f}")
    buckets = {g["seed-command"]["bucket"], lv["seed-command"]["bucket"]}
    print(f"  bucket: {', '.join(sorted(buckets))}" + ("" if len(buckets) == 1 else "  (the debuggers DISAGREE)"))

    if not a.no_stack_overflow:
        print("\nFull diagnosis at a stack overflow (8 MB stack; the innermost 256 frames are read)")
        row("frames at the stop", lambda r: str(r["so-sections-cold"]["frames"]))
        row("diagnosis (by sections), first call", lambda r: f"{r['so-sections-cold']['total']:.0f} ms")
        so_cold = {d: res[d]["so-sections-cold"]["sections_cold"] for d in res}
        for k in so_cold["gdb"]:
            if max(so_cold["gdb"][k], so_cold["lldb"].get(k, 0)) >= 20:
                print(f"    {k:<44}{so_cold['gdb'][k]:>11.0f} ms{so_cold['lldb'].get(k, 0):>11.0f} ms")

    print("\nQuick check per first-chance stop, diagnose(full=False) (goal < 2 ms)")
    row("stops (of which first-chance)",
        lambda r: f"{len(r['fc-quick']['times'])} ({r['fc-quick']['kinds'].get('first-chance', 0)})")
    row("first stop", lambda r: f"{r['fc-quick']['times'][0]:.2f} ms")
    row("median", lambda r: f"{statistics.median(r['fc-quick']['times']):.2f} ms")
    row("p90", lambda r: f"{pct(r['fc-quick']['times'], 0.9):.2f} ms")
    row("max", lambda r: f"{max(r['fc-quick']['times']):.2f} ms")
    row("whole replay under the debugger (wall)", lambda r: f"{r['fc-quick']['wall']:.2f} s")
    print("  where the time goes (ms, median per stop)")
    qs = {d: median_sections(res[d]["fc-sections"]["sections"]) for d in res}
    for k in qs["gdb"]:
        print(f"    {k:<44}{qs['gdb'][k]:>14.3f}{qs['lldb'].get(k, 0):>14.3f}")
    print(f"    {'sum':<44}{sum(qs['gdb'].values()):>14.3f}{sum(qs['lldb'].values()):>14.3f}")

    verdict_full = max(g["seed-command"]["command_cold"], lv["seed-command"]["command_cold"])
    verdict_quick = max(statistics.median(r["fc-quick"]["times"]) for r in (g, lv))
    print(f"\nfull diagnosis, worst cold: {verdict_full:.1f} ms: goal < 50 ms "
          f"{'met' if verdict_full < 50 else 'NOT met'}")
    print(f"quick check, worst median: {verdict_quick:.2f} ms: goal < 2 ms "
          f"{'met' if verdict_quick < 2 else 'NOT met'}")
    if a.profile:
        for dbg in ("gdb", "lldb"):
            print(f"\n--- cProfile, {res[dbg]['seed-command']['debugger']}: cold full diagnosis at the seed stop")
            print(res[dbg]["seed-profile"]["profile"])
            print(f"\n--- cProfile, {res[dbg]['seed-command']['debugger']}: quick checks at "
                  f"{len(res[dbg]['fc-profile']['times'])} first-chance stops")
            print(res[dbg]["fc-profile"]["profile"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
