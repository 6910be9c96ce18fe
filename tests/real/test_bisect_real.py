"""Issue 28 item 7 on the real 3.1.23 build (the CI twin: tests/test_bisect.py on the sample JITs,
tests/real/test_bisect_data.py on the transcripts): a store in both layouts made from the real JITs
over a git history the test creates: Release builds, then Checked builds, so that the Checked JIT's
crash on api-reljit.mch's method context 2000 (it asks for a signature the Release JIT never
recorded: superpmi dies in MethodContext::repGetMethodSig) first appears at the first Checked build;
one Checked build whose JITEEVersionIdentifier (found through the Checked JIT's symbols) the test
changed, which the real superpmi refuses; one commit without a build. A crash, not an assert: a
Release JIT cannot show a Checked-only assert, so it is never a good build for one (issue 36: it is
skipped, `cannot-show`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from ..support.builds import history
from ..support.common import run_cli
from ..support.pipeline import repro, repro_args
from ..support.real import Real

pytestmark = pytest.mark.live


def _patched_version(jit: Path, out: Path) -> Path:
    """A copy of the Checked JIT with one bit of its JITEEVersionIdentifier changed, the bytes found
    through its .symtab."""
    with open(jit, "rb") as f:
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".symtab")
        assert symtab is not None, f"{jit}: no .symtab"
        (sym,) = [s for s in symtab.iter_symbols() if s.name == "JITEEVersionIdentifier"]
        sec = elf.get_section(sym["st_shndx"])
        offset = sym["st_value"] - sec["sh_addr"] + sec["sh_offset"]
    data = bytearray(jit.read_bytes())
    data[offset] ^= 0x01
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(bytes(data))
    return out


def _command_jit(real: Real, tmp_path: Path) -> Path:
    """The Checked JIT named as the store names its JITs (a copy: a link resolves to its target's
    name)."""
    jit = tmp_path / "cmd" / "libclrjit.so"
    jit.parent.mkdir()
    jit.write_bytes(real.jit_checked.read_bytes())
    return jit


@pytest.mark.parametrize("layout", ["basejit", "rolling"])
def test_the_first_checked_build_is_the_first_bad_one(
    real: Real, tmp_path: Path, layout: str
) -> None:
    rel, chk = real.jit_release, real.jit_checked
    patched = _patched_version(chk, tmp_path / "patched" / "libclrjit.so")
    # 0-3 Release (2: no build), 4 Checked with another JIT-EE version, 5-7 Checked
    h = history(tmp_path, [rel, rel, None, rel, patched, chk, chk, chk], layout=layout)
    r = run_cli(
        "bisect", "--out", "o", "--store", str(h.store), "--repo", str(h.repo),
        "--good", h.hashes[0], "--bad", h.hashes[-1], "--",
        str(real.superpmi), "-c", "2000", str(_command_jit(real, tmp_path)), str(real.api_reljit),
        cwd=tmp_path
    )  # fmt: skip
    data = json.loads((tmp_path / "o" / "bisect.json").read_text())
    # the patched build is skipped: the answer is the range around it
    assert r.returncode == 1, r.stdout + r.stderr
    assert data["last_good"]["build"] == h.hashes[3]
    assert data["first_bad"]["build"] == h.hashes[5]
    assert data["range"] == [h.hashes[4]]
    skipped = {s["build"]: s for s in data["skipped"]}
    assert skipped[h.hashes[4]]["reason"] == "jit-ee-version"
    assert "Jit Compiler has wrong version identifier" in skipped[h.hashes[4]]["evidence"]
    assert data["expected"]["kind"] == "crash" and data["expected"]["signal"] == "SIGSEGV"
    assert [c["pr"] for c in data["range_commits"]] == [h.pr(4), h.pr(5)]


def test_without_the_patched_build_the_answer_is_exact(real: Real, tmp_path: Path) -> None:
    rel, chk = real.jit_release, real.jit_checked
    h = history(tmp_path, [rel, rel, rel, chk, chk])
    r = run_cli(
        "bisect", "--out", "o", "--store", str(h.store), "--repo", str(h.repo),
        "--good", h.hashes[0], "--bad", h.hashes[-1], "--",
        str(real.superpmi), "-c", "2000", str(_command_jit(real, tmp_path)), str(real.api_reljit),
        cwd=tmp_path
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"bisect: first bad build: {h.hashes[3]} `JIT change 3 (#{h.pr(3)})`" in r.stdout
    assert (tmp_path / "o" / "bisect-run.sh").is_file()


def test_good_and_bad_the_wrong_way_round_stop(real: Real, tmp_path: Path) -> None:
    """A bundle (its failure known): the order says Checked first, then Release; the "good" end is
    the Checked build, which fails: the search stops with one line."""
    rel, chk = real.jit_release, real.jit_checked
    b = repro(
        *repro_args(
            str(real.superpmi),
            "-c",
            "2000-2010",
            str(_command_jit(real, tmp_path)),
            str(real.api_reljit),
            out="b",
            verify_runs=1,
            options=("--no-needs",),
        ),
        cwd=tmp_path,
        timeout=900,
    )
    assert b.returncode == 0, b.stdout + b.stderr
    h = history(tmp_path, [chk, chk, rel, rel])
    order = tmp_path / "order.txt"
    order.write_text("".join(f"{x}\n" for x in h.hashes))
    r = run_cli(
        "bisect", str(tmp_path / "b"), "--out", "o", "--store", str(h.store),
        "--order", str(order), cwd=tmp_path
    )  # fmt: skip
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"bisect: no answer: the good build {h.hashes[0]} is bad, not good" in r.stdout
    assert f"the bad build {h.hashes[-1]} is good, not bad" in r.stdout
    # is it fixed? on the Release JIT yes, on the Checked JIT no
    fixed = run_cli("recheck", str(tmp_path / "b"), "--jit", str(rel), cwd=tmp_path)
    assert fixed.returncode == 0 and ": fixed: replayed clean" in fixed.stdout, fixed.stdout
    still = run_cli("recheck", str(tmp_path / "b"), "--jit", str(chk), cwd=tmp_path)
    assert still.returncode == 1 and ": still failing: killed by SIGSEGV" in still.stdout
