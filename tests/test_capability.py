"""Verdicts only a JIT that can fail may give (issue 36 item 5), on the sample set's Release-built
JIT (libsamplejit_release.so: no asserts, no DEBUG-only settings): a recheck of an assert repro on
it is "cannot tell", never "fixed"; a repro whose setting the JIT never reads says so beside "no
crash"."""

from __future__ import annotations

from pathlib import Path

from spmi_dbg.repro.capability import carries, has_asserts

from .support.common import Collections, run_cli
from .support.natives import BASE, RELEASE, REPLAY
from .support.pipeline import repro, repro_args, triage
from .test_repro_failure import failures_collection


def test_the_binaries_say_what_they_can_show() -> None:
    assert has_asserts(BASE) is True and has_asserts(RELEASE) is False
    assert carries(BASE, ["JitStress", "JitMinOpts"]) == {"JitStress": True, "JitMinOpts": True}
    assert carries(RELEASE, ["JitStress", "JitMinOpts"]) == {"JitStress": False, "JitMinOpts": True}
    assert carries(REPLAY, ["DOTNET_", "COMPlus_"]) == {"DOTNET_": True, "COMPlus_": True}


def test_an_assert_is_never_fixed_by_a_jit_without_asserts(
    cols: Collections, tmp_path: Path
) -> None:
    mch = failures_collection(cols)
    bundle = tmp_path / "a"
    r = repro(
        *repro_args(REPLAY, BASE, str(mch), out=str(bundle), options=("--failure", "assert")),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    release = run_cli("recheck", str(bundle), "--jit", RELEASE, "--out", "r1", cwd=tmp_path)
    assert release.returncode == 1, release.stdout + release.stderr
    assert ": cannot tell: replayed clean" in release.stdout, release.stdout
    assert "libsamplejit_release.so has no asserts" in release.stdout
    still = run_cli("recheck", str(bundle), "--jit", BASE, "--out", "r2", cwd=tmp_path)
    assert still.returncode == 1 and ": still failing: " in still.stdout, still.stdout
    # git bisect run: skip, not good
    g = run_cli("recheck", "--git-bisect", str(bundle), "--jit", RELEASE, cwd=tmp_path)
    assert g.returncode == 125, g.stdout + g.stderr


def test_no_crash_names_the_setting_the_jit_never_read(cols: Collections, tmp_path: Path) -> None:
    mch = cols.get("units-clean", 10)
    r = repro(
        *repro_args(
            REPLAY, "-jitoption", "JitStress=2", RELEASE, str(mch), out=str(tmp_path / "n")
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert "libsamplejit_release.so does not read JitStress" in r.stdout, r.stdout


def test_a_triage_without_crashes_names_the_setting_the_jit_never_read(
    cols: Collections, tmp_path: Path
) -> None:
    mch = cols.get("units-clean", 10)
    r = triage(
        *repro_args(REPLAY, "-jitoption", "JitStress=2", RELEASE, str(mch), out="t"), cwd=tmp_path
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert "libsamplejit_release.so does not read JitStress" in r.stdout, r.stdout
