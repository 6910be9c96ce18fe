"""The user's command read as superpmi reads it (issue 36, CI twins on the bundled core): the JIT
and the collection named by switches and prefixes, `-p -skipCleanup` dropped together, commands
superpmi refuses refused before anything runs in superpmi's words, `-v ewi` hiding nothing from the
tool's own runs while repro.sh keeps it, and the user's output files never written."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from .support.common import Collections
from .support.natives import BASE, REPLAY
from .support.pipeline import report, repro, repro_args, triage
from .test_repro_failure import failures_collection


def test_switches_and_prefixes_name_the_jit_and_collection(
    cols: Collections, tmp_path: Path
) -> None:
    mch = failures_collection(cols)
    out = tmp_path / "b"
    r = repro(
        *repro_args(
            REPLAY,
            "-JIT",
            BASE,
            "-lo",
            str(mch),
            "-co",
            "1-100",
            out=str(out),
            options=("--failure", "assert"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(out)
    assert rep["target"]["failure"]["method_context"] == 60
    # the user's spelling is kept: the JIT and the collection by their switches
    argv = rep["repro_argv"]
    assert argv[argv.index("-JIT") + 1] == BASE and argv[-2] == "-lo"
    assert "-JIT" in (out / "repro.sh").read_text()


def test_p_and_skipcleanup_go_together_and_refusals_are_superpmis(
    cols: Collections, tmp_path: Path
) -> None:
    mch = str(failures_collection(cols))
    r = repro(
        *repro_args(
            REPLAY,
            "-p",
            "-skipCleanup",
            BASE,
            mch,
            out=str(tmp_path / "p"),
            options=("--failure", "assert"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    notes = " ".join(report(tmp_path / "p")["command"].get("notes") or [])
    assert "dropped `-p`" in notes and "dropped `-skipCleanup`" in notes
    for args, said in [
        (["-skipCleanup"], "ERROR: -skipCleanup requires -parallel."),
        (["-p", "2", "-c", "1-10"], "ERROR: Cannot use method context list in parallel mode."),
        (["-bogus"], "ERROR: Unknown switch '-bogus' passed as argument."),
    ]:
        r = repro(*repro_args(REPLAY, *args, BASE, mch, out=str(tmp_path / "x")), cwd=tmp_path)
        assert r.returncode == 3, r.stdout + r.stderr
        assert said in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert not (tmp_path / "x").exists()


def test_verbosity_that_hides_missing_data_hides_nothing_from_the_tool(
    cols: Collections, tmp_path: Path
) -> None:
    mch = failures_collection(cols)
    user_files = tmp_path / "mine"
    user_files.mkdir()
    failing = user_files / "failing.mcl"
    failing.write_text("keep\n")
    out = tmp_path / "m"
    r = repro(
        *repro_args(
            REPLAY,
            "-v",
            "ewi",
            "-f",
            str(failing),
            "-w",
            str(user_files / "log.txt"),
            BASE,
            str(mch),
            out=str(out),
            options=("--failure", "missing"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert report(out)["target"]["failure"]["method_context"] == 110
    # repro.sh runs the user's command: their -v, and files inside the bundle only
    line = (out / "repro.sh").read_text().splitlines()[-1]
    words = shlex.split(line)
    assert words[words.index("-v") + 1] == "ewi"
    assert words[words.index("-f") + 1] == "$here/superpmi-files/failingMCList-failing.mcl"
    assert words[words.index("-w") + 1] == "$here/superpmi-files/writeLogFile-log.txt"
    assert str(user_files) not in line
    # what the tool's replays wrote, merged into the bundle and said: the failing list holds the
    # failures superpmi listed (the assert at 60, the caught fault at 90, the missing data at 110)
    merged = (out / "superpmi-files" / "failingMCList-failing.mcl").read_text().split()
    assert merged == ["60", "90", "110"], merged
    assert (out / "superpmi-files" / "writeLogFile-log.txt").stat().st_size > 0
    notes = " ".join(report(out)["command"].get("notes") or [])
    assert "superpmi-files/failingMCList-failing.mcl holds them merged" in notes
    # repro.sh writes only inside the bundle
    ran = subprocess.run(["sh", str(out / "repro.sh")], capture_output=True, cwd=tmp_path)
    assert ran.returncode == 3, ran
    assert sorted(p.name for p in user_files.iterdir()) == ["failing.mcl"]
    # the user's files were never written
    assert failing.read_text() == "keep\n"
    assert sorted(p.name for p in user_files.iterdir()) == ["failing.mcl"]


def test_a_triage_under_v_ewi_counts_what_superpmi_did(cols: Collections, tmp_path: Path) -> None:
    """superpmi.py's `-v ewi` hides the MISSING lines and the summary (16e): the triage's own
    replays still read them, so its accounting is that of the same command without `-v ewi`."""
    mch = str(failures_collection(cols))
    counts = []
    for name, verbosity in (("plain", []), ("ewi", ["-v", "ewi"])):
        r = triage(*repro_args(REPLAY, *verbosity, BASE, mch, out=name), cwd=tmp_path)
        assert r.returncode in (0, 1, 2), r.stdout + r.stderr
        (cov,) = json.loads((tmp_path / name / "triage.json").read_text())["coverage"]
        counts.append({k: cov[k] for k in ("replayed_clean", "crashed", "failed_compile")})
    assert counts[0] == counts[1] and counts[0]["failed_compile"] > 0, counts
