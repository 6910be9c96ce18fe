"""Trust on the real superpmi 3.1.23 (issue 26; the CI twins on the bundled core are
tests/test_repro_environment.py, tests/test_repro_order.py and tests/test_regression_experiment.py):
a verified repro reproduces from repro.sh in a clean shell (the environment recorded, minimized and
set), it is the crash the user's command died at for any number of workers, a `--failure` that meets
a crash first says the crash, and the regression experiment changes one thing."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from ..support.pipeline import clean_shell, report, repro, repro_args, validate
from ..support.real import Real

# A real build (SPMI_DBG_REAL_SUPERPMI): the live half of the conformance suite.
pytestmark = pytest.mark.live


def test_a_jit_variable_from_the_environment_is_part_of_the_repro(
    real: Real, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`COMPlus_JitStress=1 spmi-dbg repro -- superpmi -c 1-100 ...`: the crash at 4 (null
    GetGSCookie) needs the variable; DOTNET_JitDisasmSummary=1 does not and is dropped, named."""
    monkeypatch.setenv("COMPlus_JitStress", "1")
    monkeypatch.setenv("DOTNET_JitDisasmSummary", "1")
    r = repro(
        *repro_args(*real.command("-c", "1-100"), out="b", workers=2, verify_runs=2),
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep: dict[str, Any] = report(tmp_path / "b")
    validate(rep)
    assert rep["locate"]["method_context"] == 4
    assert rep["diagnosis"]["null_map"]["member"] == "GetGSCookie"
    assert [v["name"] for v in rep["command"]["repro_environment"]] == ["COMPlus_JitStress"]
    script = (tmp_path / "b" / "repro.sh").read_text()
    assert 'exec env -i PATH="$PATH" HOME="$HOME" COMPlus_JitStress=1 ' in script
    assert "not needed: DOTNET_JitDisasmSummary=1 from the environment" in script
    ran = clean_shell(tmp_path / "b" / "repro.sh")
    assert ran.returncode == -signal.SIGSEGV, ran.stdout + ran.stderr


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_the_asm_diffs_crash_is_the_commands_first_and_coredistools_is_kept(
    real: Real, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """10c/13g: `superpmi -a -jit2option JITMinOpts=1 <official> <Checked> api.mch` dies at 481,
    whatever the workers. superpmi -a needs LD_LIBRARY_PATH for coredistools: recorded, and kept
    (without it the replay does not start). The regression experiment runs each JIT with the other's
    settings too: the official JIT with JITMinOpts=1 is clean, so it is the Checked JIT."""
    monkeypatch.setenv("LD_LIBRARY_PATH", str(real.bin))
    r = repro(
        *repro_args(
            *real.command("-a", "-jit2option", "JITMinOpts=1", str(real.jit_official)),
            out="b",
            workers=str(workers),
            verify_runs=1,
        ),
        cwd=tmp_path,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep: dict[str, Any] = report(tmp_path / "b")
    assert rep["locate"]["method_context"] == 481, rep["locate"]
    env = {v["name"]: v["kind"] for v in rep["command"]["repro_environment"]}
    assert env == {"LD_LIBRARY_PATH": "loader"}
    ran = clean_shell(tmp_path / "b" / "repro.sh")
    assert ran.returncode == -signal.SIGSEGV, ran.stdout + ran.stderr
    if workers == 2:
        reg = rep["regression"]
        assert reg["base_jit_with_diff_settings"]["settings"] == ["JITMinOpts=1"]
        assert reg["conclusion"].startswith(
            "with the diff JIT's settings (JITMinOpts=1): the diff JIT crashes"
        ), reg["conclusion"]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_range_dies_at_its_first_record_whatever_the_workers(
    real: Real, tmp_path: Path, workers: int
) -> None:
    """09: `-c 2000-5514` of api-reljit.mch with the Checked JIT dies at 2000: with 2 workers the
    second partition (3758-) dies at its first record too, and may be first in time."""
    r = repro(
        *repro_args(
            *real.command("-c", "2000-5514", mch=real.api_reljit),
            out="b",
            workers=str(workers),
            verify_runs=1,
        ),
        cwd=tmp_path,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert report(tmp_path / "b")["locate"]["method_context"] == 2000


def test_a_failure_sought_after_a_crash_says_the_crash(real: Real, tmp_path: Path) -> None:
    """`repro --failure assert` where every partition dies by SIGSEGV first: not "no such failure"
    but the crash, with its method context and bucket, exit 1."""
    r = repro(
        *repro_args(
            *real.command(
                "-jitoption", "JitStressRegs=400", "-jitoption", "JitStress=2", "-c", "1-600"
            ),
            out="f",
            options=("--failure", "assert"),
        ),
        cwd=tmp_path,
        timeout=900,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    rep = report(tmp_path / "f")
    assert rep["outcome"] == "crashed"
    assert str(rep["failure"]).startswith("no JIT assert before superpmi died: SIGSEGV at method ")
    assert "(in bucket " in str(rep["failure"]) and "no such failure" not in r.stdout
