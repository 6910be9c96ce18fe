#!/usr/bin/env python3
"""Every bench, one table with a memory (issue 39 item 1).

Runs each bench/ script (at its default sizes, or --quick), each --runs times (default 2: the spread
of the two is the noise), collects the figures each reports (_common.figure: name, value, goal,
unit) and prints one table: figure, goal, this run (the median, and the spread), whether the goal is
met, the last figure recorded on this kind of machine (same architecture and CPU count, same mode)
and the change, flagged `WORSE` when it is over 10 % for the worse (the goal's direction says which
way that is) and over the noise.

--record writes this run to bench/results/<date>-<commit>.json (commit, date, CPU count and
model, load before and after, every value of every run): the recorded figures live in the
repository and are recorded when a performance issue is resolved. The table is Markdown: --from
FILE renders a recorded run without running anything, and --readme writes the newest full run
recorded (against the one before it) into the README's performance section, between its
bench-table markers (tests/test_bench_all.py checks that it is up to date).

A bench that needs what this machine has not (real_superpmi.py without SPMI_DBG_REAL_SUPERPMI) is
said in one line and left out; a bench that fails is a row of its own and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import FIGURES_ENV, ROOT, USER_ENV, dir_argument

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SCHEMA = 1
WORSE = 0.10  # a change for the worse over this is flagged (when over the noise too)
NEEDS = {"real_superpmi": "SPMI_DBG_REAL_SUPERPMI"}  # bench -> the variable naming what it needs

# the lines tests/test_benches.py checks (this script's --quick prints them)
RATIO_LINES = [r"^\| figure \| goal \| now \| spread \| met \| last \| change \|$"]


def benches(only: list[str]) -> list[Path]:
    found = sorted(
        p for p in HERE.glob("*.py") if not p.name.startswith("_") and p.name != "all.py"
    )
    return [p for p in found if not only or p.stem in only]


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"arch": platform.machine(), "cpus": os.cpu_count() or 1, "cpu": model}


def kind(m: dict[str, Any], quick: bool) -> str:
    """The kind of machine figures compare across: its architecture and CPU count, and the mode."""
    return f"{m['arch']}-{m['cpus']}cpu" + ("-quick" if quick else "")


def run_one(script: Path, quick: bool, directory: Path) -> tuple[list[dict[str, Any]], str | None]:
    """One run of `script`: its figures, and why it failed (None: it did not)."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as f:
        figures = Path(f.name)
    try:
        argv = [
            sys.executable,
            str(script),
            *(["--quick"] if quick else []),
            "--dir",
            str(directory),
        ]
        r = subprocess.run(
            argv,
            env={**USER_ENV, FIGURES_ENV: str(figures)},
            capture_output=True,
            text=True,
            check=False,
        )
        got = [json.loads(line) for line in figures.read_text().splitlines() if line.strip()]
    finally:
        figures.unlink(missing_ok=True)
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or [""]
        return got, f"exit {r.returncode}: {tail[0][:200]}"
    return got, None


