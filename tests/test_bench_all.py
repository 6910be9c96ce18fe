"""bench/all.py (issue 39 item 1): every bench's figures in one table, against the last recorded run
on this kind of machine, a change for the worse flagged; --record keeps a run. Run on two quick
benches (this test is all.py's own: tests/test_benches.py leaves it out), twice each."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ALL = Path(__file__).resolve().parents[1] / "bench" / "all.py"


def _all(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ALL), *args], cwd=cwd, capture_output=True, text=True, timeout=900
    )


def test_a_table_with_a_memory(tmp_path: Path) -> None:
    results, cache = tmp_path / "results", tmp_path / "cache"
    common = ["--quick", "--only", "mch_scan", "bisect_store", "--dir", str(cache)]
    first = _all(*common, "--results", str(results), "--record", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout.startswith("| figure | goal | now | spread | met | last | change |")
    assert "| mch_scan: mch verify / cat | <= 2.0 x |" in first.stdout
    assert "| bisect_store: bisect's own overhead | <= 15 % |" in first.stdout
    assert "last: none recorded" in first.stdout
    (kept,) = results.glob("*-quick.json")
    run = json.loads(kept.read_text())
    assert run["quick"] and run["runs"] == 2 and run["machine"]["cpus"] >= 1
    assert all(len(f["values"]) == 2 for f in run["figures"]), run["figures"]
    # a recorded run from before with a much better figure: this run's is flagged worse
    better = dict(run, date="2000-01-01T00:00:00+00:00", commit="0" * 40)
    better["figures"] = [
        dict(f, values=[v / 10 if v else v for v in f["values"]])
        if f["name"] == "mch verify / cat"
        else f
        for f in run["figures"]
    ]
    (results / "old-quick.json").write_text(json.dumps(better))
    shown = _all("--from", str(kept), "--results", str(results), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    line = next(x for x in shown.stdout.splitlines() if "mch verify / cat" in x)
    assert line.endswith("WORSE |") and "+900%" in line, line
    assert "last: 2000-01-01T00:00:00+00:00, commit 0000000000" in shown.stdout
    # nothing written in the working directory but what was asked (the cache, the results)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "results"]


def test_a_bench_that_fails_is_a_row_and_exit_1(tmp_path: Path) -> None:
    """A bench that exits non-zero (here: real_superpmi.py given a real build that is not there)
    is a row that says so, and all.py exits 1; without the variable it needs it is left out."""
    env = {k: v for k, v in os.environ.items() if k != "SPMI_DBG_REAL_SUPERPMI"}
    argv = [sys.executable, str(ALL), "--quick", "--runs", "1", "--only", "real_superpmi"]
    argv += ["--dir", str(tmp_path / "c")]
    r = subprocess.run(
        argv,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "SPMI_DBG_REAL_SUPERPMI": str(tmp_path / "no build here")},
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "| real_superpmi: FAILED (exit " in r.stdout, r.stdout
    r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and "| figure |" in r.stdout, r.stdout + r.stderr
    assert "all: real_superpmi: left out (needs SPMI_DBG_REAL_SUPERPMI)" in r.stderr


def _bench_all() -> ModuleType:
    """bench/all.py as a module (bench/ is not a package: its scripts import each other by name)."""
    sys.path.insert(0, str(ALL.parent))
    try:
        return importlib.import_module("all")
    finally:
        sys.path.remove(str(ALL.parent))


def test_the_readmes_table_is_the_newest_recorded_run() -> None:
    """The README's performance section is bench/all.py's rendering of the newest full run in
    bench/results/ (`bench/all.py --readme` writes it after `--record`)."""
    bench_all = _bench_all()
    text = bench_all.README.read_text()
    block = text.partition(bench_all.START)[2].partition(bench_all.END)[0]
    assert block == "\n" + bench_all.readme_block(bench_all.RESULTS), (
        "README.md's bench table is not the newest recorded run: run bench/all.py --readme"
    )
    assert bench_all.latest_full(bench_all.RESULTS) is not None, "no full run recorded"


def test_readme_writes_the_block_between_its_markers(tmp_path: Path) -> None:
    bench_all = _bench_all()
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{bench_all.START}\nold\n{bench_all.END}\n\nafter\n")
    results = tmp_path / "results"
    results.mkdir()
    assert bench_all.write_readme(readme, results)
    text = readme.read_text()
    assert "old" not in text and "No run recorded yet" in text and text.endswith("after\n")
    assert not bench_all.write_readme(readme, results)  # unchanged: not written again


def test_a_missed_goal_says_by_how_much_and_why() -> None:
    """Below the table, one line per goal missed: the figure, its goal, by how much, and what the
    bench measured that decides it; a met goal has no line; a run recorded before benches said why
    says so."""
    bench_all = _bench_all()
    run = {
        "figures": [
            {"bench": "b", "name": "per stop", "goal": "<= 0.25", "unit": "ms",
             "values": [0.3, 0.34], "why": "gdb's own floor is 1.17x"},
            {"bench": "b", "name": "met one", "goal": "<= 1", "unit": "x", "values": [0.5]},
            {"bench": "b", "name": "old", "goal": ">= 2", "unit": "", "values": [1.0]},
        ]
    }  # fmt: skip
    assert bench_all.missed(run) == [
        "- b: per stop: 0.32 ms against <= 0.25 ms, missed by 28%: gdb's own floor is 1.17x",
        "- b: old: 1 against >= 2, missed by 50%: the bench did not say (a run recorded before "
        "benches said why)",
    ]
