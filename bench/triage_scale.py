#!/usr/bin/env python3
"""Triage at scale (issue 15): three Arm64 collections, 600,000 method contexts in all, 30 crashes
of 4 kinds (the near differ's null CompileMethod map of dotnet/runtime#91257, a poisoned abort, a
stack overflow, and two hangs, every --hang-every'th crash (15); --timeout 5, well above a
partition's replay, is each hang's length), asm diffs `-a -target arm64 -bug 91257`. In one run:

  - native: spmi-replay over the three crash-free twins of the collections (same records, no
    injections: the injections leave every other record byte-identical), one process: the native
    methods/s;
  - `spmi-dbg triage` of the crash-free twins and of the collections with crashes, each on this
    machine (`--workers 2`, threads) and on a dask cluster started here (`dask scheduler` and two
    `dask worker
    --nthreads 1` processes on 127.0.0.1, `--scheduler`), bundles off (`--failure missing`: the
    replay part is what scales out);
  - an embedded dask LocalCluster's start and one task, for the choice of the local engine.

Prints:
  - the ratio cluster / local, wall time of the triage with crashes (goal <= 1.15);
  - the cost per extra crash: worker-seconds added by the 30 crashes (replay time with crashes minus
    the crash- free twin's, times the workers) less the hangs' --timeout, per crash (goal <= 0.15
    s); and for comparison the same measured on one partition (--session-methods, 5,000) with a
    fresh debugger per crash and with the session run again (--session-crashes, 10);
  - the efficiency methods/s / (workers x native methods/s) of each triage (goal >= 0.85), methods/s
    over the replay part (triage.json `replay_seconds`: the plan and the partitions, from the engine
    being ready; the engine's start -- importing dask.distributed and connecting, a fixed cost -- is
    printed apart);
  - the measured per-task overhead of the cluster and the debugger session start per partition, and
    from them a projection for 10 and 100 machines (2 workers each).

Each triage (and each native replay) runs --repeat times (default 2) and the better run counts: on a
shared 2-CPU machine one run's worker-seconds vary by about a second.

--quick (CI, seconds; not a measurement): --methods 3000 --crashes 6 --hang-every 6 --timeout 1
--repeat 1
--session-methods 1000 --session-crashes 3, the same runs and lines (every kind of crash, one hang).

Usage: bench/triage_scale.py [--quick] [--methods 600000] [--crashes 30] [--hang-every 15]
                             [--timeout 5] [--repeat 2] [--session-methods 5000] [--session-crashes
                             10] [--dir /tmp/spmi-bench]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import (
    ROOT,
    cached_collection,
    common_arguments,
    figure,
    load,
    native,
    parse,
    run_dir,
    timed,
    warm,
)

from spmi_dbg import paths
from spmi_dbg.driver.request import ReplayRequest

OPTIONS = ["-a", "-target", "arm64", "-bug", "91257"]
NAMES = ("libraries.pmi", "benchmarks", "coreclr_tests")
WORKERS = 2
# methods/s of one real superpmi asm-diffs process in dotnet/runtime#91257's log
# (docs/superpmi-conventions.md 1.2): for the projection at a real replay's speed
SUPERPMI_RATE = 465
# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^ratio cluster / local \(wall, with crashes\): [\d.]+  \(goal <= 1\.15\)$",
    r"^cost per extra crash \(local\): -?[\d.]+ worker-s  \(goal <= 0\.15; ",
    r"^cost per extra crash \(dask\): -?[\d.]+ worker-s  \(goal <= 0\.15; ",
    r"^efficiency local clean: [\d.]+  \(goal >= 0\.85; ",
    r"^efficiency dask crashes: [\d.]+  \(goal >= 0\.85; ",
]


def injections(methods: int, crashes: int, index: int, hang_every: int) -> list[tuple[str, int]]:
    """Crashes spread evenly over the three collections (this one's share), kinds in turn: seed,
    abort (a poison record just before), stack overflow; every hang_every'th a hang (the 15th and
    the 30th)."""
    mine = [i for i in range(crashes) if i % len(NAMES) == index]
    step = methods // (len(mine) + 1)
    out: list[tuple[str, int]] = []
    for k, i in enumerate(mine):
        at = step * (k + 1)
        kind = (
            "hang"
            if i % hang_every == hang_every - 1
            else ("seed-arm64", "poison-crash", "stack-overflow")[i % 3]
        )
        if kind == "poison-crash":
            out.append(("poison", at - 5))
        out.append((kind, at))
    return out


def collections(
    directory: Path, methods: int, crashes: int, hang_every: int
) -> tuple[Path, Path, int]:
    with_crashes = (
        directory / f"scale-{methods}-{crashes}{'' if hang_every == 15 else f'-h{hang_every}'}"
    )
    clean = directory / f"scale-{methods}-clean"
    hangs = 0
    for d in (with_crashes, clean):
        d.mkdir(parents=True, exist_ok=True)
    per = methods // len(NAMES)
    for i, name in enumerate(NAMES):
        inj = injections(per, crashes, i, hang_every)
        hangs += sum(1 for k, _ in inj if k == "hang")
        cached_collection(
            with_crashes / f"{name}.mch", methods=per, seed=40 + i, arch="arm64", injections=inj
        )
        cached_collection(clean / f"{name}.mch", methods=per, seed=40 + i, arch="arm64")
    return with_crashes, clean, hangs


def triage(
    mch_dir: Path, out: Path, timeout: float, limit: float | None, *extra: str
) -> tuple[float, dict[str, Any]]:
    """One `spmi-dbg triage` (killed after `limit` seconds: a cluster whose workers died waits for
    them)."""
    replay, base, diff = native(paths.REPLAY), native(paths.BASE_JIT), native(paths.DIFF_JIT)
    try:
        wall, r = timed(
            [
                sys.executable,
                "-m",
                "spmi_dbg",
                "triage",
                "--mch",
                str(mch_dir),
                "--timeout",
                f"{timeout:g}",
                "--failure",
                "missing",
                "--verify-runs",
                "0",
                "--out",
                str(out),
                *extra,
                "--",
                replay,
                *OPTIONS,
                base,
                diff,
            ],
            timeout=limit,
        )
    except subprocess.TimeoutExpired:
        log = out.parent / "dask.log"
        raise SystemExit(
            f"triage {' '.join(extra)} did not finish in {limit:g} s (--run-timeout)"
            + (f"; the cluster's log ends:\n{log.read_text()[-2000:]}" if log.exists() else "")
        ) from None
    if r.returncode not in (0, 2):
        raise SystemExit(
            f"triage {' '.join(extra)} failed (exit {r.returncode}): {r.stderr[-1500:]}"
        )
    return wall, json.loads((out / "triage.json").read_text())


def busy(out: Path) -> float:
    """Worker-seconds the partitions' tasks took (their journals' `seconds`)."""
    return sum(
        float(json.loads(p.read_text())["seconds"])
        for p in (out / "partitions").glob("p[0-9]*.json")
    )


def session_starts(out: Path) -> list[float]:
    """Each partition's first replay: the debugger session's start to the replay running."""
    starts = []
    for p in (out / "partitions").glob("p[0-9]*.json"):
        segs = json.loads(p.read_text())["segments"]
        if segs and segs[0]["debugger_startup_seconds"] is not None:
            starts.append(float(segs[0]["debugger_startup_seconds"]))
    return starts


def per_crash_session_vs_fresh(directory: Path, methods: int, crashes: int) -> tuple[float, float]:
    """One partition of `methods` with `crashes` crashes (seed kind, spread evenly), replayed past
    each: seconds per crash with a fresh debugger per crash vs the same session run again (slope
    over the clean replay of the same records)."""
    from spmi_dbg.driver.select import pick

    step = methods // (crashes + 1)
    mch = cached_collection(
        directory / f"scale-session-{methods}-{crashes}.mch",
        methods=methods,
        seed=9,
        arch="arm64",
        injections=[("seed-arm64", step * (i + 1)) for i in range(crashes)],
    )
    replay, base, diff = native(paths.REPLAY), native(paths.BASE_JIT), native(paths.DIFF_JIT)
    driver = pick("gdb")
    costs = []
    with tempfile.TemporaryDirectory() as t:
        w = Path(t)
        for fresh in (True, False):
            session = driver.session(w / "s.log")
            start, first, crashes = 1, None, 0
            t0 = time.perf_counter()
            while True:
                argv = [replay, *OPTIONS, "-c", f"{start}-{methods}", base, diff, str(mch)]
                if fresh:
                    o = driver.run_replay(
                        ReplayRequest(tuple(argv), 60, w / "o", w / "e", w / "f.log")
                    )
                else:
                    o = session.run(ReplayRequest(tuple(argv), 60, w / "o", w / "e"))
                first = first if first is not None else time.perf_counter() - t0
                if o.kind != "fatal" or o.method_context is None:
                    break
                crashes += 1
                start = o.method_context + 1
            total = time.perf_counter() - t0
            session.close()
            clean_t, _ = timed([replay, *OPTIONS, base, diff, str(mch)])
            costs.append((total - first - clean_t) / max(1, crashes))
    return costs[0], costs[1]


def local_cluster_cost() -> float:
    """An embedded LocalCluster (2 worker processes, 1 thread each): its start and one trivial
    task."""
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    with (
        LocalCluster(
            n_workers=WORKERS, threads_per_worker=1, processes=True, dashboard_address=None
        ) as lc,
        Client(lc) as c,
    ):
        c.submit(sum, [1, 2], pure=False).result()
        return time.perf_counter() - t0


def task_overhead(address: str, n: int = 200) -> float:
    """Seconds per task of the cluster's round trip (submit, schedule, run a no-op, gather), n tasks
    at once."""
    from distributed import Client

    with Client(address, set_as_default=False) as c:
        t0 = time.perf_counter()
        c.gather([c.submit(abs, -i, pure=False) for i in range(n)])
        return (time.perf_counter() - t0) / n * WORKERS


def arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--methods", type=int, default=600_000)
    ap.add_argument("--crashes", type=int, default=30)
    ap.add_argument(
        "--hang-every", type=int, default=15, help="every N'th crash is a hang (default 15)"
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        help="triage --timeout: each hang's length (default 5)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="runs of each triage; the better one counts (default 2)",
    )
    ap.add_argument(
        "--run-timeout",
        type=float,
        default=None,
        help="seconds one triage may take (none; quick 60)",
    )
    ap.add_argument(
        "--session-methods",
        type=int,
        default=5000,
        help="the one-partition comparison's collection",
    )
    ap.add_argument("--session-crashes", type=int, default=10, help="... and its crashes")
    common_arguments(ap)
    return parse(
        ap,
        quick={
            "methods": 3000,
            "crashes": 6,
            "hang_every": 6,
            "timeout": 1.0,
            "repeat": 1,
            "session_methods": 1000,
            "session_crashes": 3,
            "run_timeout": 60.0,
        },
    )


def native_rate(a: argparse.Namespace, clean: Path) -> float:
    """The native methods/s: the crash-free twins replayed in one process each (the better of
    a.repeat runs, as for the triages)."""
    replay, base, diff = native(paths.REPLAY), native(paths.BASE_JIT), native(paths.DIFF_JIT)
    native_s = 0.0
    for f in sorted(clean.glob("*.mch")):  # the better of a.repeat runs, as for the triages
        native_s += min(timed([replay, *OPTIONS, base, diff, str(f)])[0] for _ in range(a.repeat))
    rate = a.methods / native_s
    print(
        f"  native replay of the crash-free twins, one process: {native_s:.2f} s, {rate:,.0f} "
        "methods/s"
    )
    return rate


@dataclass
class Triages:
    """Each triage's better run (wall seconds, triage.json) and its worker-seconds, by name
    ("local clean", "dask crashes", ...); the local triage with crashes' debugger session starts;
    the cluster's per-task overhead."""

    results: dict[str, tuple[float, dict[str, Any]]] = field(default_factory=dict)
    worker_s: dict[str, float] = field(default_factory=dict)
    starts: list[float] = field(default_factory=list)
    overhead: float = 0.0


