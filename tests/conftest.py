"""Every fixture of the suite (test modules use them by name, never import them or each other).
Plain helpers and constants are in tests/support/."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .support.common import (
    ALL_KINDS_AT,
    ROOT,
    Collections,
    build_collection,
    run_cli,
    sample_jits,
    samplejit_host,
)

# importing it looks up the native artifacts, which only some tests need: in the fixture
if TYPE_CHECKING:
    from .support.diagnosis import Runs


@pytest.fixture(autouse=True)
def _a_unit_test_starts_no_process(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test marked `unit` (pytest -m unit: the suite's part that runs in seconds) starts no
    debugger, replay or other process: each way to start one fails it, naming what it tried."""
    if request.node.get_closest_marker("unit") is None:
        return

    def refused(what: str) -> Callable[..., None]:
        def start(*args: object, **kwargs: object) -> None:
            command = [a for a in args if not isinstance(a, subprocess.Popen)][:1]
            raise AssertionError(f"a test marked unit started a process ({what}: {command!r})")

        return start

    monkeypatch.setattr(subprocess.Popen, "__init__", refused("subprocess.Popen"))
    for name in ("posix_spawn", "posix_spawnp", "fork", "forkpty", "system", "execv", "execve"):
        monkeypatch.setattr(os, name, refused(f"os.{name}"))


