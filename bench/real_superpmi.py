#!/usr/bin/env python3
"""The real superpmi (issue 19 item 8): spmi-dbg on .NET Core 3.1.23's superpmi, Checked JIT and
collections (../shared/real-superpmi/README.md), against the same tools run natively. R is the real
build $SPMI_DBG_REAL_SUPERPMI names (the reference layout: bin/, collections/); without one it exits
1 saying so (the repository holds no build).

In one run (each phase timed with time.monotonic, once unless said otherwise, in this order):

  0. discovery (not counted anywhere): where `superpmi -jitoption JitStress=1
     R/bin/libclrjit_checked.so R/collections/api.mch` dies natively, crash after crash: each run is
     `stdbuf -oL superpmi -v d -c N+1-END` and the crash is the method context after its last
     `Method N compiled` line (stdout line-buffered, so a death loses nothing). It gives the
     crash-free selection of phases 1 (deep) and 2.
  1. the null-map crash, `spmi-dbg repro --workers W` vs the native replay of the same command to
     its death: shallow: `superpmi -c 2000-5514 R/bin/libclrjit_checked.so
       R/collections/api-reljit.mch` (dies at 2000, MethodContext::repGetMethodSig, no GetMethodSig
       map). The native replay dies at the first record of the range, in a few hundredths of a
       second, so this ratio has no goal: it is the debugger's fixed cost. (The repro's partitions
       race: the first crash in time wins, which on 2 workers can be 3758 of the second partition,
       the same bucket; the line says so when it is not the native replay's crash.) api-reljit.mch
       has no deep crash with the Checked JIT: 4,259 of its 5,514 method contexts crash, the first
     at 2, never more than 8 apart (found with the same loop as phase 0). deep (the goal, repro /
       native <= 0.75 on 2 workers: parallel locate pays for the debugger): the JitStress=1 command
       on api.mch with `-c` naming every method context up to the last crash that does not crash
       natively, then that last crash (MethodContext::repGetGSCookie, no GetGSCookie map): the
       native replay compiles ~5,400 methods before it dies.
  1b. a user's scale (issue 29 item 3): a collection of 10 copies of api.mch's records that do
     not crash with JitStress=1, then the record of its last crash (54,601 method contexts, the
     native replay dies at the end after ~27 s): `spmi-dbg repro --workers W` cold (gdb's index
     cache emptied) and warm, vs the native replay to the crash (goal, warm: <= 0.6).
  2. triage of the JitStress=1 command (the whole collection) vs its native replay to the end:
     superpmi dies at each crash, so natively the end is reached by the loop of runs `-c N+1-END`
     after each crash at N (the crashes known from phase 0); that loop is the baseline. Then the
     same triage of the crash-free selection (`-c` every method context that does not crash
     natively, same options). Prints efficiency = native loop / triage, the crash counts of the
     triage and of the native loop, and the cost per extra crash = (triage - crash-free triage) /
     crashes, wall seconds (goal <= 0.04 s, issue 39) and, for comparison, worker-seconds (the
     partitions' journals).
  3. `spmi-dbg mch verify R/collections/api.mch` vs `R/bin/mcs -integ` on it vs `cat` of it, page
     cache warm, best of --repeat: verify / mcs (goal <= 1/3) and verify / cat. A verify that fails
     is reported, not timed.

--quick (CI): the same phases and ratio lines on small selections: the shallow repro on -c
2000-2010, phases 0, 1 (deep) and 2 on api.mch method contexts 1-60 (3 crashes), mch best of 2. The
repro pipeline's own fixed costs (debugger start, verification runs) keep it near a minute.

Everything is written under a temporary directory in --dir. Exit status 1 when a phase could not be
measured (each says why), else 0; goals met or not never change it.

Usage: bench/real_superpmi.py [--quick] [--workers 2] [--repeat 5] [--dir /tmp/spmi-bench]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import USER_ENV, dir_argument, figure, load, parse, partition_ran, run_dir, warm

from scripts.real_superpmi_layout import ENV, Real, located, no_build_reason
from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.mclist import MCList

SHALLOW = "2000-5514"
SHALLOW_QUICK = "2000-2010"
QUICK_LAST = 60  # api.mch 1-60 with JitStress=1: crashes at 4, 32 and 56
STRESS = ["-jitoption", "JitStress=1"]
SIGSEGV = -signal.SIGSEGV
COMPILED = re.compile(r"^Method (\d+) compiled", re.M)


SCALE_COPIES = 10  # phase 1b: ~54,600 method contexts, ~27 s of native replay here
CRASH_GOAL = 0.04  # seconds per extra crash in a triage (issue 39 item 3)


def reference() -> Real:
    """The real superpmi (scripts/real_superpmi_layout.py, as the conformance suite finds it), or
    exit with one line naming what is missing."""
    r = located()
    if r is None:
        raise SystemExit(f"bench/real_superpmi.py: {no_build_reason()}")
    missing = [str(p) for p in r.missing()]
    if missing:
        raise SystemExit(
            f"bench/real_superpmi.py: the real superpmi build {ENV} names ({r.root}) is "
            f"incomplete: missing {', '.join(missing)}"
        )
    if shutil.which("stdbuf") is None:
        raise SystemExit(
            "bench/real_superpmi.py: stdbuf (coreutils) is not on PATH: it finds the native crashes"
        )
    return r


def run(
    cmd: list[str], *, to_null: bool = False, **kw: Any
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall seconds (time.monotonic) of one run of `cmd` in the user's environment, and its result
    (output captured, or stdout to /dev/null)."""
    out = subprocess.DEVNULL if to_null else subprocess.PIPE
    t = time.monotonic()
    r = subprocess.run(
        cmd, stdout=out, stderr=subprocess.PIPE, text=True, errors="replace", env=USER_ENV, **kw
    )
    return time.monotonic() - t, r


