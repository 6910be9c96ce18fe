"""What the failure needs (spmi_dbg.repro.needs), the CI twin of tests/real/test_needs_real.py:
the switches are read from the JIT binary itself (Microsoft's Release JIT carries only MinOpts'; a
UTF-16 or plain name counts only whole), each is tried once, several at once, and the repro pipeline
says the result (on the bundled core, whose sample JIT has none of the real JIT's switches)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from spmi_dbg.repro.needs import SWITCHES, Outcome, find_needs, switches_of

from .support.common import Collections
from .support.natives import BASE, REPLAY
from .support.pipeline import report, repro, repro_args
from .support.real import reference


@pytest.mark.unit
def test_the_official_release_jit_has_only_minopts() -> None:
    official = reference().official_jit
    assert [s[0] for s in switches_of(official)] == ["JITMinOpts"]
    n = find_needs(str(official), lambda k, v: ("gone with", "exit status 0"), workers=2)
    assert [t.option for t in n.trials] == ["JITMinOpts"]
    assert any("no single-optimization switch" in note for note in n.notes)


@pytest.mark.unit
def test_names_count_only_whole(tmp_path: Path) -> None:
    jit = tmp_path / "libclrjit.so"
    wide = lambda s: s.encode("utf-16-le")  # noqa: E731
    jit.write_bytes(
        b"\0\0"
        + wide("JitDoSsa")
        + b"\0\0"  # 3.1's W("JitDoSsa")
        + b"\0JitNoCSE\0"  # a plain name
        + b"\0\0"
        + wide("XJitDoValueNumber")
        + b"\0\0"  # not the switch
        + b"\0JitNoInlineFoo\0"
    )
    assert [s[0] for s in switches_of(jit)] == ["JitDoSsa", "JitNoCSE"]
    assert switches_of(tmp_path / "none.so") == []


@pytest.mark.unit
def test_each_switch_is_tried_once_several_at_once(tmp_path: Path) -> None:
    jit = tmp_path / "libclrjit.so"
    jit.write_bytes(b"".join(b"\0" + name.encode() + b"\0" for name, _, _ in SWITCHES))
    started, most, running = 0, 0, 0
    lock = threading.Lock()
    # the first two trials meet here: they can only if they run at once (no timing decides it;
    # run one at a time, the first would wait alone and the barrier break)
    together = threading.Barrier(2, timeout=60)

    def trial(key: str, value: str) -> tuple[Outcome, str]:
        nonlocal started, running, most
        with lock:
            started += 1
            first_two = started <= 2
            running += 1
            most = max(most, running)
        if first_two:
            together.wait()
        with lock:
            running -= 1
        return ("gone with" if key == "JitDoSsa" else "still fails with"), f"{key}={value}"

    n = find_needs(str(jit), trial, workers=3, given=frozenset({"JitNoCSE"}))
    tried = [t.option for t in n.trials]
    assert len(tried) == len(set(tried)) == len(SWITCHES) - 1 and "JitNoCSE" not in tried
    assert most > 1
    assert n.summary().startswith("gone with JitDoSsa=0; still fails with ")
    assert any("JitNoCSE" in note for note in n.notes)


def test_the_pipeline_says_what_it_could_try(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("needs", 30, inject=[("jit-assert", 12)])
    r = repro(
        *repro_args(REPLAY, BASE, str(mch), out="a", options=("--failure", "assert")), cwd=tmp_path
    )
    assert r.returncode == 0, r.stdout + r.stderr
    n = report(tmp_path / "a")["needs"]
    assert n["needs"] == [] and "carries none of the optimization switches" in n["notes"][0]
    r = repro(
        *repro_args(REPLAY, BASE, str(mch), out="b", options=("--failure", "assert", "--no-needs")),
        cwd=tmp_path,
    )
    assert r.returncode == 0 and report(tmp_path / "b")["needs"] is None