def run_triages(a: argparse.Namespace, crashy: Path, clean: Path) -> Triages:
    """The triages of the twins and of the collections with crashes, on this machine and on a dask
    cluster started here; the cluster's per-task overhead."""
    sys.path.insert(0, str(ROOT))
    from tests.support.cluster import cluster

    out = Triages()
    with run_dir(a.dir) as t:
        tmp = Path(t)

        def best(name: str, mch: Path, *extra: str) -> None:
            """The better of a.repeat runs (by wall time; its worker-seconds by the same rule)."""
            for k in range(a.repeat):
                run_out = tmp / f"{name.replace(' ', '-')}-{k}"
                run = triage(mch, run_out, a.timeout, a.run_timeout, *extra)
                if name not in out.results or run[0] < out.results[name][0]:
                    out.results[name], out.worker_s[name] = run, busy(run_out)
                    if name == "local crashes":
                        out.starts[:] = session_starts(run_out)

        for label, mch in (("clean", clean), ("crashes", crashy)):
            best(f"local {label}", mch, "--workers", str(WORKERS))
        with cluster(tmp, workers=WORKERS) as c:
            for label, mch in (("clean", clean), ("crashes", crashy)):
                best(f"dask {label}", mch, "--scheduler", c.address)
            out.overhead = task_overhead(c.address)
    return out


