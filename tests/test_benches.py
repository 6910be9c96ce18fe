"""The benches run: every script in bench/ (found by globbing, so a new one cannot be forgotten)
runs its `--quick` mode, exits 0, says that a quick figure is not a measurement, and prints each
line of its RATIO_LINES (the lines the bench exists for). A bench with its own test
(tests/**/test_bench_<name>.py, e.g. tests/real/ test_bench_real_superpmi.py, which needs the real
superpmi) is run by that test instead. No figure is checked: a quick run measures nothing. Also the
shared cache of bench/_common.py: its bound and --clean."""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from .support.common import ROOT

BENCH = ROOT / "bench"
TESTS = ROOT / "tests"


def own_test(script: Path) -> Path | None:
    """The test of its own that runs `script`, if it has one."""
    return next(iter(sorted(TESTS.rglob(f"test_bench_{script.stem}.py"))), None)


SCRIPTS = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))
# all.py runs the others (tests/test_bench_all.py is its own test)
QUICK = [p for p in SCRIPTS if own_test(p) is None]


@functools.cache
def common() -> ModuleType:
    """bench/_common.py, imported under another name (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_common", BENCH / "_common.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def ratio_lines(script: Path) -> list[str]:
    """The script's RATIO_LINES (regular expressions, one per line it is for), read without
    importing it."""
    for node in ast.parse(script.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "RATIO_LINES" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list) and all(isinstance(v, str) for v in value)
            return value
    return []


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the module's runs: what one bench builds, another one finds."""
    return tmp_path_factory.mktemp("bench-cache")


@pytest.mark.unit
def test_every_bench_is_run() -> None:
    assert {p.stem for p in SCRIPTS} >= {"arm64_qemu", "diagnose_cost", "mch_scan", "triage_scale"}
    for p in SCRIPTS:
        assert p in QUICK or own_test(p) is not None


@pytest.mark.parametrize("script", QUICK, ids=lambda p: p.stem)
def test_quick_mode_runs(script: Path, cache: Path, tmp_path: Path) -> None:
    patterns = ratio_lines(script)
    assert patterns, f"{script.name} has no RATIO_LINES: the lines its --quick must print"
    env = {
        k: v for k, v in os.environ.items() if k not in ("SPMI_BENCH_DIR", "SPMI_BENCH_CACHE_MAX")
    }
    runs_before = {p.name for p in cache.iterdir() if p.name.startswith("tmp")}
    r = subprocess.run(
        [sys.executable, str(script), "--quick", "--dir", str(cache)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=280,
    )
    out = r.stdout
    assert r.returncode == 0, (
        f"{script.name} --quick exited {r.returncode}:\n{out[-3000:]}\n{r.stderr[-3000:]}"
    )
    assert out.startswith(common().QUICK_BANNER + "\n") and out.rstrip().endswith(
        common().QUICK_BANNER
    ), out
    for pattern in patterns:
        assert re.search(pattern, out, re.M), f"no line matching {pattern!r} in:\n{out}"
    assert os.listdir(tmp_path) == [], "a bench writes only under --dir"
    assert {p.name for p in cache.iterdir() if p.name.startswith("tmp")} == runs_before, (
        "a run's directory is left"
    )


def fake_collection(root: Path, name: str, size: int, age: float) -> None:
    for p, n in ((root / name, size), (root / f"{name}.mct", 4096)):
        p.write_bytes(b"\1" * n)
        os.utime(p, (time.time() - age, time.time() - age))


@pytest.mark.unit
def test_cache_removes_the_least_recently_used_beyond_its_bound(tmp_path: Path) -> None:
    c = common()
    fake_collection(tmp_path, "old.mch", 400_000, 300)
    fake_collection(tmp_path, "used.mch", 400_000, 200)
    fake_collection(tmp_path, "new.mch", 400_000, 100)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "x").write_bytes(b"\1" * 400_000)
    os.utime(tmp_path / "build", (time.time() - 50, time.time() - 50))
    (tmp_path / "tmp-run").mkdir()  # a run in progress: not the cache's
    (tmp_path / "tmp-run" / "big").write_bytes(b"\1" * 2_000_000)
    cache = c.Cache(tmp_path, 1_000_000)
    assert {e.name for e in cache.entries()} == {"old.mch", "used.mch", "new.mch", "build"}
    cache.use(tmp_path / "used.mch")  # the most recently used now, and kept for this process
    assert cache.bound() == ["old.mch", "new.mch"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "build",
        "tmp-run",
        "used.mch",
        "used.mch.mct",
    ]
    assert cache.size() <= 1_000_000
    assert cache.bound() == []
    # what this process uses is kept even beyond the bound
    c.Cache(tmp_path, 0, {"used.mch"}).bound()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp-run", "used.mch", "used.mch.mct"]


@pytest.mark.unit
def test_cache_max_sizes() -> None:
    c = common()
    assert [c.byte_size(s) for s in ("4G", "500M", "2GiB", "123", "1.5k")] == [
        4 * 10**9,
        5 * 10**8,
        2 * 2**30,
        123,
        1500,
    ]
    with pytest.raises(Exception, match="not a size"):
        c.byte_size("lots")


def test_clean_removes_the_cache_and_exits(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    fake_collection(cache, "x.mch", 1000, 0)
    r = subprocess.run(
        [sys.executable, str(BENCH / "stop_cost.py"), "--clean", "--dir", str(cache)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert not cache.exists()
    assert r.stdout.startswith(f"removed {cache} (")
