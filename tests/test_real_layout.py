"""The real superpmi reference's files are named once (scripts/real_superpmi_layout.py): the
conformance suite (tests/support/real.py) and the bench (bench/real_superpmi.py) find the same
build and refuse the same incomplete one, naming the same missing files; without a build the live
half is deselected with one line, the data half still runs; the tool never imports the layout (it is
not shipped)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.real_superpmi_layout import ENV, Real

from .support import real as suite
from .support.common import ROOT


def incomplete(tmp_path: Path) -> tuple[Real, list[Path]]:
    """A build with every file of the layout but two (one binary, one collection's index)."""
    ref = Real(tmp_path / "ref")
    gone = [ref.jit_official, ref.api_reljit_index]
    for p in ref.required():
        if p not in gone:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b"")
    return ref, gone


def bench(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "real_superpmi.py"),
            "--quick",
            "--dir",
            str(tmp_path / "cache"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env=env,
    )


def test_the_suite_and_the_bench_refuse_the_same_incomplete_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref, gone = incomplete(tmp_path)
    assert ref.missing() == gone
    monkeypatch.setenv(ENV, str(ref.root))
    with pytest.raises(AssertionError) as refused:
        suite.real_superpmi()
    assert f"missing {gone[0]}, {gone[1]}" in str(refused.value)
    r = bench(tmp_path, {**os.environ, ENV: str(ref.root)})
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"bench/real_superpmi.py: the real superpmi build {ENV} names ({ref.root}) is "
        f"incomplete: missing {gone[0]}, {gone[1]}"
    ]


def test_without_a_build_the_bench_says_why_in_one_line(tmp_path: Path) -> None:

    env = {k: v for k, v in os.environ.items() if k != ENV}
    r = bench(tmp_path, env)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"bench/real_superpmi.py: {suite.no_build_reason()}"]


@pytest.mark.unit
def test_the_suite_finds_the_build_where_the_variable_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ref, _ = incomplete(tmp_path)
    ref.jit_official.write_bytes(b"")
    ref.api_reljit_index.write_bytes(b"")
    monkeypatch.setenv(ENV, str(ref.root))
    assert suite.live_build_present() and suite.real_superpmi() == ref
    monkeypatch.delenv(ENV)
    assert not suite.live_build_present()


LIVE_AND_DATA = """
import pytest

@pytest.mark.live
def test_live() -> None:
    pass

def test_data() -> None:
    pass
"""


@pytest.mark.parametrize("with_build", [False, True])
def test_the_live_half_is_deselected_with_one_line_without_a_build(
    tmp_path: Path, with_build: bool
) -> None:
    """The suite's own hook (tests/conftest.py) on a module with one test of each half."""

    tests = tmp_path / "tests"
    shutil.copytree(ROOT / "tests" / "support", tests / "support")
    (tests / "__init__.py").write_text("")
    shutil.copy(ROOT / "tests" / "conftest.py", tests / "conftest.py")
    (tests / "test_halves.py").write_text(LIVE_AND_DATA)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{tmp_path}"
    if with_build:
        env[ENV] = str(tmp_path / "somewhere")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/test_halves.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env=env,
    )
    said = [line for line in r.stdout.splitlines() if "live real-superpmi suite not run" in line]
    if with_build:
        assert r.returncode == 0 and "2 passed" in r.stdout and said == [], r.stdout
    else:
        assert r.returncode == 0 and "1 passed, 1 deselected" in r.stdout, r.stdout
        assert said == [
            f"live real-superpmi suite not run (1 tests deselected): {suite.no_build_reason()}"
        ]


@pytest.mark.unit
def test_the_tool_does_not_import_the_layout() -> None:
    imported = [
        (p.name, getattr(n, "module", None) or n.names[0].name)
        for p in (ROOT / "spmi_dbg").rglob("*.py")
        for n in ast.walk(ast.parse(p.read_text()))
        if isinstance(n, ast.Import | ast.ImportFrom)
    ]
    assert any(name == "spmi_dbg.mch.collection" for _, name in imported)  # the walk sees imports
    assert [i for i in imported if i[1] == "scripts" or i[1].startswith("scripts.")] == []
