"""Shared by the bench/ scripts: the package on sys.path, the installed native binaries, the
environment timed commands run with, the shared options (--quick, --dir, --cache-max, --clean) and
the cache of generated collections (bench/README.md "The cache")."""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Commands run as in a user's shell: with Python's bytecode cache on (a shell that exports
# PYTHONDONTWRITEBYTECODE makes every start recompile the package, ~50 ms).
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

QUICK_BANNER = "quick mode: not a measurement (tiny inputs, one run: it checks that the bench runs)"

# -------------------------------------------------------------------------------------------------
# the cache

DIR_ENV = "SPMI_BENCH_DIR"
CACHE_MAX_ENV = "SPMI_BENCH_CACHE_MAX"
BENCH_DIR = Path(os.environ.get(DIR_ENV) or Path(tempfile.gettempdir()) / "spmi-bench")
# bytes: the largest single bench (mch_scan.py, ~1.1 GB) and then some
DEFAULT_CACHE_MAX = 4_000_000_000
RUN_PREFIX = "tmp"  # tempfile's own prefix: a run's temporary directory under --dir, never evicted
_UNITS = {
    "": 1,
    "K": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "KI": 2**10,
    "MI": 2**20,
    "GI": 2**30,
    "TI": 2**40,
}


def byte_size(text: str) -> int:
    """'4G', '500M', '2GiB', '123' (bytes) -> bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]I?)?B?\s*", text.upper())
    if m is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size (bytes, or with K, M, G, T, KiB, MiB, GiB)"
        )
    return int(float(m.group(1)) * _UNITS[m.group(2) or ""])


@dataclass
class Entry:
    """One unit of the cache: a top-level directory, or a collection file with its companions
    (X.mch, X.mch.mct)."""

    name: str
    paths: list[Path]
    size: int  # bytes allocated on disk (hard links counted once)
    last_used: float  # the newest mtime of its paths (a bench touches what it uses)


@dataclass
class Cache:
    """The benches' cache: generated collections (and a build directory) kept between runs under
    `root`, at most `limit` bytes; beyond it the least recently used entries are removed, never one
    this process uses."""

    root: Path
    limit: int
    # entry names this process has used: never evicted by it
    used: set[str] = field(default_factory=set)

    @staticmethod
    def key(name: str) -> str:
        for companion in (".mct", ".tmp"):
            if name.endswith(companion):
                return name[: -len(companion)]
        return name

    def entries(self) -> list[Entry]:
        if not self.root.is_dir():
            return []
        groups: dict[str, list[Path]] = {}
        for p in self.root.iterdir():
            if p.name.startswith(RUN_PREFIX) and p.is_dir():
                # a run's temporary directory (removed by its run; --clean removes a killed run's)
                continue
            groups.setdefault(self.key(p.name), []).append(p)
        seen: set[tuple[int, int]] = set()
        out = []
        for name, paths in groups.items():
            size = 0
            for st in (st for p in paths for st in _stats(p)):
                if st is not None and (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    size += st.st_blocks * 512
            out.append(Entry(name, paths, size, max(p.lstat().st_mtime for p in paths)))
        return out

    def size(self) -> int:
        return sum(e.size for e in self.entries())

    def use(self, path: Path) -> None:
        """`path` (a cached file or directory, or anything inside one) is used now: it becomes the
        most recently used entry, and is kept for the rest of this process."""
        try:
            top = (
                self.root.resolve() / Path(path).resolve().relative_to(self.root.resolve()).parts[0]
            )
        except (ValueError, IndexError):
            return  # not in the cache
        self.used.add(self.key(top.name))
        if top.exists():
            os.utime(top)

    def bound(self) -> list[str]:
        """Remove the least recently used entries until the cache is within its limit; the names
        removed."""
        entries = sorted(self.entries(), key=lambda e: e.last_used)
        total = sum(e.size for e in entries)
        removed = []
        for e in entries:
            if total <= self.limit:
                break
            if e.name in self.used:
                continue
            for p in e.paths:
                remove(p)
            total -= e.size
            removed.append(e.name)
        if removed:
            print(
                f"cache {self.root}: removed {', '.join(removed)} (least recently used) to stay "
                "within "
                f"{self.limit / 1e9:.2f} GB (--cache-max, ${CACHE_MAX_ENV}); now {total / 1e9:.2f} "
                "GB"
            )
        if total > self.limit:
            print(
                f"cache {self.root}: {total / 1e9:.2f} GB, over its {self.limit / 1e9:.2f} GB "
                "limit with what this "
                "run uses alone (raise --cache-max)"
            )
        return removed


def _stats(p: Path) -> Iterator[os.stat_result | None]:
    if p.is_symlink() or not p.is_dir():
        yield p.lstat() if p.exists() or p.is_symlink() else None
        return
    for dirpath, _, files in os.walk(p):
        yield os.lstat(dirpath)
        for f in files:
            try:
                yield os.lstat(os.path.join(dirpath, f))
            except FileNotFoundError:
                yield None


def remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


CACHE = Cache(BENCH_DIR, DEFAULT_CACHE_MAX)  # set by parse() from --dir and --cache-max


def clean(root: Path) -> None:
    """--clean: remove the cache directory and everything in it."""
    if not root.exists():
        print(f"{root}: no cache there")
        return
    size = Cache(root, 0).size() + sum(
        st.st_blocks * 512
        for p in root.iterdir()
        if p.name.startswith(RUN_PREFIX)
        for st in _stats(p)
        if st is not None
    )
    if root.is_dir() and not root.is_symlink():
        shutil.rmtree(root)
    else:
        raise SystemExit(f"--clean: {root} is not a directory")
    print(f"removed {root} ({size / 1e9:.2f} GB)")


# -------------------------------------------------------------------------------------------------
# options


def dir_argument(ap: argparse.ArgumentParser) -> None:
    """--dir, --cache-max and --clean: where the cache is, its bound, and its removal (handled by
    parse())."""
    limit = os.environ.get(CACHE_MAX_ENV)
    ap.add_argument(
        "--dir",
        type=Path,
        default=BENCH_DIR,
        help=f"the cache of generated collections ({BENCH_DIR}; ${DIR_ENV})",
    )
    ap.add_argument(
        "--cache-max",
        type=byte_size,
        default=byte_size(limit) if limit else DEFAULT_CACHE_MAX,
        help="bound of the cache: beyond it the least recently used collections are removed "
        "(default "
        f"{DEFAULT_CACHE_MAX / 1e9:g}G; ${CACHE_MAX_ENV})",
    )
    ap.add_argument(
        "--clean", action="store_true", help="remove the cache directory (--dir) and exit"
    )


def common_arguments(ap: argparse.ArgumentParser) -> None:
    """--quick and the cache's options."""
    ap.add_argument(
        "--quick",
        action="store_true",
        help="seconds: tiny inputs, one run, the same code path and lines (CI; not a measurement)",
    )
    dir_argument(ap)


def parse(
    ap: argparse.ArgumentParser, quick: dict[str, Any] | None = None, argv: list[str] | None = None
) -> argparse.Namespace:
    """The arguments, with `quick`'s values as the defaults under --quick (an option given still
    wins). --clean removes the cache and exits; else the cache is bounded and the quick banner
    printed."""
    a = ap.parse_args(argv)
    if getattr(a, "quick", False) and quick:
        ap.set_defaults(**quick)
        a = ap.parse_args(argv)
    if a.clean:
        clean(a.dir)
        raise SystemExit(0)
    if getattr(a, "quick", False):
        print(QUICK_BANNER, flush=True)
        atexit.register(print, QUICK_BANNER)
    CACHE.root, CACHE.limit = a.dir, a.cache_max
    a.dir.mkdir(parents=True, exist_ok=True)
    CACHE.bound()
    return a


# -------------------------------------------------------------------------------------------------
# figures: what bench/all.py tabulates and remembers

FIGURES_ENV = "SPMI_BENCH_FIGURES"


def partition_ran(p: dict[str, Any]) -> str:
    """A located partition's time from report.json: its seconds and its debugger's start, or that
    it never started (the locate ended before it: an earlier partition's crash came first)."""
    if p.get("seconds") is None:
        return "never started"
    return f"{p['seconds']:.2f} s, of which debugger start {p['debugger_startup_seconds']:.2f} s"


def figure(
    name: str, value: float, goal: str | None = None, unit: str = "", why: str | None = None
) -> None:
    """One figure of this bench, as bench/all.py reads it: appended as a JSON line to the file
    $SPMI_BENCH_FIGURES names (nothing when it names none). `goal`: "<= 0.75", ">= 0.85" (the
    direction says which change is for the worse); `unit`: "x", "ms", "s", "%"; `why`: what this
    run measured that decides the figure, shown by bench/all.py when the goal is missed."""
    path = os.environ.get(FIGURES_ENV)
    if not path:
        return
    import json
    import math

    finite = value if math.isfinite(value) else None  # JSON has no infinity: not measured
    record = {"bench": Path(sys.argv[0]).stem, "name": name, "value": finite, "goal": goal}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record | {"unit": unit, "why": why}) + "\n")


