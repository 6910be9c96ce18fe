"""Your run as superpmi runs it (issue 36), on the real 3.1.23 build: the command read by 3.1's
grammar (`-jit/-load/-co`, `-jitoption f`, `-fail`, `-p -skipCleanup`, `-p` with `-c` refused),
`-v ewi` hiding nothing from the tool, the user's files untouched, the environment a bundle
recorded carried into recheck's debugger run, and no "fixed" from a JIT without asserts. The CI
twins:
tests/test_command_fidelity.py, tests/test_environment_found.py, tests/test_capability.py and the
grammar's transcript tests (tests/real/test_grammar_transcripts.py)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from ..support.common import run_cli
from ..support.pipeline import report, repro, repro_args
from ..support.real import Real

pytestmark = pytest.mark.live


def test_jit_and_collection_by_switch_and_force_by_prefix(real: Real, tmp_path: Path) -> None:
    """`-jit J -load M -co 1-60 -jitoption f JitStress=1`: natively a SIGSEGV at 4 (16a, 16c)."""
    r = repro(
        *repro_args(
            str(real.superpmi),
            "-jit",
            str(real.jit_checked),
            "-load",
            str(real.api),
            "-co",
            "1-60",
            "-jitoption",
            "f",
            "JitStress=1",
            out="b",
        ),
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert rep["locate"]["method_context"] == 4
    line = (tmp_path / "b" / "repro.sh").read_text().splitlines()[-1]
    words = shlex.split(line)
    # the user's spelling: the setting forced by `f`, the JIT and the collection by switch
    at = words.index("-jitoption")
    assert words[at + 1 : at + 3] == ["f", "JitStress=1"] and "-jit" in words and "-load" in words


def test_refused_commands_are_refused_in_superpmis_words(real: Real, tmp_path: Path) -> None:
    base = [str(real.superpmi), str(real.jit_checked), str(real.api)]
    for args, said in [
        (["-skipCleanup"], "ERROR: -skipCleanup requires -parallel."),
        (["-p", "3", "-c", "1-60"], "ERROR: Cannot use method context list in parallel mode."),
        (["-c", "1-3", "-m", "0" * 32], "ERROR: Cannot use both method context list and"),
    ]:
        r = repro(*repro_args(base[0], *args, *base[1:], out="x"), cwd=tmp_path)
        assert r.returncode == 3 and said in r.stderr, (args, r.stdout, r.stderr)
        assert "superpmi 3.1 would not run this command" in r.stderr
    # -p -skipCleanup is valid: both dropped, the crash found
    r = repro(
        *repro_args(
            str(real.superpmi),
            "-p",
            "-skipCleanup",
            "-jitoption",
            "JitStress=1",
            "-c",
            "1-10",
            *base[1:],
            out="p",
        ),
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 3  # -p with -c: the workers refuse the list
    r = repro(
        *repro_args(*real.command("-p", "-skipCleanup", mch=real.api_reljit), out="p"),
        cwd=tmp_path,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    notes = " ".join(report(tmp_path / "p")["command"].get("notes") or [])
    assert "dropped `-p`" in notes and "dropped `-skipCleanup`" in notes


def test_missing_data_under_the_users_v_ewi_and_their_files_untouched(
    real: Real, tmp_path: Path
) -> None:
    """`-v ewi` prints nothing of 84 MISSING method contexts (16e): the tool's runs still see them;
    the user's -fail and -w files are never written."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "f.mcl").write_text("keep\n")
    r = repro(
        *repro_args(
            *real.command(
                "-v",
                "ewi",
                "-fail",
                str(mine / "f.mcl"),
                "-w",
                str(mine / "log.txt"),
                "-jitoption",
                "JITMinOpts=1",
                "-c",
                "1-400",
            ),
            out="m",
            options=("--failure", "missing"),
        ),
        cwd=tmp_path,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert report(tmp_path / "m")["target"]["failure"]["method_context"] == 4
    assert (mine / "f.mcl").read_text() == "keep\n"
    assert sorted(p.name for p in mine.iterdir()) == ["f.mcl"]


def test_recheck_carries_the_recorded_environment_and_no_fixed_without_asserts(
    real: Real, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bundle that needs COMPlus_JitStress=1 (recorded from the environment) is still failing on
    the same JIT from a shell without it; the JitStressRegs=400 assert repro is "cannot tell" on
    the Release JIT, which has no asserts."""
    monkeypatch.setenv("COMPlus_JitStress", "1")
    r = repro(*repro_args(*real.command("-c", "4"), out="s"), cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    monkeypatch.delenv("COMPlus_JitStress")
    still = run_cli(
        "recheck", str(tmp_path / "s"), "--jit", str(real.jit_checked), "--out", "r1", cwd=tmp_path
    )
    assert still.returncode == 1 and ": still failing: " in still.stdout, still.stdout
    assert "under gdb: in bucket" in still.stdout
    a = repro(
        *repro_args(
            *real.command("-jitoption", "JitStressRegs=400", "-c", "543"),
            out="a",
            options=("--failure", "assert"),
        ),
        cwd=tmp_path,
        timeout=600,
    )
    assert a.returncode == 0, a.stdout + a.stderr
    rel = run_cli(
        "recheck", str(tmp_path / "a"), "--jit", str(real.jit_release), "--out", "r2", cwd=tmp_path
    )
    assert rel.returncode == 1 and ": cannot tell: " in rel.stdout, rel.stdout
    assert "has no asserts" in rel.stdout
