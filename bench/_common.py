"""Shared by the bench/ scripts: the package on sys.path, the installed native binaries, and the environment
timed commands run with."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Commands run as in a user's shell: with Python's bytecode cache on (a shell that exports
# PYTHONDONTWRITEBYTECODE makes every start recompile the package, ~50 ms).
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def native(relative: str) -> str:
    """An installed native artifact (spmi_dbg.paths names), or exit with what to do."""
    from spmi_dbg import paths

    p = paths.native_file(relative)
    if p is None:
        raise SystemExit(f"{relative} is not built: run pip install -e . first")
    return str(p)


def cached_collection(out: Path, **build_args: Any) -> Path:
    """The sample collection `out`, built with spmi_dbg.sample.build.build(out, **build_args) unless it (and its
    index) is already there from an earlier run."""
    from spmi_dbg.sample.build import build

    if not (out.exists() and Path(str(out) + ".mct").exists()):
        t = time.perf_counter()
        build(out, **build_args)
        print(f"built {out} ({out.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s")
    return out


def timed(cmd: list[str], **kw: Any) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall seconds of one run of `cmd` in the user's environment, and its result (output captured)."""
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=USER_ENV, **kw)
    return time.perf_counter() - t, r


def load() -> str:
    """The load average, as printed beside a benchmark's figures."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


BENCH_DIR = Path(tempfile.gettempdir()) / "spmi-bench"  # where the benches cache their collections


def dir_argument(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--dir", type=Path, default=BENCH_DIR, help=f"where the collections are cached ({BENCH_DIR})")


def repro_arguments(ap: argparse.ArgumentParser, at: str) -> None:
    """The arguments of a time-to-repro bench: a collection of --methods with its trigger at --<at>, records
    --size-factor times the usual size, --workers, --dir."""
    ap.add_argument("--methods", type=int, default=200_000)
    ap.add_argument(f"--{at}", type=int, default=150_000)
    ap.add_argument("--size-factor", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2)
    dir_argument(ap)


def warm(*paths: Path) -> None:
    """Read the files once, so that every timed run finds them in the page cache."""
    for p in paths:
        subprocess.run(["cat", str(p)], stdout=subprocess.DEVNULL, check=True)