# -------------------------------------------------------------------------------------------------
# helpers


def native(relative: str) -> str:
    """An installed native artifact (spmi_dbg.paths names), or exit with what to do."""
    from spmi_dbg import paths

    p = paths.native_file(relative)
    if p is None:
        raise SystemExit(f"{relative} is not built: run pip install -e . first")
    return str(p)


def cached(out: Path, make: Callable[[Path], object], *companions: str) -> Path:
    """The cached file or directory `out`, made with make(out) unless it (and out + each companion
    suffix) is already there from an earlier run; marked used, and the cache bounded after a
    build."""
    if not (out.exists() and all(Path(str(out) + c).exists() for c in companions)):
        CACHE.use(out)  # before the build: bound() must not remove what is being made
        t = time.perf_counter()
        make(out)
        print(f"built {out} ({_size(out) / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s")
        CACHE.use(out)
        CACHE.bound()
    else:
        CACHE.use(out)
    return out


def _size(p: Path) -> int:
    return sum(st.st_size for st in _stats(p) if st is not None and stat.S_ISREG(st.st_mode))


def cached_collection(out: Path, **build_args: Any) -> Path:
    """The sample collection `out`, built with spmi_dbg.sample.build.build(out, **build_args) unless
    it (and its index) is already there from an earlier run."""
    from spmi_dbg.sample.build import SampleSpec, build

    return cached(out, lambda p: build(p, SampleSpec(**build_args)), ".mct")


