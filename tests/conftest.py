from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from spmi_dbg.mch.collection import write_index_file
from spmi_dbg.sample.synth import synthetic_collection

BACKENDS = ["native", "python"]


def native(relative: str) -> str:
    """An installed native artifact (a `spmi_dbg.paths` name); its absence fails the test, never skips it."""
    from spmi_dbg import paths

    p = paths.native_file(relative)
    assert p is not None, f"{relative} is not built: run pip install -e . first"
    return str(p)


def build_collection(path: Path, count: int = 50, seed: int = 7, index: bool = True, **kwargs: object) -> list[bytes]:
    records = list(synthetic_collection(count, seed, **kwargs))
    path.write_bytes(b"".join(records))
    if index:
        entries = []
        pos = 0
        for i, r in enumerate(records, 1):
            entries.append((pos, i, f"{i:032X}".encode() + b"\0"))
            pos += len(r)
        write_index_file(path.with_name(path.name + ".mct"), entries)
    return records


@pytest.fixture
def sample(tmp_path: Path) -> tuple[Path, list[bytes]]:
    """A 50-record collection with stored compile results and a .mct carrying (fake, but recognisable) hashes."""
    p = tmp_path / "sample.mch"
    return p, build_collection(p, with_compile_result=True)


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "spmi_dbg", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli


ROOT = Path(__file__).resolve().parent.parent
AARCH64 = ROOT / "build" / "aarch64" / "install" / "spmi_dbg" / "_native"


def aarch64_native(relative: str) -> str:
    """The Linux Arm64 build of a native artifact (scripts/build-aarch64.sh, run by setup-debian.sh --test)."""
    p = AARCH64 / relative
    assert p.is_file(), f"{p} is not built: run scripts/build-aarch64.sh (setup-debian.sh --test runs it)"
    return str(p)
