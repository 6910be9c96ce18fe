"""`spmi-dbg mch verify`'s fast path (the console script, spmi_dbg/launcher.py, execs
native/mch/mchverify.c) prints the same bytes on stdout and stderr, and exits with the same status,
as the Python verify (`python -m spmi_dbg mch verify`): on the real 3.1 collections, a copy without
its .mct, corrupted and stale copies, special files and paths that need escaping. Each case also
checks that the launcher takes the fast path (or, for the command lines it must leave to Python,
that it does not), so a launcher that always fell back could not pass."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spmi_dbg import launcher
from spmi_dbg.mch.collection import Collection

from .support.common import native
from .support.real import Reference, reference

# the console script pip made from [project.scripts]
SCRIPT = Path(sys.executable).parent / "spmi-dbg"
DAMAGED = 3000  # the method context the corrupted copies damage


@pytest.fixture(scope="module")
def real() -> Reference:
    """The real 3.1.23 collections (the reference as data)."""
    return reference()


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory, real: Reference) -> Path:
    """Copies of api.mch, each damaged one way (with the real .mct beside, unless named
    otherwise)."""
    d = tmp_path_factory.mktemp("verify-fast")
    data = real.api.read_bytes()
    with Collection.open(real.api) as col:
        ref = col.locate(DAMAGED)
        pkt = col.packets(DAMAGED)[3]
        canaries = [col.packets(n)[1] for n in range(1, 151)]

    api_index = real.api.with_name("api.mch.mct")

    def write(name: str, content: bytes | bytearray, index: Path | None = api_index) -> None:
        (d / name).write_bytes(content)
        if index is not None:
            shutil.copyfile(index, d / (name + ".mct"))

    write("no-index.mch", data, index=None)
    write("truncated.mch", data[: ref.offset + ref.size // 2])
    b = bytearray(data)
    b[pkt.offset + 1] ^= 0x01  # low byte of the 4th packet's u32 size
    write("size-byte.mch", b)
    b = bytearray(data)
    b[ref.offset + ref.size - 1] ^= 0x01  # the record's end canary
    write("end-canary.mch", b)
    b = bytearray(data)
    b[pkt.offset + 5 + pkt.size] ^= 0x01  # the packet's canary
    write("packet-canary.mch", b)
    b = bytearray(data)
    for p in canaries:  # 150 problems: more than the default 100 are listed
        b[p.offset + 5 + p.size] ^= 0x01
    write("many.mch", b)
    # another collection's index
    write("stale.mch", data, index=real.api_reljit.with_name("api-reljit.mch.mct"))
    write("short-index.mch", data[: ref.offset], index=None)
    (d / "short-index.mch.mct").write_bytes(b"INDX\x01\x00")
    write("small.mch", data[: col_bytes(real.api, 40)], index=None)
    write("small-indexed.mch", data[: col_bytes(real.api, 40)], index=None)
    with Collection.open(d / "small-indexed.mch") as col:
        col.extract(range(1, 41), d / "extracted.mch")
    (d / "empty.mch").write_bytes(b"")
    (d / "a-dir").mkdir()
    os.mkfifo(d / "fifo")
    return d


def col_bytes(path: Path, count: int) -> int:
    """The bytes of the first `count` method contexts."""
    with Collection.open(path) as col:
        ref = col.locate(count)
    return ref.offset + ref.size


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    r = subprocess.run(cmd, capture_output=True, cwd=cwd, env=env, timeout=120)
    return r.returncode, r.stdout, r.stderr


def python_verify(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    return _run([sys.executable, "-m", "spmi_dbg", "mch", "verify", *args], cwd, env)


def fast_verify(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    return _run([str(SCRIPT), "mch", "verify", *args], cwd, env)


def same(args: list[str], cwd: Path, *, fast: bool = True) -> tuple[int, bytes, bytes]:
    """Both paths agree byte for byte; `fast`: the launcher execs the native verifier for these
    arguments."""
    assert SCRIPT.is_file() and "spmi_dbg.launcher" in SCRIPT.read_text(), (
        f"{SCRIPT}: run pip install -e . first"
    )
    taken = launcher.verify_arguments(["mch", "verify", *args])
    assert (taken is not None) == fast, (args, taken)
    py = python_verify(args, cwd)
    assert fast_verify(args, cwd) == py, args
    if taken is not None:  # what the launcher execs, run directly: the same again
        path, max_problems = taken
        direct = _run(
            [native(launcher.MCH_VERIFY), "--max-problems", str(max_problems), "--", path], cwd
        )
        assert direct == py, args
    return py


def test_the_real_collections(real: Reference) -> None:
    for path in (real.api, real.api_reljit):
        rc, out, err = same([str(path)], path.parent)
        assert rc == 0 and err == b"" and b": OK: " in out and b"consistent" in out, out
    rc, out, _ = same(["api.mch"], real.api.parent)  # relative, the index by its .mch.mct name
    assert (
        out
        == f"api.mch: OK: 5657 method contexts, {real.api.stat().st_size} bytes, index api.mch.mct "
        "consistent\n".encode()
    )
    rc, out, _ = same(["api.mch.mct"], real.api.parent)  # the index given: its collection verified
    assert rc == 0 and out.startswith(b"api.mch.mct: OK: 5657 method contexts")
    same(["--max-problems", "3", "./collections//api-reljit.mch/."], real.api.parent.parent)


def test_the_fast_path_never_imports_the_package(real: Reference) -> None:
    """With the imports Python makes listed on stderr, the console script's verify shows none of
    cli's: the answer came from the native verifier."""
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    rc, out, err = fast_verify([str(real.api)], real.api.parent, env)
    assert rc == 0 and out.endswith(b"consistent\n")
    imported = [
        line.rsplit(b"|", 1)[-1].strip()
        for line in err.splitlines()
        if line.startswith(b"import time:")
    ]
    assert b"spmi_dbg.launcher" in imported and b"spmi_dbg.cli" not in imported, imported
    assert b"argparse" not in imported and b"cffi" not in imported


