"""report.md's "The method" and report.json's `method` (issue 41 item 4): the failing method
context's IL with the names the collection recorded, its flags and callees, and -- where the JIT
state established it -- the instruction the JIT was importing, marked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.mch.collection import Collection
from spmi_dbg.method.decode import decode
from spmi_dbg.method.recorded import Answers

from .support.common import Collections, run_cli
from .support.natives import BASE, REPLAY
from .support.pipeline import report, repro, repro_args, validate

ASSERT_AT = 40  # the jit-assert record: `ldarg.0 ldc.i4.m1 shl`, the importer asserts on the shl


@pytest.fixture(scope="module")
def assert_bundle(cols: Collections, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A verified repro of a JIT assert in the importer (the collection, the bundle)."""
    mch = cols.get("method-assert", 120, inject=[("jit-assert", ASSERT_AT)])
    tmp = tmp_path_factory.mktemp("method")
    args = repro_args(
        REPLAY, BASE, str(mch), out="b", workers=2, verify_runs=1, options=("--failure", "assert")
    )
    r = repro(*args, cwd=tmp)
    assert r.returncode == 0, r.stdout + r.stderr
    return mch, tmp / "b"


def _decoded(mch: Path, number: int) -> dict[int, str]:
    with Collection.open(mch) as col:
        root = Answers.of_packets(col.packets(number)).root
    assert root is not None
    return {i.offset: i.name for i in decode(root[1])}


def test_report_json_holds_the_method_as_data(assert_bundle: tuple[Path, Path]) -> None:
    mch, bundle = assert_bundle
    rep: dict[str, Any] = report(bundle)
    validate(rep)
    m = rep["method"]
    assert m["method_context"] == ASSERT_AT and m["il_size"] > 0
    with Collection.open(mch) as col:
        assert m["name"] == col.method_context(ASSERT_AT).name
    decoded = _decoded(mch, ASSERT_AT)
    assert [ln["offset"] for ln in m["lines"]] == list(decoded)
    assert m["flags"]["summary"] == ["full optimization (no tier flag)"]


def test_the_instruction_the_importer_was_at_is_marked(assert_bundle: tuple[Path, Path]) -> None:
    mch, bundle = assert_bundle
    rep = report(bundle)
    m, jit = rep["method"], rep["diagnosis"]["jit"]
    assert m["marked"] == jit["il_offset"] and m["marked_source"] == "Compiler::impCurStmtOffs"
    assert _decoded(mch, ASSERT_AT)[m["marked"]] == "shl"
    md = (bundle / "report.md").read_text()
    assert "#### The method" in md
    assert f"The JIT was importing the statement at IL_{m['marked']:04x}" in md
    (marked,) = [ln for ln in md.splitlines() if ln.endswith("// <-- the JIT was here")]
    assert marked.startswith(f"IL_{m['marked']:04x}:  shl")
    assert "`spmi-dbg mch il --callees repro.mch 1`" in md


def test_the_command_the_report_gives_shows_the_same_il(assert_bundle: tuple[Path, Path]) -> None:
    _, bundle = assert_bundle
    r = run_cli("mch", "il", "repro.mch", "1", cwd=bundle)
    assert r.returncode == 0, r.stderr
    lines = [ln["text"] for ln in report(bundle)["method"]["lines"]]
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("IL_")] == lines


def test_a_crash_outside_the_jit_has_the_method_unmarked(seed_bundle: tuple[Path, str]) -> None:
    bundle, _ = seed_bundle
    m = report(bundle)["method"]
    assert m["marked"] is None and m["name"] and m["lines"]
    md = (bundle / "report.md").read_text()
    assert "#### The method" in md and "<-- the JIT was here" not in md