def print_triages(a: argparse.Namespace, tr: Triages, rate: float) -> None:
    """Each triage's line, then the ratio cluster / local (the two must find the same buckets)."""
    for name, (wall, data) in tr.results.items():
        found = len(data["crashes"])
        eff = a.methods / data["replay_seconds"] / (WORKERS * rate)
        print(
            f"  {name:14s}: {wall:6.2f} s wall, engine start {data['engine_seconds']:.2f} s, "
            "replay "
            f"{data['replay_seconds']:6.2f} s, {data['engine']['partitions']} partitions "
            f"({tr.worker_s[name]:.2f} "
            f"worker-s), {found} crashes in {len(data['buckets'])} buckets; efficiency {eff:.2f}"
        )
    lw, ld = tr.results["local crashes"]
    dw, dd = tr.results["dask crashes"]
    if {b["bucket"] for b in ld["buckets"]} != {b["bucket"] for b in dd["buckets"]}:
        raise SystemExit("the cluster's buckets differ from the local ones")
    print(f"ratio cluster / local (wall, with crashes): {dw / lw:.3f}  (goal <= 1.15)")
    figure("triage: cluster / local (wall, with crashes)", dw / lw, "<= 1.15", "x")


def crash_costs(a: argparse.Namespace, tr: Triages, hangs: int) -> dict[str, float]:
    """The cost per extra crash of each engine, against one partition's with a fresh debugger per
    crash and with the session run again."""
    fresh, session = per_crash_session_vs_fresh(a.dir, a.session_methods, a.session_crashes)
    costs = {}
    for engine in ("local", "dask"):
        added = tr.worker_s[f"{engine} crashes"] - tr.worker_s[f"{engine} clean"]
        costs[engine] = per = (added - hangs * a.timeout) / a.crashes
        figure(
            f"triage: cost per extra crash ({engine})",
            per,
            "<= 0.15",
            "worker-s",
            f"{added:.2f} worker-s more with {a.crashes} crashes; one partition's crash costs "
            f"{session:.3f} s with its session run again ({fresh:.3f} s with a fresh debugger)",
        )
        print(
            f"cost per extra crash ({engine}): {per:.3f} worker-s  (goal <= 0.15; the partitions' "
            "tasks took "
            f"{added:.2f} worker-s more with {a.crashes} crashes, less {hangs} x --timeout)"
        )
    print(
        f"  one partition, {a.session_crashes} crashes: {fresh:.3f} s per crash with a fresh "
        "debugger each, "
        f"{session:.3f} s with the session run again"
    )
    return costs