@pytest.fixture(scope="session", autouse=True)
def _every_sarif_written_is_one_a_ci_accepts(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """At the session's end, every .sarif file the tests wrote (report.sarif, triage.sarif,
    recheck.sarif) is checked as a CI would use it: the OASIS schema, code scanning's required
    fields, and sarif-tools' summary, ls and codeclimate (issue 38 item 1)."""
    yield
    base = tmp_path_factory.getbasetemp()
    files = sorted(base.rglob("*.sarif"))
    if not files:
        return
    from .support.sarif_check import check_file, converted

    for f in files:
        check_file(f)
    converted(files, base / "sarif-tools")


@pytest.fixture
def sample(tmp_path: Path) -> tuple[Path, list[bytes]]:
    """A 50-record collection with stored compile results and a .mct carrying (fake, but
    recognisable) hashes."""
    p = tmp_path / "sample.mch"
    return p, build_collection(p, with_compile_result=True)


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli


@pytest.fixture(scope="session")
def cols(tmp_path_factory: pytest.TempPathFactory) -> Collections:
    """The sample collections, each built once per test session (by name) and shared by every
    module."""
    return Collections(tmp_path_factory.mktemp("replay-collections"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """tests/test_debug_diagnosis.py's collections and real-debugger runs, each run once for the
    module."""
    from .support.diagnosis import Runs

    return Runs(tmp_path_factory.mktemp("debug-diagnosis"))


@pytest.fixture(scope="module")
def seed_bundle(cols: Collections, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A verified repro bundle of the seed crash (found in a -p run) and the command's output."""
    from .support.common import seed_collection
    from .support.natives import BASE, DIFF, REPLAY, SEED_OPTIONS
    from .support.pipeline import repro, repro_args

    tmp = tmp_path_factory.mktemp("report")
    mch = seed_collection(cols)
    r = repro(
        *repro_args(
            REPLAY, *SEED_OPTIONS, "-p", BASE, DIFF, str(mch), out="b", workers=2, verify_runs=2
        ),
        cwd=tmp,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return tmp / "b", r.stdout


@pytest.fixture(scope="module")
def injected_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same Arm64 collection twice: plain, and with every injection kind at ALL_KINDS_AT."""
    from spmi_dbg.sample.build import SampleSpec, build

    d = tmp_path_factory.mktemp("inj")
    plain, inj = d / "plain.mch", d / "inj.mch"
    build(plain, SampleSpec(220, 3, arch="arm64"))
    build(inj, SampleSpec(220, 3, arch="arm64", injections=list(ALL_KINDS_AT.items())))
    return plain, inj


@pytest.fixture(scope="session")
def mchcheck_asan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """native/'s mchcheck built with -DSPMI_SANITIZE=ON (AddressSanitizer +
    UndefinedBehaviorSanitizer)."""
    build = tmp_path_factory.mktemp("asan-build")
    cmake = shutil.which("cmake")
    assert cmake, "cmake is needed to build the sanitizer harness (.ci/run installs it)"
    subprocess.run(
        [
            cmake,
            "-S",
            str(ROOT / "native"),
            "-B",
            str(build),
            "-DSPMI_SANITIZE=ON",
            "-DSPMI_PYTHON_BINDINGS=OFF",
            "-DCMAKE_BUILD_TYPE=Debug",
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [cmake, "--build", str(build), "--target", "mchcheck", "spmi-mch-verify", "-j2"],
        check=True,
        capture_output=True,
    )
    exe = next(p for p in build.rglob("mchcheck") if p.is_file())
    return exe


@pytest.fixture(scope="session")
def mchcheck_tsan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """native/'s mchcheck built with -DSPMI_TSAN=ON (ThreadSanitizer)."""
    build = tmp_path_factory.mktemp("tsan-build")
    cmake = shutil.which("cmake")
    assert cmake, "cmake is needed to build the sanitizer harness (.ci/run installs it)"
    for step in (
        [
            cmake, "-S", str(ROOT / "native"), "-B", str(build), "-DSPMI_TSAN=ON",
            "-DSPMI_PYTHON_BINDINGS=OFF", "-DCMAKE_BUILD_TYPE=Debug",
        ],
        [cmake, "--build", str(build), "--target", "mchcheck", "-j2"],
    ):  # fmt: skip
        subprocess.run(step, check=True, capture_output=True)
    return next(p for p in build.rglob("mchcheck") if p.is_file())


@pytest.fixture(scope="session")
def fuzz_spmimch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """native/mch/fuzz_spmimch.c built with clang-16 and libFuzzer (-DSPMI_FUZZ=ON)."""
    clang = shutil.which("clang-16")
    assert clang, (
        "clang-16 is needed for the fuzz target (scripts/setup-debian.sh --test installs it)"
    )
    build = tmp_path_factory.mktemp("fuzz-build")
    cmake = shutil.which("cmake")
    assert cmake, "cmake is needed to build the fuzz target (.ci/run installs it)"
    env = dict(os.environ, CC=clang, CXX=clang.replace("clang", "clang++"))
    for step in (
        [
            cmake, "-S", str(ROOT / "native"), "-B", str(build), "-DSPMI_FUZZ=ON",
            "-DSPMI_PYTHON_BINDINGS=OFF", "-DCMAKE_BUILD_TYPE=Debug",
        ],
        [cmake, "--build", str(build), "--target", "fuzz_spmimch", "-j2"],
    ):  # fmt: skip
        subprocess.run(step, check=True, capture_output=True, env=env)
    return next(p for p in build.rglob("fuzz_spmimch") if p.is_file())


@pytest.fixture
def samplejit_built() -> None:
    """tests/test_sample_jit.py uses it on every test (pytestmark). Never skipped: `pip install -e
    .` builds both (CI runs exactly that)."""
    assert samplejit_host() is not None, (
        "samplejit-test was not built (build/*/jit/samplejit-test or $SAMPLEJIT_TEST)"
    )
    assert None not in sample_jits().values(), "the sample JITs are not installed with the package"


# ---------------------------------------------------------------------------------- the live half
# tests/real/ has two halves (tests/real/README.md): the data half runs everywhere, the live half
# (marker `live`) only where SPMI_DBG_REAL_SUPERPMI names a real build. Without one the live tests
# are deselected, never skipped or failed, and the run says so in one line.
_LIVE_NOTE: list[str] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from .support.real import live_build_present, no_build_reason

    if live_build_present():
        return
    live = [i for i in items if i.get_closest_marker("live") is not None]
    if not live:
        return
    config.hook.pytest_deselected(items=live)
    items[:] = [i for i in items if i.get_closest_marker("live") is None]
    _LIVE_NOTE.append(
        f"live real-superpmi suite not run ({len(live)} tests deselected): {no_build_reason()}"
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in _LIVE_NOTE:
        terminalreporter.write_line(line)
