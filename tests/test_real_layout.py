"""The real superpmi reference's files are named once (scripts/real_superpmi_layout.py): the
conformance suite (tests/support/real.py) and the bench (bench/real_superpmi.py) find the same
reference and refuse the same incomplete one, naming the same missing files; the tool never imports
the layout (it is not shipped)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.real_superpmi_layout import ENV, Real

from .support import real as suite
from .support.common import ROOT


def incomplete(tmp_path: Path) -> tuple[Real, list[Path]]:
    """A reference with every file of the layout but two (one binary, one collection's index)."""
    ref = Real(tmp_path / "ref")
    gone = [ref.jit_official, ref.api_reljit_index]
    for p in ref.required():
        if p not in gone:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b"")
    return ref, gone


def test_the_suite_and_the_bench_refuse_the_same_incomplete_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref, gone = incomplete(tmp_path)
    assert ref.missing() == gone
    monkeypatch.setenv(ENV, str(ref.root))
    with pytest.raises(AssertionError) as refused:
        suite.real_superpmi()
    assert f"missing {gone[0]}, {gone[1]}" in str(refused.value)
    r = subprocess.run(
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
    )
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"bench/real_superpmi.py: the real superpmi is not at {ref.root} (set {ENV}, or run "
        f"scripts/unpack-real-superpmi.sh): missing {gone[0]}, {gone[1]}"
    ]


def test_the_suite_finds_the_reference_where_the_layout_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ref, _ = incomplete(tmp_path)
    ref.jit_official.write_bytes(b"")
    ref.api_reljit_index.write_bytes(b"")
    monkeypatch.setenv(ENV, str(ref.root))
    assert suite.real_superpmi() == ref


def test_the_tool_does_not_import_the_layout() -> None:
    imported = [
        (p.name, getattr(n, "module", None) or n.names[0].name)
        for p in (ROOT / "spmi_dbg").rglob("*.py")
        for n in ast.walk(ast.parse(p.read_text()))
        if isinstance(n, ast.Import | ast.ImportFrom)
    ]
    assert any(name == "spmi_dbg.mch.collection" for _, name in imported)  # the walk sees imports
    assert [i for i in imported if i[1] == "scripts" or i[1].startswith("scripts.")] == []