@pytest.mark.parametrize(
    "name",
    [
        "no-index.mch",
        "truncated.mch",
        "size-byte.mch",
        "end-canary.mch",
        "packet-canary.mch",
        "many.mch",
        "stale.mch",
        "short-index.mch",
        "small.mch",
        "extracted.mch",
        "extracted.mch.mct",
        "EXTRACTED.MCH.MCT",
        "empty.mch",
        "a-dir",
        "fifo",
        "missing.mch",
        "missing.mct",
        "a-dir/",
        "./a-dir/.",
        "no-index.mch/",
    ],
)
def test_corrupt_special_and_missing(work: Path, name: str) -> None:
    rc, out, err = same([name], work)
    if name in ("no-index.mch", "small.mch", "extracted.mch", "extracted.mch.mct", "no-index.mch/"):
        assert rc == 0 and err == b"", (out, err)
    else:
        assert rc == 1 and err, (out, err)


@pytest.mark.parametrize(
    "args",
    [
        ["--max-problems", "1"],
        ["--max-problems=5"],
        ["--max-problems", "1000"],
        ["--max-problems", "150"],
        ["--max-problems", "10", "--max-problems", "20"],
        ["--max-problems", "007"],
    ],
)
def test_max_problems(work: Path, args: list[str]) -> None:
    for name in ("many.mch", "stale.mch", "truncated.mch"):
        assert same([*args, name], work)[0] == 1
        assert same([name, *args], work)[0] == 1


def test_dev_zero() -> None:
    rc, _, err = same(["/dev/zero"], Path("/"))
    assert rc == 1 and b"found a special file" in err


HOSTILE = [
    "with space",
    "quote'single",
    'quote"double',
    "new\nline",
    "$(touch pwned)",
    "back\\slash",
    "tab\tesc\x1b[31m",
    "`tick`",
    "--looks-like-an-option",
    "del\x7f",
]


