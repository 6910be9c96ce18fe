"""bench/all.py (issue 39 item 1): every bench's figures in one table, against the last recorded run
on this kind of machine, a change for the worse flagged; --record keeps a run. Run on two quick
benches (this test is all.py's own: tests/test_benches.py leaves it out), twice each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
