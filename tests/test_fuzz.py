"""Mutated collections: the Python API and the CLI answer with InputError / one line, never a
traceback or a crash, and the native and pure-Python scanners give identical results."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spmi_dbg.errors import InputError
from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.pyscan import Problem, Stats
from spmi_dbg.sample.synth import synthetic_collection

from .support.common import run_cli
from .support.mutations import mutate

BASE = b"".join(synthetic_collection(6, 3, with_compile_result=True, inlinees=1))


def _observe(path: Path, backend: str) -> tuple[object, ...]:
    try:
        col = Collection.open(path, backend=backend, use_toc=False)
    except InputError as e:
        return ("open", e.code, e.detail)
    with col:
        problems: list[Problem] = []
        stats = Stats()
        rc = col.scan(packets=True, stats=stats, problems=problems)
        table = [(r.number, r.offset, r.size) for r in col] if rc == 0 else None
        decoded = []
        if table:
            for n, _, _ in table:
                try:
                    mc = col.method_context(n)
                    decoded.append((mc.name, mc.il_size, len(mc.packets)))
                except InputError as e:
                    decoded.append(("error", e.detail))
        return (rc, problems, table, stats, decoded)


@pytest.mark.unit
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 4))
def test_backends_agree_on_mutated_collections(tmp_path: Path, seed: int, steps: int) -> None:
    path = tmp_path / "m.mch"
    path.write_bytes(mutate(BASE, random.Random(seed), steps))
    assert _observe(path, "native") == _observe(path, "python")


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1))
def test_cli_on_mutated_collections(tmp_path: Path, seed: int) -> None:
    tmp_path = tmp_path / f"case{seed}"  # the fixture directory is shared by all examples
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "m.mch"
    path.write_bytes(mutate(BASE, random.Random(seed), 2))
    for args in (
        ["verify", str(path)],
        ["info", str(path)],
        ["extract", "-c", "1-3", str(path), str(tmp_path / "o.mch")],
    ):
        r = run_cli("mch", *args)
        assert r.returncode in (0, 1), r.stderr
        assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
        if r.returncode and args[0] != "verify":
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        if args[0] == "extract" and r.returncode:
            assert not (tmp_path / "o.mch").exists()
    # leftovers of atomic writes never remain
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