@pytest.mark.parametrize("part", HOSTILE)
def test_paths_that_need_escaping(work: Path, real: Reference, part: str) -> None:
    d = work / f"dir {part}"
    d.mkdir(exist_ok=True)
    shutil.copyfile(work / "small.mch", d / f"{part}.mch")
    shutil.copyfile(work / "truncated.mch", d / f"{part} bad.mch")
    shutil.copyfile(work / "truncated.mch.mct", d / f"{part} bad.mch.mct")
    shutil.copyfile(work / "extracted.mch", d / f"{part} x.mch")
    shutil.copyfile(work / "extracted.mch.mct", d / f"{part} x.mch.mct")
    for name, status in (
        (f"{part}.mch", 0),
        (f"{part} bad.mch", 1),
        (f"{part} x.mch.mct", 0),
        (f"{part} missing.mch", 1),
    ):
        rc, out, err = same([str(d / name)], work)
        assert rc == status, (out, err)
        # problem lines escape the path; the last line names it as given
        if status and "\n" in part:
            assert b"\\n" in out + err and (b"new\nline" in err or not out)
    assert not (work / "pwned").exists()


def test_long_escaped_path_is_cut(work: Path) -> None:
    # 4,800 escaped characters: cut at 4096 with "..."
    path = "/".join(["\x01" * 200] * 6) + "/x.mch"
    rc, _, err = same([path], work)
    assert rc == 1 and b"...: cannot open:" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--json", "small.mch"],
        ["-h"],
        [],
        ["small.mch", "many.mch"],
        ["--max-problems", "0", "many.mch"],
        ["--max-problems", "1,000", "many.mch"],
        ["--max-problems", "-3", "many.mch"],
        ["--max-problem", "3", "many.mch"],
        ["--", "small.mch"],
        ["-"],
        ["sm\u00e4ll.mch"],
        ["--max-problems"],
    ],
)
def test_left_to_python(work: Path, args: list[str]) -> None:
    """What the native verifier does not implement goes to cli.main unchanged (the same output
    either way)."""
    same(args, work, fast=False)


@pytest.mark.parametrize("path", ["", ".", "/", "./"])
def test_a_path_without_a_name_is_left_to_python(work: Path, path: str) -> None:
    """pathlib cannot name such a path's index (with_name raises): left to Python, whose traceback
    differs between `python -m` and the console script only in the frames that started it."""
    assert launcher.verify_arguments(["mch", "verify", path]) is None
    py, fast = python_verify([path], work), fast_verify([path], work)
    assert (py[0], py[1], py[2].splitlines()[-1:]) == (fast[0], fast[1], fast[2].splitlines()[-1:])


def test_other_commands_go_to_cli(work: Path) -> None:
    for args in (
        ["mch", "info", "small.mch"],
        ["mch", "list", "-c", "1-3", "small.mch"],
        ["--version"],
        ["nope"],
    ):
        assert _run([str(SCRIPT), *args], work) == _run(
            [sys.executable, "-m", "spmi_dbg", *args], work
        ), args


@pytest.mark.parametrize("unbuffered", [True, False])
@pytest.mark.parametrize(
    "args",
    [
        ["small.mch"],
        ["truncated.mch"],
        ["many.mch"],
        ["--max-problems", "50", "many.mch"],
        ["--max-problems", "1000", "many.mch"],
    ],
)
def test_closed_stdout_and_merged_streams(work: Path, args: list[str], unbuffered: bool) -> None:
    """A reader that went away, and stdout and stderr into one pipe (2>&1): the same bytes, order
    and status, with Python's stdout buffered or not (PYTHONUNBUFFERED)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    assert launcher.verify_arguments(["mch", "verify", *args]) is not None
    results = []
    for cmd in ([sys.executable, "-m", "spmi_dbg"], [str(SCRIPT)]):
        r, w = os.pipe()
        os.close(r)
        closed = subprocess.run(
            [*cmd, "mch", "verify", *args],
            stdout=w,
            stderr=subprocess.PIPE,
            cwd=work,
            env=env,
            timeout=120,
        )
        os.close(w)
        merged = subprocess.run(
            [*cmd, "mch", "verify", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=work,
            env=env,
            timeout=120,
        )
        results.append((closed.returncode, closed.stderr, merged.returncode, merged.stdout))
    assert results[0] == results[1]