def run_dir(directory: Path, name: str = "") -> tempfile.TemporaryDirectory[str]:
    """A temporary directory for one run's outputs under the cache directory (not part of the cache:
    never evicted; removed by the run)."""
    directory.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(
        prefix=f"{RUN_PREFIX}{name}-" if name else RUN_PREFIX, dir=directory
    )


def timed(cmd: list[str], **kw: Any) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall seconds of one run of `cmd` in the user's environment, and its result (output
    captured)."""
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=USER_ENV, **kw)
    return time.perf_counter() - t, r


def timed_repro(
    argv: list[str], bundle: Path, workers: int, *options: str
) -> tuple[float, dict[str, Any]]:
    """(b) of a time-to-repro bench: `spmi-dbg repro OPTIONS --workers W --out BUNDLE -- ARGV` end
    to end, run in the bundle's parent: its wall seconds and report.json (exit unless it exits
    0)."""
    t, r = timed(
        [
            sys.executable,
            "-m",
            "spmi_dbg",
            "repro",
            *options,
            "--workers",
            str(workers),
            "--out",
            str(bundle),
            "--",
            *argv,
        ],
        cwd=bundle.parent,
    )
    if r.returncode != 0:
        raise SystemExit(
            f"(b) spmi-dbg repro exited {r.returncode}: {r.stdout[-1500:]} {r.stderr[-1500:]}"
        )
    report: dict[str, Any] = json.loads((bundle / "report.json").read_text())
    return t, report


def load() -> str:
    """The load average, as printed beside a benchmark's figures."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def repro_arguments(ap: argparse.ArgumentParser, at: str) -> None:
    """The arguments of a time-to-repro bench: a collection of --methods with its trigger at --<at>,
    records
    --size-factor times the usual size, --workers, and the shared ones (--quick, --dir, ...)."""
    ap.add_argument("--methods", type=int, default=200_000)
    ap.add_argument(f"--{at}", type=int, default=150_000)
    ap.add_argument("--size-factor", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2)
    common_arguments(ap)


def warm(*paths: Path) -> None:
    """Read the files once, so that every timed run finds them in the page cache."""
    for p in paths:
        subprocess.run(["cat", str(p)], stdout=subprocess.DEVNULL, check=True)
