#!/usr/bin/env python3
"""A crash storm's triage (issue 27 item 2): the cause line within seconds, and the whole triage
with the storm swept (the default: the rest of a storm's partition replayed without a debugger but
for a sample, triage/sweep.py) against `--diagnose-all` (every crash diagnosed under the debugger,
as before the sweep).

The input (one of):
  - --real (default when $SPMI_DBG_REAL_SUPERPMI names a real 3.1.23 build, tests/real/README.md):
    `superpmi R/bin/libclrjit_checked.so R/collections/api-reljit.mch`, the whole collection
    (5,514 method contexts; the Checked JIT asks every method context for a signature the Release
    JIT never asked for: 4,259 crash in one bucket);
  - else the replay core as 3.1 behaves (SPMI_REPLAY_ERA=3.1: no fault handler) on a sample
    collection of --methods method contexts, three in four with a null map (`null-map`).

In one run, in this order, each timed with time.monotonic:
  (a) `spmi-dbg triage --max-crashes 1000000 --workers W` (the sweep), its stderr read as it comes:
      the seconds from the start to the `triage: systematic: ...` line (the goal, on the real
      build: within 15 s), and to the end;
  (b) the same with --diagnose-all, to the end.
Prints both, the crashes each diagnosed and counted, and (a)/(b) (the sweep's share of the time
the triage took before it; lower is better). The two must account for the same crashes: a
difference is printed and the exit status is 1.

--quick (CI, seconds; not a measurement): the sample input at --methods 200, the same runs and
lines.

Usage: bench/storm_triage.py [--quick] [--real | --sample] [--methods 2000] [--workers 2]
[--dir /tmp/spmi-bench]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from _common import USER_ENV as ENV
from _common import cached_collection, common_arguments, figure, load, native, parse, run_dir

from spmi_dbg import paths

REAL_ENV = "SPMI_DBG_REAL_SUPERPMI"
GOAL_CAUSE_SECONDS = 15.0
# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^  \(a\) cause line after [\d.]+ s \(goal <= 15 s on the real build: (met|NOT met|"
    r"sample input)\)$",
    r"^  \(a\)/\(b\) = [\d.]+  \(the whole triage, swept / --diagnose-all\)$",
]


# what triage() returns
Triaged = tuple[float, float | None, dict]


def triage(argv: list[str], out: Path, env: dict[str, str]) -> Triaged:
    """(seconds to the end, seconds to the storm's line or None, triage.json)."""
    start = time.monotonic()
    said: list[float] = []
    proc = subprocess.Popen(
        [sys.executable, "-m", "spmi_dbg", "triage", "--out", str(out), *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("triage: systematic: ") and not said:
                said.append(time.monotonic() - start)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    rc = proc.wait()
    reader.join()
    seconds = time.monotonic() - start
    if rc not in (0, 1):
        raise SystemExit(f"triage exited {rc}: {out}")
    data = json.loads((out / "triage.json").read_text())
    return seconds, (said[0] if said else None), data


def crashed(data: dict) -> tuple[int, int, set[str]]:
    """(diagnosed, not diagnosed, every crashed member)."""
    diagnosed = {f"{c['collection']}:{c['method_context']}" for c in data["crashes"]}
    swept = {m for g in data.get("not_diagnosed") or [] for m in g["method_contexts"]}
    return len(diagnosed), len(swept), diagnosed | swept


@dataclass(frozen=True)
class Target:
    """What is triaged: the real build or the replay core as 3.1, its environment, command, the
    `--env` options that pass the environment on, and how the header names it."""

    real: bool
    env: dict[str, str]
    command: list[str]
    extra: list[str]
    what: str


def target(a: argparse.Namespace) -> Target:
    real_dir = os.environ.get(REAL_ENV)
    real = a.real or (not a.sample and not a.quick and bool(real_dir))
    env = dict(ENV)
    if real:
        if not real_dir:
            raise SystemExit(f"--real: set ${REAL_ENV} to a real 3.1.23 build")
        r = Path(real_dir)
        env["LD_LIBRARY_PATH"] = str(r / "bin")
        command = [
            str(r / "bin" / "superpmi"),
            str(r / "bin" / "libclrjit_checked.so"),
            str(r / "collections" / "api-reljit.mch"),
        ]
        what = "the real 3.1.23 superpmi, Checked JIT, api-reljit.mch"
        return Target(real, env, command, ["--env", "LD_LIBRARY_PATH"], what)
    methods = a.methods
    mch = cached_collection(
        a.dir / f"storm-{methods}.mch",
        methods=methods,
        seed=5,
        injections=[("null-map", n) for n in range(1, methods + 1) if n % 4 != 0],
    )
    env["SPMI_REPLAY_ERA"] = "3.1"
    command = [native(paths.REPLAY), native(paths.BASE_JIT), str(mch)]
    what = f"the replay core as 3.1 (SPMI_REPLAY_ERA=3.1), {methods} method contexts, 3 in 4 crash"
    return Target(real, env, command, ["--env", "SPMI_REPLAY_ERA"], what)


def report(t: Target, a_run: Triaged, b_run: Triaged) -> int:
    """The two triages' lines, the cause line's time against its goal and the ratio; 1 when the
    two crashed different method contexts or (a) said no storm."""
    t_a, cause, data_a = a_run
    t_b, _, data_b = b_run
    da, na, all_a = crashed(data_a)
    db, nb, all_b = crashed(data_b)
    print(f"  (a) swept: {t_a:.1f} s; {da} crash(es) diagnosed, {na} not diagnosed (storm)")
    print(f"  (b) --diagnose-all: {t_b:.1f} s; {db} crash(es) diagnosed, {nb} not diagnosed")
    verdict = (
        "sample input"
        if not t.real
        else "met"
        if cause is not None and cause <= GOAL_CAUSE_SECONDS
        else "NOT met"
    )
    said = f"{cause:.1f}" if cause is not None else "inf"
    print(f"  (a) cause line after {said} s (goal <= 15 s on the real build: {verdict})")
    figure(
        "storm: the cause line after", cause if cause is not None else float("inf"), "<= 15", "s"
    )
    print(f"  (a)/(b) = {t_a / t_b:.3f}  (the whole triage, swept / --diagnose-all)")
    if all_a != all_b:
        print(
            f"  the two triages crashed different method contexts: {len(all_a - all_b)} only in "
            f"(a), {len(all_b - all_a)} only in (b)"
        )
        return 1
    if cause is None:
        print("  (a) said no storm")
        return 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--real", action="store_true", help=f"the real build ${REAL_ENV} names")
    which.add_argument("--sample", action="store_true", help="the replay core's sample input")
    ap.add_argument("--methods", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    common_arguments(ap)
    a = parse(ap, quick={"methods": 200})
    t = target(a)
    print(f"{os.cpu_count()} CPUs, load average {load()}; {t.what}; --workers {a.workers}")
    common = [*t.extra, "--workers", str(a.workers), "--max-crashes", "1000000"]
    with run_dir(a.dir, "storm") as tmp:
        a_run = triage([*common, "--", *t.command], Path(tmp) / "a", t.env)
        b_run = triage([*common, "--diagnose-all", "--", *t.command], Path(tmp) / "b", t.env)
    return report(t, a_run, b_run)


if __name__ == "__main__":
    sys.exit(main())
