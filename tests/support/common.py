"""Shared helpers that look nothing up at import: conftest.py imports this module, so a missing
native artifact fails only the tests that need it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from spmi_dbg.driver.registry import NAMES
from spmi_dbg.mch.collection import Collection, write_index_file
from spmi_dbg.mch.mclist import parse_mclist
from spmi_dbg.sample.build import SampleSpec, build, load_corpus
from spmi_dbg.sample.inject import KINDS
from spmi_dbg.sample.synth import synthetic_collection

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent.parent
CORPUS = ROOT / "examples" / "corpus"
# The files every crash's repro bundle holds, as the tests expect them: the tests' own list, not the
# product's BUNDLE_FILES, so a file the product stops writing fails them
BUNDLE_FILES = (
    "repro.mch",
    "repro.mch.mct",
    "repro.sh",
    "diagnosis.json",
    "report.md",
    "report.json",
    "debugger.log",
    "replay.stdout",
    "replay.stderr",
)
AARCH64 = ROOT / "build" / "aarch64" / "install" / "spmi_dbg" / "_native"

BACKENDS = ["native", "python"]
DEBUGGERS = list(NAMES)  # the tests parametrized by debugger: one fresh debugger per test case


def native(relative: str) -> str:
    """An installed native artifact (a `spmi_dbg.paths` name); its absence fails the test, never
    skips it."""
    from spmi_dbg import paths

    p = paths.native_file(relative)
    assert p is not None, f"{relative} is not built: run pip install -e . first"
    return str(p)


def aarch64_native(relative: str) -> str:
    """The Linux Arm64 build of a native artifact (scripts/build-aarch64.sh, run by setup-debian.sh
    --test)."""
    p = AARCH64 / relative
    assert p.is_file(), (
        f"{p} is not built: run scripts/build-aarch64.sh (setup-debian.sh --test runs it)"
    )
    return str(p)


def build_collection(
    path: Path, count: int = 50, seed: int = 7, index: bool = True, **kwargs: object
) -> list[bytes]:
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


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`spmi-dbg ARGS` as a user runs it; `env`: variables to set beside the test's own."""
    env = dict(os.environ, COLUMNS="200", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "spmi_dbg", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


class Collections:
    """Sample collections, built once per test session (the `cols` fixture)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, Path] = {}

    def get(
        self,
        name: str,
        methods: int,
        *,
        arch: str = "x64",
        seed: int = 1,
        inject: Sequence[tuple[str, int]] = (),
        corpus: Sequence[str] = (),
        config: Sequence[tuple[str, int, int]] = (),
    ) -> Path:
        if name not in self._cache:
            out = self.root / f"{name}.mch"
            methods_list = [m for a in load_corpus([CORPUS / c for c in corpus]) for m in a.methods]
            build(out, SampleSpec(methods, seed, arch, inject, methods_list, config))
            self._cache[name] = out
        return self._cache[name]

    # The collections the tests share.
    def clean(self) -> Path:
        return self.get("clean", 1200)

    def mixed(self) -> Path:
        return self.get(
            "mixed",
            120,
            inject=[
                ("jit-null", 10),
                ("jit-assert", 20),
                ("missing", 30),
                ("ee-exception", 40),
                ("diff-assert", 50),
            ],
        )

    def seed_arm64(self) -> Path:
        return self.get("seed", 1200, arch="arm64", seed=2, inject=[("seed-arm64", 700)])


def seed_collection(cols: Collections) -> Path:
    """The seed crash at method context 300 of 400 (the repro, report, triage and qemu tests)."""
    return cols.get("repro-seed", 400, arch="arm64", seed=2, inject=[("seed-arm64", 300)])


def mc_bytes(path: Path, number: int) -> bytes:
    with Collection.open(path) as col:
        rec = col.locate(number)
    return path.read_bytes()[rec.offset : rec.offset + rec.size]


# Every injection kind once, 17 method contexts apart (the `injected_pair` fixture,
# tests/test_sample.py).
ALL_KINDS_AT = {kind: 10 + 17 * i for i, kind in enumerate(KINDS)}


def samplejit_host() -> Path | None:
    """The sample JITs' test host (built beside the native core), or $SAMPLEJIT_TEST."""
    env = os.environ.get("SAMPLEJIT_TEST")
    if env:
        return Path(env) if Path(env).is_file() else None
    found = sorted(ROOT.glob("build/*/jit/samplejit-test"))
    return found[-1] if found else None


def sample_jits() -> dict[str, Path | None]:
    from spmi_dbg import paths

    return {"base": paths.native_file(paths.BASE_JIT), "diff": paths.native_file(paths.DIFF_JIT)}


def wait_for(what: Callable[[], T | None], timeout: float = 60.0, every: float = 0.05) -> T:
    """What `what()` gives once it is truthy, asked every `every` seconds; AssertionError after
    `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:g} s")


def killed_at(
    argv: Sequence[str], cwd: Path, point: Callable[[], bool], timeout: float = 120
) -> None:
    """`spmi-dbg ARGV` in a session of its own, killed -9 whole (the tool, its debuggers and
    replays) once `point()` holds -- or left alone if it ends first."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "spmi_dbg", *argv],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: proc.poll() is not None or point(), timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def whole_texts(paths: Iterable[Path]) -> list[str]:
    """The files' texts that can be read whole now (journals are replaced atomically; one may
    be gone between listing and reading)."""
    out = []
    for p in paths:
        with contextlib.suppress(OSError):
            out.append(p.read_text())
    return out


def replaying(number: int, collection: Path) -> list[int]:
    """The pids of the spmi-replay processes on this machine replaying `collection` (a file, or a
    directory of them) with a `-c` that covers method context `number`: a replay under way there,
    what a test waits for before it kills something mid-replay."""
    found = []
    prefix = str(collection).encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not argv or Path(argv[0].decode(errors="replace")).name != "spmi-replay":
            continue
        if not any(a.startswith(prefix) for a in argv[1:]):
            continue
        specs = [argv[i + 1].decode() for i, a in enumerate(argv[:-1]) if a == b"-c"]
        if any(number in parse_mclist(spec) for spec in specs):
            found.append(int(pid))
    return found