def spmi_dbg(*args: str, cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    return run([sys.executable, "-m", "spmi_dbg", *args], cwd=cwd)


def tail(r: subprocess.CompletedProcess[str], n: int = 400) -> str:
    return " | ".join(((r.stdout or "")[-n:] + (r.stderr or "")[-n:]).strip().splitlines()[-4:])


def stress_command(ref: Real, selection: MCList | None) -> list[str]:
    c = ["-c", selection.spec()] if selection is not None else []
    return [str(ref.superpmi), *STRESS, *c, str(ref.jit_checked), str(ref.api)]


def discover(ref: Real, last: int) -> tuple[list[int], float, int]:
    """The method contexts of api.mch 1..last where the JitStress=1 replay dies natively, the
    seconds the search took, and the exit status of the run that reached the end."""
    crashes: list[int] = []
    start, t0 = 1, time.monotonic()
    while True:
        r = subprocess.run(
            [
                "stdbuf",
                "-oL",
                str(ref.superpmi),
                "-v",
                "d",
                *STRESS,
                "-c",
                f"{start}-{last}",
                str(ref.jit_checked),
                str(ref.api),
            ],
            capture_output=True,
            text=True,
            env=USER_ENV,
        )
        if r.returncode != SIGSEGV:
            return crashes, time.monotonic() - t0, r.returncode
        compiled = [int(m) for m in COMPILED.findall(r.stdout)]
        crashes.append(max(compiled) + 1 if compiled else start)
        start = crashes[-1] + 1
        if start > last:
            return crashes, time.monotonic() - t0, r.returncode


def native_loop(
    ref: Real, last: int, whole: bool, crashes: list[int]
) -> tuple[float, int, int, int]:
    """The native replay to the end: the command, then `-c N+1-last` after each crash at N. Seconds,
    runs, deaths by SIGSEGV, and the last run's exit status."""
    total, runs, deaths, rc = 0.0, 0, 0, 0
    starts = [1, *(n + 1 for n in crashes if n < last)]
    for k, start in enumerate(starts):
        sel = None if whole and k == 0 else MCList(((start, last),))
        t, r = run(stress_command(ref, sel))
        total, runs, rc = total + t, runs + 1, r.returncode
        deaths += r.returncode == SIGSEGV
    return total, runs, deaths, rc


def repro(ref: Real, argv: list[str], workers: int, tmp: Path, name: str) -> dict[str, Any] | str:
    """`spmi-dbg repro --workers W` on argv: its wall seconds and report, or why it could not be
    measured."""
    out = tmp / name
    t, r = spmi_dbg("repro", "--workers", str(workers), "--out", str(out), "--", *argv, cwd=tmp)
    if r.returncode != 0:
        return f"spmi-dbg repro exited {r.returncode} (0 is a verified repro): {tail(r)}"
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    report["wall"] = t
    return report


def print_repro(
    label: str,
    native_s: float,
    native_rc: int,
    native_at: int,
    rep: dict[str, Any] | str,
    goal: float | None,
) -> bool:
    print(
        f"  {label}: native replay to the crash {native_s:.2f} s (exit {native_rc}"
        f"{': SIGSEGV' if native_rc == SIGSEGV else ', NOT a SIGSEGV'}, at method context "
        f"{native_at})"
    )
    if isinstance(rep, str):
        print(f"  {label}: repro NOT measured: {rep}")
        return False
    loc = rep["locate"]
    mc = loc["method_context"]
    other = (
        ""
        if mc == native_at
        else f" (NOT the native replay's crash at {native_at}: another partition's first)"
    )
    print(
        f"  {label}: spmi-dbg repro {rep['wall']:.2f} s wall, pipeline {rep['seconds']:.2f} s: "
        "outcome "
        f"{rep['outcome']}, method context {mc} ({loc['method_context_source'] or '?'}){other}; "
        f"{rep.get('title') or ''}; {loc['stops_passed_total']} stop(s) passed"
    )
    print("    phases: " + ", ".join(f"{p['name']} {p['seconds']:.2f} s" for p in rep["phases"]))
    for p in loc["partitions"]:
        print(
            f"    partition {p['partition']} ({p['methods']} methods): {p['status']}, "
            + partition_ran(p)
        )
    ratio = rep["wall"] / native_s
    verdict = (
        f"goal <= {goal:g}: {'met' if ratio <= goal else 'NOT met'}"
        if goal is not None
        else "no goal: the native replay dies at the range's first record, this is the debugger's "
        "fixed cost"
    )
    print(f"repro time / native replay time to the crash ({label}): {ratio:.2f}  ({verdict})")
    start = max((p["debugger_startup_seconds"] or 0.0 for p in loc["partitions"]), default=0.0)
    verify = sum(p["seconds"] for p in rep["phases"] if p["name"].startswith("verify"))
    why = (
        f"fixed costs decide it: a debugger start of {start:.2f} s and its first read of the JIT's "
        f"symbols in each worker's debugger, the first full diagnosis, and the verification's "
        f"{verify:.2f} s (native runs of the repro and one replay under the debugger), against a "
        f"native replay of {native_s:.2f} s that the workers share"
        + ("" if "user scale" in label else "; at a user's scale (phase 1b) they are amortized")
    )
    figure(
        f"real: repro / native to the crash ({label})",
        ratio,
        f"<= {goal:g}" if goal else None,
        why=why,
    )
    if goal is not None and ratio > goal:
        print(f"  missed by {ratio - goal:.2f} ({rep['wall'] - goal * native_s:.2f} s): {why}")
    return native_rc == SIGSEGV


def user_scale(
    ref: Real, crashes: list[int], crash_set: set[int], last: int, quick: bool, workers: int,
    tmp: Path,
) -> bool:  # fmt: skip
    """Phase 1b: `SCALE_COPIES` copies of api.mch's records that do not crash with JitStress=1
    (quick: those of 1-60, twice), then the record of its last crash: a collection of a user's size
    whose native replay dies at its very end. The repro timed cold (gdb's index cache emptied: the
    first run on the 38 MB Checked JIT reads its DWARF) and warm; the goal is the warm one's."""
    copies = 2 if quick else SCALE_COPIES
    clean = MCList.of(
        n for n in range(1, min(last, 60 if quick else last) + 1) if n not in crash_set
    )
    part, crash_rec, mch = tmp / "scale-part.mch", tmp / "scale-crash.mch", tmp / "scale.mch"
    for out, sel in ((part, clean), (crash_rec, MCList.of([crashes[-1]]))):
        r = spmi_dbg("mch", "extract", "-c", sel.spec(), str(ref.api), str(out), cwd=tmp)[1]
        if r.returncode != 0:
            print(f"1b. user scale NOT measured: mch extract failed: {tail(r)}")
            return False
    with open(mch, "wb") as f:
        body = part.read_bytes()
        for _ in range(copies):
            f.write(body)
        f.write(crash_rec.read_bytes())
    r = spmi_dbg("mch", "index", str(mch), cwd=tmp)[1]
    if r.returncode != 0:
        print(f"1b. user scale NOT measured: mch index failed: {tail(r)}")
        return False
    n = copies * clean.count() + 1
    print(
        f"1b. a user's scale: {copies} copies of the {clean.count()} api.mch records that do not "
        f"crash with JitStress=1, then the record of {crashes[-1]}: {n} method contexts "
        f"({mch.stat().st_size / 1e6:.0f} MB)"
    )
    argv = [str(ref.superpmi), *STRESS, str(ref.jit_checked), str(mch)]
    ns, nr = run(argv)
    cache = Path(tempfile.gettempdir()) / f"spmi-dbg-gdb-index-{os.getuid()}"
    shutil.rmtree(cache, ignore_errors=True)
    cold = repro(ref, argv, workers, tmp, "repro-scale-cold")
    if isinstance(cold, str):
        print(f"  cold: repro NOT measured: {cold}")
    else:
        print(
            f"  cold (empty gdb index cache): spmi-dbg repro {cold['wall']:.2f} s wall, "
            f"{cold['wall'] / ns:.2f} of the native replay"
        )
    return print_repro(
        f"user scale, {n} method contexts", ns, nr.returncode, n,
        repro(ref, argv, workers, tmp, "repro-scale"), 0.6,
    )  # fmt: skip


def triage(ref: Real, selection: MCList | None, workers: int, out: Path) -> dict[str, Any] | str:
    t, r = spmi_dbg(
        "triage",
        "--workers",
        str(workers),
        "--out",
        str(out),
        "--",
        *stress_command(ref, selection),
        cwd=out.parent,
    )
    if not (out / "triage.json").is_file():
        return f"spmi-dbg triage exited {r.returncode} without a triage.json: {tail(r)}"
    data: dict[str, Any] = json.loads((out / "triage.json").read_text())
    data["wall"], data["exit"] = t, r.returncode
    data["worker_seconds"] = sum(
        float(json.loads(Path(p).read_text())["seconds"])
        for p in glob.glob(str(out / "partitions" / "p[0-9]*.json"))
    )
    return data


def best_of(
    n: int, cmd: list[str], *, to_null: bool = False
) -> tuple[float, subprocess.CompletedProcess[str]]:
    runs = [run(cmd, to_null=to_null, cwd=tempfile.gettempdir()) for _ in range(n)]
    return min(t for t, _ in runs), runs[-1][1]


def discovery(ref: Real, last: int) -> list[int]:
    """0. Where the JitStress=1 replay of api.mch 1..last dies natively, crash after crash."""
    crashes, disc_s, end_rc = discover(ref, last)
    print(
        f"0. discovery (not counted): api.mch -jitoption JitStress=1, method contexts 1-{last}: "
        f"{len(crashes)} "
        f"native crash(es) (first {crashes[0] if crashes else '-'}, last "
        f"{crashes[-1] if crashes else '-'}), "
        f"the end reached with exit {end_rc}; {disc_s:.2f} s of `stdbuf -oL superpmi -v d` runs"
    )
    if not crashes:
        print("   NO native crash found: phases 1 (deep) and 2 cannot be measured")
    return crashes


def shallow_repro(ref: Real, quick: bool, workers: int, tmp: Path) -> bool:
    """1, shallow: the null-map crash at the first record of the range on api-reljit.mch."""
    shallow = [
        str(ref.superpmi),
        "-c",
        SHALLOW_QUICK if quick else SHALLOW,
        str(ref.jit_checked),
        str(ref.api_reljit),
    ]
    ns, nr = run(shallow)
    # the range's first record dies alone: it is where the replay dies
    at = int(shallow[2].split("-")[0])
    alone = run([str(ref.superpmi), "-c", str(at), str(ref.jit_checked), str(ref.api_reljit)])[
        1
    ].returncode
    if alone != SIGSEGV:
        print(
            f"  shallow: superpmi -c {at} alone exited {alone}, not by SIGSEGV: the crash is "
            f"not at {at}"
        )
    measured = print_repro(
        f"shallow, -c {shallow[2]} on api-reljit.mch",
        ns,
        nr.returncode,
        at,
        repro(ref, shallow, workers, tmp, "repro-shallow"),
        None,
    )
    return alone == SIGSEGV and measured


def deep_repro(ref: Real, crashes: list[int], workers: int, tmp: Path) -> bool:
    """1, deep: every method context up to the last crash that does not crash natively, then that
    crash."""
    crash_set = set(crashes)
    deep_sel = MCList.of([*(n for n in range(1, crashes[-1]) if n not in crash_set), crashes[-1]])
    deep = stress_command(ref, deep_sel)
    ns, nr = run(deep)
    print(
        f"  deep: api.mch -jitoption JitStress=1, -c the {deep_sel.count() - 1} method "
        "contexts of 1-"
        f"{crashes[-1] - 1} that do not crash natively, then {crashes[-1]}"
    )
    return print_repro(
        "deep",
        ns,
        nr.returncode,
        crashes[-1],
        repro(ref, deep, workers, tmp, "repro-deep"),
        0.75,
    )


def native_to_the_end(
    ref: Real, last: int, whole: bool, crashes: list[int], clean_sel: MCList
) -> tuple[float, int, float]:
    """2, the baseline: the native loop of runs to the end, and the crash-free selection in one
    native run. The loop's seconds, its deaths, and the seconds per crash natively."""
    loop_s, runs, deaths, loop_rc = native_loop(ref, last, whole, crashes)
    clean_native_s, cr = run(stress_command(ref, clean_sel))
    native_per = (loop_s - clean_native_s) / max(1, deaths)
    print(
        f"  native loop: {runs} runs, {loop_s:.2f} s, {deaths} death(s) by SIGSEGV, the last "
        "run exit "
        f"{loop_rc}; the crash-free selection ({clean_sel.count()} method contexts) in one "
        "native run "
        f"{clean_native_s:.2f} s (exit {cr.returncode}): {native_per:.3f} s per crash natively"
    )
    return loop_s, deaths, native_per


def triage_vs_native(
    ref: Real, a: argparse.Namespace, last: int, crashes: list[int], tmp: Path
) -> bool:
    """2. The triage of the JitStress=1 command and of its crash-free selection vs the native
    loop: efficiency, the crash counts, the cost per extra crash."""
    whole = not a.quick
    crash_set = set(crashes)
    sel = None if whole else MCList(((1, last),))
    clean_sel = MCList.of(n for n in range(1, last + 1) if n not in crash_set)
    what = "the whole of api.mch" if whole else f"-c 1-{last} of api.mch"
    print(
        f"2. triage --workers {a.workers} of -jitoption JitStress=1, {what}, vs its native "
        "replay to the end"
    )
    loop_s, deaths, native_per = native_to_the_end(ref, last, whole, crashes, clean_sel)
    tri = triage(ref, sel, a.workers, tmp / "triage")
    free = triage(ref, clean_sel, a.workers, tmp / "triage-crash-free")
    for label, d in (("triage", tri), ("crash-free triage", free)):
        if isinstance(d, str):
            print(f"  {label} NOT measured: {d}")
        else:
            print(
                f"  {label}: {d['wall']:.2f} s wall (exit {d['exit']}), replay "
                f"{d['replay_seconds']:.2f} s, "
                f"{d['engine']['partitions']} partitions ({d['worker_seconds']:.2f} worker-s), "
                f"{len(d['crashes'])} crash(es) in {len(d['buckets'])} bucket(s)"
            )
    if isinstance(tri, str) or isinstance(free, str):
        return False
    found = len(tri["crashes"])
    print(
        f"crashes: triage {found}, native loop {deaths}"
        f"{'' if found == deaths else '  (MISMATCH)'}; the crash-free triage "
        f"{len(free['crashes'])}"
    )
    print(
        f"efficiency native loop / triage: {loop_s / tri['wall']:.3f}  ({loop_s:.2f} s / "
        f"{tri['wall']:.2f} s)"
    )
    per = (tri["wall"] - free["wall"]) / max(1, found)
    per_w = (tri["worker_seconds"] - free["worker_seconds"]) / max(1, found)
    figure(
        "real: triage cost per extra crash",
        per,
        f"<= {CRASH_GOAL:g}",
        "s",
        f"{per_w:.3f} worker-s per crash, {native_per:.3f} s per crash natively: after "
        "each crash the partition's session runs superpmi again from the next record (a "
        "process start and the JIT's load)",
    )
    print(
        f"cost per extra crash: {per:.3f} s  (goal <= {CRASH_GOAL:g}: "
        f"{'met' if per <= CRASH_GOAL else 'NOT met'}; "
        f"({tri['wall']:.2f} - {free['wall']:.2f}) s / {found}); in worker-seconds "
        f"{per_w:.3f}"
    )
    return found == deaths


def mch_verify_vs_mcs(ref: Real, repeat: int, tmp: Path) -> bool:
    """3. `spmi-dbg mch verify` vs `mcs -integ` vs `cat` of api.mch, best of `repeat`."""
    print(f"3. api.mch ({ref.api.stat().st_size / 1e6:.0f} MB), page cache warm, best of {repeat}")
    cat_s, _ = best_of(repeat, ["cat", str(ref.api)], to_null=True)
    mcs_s, mr = best_of(repeat, [str(ref.mcs), "-integ", str(ref.api)])
    mcs_line = next(
        (ln for ln in mr.stdout.splitlines() if "Checked the integrity" in ln), tail(mr)
    )
    print(
        f"  cat > /dev/null {cat_s:.3f} s; mcs -integ {mcs_s:.3f} s (exit {mr.returncode}: "
        f"{mcs_line.strip()})"
    )
    # the console script a user runs (its launcher takes the native verifier's fast path)
    console = Path(sys.executable).with_name("spmi-dbg")
    verify = [str(console) if console.is_file() else "spmi-dbg", "mch", "verify", str(ref.api)]
    first = run(verify, cwd=tmp)[1]
    if first.returncode != 0:
        print(
            f"  spmi-dbg mch verify FAILED on api.mch (exit {first.returncode}), not timed: "
            f"{tail(first)}"
        )
        return False
    v_s, vr = best_of(repeat, verify)
    r_mcs, r_cat = v_s / mcs_s, v_s / cat_s
    print(
        f"  spmi-dbg mch verify {v_s:.3f} s "
        f"({vr.stdout.strip().splitlines()[-1] if vr.stdout else ''})"
    )
    print(
        f"mch verify / mcs -integ: {r_mcs:.2f}  (goal <= 0.33: "
        f"{'met' if r_mcs <= 1 / 3 else 'NOT met'})"
    )
    print(f"mch verify / cat: {r_cat:.1f}")
    figure("real: mch verify / mcs -integ", r_mcs, "<= 0.33", "x")
    return True


def arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="small selections, a minute or so (CI)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="runs of each mch command, the best counts (5; quick 2)",
    )
    dir_argument(ap)
    return parse(ap)