def print_efficiencies(a: argparse.Namespace, tr: Triages, rate: float) -> None:
    for name in ("local clean", "dask clean", "local crashes", "dask crashes"):
        data = tr.results[name][1]
        with_start = (
            a.methods / (data["replay_seconds"] + data["engine_seconds"]) / (WORKERS * rate)
        )
        print(
            f"efficiency {name}: {a.methods / data['replay_seconds'] / (WORKERS * rate):.3f}  "
            f"(goal >= 0.85; {with_start:.3f} with the engine's start)"
        )


def engine_costs(tr: Triages) -> float:
    """An embedded LocalCluster's start, the cluster's per-task overhead and the debugger session's
    start per partition (returned)."""
    lc = local_cluster_cost()
    start = sum(tr.starts) / len(tr.starts) if tr.starts else 0.0
    print(
        f"embedded LocalCluster: {lc:.2f} s to start and run one task (the local engine, threads, "
        "starts none)"
    )
    print(
        f"per-task overhead: cluster round trip {tr.overhead * 1000:.1f} ms per worker; debugger "
        "session start "
        f"{start:.2f} s per partition"
    )
    return start


def projections(
    a: argparse.Namespace, rate: float, overhead: float, start: float, crash_cost: float
) -> None:
    """The wall time and efficiency on 10 and 100 machines, at this core's speed and at a real
    superpmi's."""
    for label, r in (("this replay core", rate), (f"superpmi at {SUPERPMI_RATE}/s", SUPERPMI_RATE)):
        for machines in (10, 100):
            w = machines * WORKERS
            for methods in (a.methods, 2_500_000):
                parts = 2 * w
                work = methods / r
                wall = (work + parts * (overhead + start) + a.crashes * crash_cost) / w
                print(
                    f"projection, {label}, {machines} machines x {WORKERS} workers, {methods:,} "
                    f"methods, {parts} "
                    f"partitions: {wall:8.1f} s, efficiency {work / w / wall:.2f}"
                )


def main() -> int:
    a = arguments()
    crashy, clean, hangs = collections(a.dir, a.methods, a.crashes, a.hang_every)
    print(
        f"{os.cpu_count()} CPUs, load {load()}; {a.methods} Arm64 method contexts in {len(NAMES)} "
        "collections, "
        f"{a.crashes} crashes ({hangs} of them hangs, --timeout {a.timeout:g}), "
        f"`{' '.join(OPTIONS)}`, "
        f"{WORKERS} workers"
    )
    for f in [*crashy.glob("*.mch"), *clean.glob("*.mch")]:
        warm(f)
    rate = native_rate(a, clean)
    tr = run_triages(a, crashy, clean)
    print_triages(a, tr, rate)
    costs = crash_costs(a, tr, hangs)
    print_efficiencies(a, tr, rate)
    start = engine_costs(tr)
    projections(a, rate, tr.overhead, start, max(0.0, costs["dask"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