def collect(scripts: list[Path], runs: int, quick: bool, directory: Path) -> dict[str, Any]:
    """Every bench run `runs` times: its figures with each run's value, and its failures."""
    started = os.getloadavg()
    figures: dict[tuple[str, str], dict[str, Any]] = {}
    failed: list[dict[str, str]] = []
    left_out: list[dict[str, str]] = []
    for script in scripts:
        need = NEEDS.get(script.stem)
        if need and not os.environ.get(need):
            left_out.append({"bench": script.stem, "why": f"needs {need}"})
            print(f"all: {script.stem}: left out (needs {need})", file=sys.stderr)
            continue
        for k in range(runs):
            print(f"all: {script.stem} run {k + 1}/{runs}", file=sys.stderr, flush=True)
            got, why = run_one(script, quick, directory)
            for g in got:
                entry = figures.setdefault(
                    (g["bench"], g["name"]),
                    {"bench": g["bench"], "name": g["name"], "goal": g["goal"], "unit": g["unit"]},
                )
                entry.setdefault("values", []).append(g["value"])
                if g.get("why"):
                    entry["why"] = g["why"]  # the last run's account
            if why is not None:
                failed.append({"bench": script.stem, "why": why})
                break
    return {
        "schema": SCHEMA,
        "commit": _commit(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "runs": runs,
        "machine": machine(),
        "load": {"before": list(started), "after": list(os.getloadavg())},
        "figures": list(figures.values()),
        "failed": failed,
        "left_out": left_out,
    }


def _commit() -> str:
    r = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return r.stdout.strip() or "unknown"


def last_recorded(results: Path, kind_of: str, before: str | None = None) -> dict[str, Any] | None:
    """The latest run recorded in `results` on this kind of machine (one before `before`'s date)."""
    best: dict[str, Any] | None = None
    for p in sorted(results.glob("*.json")):
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if kind(data["machine"], data["quick"]) != kind_of:
            continue
        if before is not None and data["date"] >= before:
            continue
        if best is None or data["date"] > best["date"]:
            best = data
    return best


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _met(value: float | None, goal: str | None) -> str:
    if goal is None or value is None:
        return "-"
    op, _, bound = goal.partition(" ")
    limit = float(bound)
    ok = {"<=": value <= limit, "<": value < limit, ">=": value >= limit, ">": value > limit}
    return "met" if ok.get(op, False) else "NOT met"


def rows(now: dict[str, Any], last: dict[str, Any] | None) -> list[list[str]]:
    before = {(f["bench"], f["name"]): f for f in (last or {}).get("figures", [])}
    out = []
    for f in now["figures"]:
        value = _median(f["values"])
        known = [v for v in f["values"] if v is not None]
        spread = (max(known) - min(known)) / abs(value) if len(known) > 1 and value else 0.0
        prev = before.get((f["bench"], f["name"]))
        then = _median(prev["values"]) if prev else None
        change, flag = "-", ""
        if value is not None and then:
            delta = (value - then) / abs(then)
            change = f"{delta:+.0%}"
            lower_is_better = not (f["goal"] or "<=").startswith(">")
            worse = delta if lower_is_better else -delta
            if worse > WORSE and worse > spread:
                flag = " WORSE"
        unit = f" {f['unit']}" if f["unit"] else ""
        out.append(
            [
                f"{f['bench']}: {f['name']}",
                f"{f['goal']}{unit}" if f["goal"] else "-",
                "-" if value is None else f"{value:.3g}{unit}",
                f"{spread:.0%}" if len(known) > 1 else "-",
                _met(value, f["goal"]),
                "-" if then is None else f"{then:.3g}{unit}",
                change + flag,
            ]
        )
    out += [[f"{x['bench']}: FAILED ({x['why']})", "", "", "", "", "", ""] for x in now["failed"]]
    return out


HEADER = ["figure", "goal", "now", "spread", "met", "last", "change"]


def missed(now: dict[str, Any]) -> list[str]:
    """One line per goal missed: by how much, and why (what the bench measured that decides it)."""
    out = []
    for f in now["figures"]:
        value = _median(f["values"])
        if _met(value, f["goal"]) != "NOT met" or value is None:
            continue
        bound = float(f["goal"].partition(" ")[2])
        by = f"{abs(value - bound) / abs(bound):.0%}" if bound else f"{abs(value - bound):.3g}"
        unit = f" {f['unit']}" if f["unit"] else ""
        why = f.get("why") or "the bench did not say (a run recorded before benches said why)"
        out.append(
            f"- {f['bench']}: {f['name']}: {value:.3g}{unit} against {f['goal']}{unit}, "
            f"missed by {by}: {why}"
        )
    return out


def table(now: dict[str, Any], last: dict[str, Any] | None) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows(now, last)]
    m, load = now["machine"], now["load"]
    said = (
        f"{now['date']}, commit {now['commit'][:10]}, {m['cpus']} CPU(s) {m['arch']} "
        f"({m['cpu'] or 'model unknown'}), load {load['before'][0]:.1f} -> {load['after'][0]:.1f}, "
        f"{now['runs']} run(s) each" + (", quick: not a measurement" if now["quick"] else "")
    )
    against = (
        f"last: {last['date']}, commit {last['commit'][:10]}" if last else "last: none recorded"
    )
    gaps = missed(now)
    why = ["", "Goals missed in this run:", "", *gaps] if gaps else []
    return "\n".join([*lines, "", f"this run: {said}; {against}", *why]) + "\n"


def record(now: dict[str, Any], results: Path) -> Path:
    results.mkdir(parents=True, exist_ok=True)
    stamp = now["date"].replace(":", "").replace("-", "")[:15]
    out = results / f"{stamp}-{now['commit'][:10]}{'-quick' if now['quick'] else ''}.json"
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(now, indent=2) + "\n")
    os.replace(tmp, out)
    return out


README = ROOT / "README.md"
START, END = "<!-- bench-table:start -->", "<!-- bench-table:end -->"


def latest_full(results: Path) -> dict[str, Any] | None:
    """The newest run recorded in `results` at the benches' own sizes (not --quick)."""
    runs = []
    for p in results.glob("*.json"):
        try:
            data = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if not data.get("quick"):
            runs.append(data)
    return max(runs, key=lambda d: str(d["date"]), default=None)


def readme_block(results: Path) -> str:
    """The README's performance table: the newest full run recorded, against the one before it on
    the same kind of machine."""
    now = latest_full(results)
    if now is None:
        return "No run recorded yet (`bench/all.py --record`).\n"
    return table(now, last_recorded(results, kind(now["machine"], False), before=now["date"]))


def write_readme(readme: Path, results: Path) -> bool:
    """The block between the README's bench-table markers rendered anew; True when it changed."""
    text = readme.read_text()
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"{readme}: no {START} ... {END} block")
    new = f"{head}{START}\n{readme_block(results)}{END}{tail}"
    if new == text:
        return False
    tmp = readme.with_name(readme.name + ".tmp")
    tmp.write_text(new)
    os.replace(tmp, readme)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="each bench's --quick (CI)")
    ap.add_argument("--runs", type=int, default=2, help="runs of each bench (default 2)")
    ap.add_argument("--only", nargs="+", default=[], metavar="BENCH", help="these benches only")
    ap.add_argument("--record", action="store_true", help="write this run to bench/results/")
    ap.add_argument(
        "--results", type=Path, default=RESULTS, help="where runs are recorded (bench/results)"
    )
    ap.add_argument("--from", dest="source", type=Path, help="render a recorded run, run nothing")
    ap.add_argument(
        "--readme",
        action="store_true",
        help="render the README's performance table from the newest recorded run, run nothing",
    )
    dir_argument(ap)
    a = ap.parse_args(argv)
    if a.readme:
        changed = write_readme(README, a.results)
        print(f"all: {README.name} {'updated' if changed else 'already up to date'}")
        return 0
    if a.source is not None:
        now = json.loads(a.source.read_text())
    else:
        a.dir.mkdir(parents=True, exist_ok=True)
        now = collect(benches(a.only), max(1, a.runs), a.quick, a.dir)
    last = last_recorded(a.results, kind(now["machine"], now["quick"]), before=now["date"])
    print(table(now, last), end="")
    if a.record and a.source is None:
        print(f"all: recorded {record(now, a.results)}", file=sys.stderr)
    return 1 if now["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
