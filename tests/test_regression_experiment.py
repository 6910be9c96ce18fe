"""The regression experiment changes one thing at a time (issue 26 item 4): each JIT alone with its
own settings, and when the two JITs' settings differ, each also with the other's, so the answer
compares two JITs under the same settings. A stand-in superpmi (a shell script) that dies of SIGSEGV
exactly when the diff JIT or any JIT is given `JITMinOpts=1` makes the confounded case of the real
3.1 `-a -jit2option JITMinOpts=1` run: the diff JIT crashes with its setting, the base JIT without
it does not, and the base JIT with it does too, so it is the setting, not a regression."""

from __future__ import annotations

from pathlib import Path

import pytest

from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.expect import Expectation
from spmi_dbg.repro.regression import regression

CRASH = Expectation("crash", "SIGSEGV", None)


def stand_in(tmp_path: Path, dies_when: str) -> Path:
    """A superpmi that dies of SIGSEGV when its arguments match the shell pattern `dies_when`."""
    p = tmp_path / "superpmi"
    p.write_text(f'#!/bin/sh\ncase " $* " in\n  {dies_when}) kill -SEGV $$ ;;\nesac\nexit 0\n')
    p.chmod(0o755)
    return p


def command(program: Path, options: tuple[str, ...]) -> ReproCommand:
    return ReproCommand(str(program), ("/jits/base.so", "/jits/diff.so"), "/in.mch", options, 1)


@pytest.mark.parametrize(
    ("dies_when", "said"),
    [
        # the setting crashes any JIT: not a difference between the JITs
        (
            "*JITMinOpts=1*",
            "with the diff JIT's settings (JITMinOpts=1): both JITs crash on their own (death by "
            "SIGSEGV): not a difference between them; with the base JIT's (no JIT settings): "
            "neither JIT crashes on its own",
        ),
        # only the diff JIT, and only with the setting: a regression the setting brings out
        (
            "*JITMinOpts=1*diff.so*",
            "with the diff JIT's settings (JITMinOpts=1): the diff JIT crashes (death by SIGSEGV), "
            "the base JIT does not: a regression in the diff JIT; with the base JIT's (no JIT "
            "settings): neither JIT crashes on its own",
        ),
    ],
)
def test_different_settings_are_crossed(tmp_path: Path, dies_when: str, said: str) -> None:
    cmd = command(stand_in(tmp_path, dies_when), ("-a", "-jit2option", "JITMinOpts=1"))
    r = regression(cmd, tmp_path / "repro.mch", CRASH, runs=1, timeout=30, workdir=tmp_path)
    assert r is not None and r.conclusion.startswith(said), r.conclusion
    data = r.to_json()
    assert data["diff_jit"]["settings"] == ["JITMinOpts=1"] and data["base_jit"]["settings"] == []
    crossed = data["base_jit_with_diff_settings"]
    assert crossed["settings_of"] == "the diff JIT's" and crossed["settings"] == ["JITMinOpts=1"]
    program = crossed["argv"].index(str(cmd.program))
    assert crossed["argv"][:2] == ["env", "-i"]  # repro.sh's clean environment
    assert crossed["argv"][program + 1 :] == [
        "-jitoption",
        "JITMinOpts=1",
        "/jits/base.so",
        str(tmp_path / "repro.mch"),
    ]
    other = data["diff_jit_with_base_settings"]["argv"]
    assert other[program + 1 :] == ["/jits/diff.so", str(tmp_path / "repro.mch")]


def test_the_same_settings_need_no_crossing(tmp_path: Path) -> None:
    cmd = command(
        stand_in(tmp_path, "*diff.so*"),
        ("-a", "-jitoption", "JitStress=1", "-jit2option", "JitStress=1"),
    )
    r = regression(cmd, tmp_path / "repro.mch", CRASH, runs=1, timeout=30, workdir=tmp_path)
    assert r is not None and r.base_as_diff is None
    assert r.conclusion == (
        "the diff JIT crashes (death by SIGSEGV), the base JIT does not: a regression in the diff "
        "JIT (both with JitStress=1)"
    )
    assert "base_jit_with_diff_settings" not in r.to_json()
