"""The environment a replay needs, found by experiment (issue 36 item 4): a test JIT of the sample
set reads a variable of its own (SPMI_SAMPLE_FAULT_METHOD: the compile of that method faults),
which no class of recorded variables covers. The user's run crashes; repro.sh's clean environment
does not; the tool finds the variable before minimizing any record, records it, and verifies with
it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .support.common import Collections, run_cli
from .support.natives import BASE, REPLAY
from .support.pipeline import report, repro, repro_args, validate

FAULT_AT = 7


def method_name(mch: Path, number: int) -> str:
    """The method name of method context `number` (`spmi-dbg mch list`'s name column, without
    its class)."""
    out = subprocess.run(
        [sys.executable, "-m", "spmi_dbg", "mch", "list", str(mch)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == str(number):
            return next(f for f in fields if ":" in f).rsplit(":", 1)[1]
    raise AssertionError(f"method context {number} not listed: {out[:500]}")


@pytest.mark.parametrize("quiet", [False, True])
def test_a_variable_of_the_users_is_found_before_any_record_is_minimized(
    cols: Collections, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quiet: bool
) -> None:
    mch = cols.get("env-fault", 20)
    name = method_name(mch, FAULT_AT)
    monkeypatch.setenv("SPMI_SAMPLE_FAULT_METHOD", name)
    monkeypatch.setenv("UNRELATED_SETTING", "something else")
    if quiet:  # the JIT does not say what it was asked: found by minimization
        monkeypatch.setenv("SPMI_SAMPLE_FAULT_QUIET", "1")
    out = tmp_path / "b"
    r = repro(*repro_args(REPLAY, "-bug", "56506", BASE, str(mch), out=str(out)), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(out)
    validate(rep)
    exp = rep["environment_experiment"]
    assert [v["name"] for v in exp["needed"]] == ["SPMI_SAMPLE_FAULT_METHOD"]
    assert exp["whole_reproduced"] and "found by experiment" in exp["summary"]
    assert ("named in the replay's own output" in exp["summary"]) is not quiet
    assert rep["minimization"] is None  # no record was minimized
    assert rep["locate"]["method_context"] == FAULT_AT
    assert "found by experiment" in r.stdout  # said on the console, in one line
    assert f"SPMI_SAMPLE_FAULT_METHOD={name}" in (out / "repro.sh").read_text()
    assert "UNRELATED_SETTING" not in (out / "repro.sh").read_text()
    # recheck on the same JIT, from a shell without the variable: the bundle's recorded environment,
    # under the debugger too (its bucket confirmed), so still failing
    monkeypatch.delenv("SPMI_SAMPLE_FAULT_METHOD")
    still = run_cli("recheck", str(out), "--jit", BASE, "--out", "r", cwd=tmp_path)
    assert still.returncode == 1, still.stdout + still.stderr
    assert ": still failing: " in still.stdout and "under gdb: in bucket" in still.stdout, (
        still.stdout
    )
    # repro.sh reproduces in a clean shell
    done = subprocess.run(
        ["sh", str(out / "repro.sh")], capture_output=True, env={"PATH": "/usr/bin:/bin"}
    )
    assert done.returncode == -11 or done.returncode == 139, done
