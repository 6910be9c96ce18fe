"""The live half of the tapes of real stops (tests/support/tapes.py): each stop is recorded again on
the real build, in a real gdb or lldb (`spmi diagnose --json --record`), and must give the diagnosis
its committed tape gives (tests/real/test_tapes.py replays those in CI): a change of the tool, the
build or the debugger that changes what a stop says fails here. With SPMI_DBG_UPDATE_TAPES=1 the
new recordings are written to tests/fixtures/tapes/ instead (then review the diff)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..support.common import run_cli
from ..support.real import Real
from ..support.tapes import STOPS, TAPES, Stop, load_expected, normalized, without_debugger
from ..test_debug_diagnosis import gdb_session, lldb_session

# A real build (SPMI_DBG_REAL_SUPERPMI): the live half of the conformance suite.
pytestmark = pytest.mark.live

UPDATE = os.environ.get("SPMI_DBG_UPDATE_TAPES") == "1"


def argv(real: Real, stop: Stop, tmp: Path) -> list[str]:
    if stop.program.startswith("stripped:"):
        program = tmp / stop.program.split(":", 1)[1]
        shutil.copyfile(real.bin / program.name, program)
        program.chmod(0o755)
        subprocess.run(["strip", "--strip-all", str(program)], check=True)
    else:
        program = real.bin / stop.program
    return [
        str(program),
        *stop.options,
        str(real.bin / stop.jit),
        str(real.root / "collections" / stop.collection),
    ]


def recorded(real: Real, stop: Stop, tmp: Path) -> tuple[dict[str, Any], str]:
    """The live diagnosis and the tape's text, both with the paths as placeholders."""
    tape = tmp / "stop.tape.json"
    session = gdb_session if stop.debugger == "gdb" else lldb_session
    out = session(argv(real, stop, tmp), [f"spmi diagnose --json --record {tape}"])
    text = next(iter(out.values()))
    line = next(x for x in text.splitlines() if x.startswith("{"))
    live: dict[str, Any] = json.loads(normalized(line, real.root, tmp))
    return live, normalized(tape.read_text(), real.root, tmp)


@pytest.mark.parametrize("stop", STOPS, ids=[s.name for s in STOPS])
def test_a_new_recording_gives_the_committed_diagnosis(
    real: Real, tmp_path: Path, stop: Stop
) -> None:
    live, tape_text = recorded(real, stop, tmp_path)
    again = tmp_path / "normalized.tape.json"
    again.write_text(tape_text)
    r = run_cli("why", "--json", str(again))
    assert r.returncode == 0, r.stderr
    assert without_debugger(json.loads(r.stdout)) == without_debugger(live)  # the tape is faithful
    if UPDATE:
        TAPES.mkdir(parents=True, exist_ok=True)
        stop.tape.write_text(tape_text)
        stop.expected.write_text(json.dumps(live, indent=1, sort_keys=True) + "\n")
    assert without_debugger(live) == without_debugger(load_expected(stop)), (
        f"{stop.name}: the live stop no longer gives the committed diagnosis "
        "(SPMI_DBG_UPDATE_TAPES=1 re-records it)"
    )
