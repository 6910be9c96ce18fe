"""Tapes (spmi_dbg.analysis.tape): `spmi why --record FILE` in a real gdb and a real lldb writes
what the diagnosis read at the stop, and `spmi-dbg why FILE` gives the same diagnosis from the tape
alone: without the debugger, with the binaries and the collection gone. Stops of the bundled core
in both eras (today's seed crash, 3.1's null map with block-buffered stdout and no signal handler,
an assert under -boa); tapes of the real superpmi's stops are committed under tests/fixtures/tapes/
(tests/real/test_tapes_real.py replays them, and re-records them where a real build is present)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from .support.common import DEBUGGERS, Collections, run_cli
from .support.natives import BASE, DIFF, REPLAY, SEED_OPTIONS
from .test_debug_diagnosis import gdb_session, lldb_session


def session(debugger: str, argv: list[str], commands: list[str]) -> dict[str, str]:
    return (gdb_session if debugger == "gdb" else lldb_session)(argv, commands)


def same_diagnosis(live: dict[str, Any], replayed: dict[str, Any]) -> None:
    """Every fact the same; only the debugger's name says it was a tape."""
    assert {k: v for k, v in replayed.items() if k != "debugger"} == {
        k: v for k, v in live.items() if k != "debugger"
    }


def record(
    debugger: str, argv: list[str], tape: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """The live diagnosis (diagnose --json) with its tape written to `tape`."""
    old = os.environ.copy()
    if env:
        os.environ.update(env)
    try:
        out = session(debugger, argv, [f"spmi diagnose --json --record {tape}"])
    finally:
        os.environ.clear()
        os.environ.update(old)
    text = next(iter(out.values()))
    line = next(x for x in text.splitlines() if x.startswith("{"))
    live: dict[str, Any] = json.loads(line)
    assert tape.is_file(), text
    return live


def replay(tape: Path) -> dict[str, Any]:
    r = run_cli("why", "--json", str(tape))
    assert r.returncode == 0, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


@pytest.fixture(scope="module")
def era31_col(cols: Collections) -> Path:
    return cols.get("tape-era31", 60, inject=[("null-map", 40), ("jit-assert", 20)])


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_the_seed_crash_from_its_tape_without_the_binaries(
    cols: Collections, tmp_path: Path, debugger: str
) -> None:
    """The tape is replayed after the collection and the binaries are gone: the method context's
    name and IL size come from the tape's record of the collection."""
    work = tmp_path / "w"
    work.mkdir()
    mch = work / "seed.mch"
    shutil.copy(cols.get("tape-seed", 60, arch="arm64", seed=2, inject=[("seed-arm64", 30)]), mch)
    jits = [shutil.copy(j, work / Path(j).name) for j in (BASE, DIFF)]
    tape = tmp_path / "seed.tape.json"
    live = record(debugger, [REPLAY, *SEED_OPTIONS, *map(str, jits), str(mch)], tape)
    assert live["null_map"]["member"] == "CompileMethod"
    # lldb 16 may not read the number at -O2 (test_debug_diagnosis.test_seed_crash): then neither
    # does the tape
    if debugger == "gdb":
        assert live["method_context"]["number"] == 30 and live["method_context"]["name"]
    shutil.rmtree(work)
    replayed = replay(tape)
    same_diagnosis(live, replayed)
    assert replayed["debugger"].startswith("tape of ")
    assert tape.stat().st_size < 256 * 1024, tape.stat().st_size  # small: what was read, only


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_a_31_null_map_from_its_tape(era31_col: Path, tmp_path: Path, debugger: str) -> None:
    tape = tmp_path / "nullmap.tape.json"
    live = record(
        debugger, [REPLAY, "-c", "40", BASE, str(era31_col)], tape, env={"SPMI_REPLAY_ERA": "3.1"}
    )
    assert live["signal"]["name"] == "SIGSEGV" and live["null_map"]["member"] == "GetMethodSig"
    same_diagnosis(live, replay(tape))


def test_an_assert_under_boa_from_its_tape(era31_col: Path, tmp_path: Path) -> None:
    tape = tmp_path / "assert.tape.json"
    live = record("gdb", [REPLAY, "-boa", "-c", "20", BASE, str(era31_col)], tape)
    assert live["signal"]["name"] == "SIGTRAP" and live["assertion"] is not None
    same_diagnosis(live, replay(tape))


def test_why_prints_the_text_and_the_record_option_says_where(
    era31_col: Path, tmp_path: Path
) -> None:
    tape = tmp_path / "t.json"
    out = gdb_session(
        [REPLAY, "-boa", "-c", "20", BASE, str(era31_col)], [f"spmi why --record {tape}"]
    )
    text = next(iter(out.values()))
    assert text.rstrip().endswith(f"tape: {tape}")
    r = run_cli("why", str(tape))
    assert r.returncode == 0 and r.stdout.strip() == text.rstrip().rsplit("\n", 1)[0].strip()


def test_a_redacted_tape_names_no_home(era31_col: Path, tmp_path: Path) -> None:
    home = tmp_path / "home" / "jdoe"
    home.mkdir(parents=True)
    mch = home / "c.mch"
    shutil.copy(era31_col, mch)
    shutil.copy(str(era31_col) + ".mct", str(mch) + ".mct")
    tape = tmp_path / "r.json"
    old = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        gdb_session(
            [REPLAY, "-boa", "-c", "20", BASE, str(mch)], [f"spmi why --record {tape} --redact"]
        )
    finally:
        if old is not None:
            os.environ["HOME"] = old
    text = tape.read_text()
    assert str(home) not in text and "$HOME/c.mch" in text
    assert replay(tape)["method_context"]["number"] == 20


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"not json", "not a tape: not JSON"),
        (b'{"format": "other"}', 'not a tape: expected "format": "spmi-dbg tape"'),
        (b'{"format": "spmi-dbg tape", "version": 99}', "tape version 99"),
        (
            b'{"format": "spmi-dbg tape", "version": 1, "process": {"threads": {"1": '
            b'{"frames": [{"pc": "x"}]}}}}',
            'bad tape: "process.threads.1.frames[0]" is not a frame',
        ),
        (
            b'{"format": "spmi-dbg tape", "version": 1, "process": {"threads": {}, '
            b'"memory": [[1, 2, "zz"]]}}',
            'bad tape: "process.memory[0]" bytes are not hex',
        ),
    ],
)
def test_a_bad_tape_is_one_line(tmp_path: Path, content: bytes, expected: str) -> None:
    bad = tmp_path / "bad tape.json"
    bad.write_bytes(content)
    r = run_cli("why", str(bad))
    assert r.returncode == 1 and r.stdout == "" and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith(f"spmi-dbg why: error: {bad}: {expected}"), r.stderr


def test_a_fifo_is_not_read_as_a_tape(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = run_cli("why", str(fifo))
    assert (
        r.returncode == 1 and "not a regular file" in r.stderr and len(r.stderr.splitlines()) == 1
    )