def main() -> int:
    a = arguments()
    ref = reference()
    repeat = a.repeat or (2 if a.quick else 5)
    with Collection.open(ref.api) as c:
        count = len(c.toc) if c.toc is not None else 0
    last = QUICK_LAST if a.quick else count
    print(
        f"real superpmi at {ref.root}; {'quick' if a.quick else 'full'} run, --workers "
        f"{a.workers}; "
        f"{os.cpu_count()} CPUs, load average {load()}"
    )
    warm(ref.api, ref.api_reljit)
    crashes = discovery(ref, last)
    if not crashes:
        return 1
    ok = True
    with run_dir(a.dir, "real-superpmi") as t:
        tmp = Path(t)
        print(
            f"1. null-map crash: spmi-dbg repro --workers {a.workers} vs the native replay to the "
            "crash"
        )
        ok &= shallow_repro(ref, a.quick, a.workers, tmp)
        ok &= deep_repro(ref, crashes, a.workers, tmp)
        # 1b. a user's scale: a collection of copies of api.mch's crash-free records
        ok &= user_scale(ref, crashes, set(crashes), last, a.quick, a.workers, tmp)
        ok &= triage_vs_native(ref, a, last, crashes, tmp)
        ok &= mch_verify_vs_mcs(ref, repeat, tmp)
    print(f"load average after: {load()}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
