"""The environment is part of the repro (issue 26 item 1): the variables that change a replay are
recorded, minimized like -jitoption settings, set by repro.sh and by every native replay, and
nothing else is inherited (env -i, PATH, HOME). "Verified" then means "reproduces from repro.sh in a
clean shell": a replay that needs a variable the tool was not told of has it found by experiment
(issue 36) or named with --env. The core's era switch (SPMI_REPLAY_ERA) stands for a variable no
class of recorded variables covers."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from .support.common import Collections
from .support.natives import BASE, REPLAY
from .support.pipeline import clean_shell, report, repro, repro_args

NULL_MAP, STRESS = 40, 20


@pytest.fixture(scope="module")
def col(cols: Collections) -> Path:
    return cols.get("environment", 60, inject=[("null-map", NULL_MAP), ("stress-assert", STRESS)])


def with_env(monkeypatch: pytest.MonkeyPatch, **variables: str) -> None:
    for k, v in variables.items():
        monkeypatch.setenv(k, v)


def test_a_variable_the_crash_needs_is_found_or_named(
    col: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_env(monkeypatch, SPMI_REPLAY_ERA="3.1")
    argv = ["--", REPLAY, "-c", str(NULL_MAP), BASE, str(col)]
    # not named: found under the debugger (this environment), not reproduced by the clean runs,
    # then found by experiment and recorded
    r = repro("--verify-runs", "2", "--out", "n", *argv, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "n")
    assert {"name": "SPMI_REPLAY_ERA", "value": "3.1", "kind": "found"} in rep["command"][
        "repro_environment"
    ]
    assert "SPMI_REPLAY_ERA=3.1" in (tmp_path / "n" / "repro.sh").read_text()
    # named: recorded, verified in the clean environment, and repro.sh crashes in a clean shell
    r = repro("--env", "SPMI_REPLAY_ERA", "--verify-runs", "2", "--out", "y", *argv, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "y")
    assert {"name": "SPMI_REPLAY_ERA", "value": "3.1", "kind": "named"} in rep["command"][
        "environment"
    ]
    script = (tmp_path / "y" / "repro.sh").read_text()
    assert 'exec env -i PATH="$PATH" HOME="$HOME" SPMI_REPLAY_ERA=3.1 ' in script
    ran = clean_shell(tmp_path / "y" / "repro.sh")  # exec: the shell becomes the replay
    assert ran.returncode == -signal.SIGSEGV, ran.stdout + ran.stderr


def test_jit_variables_are_minimized_like_options(
    col: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stress assert needs DOTNET_JitStress=2 and DOTNET_JitStressModeNames=STRESS_FOLD from
    the environment; DOTNET_JitDisasmSummary=1 and LD_BIND_NOW=1 are recorded, then dropped and
    named; repro.sh sets only the two."""
    with_env(
        monkeypatch,
        DOTNET_JitStress="2",
        DOTNET_JitStressModeNames="STRESS_FOLD",
        DOTNET_JitDisasmSummary="1",
        LD_BIND_NOW="1",
    )
    r = repro(
        *repro_args(REPLAY, "-c", "1-30", BASE, str(col), out="a", options=("--failure", "assert")),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep: dict[str, Any] = report(tmp_path / "a")
    names = {v["name"]: v["kind"] for v in rep["command"]["environment"]}
    assert names == {
        "DOTNET_JitDisasmSummary": "jit",
        "DOTNET_JitStress": "jit",
        "DOTNET_JitStressModeNames": "jit",
        "LD_BIND_NOW": "loader",
    }
    opts = rep["target"]["options"]
    assert set(opts["needed"]) == {
        "DOTNET_JitStress=2 from the environment",
        "DOTNET_JitStressModeNames=STRESS_FOLD from the environment",
    }
    assert set(opts["dropped"]) == {
        "DOTNET_JitDisasmSummary=1 from the environment",
        "LD_BIND_NOW=1 from the environment",
    }
    assert [v["name"] for v in rep["command"]["repro_environment"]] == [
        "DOTNET_JitStress",
        "DOTNET_JitStressModeNames",
    ]
    script = (tmp_path / "a" / "repro.sh").read_text()
    (run_line,) = [x for x in script.splitlines() if x.startswith("exec ")]
    assert run_line.startswith(
        'exec env -i PATH="$PATH" HOME="$HOME" DOTNET_JitStress=2 '
        "DOTNET_JitStressModeNames=STRESS_FOLD "
    )
    assert "not needed: DOTNET_JitDisasmSummary=1 from the environment" in script  # a comment
    ran = clean_shell(tmp_path / "a" / "repro.sh")
    assert ran.returncode == 1 and "ISSUE: <ASSERT> " in ran.stdout, ran.stdout + ran.stderr
    md = (tmp_path / "a" / "report.md").read_text()
    assert "DOTNET_JitStress=2" in md


def test_env_names_a_variable_that_must_be_set(col: Path, tmp_path: Path) -> None:
    r = repro("--env", "SPMI_DBG_NO_SUCH_VARIABLE", "--", REPLAY, BASE, str(col), cwd=tmp_path)
    assert r.returncode == 3
    assert r.stderr.strip().splitlines()[-1] == (
        "spmi-dbg repro: error: --env SPMI_DBG_NO_SUCH_VARIABLE: not set in this environment"
    )


def test_env_all_keeps_everything_but_the_shells_own(
    col: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_env(monkeypatch, SPMI_DBG_SOME_SETTING="x y", SHLVL="3", TERM="xterm")
    r = repro(
        *repro_args(
            REPLAY, "-c", "1-5", BASE, str(col), out="e", verify_runs=1, options=("--env-all",)
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 2, r.stdout + r.stderr  # no crash in 1-5
    data = json.loads((tmp_path / "e" / "report.json").read_text())
    names = {v["name"] for v in data["command"]["environment"]}
    assert "SPMI_DBG_SOME_SETTING" in names
    assert not names & {"SHLVL", "TERM", "PWD", "PATH", "HOME"}
    # a no-crash report's reproduction step is the command as it ran: its variables and its -c
    command = data["issue"]["reproduction"]["command"]
    assert " -c 1-5 " in command and "'SPMI_DBG_SOME_SETTING=x y'" in command, command
