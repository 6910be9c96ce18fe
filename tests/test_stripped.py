"""Builds we did not make: the replay core and the sample JITs with full symbols, split like
official builds (`objcopy --only-keep-debug`, then `--strip-debug --add-gnu-debuglink`, the `.dbg`
beside the binary) and fully stripped (`strip --strip-all`), each through `spmi-dbg repro` with two
JIT faults the replay survives before the fatal one: the fatal record is bundled byte-exact. A
stripped build's frames are `module+0xoffset`, the first-chance faults are passed on by the SigCgt
rule and the fatal stop is their second chance; gdb and lldb agree. A hardware fault in the JIT that
kills the process (`-bug 56506`, as superpmi on Linux) gets a report naming the method the JIT was
compiling and its phase."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spmi_dbg.elf import read as read_elf
from spmi_dbg.mch.collection import Collection

from .support.common import DEBUGGERS, Collections
from .support.diagnosis import require
from .support.natives import BASE, DIFF, REPLAY, SEED_OPTIONS, STRESS_SETTINGS_3
from .support.pipeline import report, repro, repro_args

FAULTS_AT, FATAL_AT = (10, 20), 30


def _tool(name: str) -> str:
    path = shutil.which(name)
    assert path is not None, (
        f"{name} is missing (binutils: scripts/setup-debian.sh installs it with g++)"
    )
    return path


def _build(kind: str, where: Path) -> dict[str, Path]:
    """spmi-replay and both JITs, copied into `where` and stripped or split as `kind` says."""
    where.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, src in (
        ("spmi-replay", REPLAY),
        ("libsamplejit_base.so", BASE),
        ("libsamplejit_diff.so", DIFF),
    ):
        dest = where / name
        shutil.copy2(src, dest)
        if kind == "stripped":
            subprocess.run([_tool("strip"), "--strip-all", str(dest)], check=True)
        elif kind == "split":
            dbg = where / f"{name}.dbg"
            subprocess.run([_tool("objcopy"), "--only-keep-debug", str(dest), str(dbg)], check=True)
            subprocess.run(
                [_tool("objcopy"), "--strip-debug", f"--add-gnu-debuglink={dbg}", str(dest)],
                check=True,
                cwd=where,
            )
        out[name] = dest
    return out


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Path]]:
    root = tmp_path_factory.mktemp("builds")
    return {kind: _build(kind, root / kind) for kind in ("symbols", "split", "stripped")}


def _collection(cols: Collections) -> Path:
    return cols.get(
        "stripped-seed",
        60,
        arch="arm64",
        seed=2,
        inject=[*(("jit-null", n) for n in FAULTS_AT), ("seed-arm64", FATAL_AT)],
    )


def test_the_builds_are_what_they_say(builds: dict[str, dict[str, Path]]) -> None:
    for kind, files in builds.items():
        for path in files.values():
            facts = read_elf(str(path))
            assert facts is not None and facts.build_id
            assert facts.has_debug_info == (kind == "symbols"), (kind, path)
            assert (facts.debuglink is not None) == (kind == "split"), (kind, path)


@pytest.mark.parametrize(
    ("kind", "debugger"),
    [
        ("symbols", "gdb"),
        ("split", "gdb"),
        ("split", "lldb"),
        ("stripped", "gdb"),
        ("stripped", "lldb"),
    ],
)
def test_the_fatal_record_is_bundled_past_first_chance_faults(
    builds: dict[str, dict[str, Path]], cols: Collections, tmp_path: Path, kind: str, debugger: str
) -> None:
    require(debugger)
    b = builds[kind]
    mch = _collection(cols)
    r = repro(
        *repro_args(
            *_seed(b),
            str(mch),
            out="b",
            workers=1,
            verify_runs=1,
        ),
        cwd=tmp_path,
        debugger=debugger,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    data = report(tmp_path / "b")
    assert data["locate"]["method_context"] == FATAL_AT
    with Collection.open(mch) as col:
        assert (tmp_path / "b" / "repro.mch").read_bytes() == col.record(FATAL_AT)
    passed = data["locate"]["stops_passed"]
    # each JIT's fault at each of FAULTS_AT; stripped, also the fatal fault's own first chance (the
    # stack cannot tell it is outside the JIT's protected call: its second chance is the fatal stop)
    assert {s["signal"] for s in passed} == {"SIGSEGV"}
    assert len(passed) == 2 * len(FAULTS_AT) + (1 if kind == "stripped" else 0)
    d = data["diagnosis"]
    if kind == "stripped":
        assert d["handling"]["rule"] == "second chance"
        assert all(p["kind"] == "first-chance" for p in passed)
        assert all(f.startswith("spmi-replay+0x") for f in d["signature_frames"]), d[
            "signature_frames"
        ]
        assert all(
            p["frame"].startswith("libsamplejit_") and "+0x" in p["frame"] for p in passed[:-1]
        )
        assert passed[-1]["frame"] == d["signature_frames"][0]  # the fatal fault's first chance
        assert "native bisection" in data["locate"]["method_context_source"]
    else:  # the symbols, in the binary or in its .dbg beside it
        assert d["folded"][:2] == ["CompileResult::repCompileMethod", "NearDiffer::compare"], d[
            "folded"
        ]
        assert d["null_map"]["member"] == "CompileMethod"


def test_gdb_and_lldb_bucket_a_stripped_build_alike(
    builds: dict[str, dict[str, Path]], cols: Collections, tmp_path: Path
) -> None:
    b = builds["stripped"]
    buckets = set()
    for debugger in DEBUGGERS:
        require(debugger)
        r = repro(
            *repro_args(
                *_seed(b),
                str(_collection(cols)),
                out=debugger,
                workers=1,
                verify_runs=0,
            ),
            cwd=tmp_path,
            debugger=debugger,
        )
        assert r.returncode in (0, 1), r.stdout + r.stderr
        buckets.add(report(tmp_path / debugger)["diagnosis"]["bucket"])
    assert len(buckets) == 1


@pytest.mark.parametrize("debugger", DEBUGGERS)
def test_a_fatal_fault_in_the_jit_names_the_method_and_the_phase(
    cols: Collections, tmp_path: Path, debugger: str
) -> None:
    """`-bug 56506`: the replay core converts no hardware fault in the JIT (superpmi on Linux). The
    first stop is passed on (the JIT's protected call is on the stack), the handler declines, the
    second chance is fatal."""
    require(debugger)
    mch = cols.get("stripped-jit-fault", 40, seed=3, inject=[("jit-null", 25)])
    r = repro(
        *repro_args(REPLAY, "-bug", "56506", BASE, str(mch), out="j", workers=1, verify_runs=1),
        cwd=tmp_path,
        debugger=debugger,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    data = report(tmp_path / "j")
    d = data["diagnosis"]
    assert d["handling"]["rule"] == "second chance" and d["faulting_module"]["role"] == "JIT (JIT1)"
    jit = d["jit"]
    assert jit["phase_name"] == "Importation" and jit["method_context"] == 25 and jit["method"]
    assert f"while compiling `{jit['method']}` during Importation" in data["issue"]["description"]
    assert "during Importation (PHASE_IMPORTATION)" in (tmp_path / "j" / "report.md").read_text()


# ------------------------------------------------------------------------------------------
# --debug-dir
@pytest.fixture(scope="module")
def split_elsewhere(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The split build with its .dbg files moved away from the binaries: into a flat directory, and
    into a .build-id tree (as symbol servers lay them out); `wrong/` holds the diff JIT's .dbg named
    as the base's."""
    root = tmp_path_factory.mktemp("debug-dirs")
    files = _build("split", root / "bin")
    flat, tree, wrong = root / "flat", root / "tree", root / "wrong"
    for d in (flat, tree, wrong):
        d.mkdir()
    for path in files.values():
        dbg = path.with_name(path.name + ".dbg")
        build_id = read_elf(str(dbg)).build_id  # type: ignore[union-attr]
        assert build_id
        (tree / ".build-id" / build_id[:2]).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(dbg, tree / ".build-id" / build_id[:2] / f"{build_id[2:]}.debug")
        shutil.move(dbg, flat / dbg.name)
    shutil.copyfile(flat / "libsamplejit_diff.so.dbg", wrong / "libsamplejit_base.so.dbg")
    return {**files, "flat": flat, "tree": tree, "wrong": wrong}


@pytest.mark.parametrize(
    ("layout", "debugger"), [("flat", "gdb"), ("tree", "gdb"), ("flat", "lldb"), ("tree", "lldb")]
)
def test_debug_dir_finds_the_symbols(
    split_elsewhere: dict[str, Path], cols: Collections, tmp_path: Path, layout: str, debugger: str
) -> None:
    require(debugger)
    b = split_elsewhere
    r = repro(
        *repro_args(
            *_seed(b),
            str(_collection(cols)),
            out="b",
            workers=1,
            verify_runs=0,
            options=("--debug-dir", str(b[layout])),
        ),
        cwd=tmp_path,
        debugger=debugger,
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    data = report(tmp_path / "b")
    # from the DWARF in the .dbg files
    assert data["diagnosis"]["null_map"]["member"] == "CompileMethod"
    conf = data["issue"]["configuration"]
    for binary in (conf["superpmi"], *conf["jits"]):
        sym = binary["symbols"]
        assert sym["found"] and sym["how"] == (
            "gnu_debuglink" if layout == "flat" else "build-id"
        ), sym
        assert sym["where"].startswith(str(b[layout]))
    assert "symbols from `" in (tmp_path / "b" / "report.md").read_text()


def _seed(b: dict[str, Path]) -> tuple[str, ...]:
    """The seed crash's command on the build `b` (its collection last)."""
    base, diff = b["libsamplejit_base.so"], b["libsamplejit_diff.so"]
    return (str(b["spmi-replay"]), *SEED_OPTIONS, str(base), str(diff))


def test_a_debug_file_of_another_build_is_not_used(
    split_elsewhere: dict[str, Path], cols: Collections, tmp_path: Path
) -> None:
    b = split_elsewhere
    r = repro(
        *repro_args(
            *_seed(b),
            str(_collection(cols)),
            out="b",
            workers=1,
            verify_runs=0,
            options=("--debug-dir", str(b["wrong"])),
        ),
        cwd=tmp_path,
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    base = report(tmp_path / "b")["issue"]["configuration"]["jits"][0]["symbols"]
    assert not base["found"] and "not used, the build-id differs" in base["note"]
    assert str(b["wrong"] / "libsamplejit_base.so.dbg") in base["note"]


@pytest.mark.parametrize(
    "args",
    [
        ["repro", "--debug-dir", "/no/such/dir", "--", REPLAY, BASE, "x.mch"],
        ["triage", "--debug-dir", "/no/such/dir", "--", REPLAY, BASE, "x.mch"],
        ["gdb", "--debug-dir", "/no/such/dir", "--", REPLAY],
        ["lldb", "--debug-dir", "/no/such/dir", "--", REPLAY],
    ],
)
def test_a_missing_debug_dir_is_one_line(tmp_path: Path, args: list[str]) -> None:
    from .support.common import run_cli

    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == (3 if args[0] in ("repro", "triage") else 2), r.stderr
    assert (
        r.stderr.strip().endswith("--debug-dir /no/such/dir: does not exist")
        and "Traceback" not in r.stderr
    )
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("kind", "debugger"), [("split", "gdb"), ("stripped", "gdb"), ("stripped", "lldb")]
)
def test_a_stress_only_assert_on_builds_we_did_not_make(
    builds: dict[str, dict[str, Path]], cols: Collections, tmp_path: Path, kind: str, debugger: str
) -> None:
    """`repro --failure assert` needs no symbols to find, verify and minimize (superpmi's own line
    says it all); the -boa stop under the debugger is the assert's debug break with the symbols
    split off or stripped."""
    require(debugger)
    b = builds[kind]
    mch = cols.get("stripped-stress", 60, inject=[("jit-null", 10), ("stress-assert", 40)])
    settings = STRESS_SETTINGS_3
    r = repro(
        *repro_args(
            str(b["spmi-replay"]),
            *settings,
            str(b["libsamplejit_base.so"]),
            str(mch),
            out="b",
            workers=2,
            verify_runs=2,
            options=("--failure", "assert"),
        ),
        cwd=tmp_path,
        debugger=debugger,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    assert rep["outcome"] == "verified" and rep["target"]["failure"]["method_context"] == 40
    assert rep["jit_settings"]["needed"] == ["JitStress=2", "JitStressModeNames=STRESS_FOLD"]
    assert rep["title"].startswith(
        "Assertion failed 'divisor > 0 && divisor <= 8 && magic[divisor] != 0' in '"
    )
    with Collection.open(str(mch)) as col:
        loc = col.locate(40)
    with open(mch, "rb") as f:
        f.seek(loc.offset)
        assert (tmp_path / "b" / "repro.mch").read_bytes() == f.read(loc.size)
    d = rep["diagnosis"]
    assert d["signal"]["name"] == "SIGTRAP"
    # the symbols come back through the debuglink: the assert's own arguments are read
    if kind == "split":
        assert d["assertion"]["expr"] == rep["target"]["failure"]["message"]
        assert d["method_context"]["number"] == 40


@pytest.mark.parametrize("kind", ["split", "stripped"])
def test_triage_resumes_in_one_session_on_builds_we_did_not_make(
    builds: dict[str, dict[str, Path]], cols: Collections, tmp_path: Path, kind: str
) -> None:
    """One partition, two fatal crashes at the same pc, first-chance faults before the first: the
    partition goes on after the first crash in the same gdb, and the second replay is judged afresh
    (a stripped build's fatal fault is its second chance, never a second chance of the replay
    before): the same stops passed as in a fresh debugger."""
    b = builds[kind]
    mch = cols.get(
        "stripped-triage",
        60,
        arch="arm64",
        seed=2,
        inject=[("jit-null", 10), ("seed-arm64", 30), ("seed-arm64", 50)],
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "spmi_dbg",
            "triage",
            "--workers",
            "1",
            "--partition-methods",
            "60",
            "--verify-runs",
            "0",
            "--failure",
            "missing",
            "--out",
            "t",
            "--",
            *_seed(b),
            str(mch),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    assert [c["method_context"] for c in data["crashes"]] == [30, 50]
    assert [b["count"] for b in data["buckets"]] == [2]  # one bucket: the same crash twice
    segs = data["segments"]
    assert [s["compile"] for s in segs] == ["1-60", "31-60", "51-60"]
    own_first_chance = 1 if kind == "stripped" else 0  # the fatal fault's first chance, passed on
    assert [s["stops_passed"] for s in segs[:2]] == [2 + own_first_chance, own_first_chance], segs
