"""Hostile and unlucky input, interruption and output safety, each as a class: text from a path
never runs, outputs never destroy inputs or devices, -c lists are ranges, .mcl files are read
safely, --out is checked first and written whole by one run at a time, SIGTERM cleans up like SIGINT
and a SIGKILL's leftovers are removed by the next run, --redact holds for non-ASCII and linked
homes, and the smaller ones (a path with a line break, lying indexes, a bad canary). The last tests
fuzz the `mch` commands and `repro`'s argument handling."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spmi_dbg import cli, exits, shell
from spmi_dbg.driver.request import DebuggerSetup
from spmi_dbg.driver.select import GdbDriver
from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.mct import toc_path_for
from spmi_dbg.report.redact import Redactor
from spmi_dbg.repro import bundle as bundle_module
from spmi_dbg.repro import command
from spmi_dbg.repro.bundle import repro_script
from spmi_dbg.repro.expect import Expectation
from spmi_dbg.repro.isolate import Isolated
from spmi_dbg.repro.models import Located
from spmi_dbg.repro.pipeline import run_repro
from spmi_dbg.repro.result import CrashTarget, ReproOptions, ReproResult
from spmi_dbg.sample.synth import synthetic_collection
from spmi_dbg.tempfiles import host_tag, is_dead_runs, run_tag

from .support.common import Collections, build_collection, run_cli, seed_collection
from .support.diagnosis import gdb_batch
from .support.mutations import mutate
from .support.natives import BASE, DIFF, REPLAY, SEED_COMMAND, SEED_OPTIONS
from .support.pipeline import no_replays_left, report, repro, repro_args

# Names that run something if a shell ever reads them as code; each test checks that nothing ran.
HOSTILE = [
    "sp ace",
    "q'uote",
    'd"quote',
    "$(touch PWNED1)",
    "`touch PWNED2`",
    "semi;touch PWNED3",
    "-leading",
    "nön-äscii",
    "back\\slash",
    "new\nline$(touch PWNED4)",
]


def pwned(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("PWNED*")]


def leftovers(*dirs: Path) -> list[Path]:
    """Temporary names of this host's runs (tempfiles.py) still present."""
    out = []
    for d in dirs:
        for p in d.iterdir() if d.is_dir() else []:
            if re.search(rf"spmi-[a-z]+-{re.escape(host_tag())}-\d+-", p.name):
                out.append(p)
    return out


def one_error_line(r: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("spmi-dbg")]
    assert len(lines) == 1, r.stderr
    return lines[0]


# ------------------------------------------------------------------------------------------ 1. text
# never runs
def _fake_result(program: str, jit: str, collection: str, repro_mch: Path) -> ReproResult:
    cmd = command.ReproCommand(program, (jit,), collection, ("-a",), 1)
    result = ReproResult(ReproOptions(command=cmd, debugger=GdbDriver("gdb")), [])
    result.isolated = Isolated(repro_mch, toc_path_for(repro_mch), (7,), (10,))
    result.target = CrashTarget(Located([], expectation=Expectation("crash", "SIGSEGV", "b1")))
    return result


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("redact", [False, True])
def test_repro_sh_runs_no_text_of_a_path(tmp_path: Path, name: str, redact: bool) -> None:
    """The program's directory, the JIT and the collection all carry the hostile name: repro.sh
    parses as sh, its comment lines stay comments, and the program gets exactly these words."""
    home = tmp_path / "home"
    where = home / name
    where.mkdir(parents=True)
    got = tmp_path / "argv.json"
    program = where / "superpmi"
    program.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(got)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    program.chmod(0o755)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    repro_mch = bundle / "repro.mch"
    repro_mch.write_bytes(b"")
    jit, collection = str(where / f"{name}.so"), str(where / f"{name}.mch")
    redactor = Redactor((str(home),), None, None) if redact else None
    script = repro_script(_fake_result(str(program), jit, collection, repro_mch), redactor)
    (bundle / "repro.sh").write_text(script)
    # the shebang and the comments: one line each
    head = script[: script.index("here=")].splitlines()
    assert len(head) == 3 and all(line.startswith("#") for line in head)
    assert subprocess.run(["sh", "-n", str(bundle / "repro.sh")], timeout=10).returncode == 0
    env = dict(os.environ, HOME=str(home))
    r = subprocess.run(
        ["sh", str(bundle / "repro.sh")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(got.read_text()) == ["-a", jit, str(repro_mch)]
    assert pwned(tmp_path) == []


def test_shell_words_and_comments() -> None:
    for word in [*HOSTILE, "", "a\tb", "\x1b[31m"]:
        r = subprocess.run(
            ["sh", "-c", f"printf %s {shell.quote(word)}"], capture_output=True, timeout=10
        )
        assert r.stdout.decode() == word
        assert "\n" not in shell.comment(word) and "\x1b" not in shell.comment(word)


@pytest.fixture
def hostile_tree(cols: Collections, tmp_path: Path) -> Iterator[tuple[Path, Path, Path, Path]]:
    """The seed collection, both JITs and the replay program under a directory named with every
    hostile piece that a debugger can take (a line break is refused: see
    test_a_line_break_in_a_path_is_a_usage_error)."""
    where = tmp_path / "sp ace q'uote d\"q $(touch PWNED1) `touch PWNED2` ;touch PWNED3 -x nön"
    where.mkdir()
    paths = []
    for src, name in (
        (REPLAY, "spmi-replay"),
        (BASE, "$(touch PWNED5)base.so"),
        (DIFF, "-diff;.so"),
    ):
        shutil.copy2(src, where / name)
        paths.append(where / name)
    mch = where / "`touch PWNED6`.mch"
    shutil.copyfile(seed_collection(cols), mch)
    yield paths[0], paths[1], paths[2], mch
    assert pwned(tmp_path) == []


def test_hostile_names_end_to_end(
    hostile_tree: tuple[Path, Path, Path, Path], tmp_path: Path
) -> None:
    program, base, diff, mch = hostile_tree
    out = tmp_path / "out $(touch PWNED7)"
    args = repro_args(program, *SEED_OPTIONS, base, diff, mch, out=out, workers=2, verify_runs=1)
    r = repro(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    run = subprocess.run(["sh", str(out / "repro.sh")], capture_output=True, cwd="/", timeout=60)
    assert run.returncode == 128 + signal.SIGSEGV or run.returncode == -signal.SIGSEGV
    # A second run into the same --out replaces the earlier bundle whole.
    r2 = repro(*args, cwd=tmp_path)
    assert r2.returncode == 0, r2.stdout + r2.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(report(out)["files"])
    assert leftovers(tmp_path) == []


def test_a_line_break_in_a_path_is_a_usage_error(cols: Collections, tmp_path: Path) -> None:
    where = tmp_path / "a\nb"
    where.mkdir()
    shutil.copy2(REPLAY, where / "superpmi")
    r = repro("--", str(where / "superpmi"), BASE, str(seed_collection(cols)), cwd=tmp_path)
    assert r.returncode == 3 and "line break" in one_error_line(r)


# ------------------------------------------------------------------------------ 2. outputs destroy
# nothing
@pytest.fixture
def collection(tmp_path: Path) -> Path:
    path = tmp_path / "in.mch"
    build_collection(path, 12)
    return path


def _state(*paths: Path) -> list[tuple[str, int, bytes | None]]:
    out = []
    for p in paths:
        st = os.lstat(p)
        out.append(
            (str(p), stat.S_IFMT(st.st_mode), p.read_bytes() if stat.S_ISREG(st.st_mode) else None)
        )
    return out


@pytest.mark.parametrize(
    "case",
    [
        "index-over-collection",
        "extract-over-index",
        "extract-over-other-index",
        "extract-over-link",
        "extract-over-hard-link",
        "extract-over-dev-null",
        "extract-over-fifo",
        "extract-over-directory",
        "sample-over-dev-null",
    ],
)
def test_outputs_never_destroy_inputs_or_devices(
    collection: Path, tmp_path: Path, case: str
) -> None:
    index = toc_path_for(collection)
    other = collection.with_suffix(".mct")
    shutil.copyfile(index, other)
    link, hard, fifo, directory = (
        tmp_path / "link.mch",
        tmp_path / "hard.mch",
        tmp_path / "fifo",
        tmp_path / "dir",
    )
    link.symlink_to(collection)
    os.link(collection, hard)
    os.mkfifo(fifo)
    directory.mkdir()
    args = {
        "index-over-collection": ["mch", "index", str(collection), "-o", str(collection)],
        "extract-over-index": ["mch", "extract", "-c", "1", str(collection), str(index)],
        "extract-over-other-index": ["mch", "extract", "-c", "1", str(collection), str(other)],
        "extract-over-link": ["mch", "extract", "-c", "1", str(collection), str(link)],
        "extract-over-hard-link": ["mch", "extract", "-c", "1", str(collection), str(hard)],
        "extract-over-dev-null": ["mch", "extract", "-c", "1", str(collection), "/dev/null"],
        "extract-over-fifo": ["mch", "extract", "-c", "1", str(collection), str(fifo)],
        "extract-over-directory": ["mch", "extract", "-c", "1", str(collection), str(directory)],
        "sample-over-dev-null": ["sample", "build", "--methods", "5", "--out", "/dev/null"],
    }[case]
    watched = [collection, index, other, link, hard, fifo, directory, Path("/dev/null")]
    before = _state(*watched)
    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "refusing to overwrite" in one_error_line(r)
    assert _state(*watched) == before
    assert leftovers(tmp_path) == []


# ------------------------------------------------------------------------------------------ 3. -c
# is ranges
def _limited(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.parametrize(
    "args",
    [
        ["mch", "list", "-c", "1-99999999999999999999"],
        ["mch", "list", "-c", "3,5-50000000"],
        ["mch", "extract", "-c", "1-50000000"],
        ["mch", "extract", "-c", "2,4,6-99999999999999999999"],
    ],
)
def test_mclists_are_ranges_bounded_by_the_collection(
    collection: Path, tmp_path: Path, args: list[str]
) -> None:
    """Within 1 GiB of address space (a list of 50 million numbers alone would need 2 GB): the walk
    stops at the first number past the collection's end, with one line."""
    argv = [*args[:-1], args[-1], str(collection)] + (
        [str(tmp_path / "out.mch")] if "extract" in args else []
    )
    r = subprocess.run(
        [sys.executable, "-m", "spmi_dbg", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _limited(1 << 30),
    )
    assert r.returncode == 1, r.stderr
    # the first number past the 12 the collection has (every list here reaches past it)
    first_missing = 13
    assert re.search(
        rf"method context {first_missing} (does not exist|is not in the index)", one_error_line(r)
    )
    assert not (tmp_path / "out.mch").exists()


def test_repro_with_a_huge_range_is_one_line(cols: Collections, tmp_path: Path) -> None:
    r = repro(
        "--", REPLAY, "-c", "1-100000000", BASE, str(cols.get("hostile-small", 20)), cwd=tmp_path
    )
    assert (
        r.returncode == 3
        and "-c asks for method context 100000000; the collection has 20" in one_error_line(r)
    )


# ------------------------------------------------------------------------------------------- 4.
# .mcl files
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse-4g", "directory"])
def test_mcl_files_are_regular_and_bounded(collection: Path, tmp_path: Path, kind: str) -> None:
    mcl = tmp_path / "list.mcl"
    if kind == "fifo":
        os.mkfifo(mcl)
    elif kind == "dev-zero":
        mcl.symlink_to("/dev/zero")
    elif kind == "sparse-4g":
        with open(mcl, "wb") as f:
            f.truncate(4 << 30)
    else:
        mcl.mkdir()
    for args in (
        ["mch", "list", "-c", str(mcl), str(collection)],
        ["repro", "--", REPLAY, "-c", str(mcl), BASE, str(collection)],
    ):
        # a FIFO with no writer would hang a plain open: the timeout fails it
        r = run_cli(*args, cwd=tmp_path)
        assert r.returncode == (2 if args[0] == "mch" else 3), r.stderr
        line = one_error_line(r)
        assert "cannot read method context list" in line
        assert ("not a regular file" in line) or ("expected at most" in line)


def test_bad_mcl_content_is_shown_escaped(collection: Path, tmp_path: Path) -> None:
    mcl = tmp_path / "x.mcl"
    mcl.write_bytes(b"1\n\x1b[31mboom\x07\n")
    r = run_cli("mch", "list", "-c", str(mcl), str(collection), cwd=tmp_path)
    assert r.returncode == 2
    line = one_error_line(r)
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr and "\\x1b[31mboom\\x07" in line


def test_numbers_are_bounded_before_they_are_converted(collection: Path, tmp_path: Path) -> None:
    """Issue 30 item 1: a number of thousands of digits (Python's own int() refuses more than 4,300
    with a traceback) in -c, in a .mcl line, in --max-problems: one line naming where, and the
    expected size."""
    huge = "9" * 5000
    mcl = tmp_path / "big.mcl"
    mcl.write_text(f"1\n2\n{huge}\n")
    for args in (
        ("mch", "list", "-c", f"1-{huge}", str(collection)),
        ("mch", "extract", "-c", f"3,{huge}", str(collection), str(tmp_path / "o.mch")),
        ("mch", "list", "-c", str(mcl), str(collection)),
        ("repro", "--", REPLAY, "-c", f"1-{huge}", BASE, str(collection)),
    ):
        r = run_cli(*args, cwd=tmp_path)
        assert r.returncode == (2 if args[0] == "mch" else 3), r.stderr
        line = one_error_line(r)
        assert "a number of 5000 digits, expected a method context number of at most 20" in line
        assert len(line) < 400, line
    assert "big.mcl: line 3: a number of 5000 digits" in one_error_line(
        run_cli("mch", "list", "-c", str(mcl), str(collection), cwd=tmp_path)
    )
    r = run_cli("mch", "verify", "--max-problems", huge, str(collection), cwd=tmp_path)
    assert r.returncode == 2 and len(one_error_line(r)) < 400


def test_a_path_too_long_is_one_line_in_every_mch_command(tmp_path: Path) -> None:
    """Issue 30 item 2: a collection path over the system's name limit (ENAMETOOLONG): one line
    naming the path and the error, from the Python readers and the native verifier alike."""
    long = str(tmp_path / ("a" * 300 + ".mch"))
    for args in (
        ("mch", "info", long),
        ("mch", "list", long),
        ("mch", "dump", long, "1"),
        ("mch", "dump", "--json", long, "1"),
        ("mch", "extract", "-c", "1", long, str(tmp_path / "o.mch")),
        ("mch", "index", long),
        ("mch", "verify", long),
        ("mch", "verify", "--max-problems", "3", long),
    ):
        r = run_cli(*args, cwd=tmp_path)
        assert r.returncode in (1, 2), (args, r.stderr)
        line = one_error_line(r)
        assert "File name too long" in line and "aaaa" in line, (args, line)


# ------------------------------------------------------------------------------------------------
# 5. --out
def test_out_is_checked_before_any_replay(cols: Collections, tmp_path: Path) -> None:
    mch = str(cols.get("hostile-small", 20))
    afile = tmp_path / "afile"
    afile.write_text("x")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    for out, needle in (
        (afile, "must name a directory"),
        (foreign, "holds files spmi-dbg did not write"),
        (tmp_path / "no" / "such", "does not exist"),
    ):
        r = repro(*repro_args(REPLAY, BASE, mch, out=str(out)), cwd=tmp_path)
        assert r.returncode == 3 and needle in one_error_line(r), r.stderr
        assert "result:" not in r.stdout  # nothing was replayed
    assert (foreign / "notes.txt").read_text() == "mine" and afile.read_text() == "x"


def test_one_run_per_bundle_directory(cols: Collections, tmp_path: Path) -> None:
    out = tmp_path / "b"
    fd = os.open(tmp_path / ".b.spmi-lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a run writing that bundle holds it
        r = repro(
            *repro_args(*SEED_COMMAND, str(seed_collection(cols)), out=str(out)), cwd=tmp_path
        )
    finally:
        os.close(fd)
    assert r.returncode == 3 and "another spmi-dbg run is writing" in one_error_line(r)
    assert not out.exists()


def test_a_bundle_that_cannot_be_written_claims_nothing(
    cols: Collections, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk while the bundle is written: no bundle directory at all, not a half one; the
    summary says why and does not say verified; exit 5, the run incomplete (issue 37)."""

    def full(*args: object, **kwargs: object) -> list[str]:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(bundle_module, "_write_files", full)
    gdb = shutil.which("gdb")
    assert gdb is not None
    cmd = command.from_argv([*SEED_COMMAND, str(seed_collection(cols))])
    out = tmp_path / "full"
    result = run_repro(
        ReproOptions(
            command=cmd,
            debugger=GdbDriver(gdb, DebuggerSetup(cwd=str(tmp_path))),
            out=out,
            workers=2,
            verify_runs=1,
        )
    )
    assert result.exit_code == exits.INCOMPLETE and result.outcome == "bundle-error"
    assert result.bundle_error is not None and "No space left on device" in result.bundle_error
    assert not out.exists() and leftovers(tmp_path) == []
    from spmi_dbg.repro.display import summary_rows

    shown = "\n".join(f"{k}: {v}" for k, v in summary_rows(result))
    assert "verified" not in shown and "No space left on device" in shown


# ------------------------------------------------------------------------------------------- 6.
# interruption
def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "spmi_dbg", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(predicate: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_sigterm_cleans_up_like_sigint(tmp_path: Path) -> None:
    proc = _start(["sample", "build", "--methods", "400000", "--out", "big.mch"], tmp_path)
    assert _wait_for(lambda: leftovers(tmp_path), 60), "the build never started writing"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "terminated" in err
    assert leftovers(tmp_path) == [] and not (tmp_path / "big.mch").exists()


def test_a_killed_runs_leftovers_are_removed_by_the_next_run(tmp_path: Path) -> None:
    proc = _start(["sample", "build", "--methods", "400000", "--out", "big.mch"], tmp_path)
    assert _wait_for(lambda: leftovers(tmp_path), 60), "the build never started writing"
    proc.kill()
    proc.communicate(timeout=60)
    left = leftovers(tmp_path)
    assert left and all(f"-{proc.pid}-" in p.name and is_dead_runs(p.name) for p in left)
    r = run_cli("sample", "build", "--methods", "5", "--out", "small.mch", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert leftovers(tmp_path) == []


def test_dead_run_names() -> None:
    me = run_tag()
    assert not is_dead_runs(f".x.mch.spmi-tmp-{me}-abc123")  # this run: alive
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert is_dead_runs(f".x.mch.spmi-tmp-{host_tag()}-{dead.pid}-Ab_9")
    assert is_dead_runs(f"spmi-repro-{host_tag()}-{dead.pid}-xyz")
    # another host's: never touched
    assert not is_dead_runs(f".x.mch.spmi-tmp-otherhost-{dead.pid}-Ab_9")
    assert not is_dead_runs(".x.mch.tmp1234")


def _replay_running(mch: Path) -> bool:
    """A process whose program (argv[0]) is the replay core runs on this collection."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if argv[0].endswith(b"spmi-replay") and str(mch).encode() in argv:
                return True
    return False


def test_sigterm_during_repro_leaves_no_process_and_no_temp(
    cols: Collections, tmp_path: Path
) -> None:
    mch = cols.get("hostile-hang", 60, inject=[("hang", 30)])
    proc = _start(
        ["repro", "--timeout", "600", "--out", "h", "--", REPLAY, BASE, str(mch)], tmp_path
    )
    assert _wait_for(lambda: _replay_running(mch), 60), "the replay never started"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert _wait_for(lambda: no_replays_left(mch), 10)
    assert not (tmp_path / "h").exists()
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    assert [p for p in tmp.glob(f"spmi-*-{host_tag()}-{proc.pid}-*")] == []


# ---------------------------------------------------------------------------------------------- 7.
# redact
def test_redact_a_non_ascii_home_reached_through_a_link(cols: Collections, tmp_path: Path) -> None:
    real = tmp_path / "réal-hömé"
    real.mkdir()
    home = tmp_path / "hömé-link"
    home.symlink_to(real)
    mch = home / "seed.mch"
    shutil.copyfile(seed_collection(cols), mch)
    env = dict(os.environ, HOME=str(home), COLUMNS="200")
    r = repro(
        *repro_args(
            *SEED_COMMAND, str(mch), out="b", workers=2, verify_runs=1, options=("--redact",)
        ),
        cwd=tmp_path,
        env=env,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    redactor = Redactor((str(home), str(real)), None, None)
    for name in (
        "report.json",
        "diagnosis.json",
        "debugger.log",
        "report.md",
        "repro.sh",
        "replay.stdout",
    ):
        text = (tmp_path / "b" / name).read_text(errors="replace")
        assert redactor.left_in(text) == [], name
    assert "$HOME" in (tmp_path / "b" / "report.json").read_text()


# ----------------------------------------------------------------------------------------- 8. lying
# indexes
def _entries(index: Path) -> bytearray:
    return bytearray(index.read_bytes())


def _set_offset(data: bytearray, i: int, offset: int) -> None:
    data[8 + 48 * i : 8 + 48 * i + 8] = offset.to_bytes(8, "little", signed=True)


def test_swapped_index_offsets_are_refused(collection: Path, tmp_path: Path) -> None:
    index = toc_path_for(collection)
    data = _entries(index)
    a, b = bytes(data[8 + 48 * 3 : 8 + 48 * 3 + 8]), bytes(data[8 + 48 * 4 : 8 + 48 * 4 + 8])
    data[8 + 48 * 3 : 8 + 48 * 3 + 8], data[8 + 48 * 4 : 8 + 48 * 4 + 8] = b, a
    index.write_bytes(bytes(data))
    for args in (
        ["mch", "dump", str(collection), "5"],
        ["mch", "extract", "-c", "1-5", str(collection), str(tmp_path / "o.mch")],
    ):
        r = run_cli(*args, cwd=tmp_path)
        assert r.returncode == 1 and "offsets out of order" in one_error_line(r)
    assert not (tmp_path / "o.mch").exists()


def test_a_negative_index_offset_is_said_as_such(collection: Path, tmp_path: Path) -> None:
    index = toc_path_for(collection)
    data = _entries(index)
    _set_offset(data, 2, -8)
    index.write_bytes(bytes(data))
    r = run_cli("mch", "list", str(collection), cwd=tmp_path)
    assert r.returncode == 1 and "entry 2: negative offset" in one_error_line(r)


def test_extract_refuses_a_record_with_a_bad_canary(collection: Path, tmp_path: Path) -> None:
    with Collection.open(collection) as col:
        packet = col.packets(3)[0]
    data = bytearray(collection.read_bytes())
    data[packet.offset + 5 + packet.size] ^= 0xFF
    collection.write_bytes(bytes(data))
    r = run_cli(
        "mch", "extract", "-c", "2-4", str(collection), str(tmp_path / "o.mch"), cwd=tmp_path
    )
    assert r.returncode == 1 and "canary" in one_error_line(r)
    assert not (tmp_path / "o.mch").exists()


# -------------------------------------------------------------------------------------------------
# 9. fuzz
BASE_RECORDS = list(synthetic_collection(6, 5, with_compile_result=True))
NAME_PIECES = ["a b", "q'", '"', "$(touch PWNED)", "`touch PWNED`", ";", "-x", "ü", "\\", "\n"]
MC_LISTS = st.one_of(
    st.sampled_from(
        [
            "1",
            "2-4",
            "1,3,5",
            "6",
            "7",
            "0",
            "3,2",
            "1-1",
            "1-99999999999999999999",
            "",
            ",",
            "-",
            "5-",
            "a",
            "1;2",
            "4294967297",
            "-1",
        ]
    ),
    st.builds(lambda a, b: f"{a}-{b}", st.integers(0, 10**12), st.integers(0, 10**12)),
    st.lists(st.integers(-2, 12), max_size=6).map(lambda xs: ",".join(map(str, xs))),
)


def _exit_code(argv: list[str]) -> tuple[int, str]:
    """cli.main in this process: any exception but SystemExit (argparse's usage errors) is a bug it
    lets out."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = cli.main(argv)
        except SystemExit as e:
            code = int(e.code) if isinstance(e.code, int) else 2
    return code, err.getvalue()


def _lay_out(
    root: Path, name: str, records: list[bytes], rng: random.Random, index_kind: str
) -> Path:
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{name}.mch"
    data = b"".join(records)
    path.write_bytes(mutate(data, rng, rng.randint(1, 3)) if rng.random() < 0.4 else data)
    if index_kind != "none":
        entries, pos = [], 0
        for i, r in enumerate(records, 1):
            entries.append((pos, i, None))
            pos += len(r)
        from spmi_dbg.mch.mct import build_toc_bytes

        toc = bytearray(build_toc_bytes(entries))
        if index_kind == "swapped" and len(records) > 2:
            toc[8:16], toc[56:64] = toc[56:64], toc[8:16]
        elif index_kind == "negative":
            _set_offset(toc, 0, -8)
        elif index_kind == "garbage":
            toc = toc[: rng.randrange(len(toc))]
        toc_path_for(path).write_bytes(bytes(toc))
    return path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


@pytest.mark.unit
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    pieces=st.lists(st.sampled_from(NAME_PIECES), min_size=1, max_size=3),
    index_kind=st.sampled_from(["intact", "none", "swapped", "negative", "garbage"]),
    mclist=MC_LISTS,
    verb=st.sampled_from(["info", "list", "extract", "index", "verify", "dump", "extract-mcl"]),
)
def test_fuzz_mch_commands(
    tmp_path: Path, seed: int, pieces: list[str], index_kind: str, mclist: str, verb: str
) -> None:
    rng = random.Random(seed)
    # the fixture's directory is shared by examples
    root = Path(tempfile.mkdtemp(prefix="case-", dir=tmp_path))
    name = "".join(pieces).replace("/", "_") or "x"
    path = _lay_out(root, name, BASE_RECORDS, rng, index_kind)
    out = root / f"out {name}.mch"
    mcl = root / f"{name}.mcl"
    mcl.write_text("\n".join(mclist.split(",")) + "\n")
    argv = {
        "info": ["mch", "info", str(path)],
        "list": ["mch", "list", "-c", mclist, str(path)],
        "extract": ["mch", "extract", "-c", mclist, str(path), str(out)],
        "extract-mcl": ["mch", "extract", "-c", str(mcl), str(path), str(out)],
        "index": ["mch", "index", str(path), "-o", str(root / "new.mct")],
        "verify": ["mch", "verify", str(path)],
        "dump": ["mch", "dump", str(path), str(rng.randint(-1, 8))],
    }[verb]
    before = _snapshot(root)
    code, err = _exit_code(argv)
    assert code in (0, 1, 2), err
    assert "Traceback" not in err
    after = _snapshot(root)
    assert {k: v for k, v in after.items() if k in before} == before  # every input byte unchanged
    new = set(after) - set(before)
    assert new <= {str(out), str(toc_path_for(out)), str(root / "new.mct")}, new
    assert leftovers(root) == [] and pwned(root) == []


# not `unit`: reading the command asks superpmi its era (`spmi-replay -?`, once per process)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    pieces=st.lists(st.sampled_from(NAME_PIECES), min_size=1, max_size=3),
    index_kind=st.sampled_from(["intact", "none", "swapped", "negative", "garbage"]),
    mclist=MC_LISTS,
    form=st.sampled_from(["argv", "options", "out-file", "out-foreign"]),
)
def test_fuzz_repro_arguments(
    tmp_path: Path, seed: int, pieces: list[str], index_kind: str, mclist: str, form: str
) -> None:
    """`repro` up to the point where it would start a debugger (--gdb names none: a command that
    passes every check ends with "not found"): exit 3 for every bad input, never a traceback, inputs
    unchanged."""
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="case-", dir=tmp_path))
    name = "".join(pieces).replace("/", "_") or "x"
    path = _lay_out(root, name, BASE_RECORDS, rng, index_kind)
    out = root / "out"
    if form == "out-file":
        out.write_text("x")
    elif form == "out-foreign":
        out.mkdir()
        (out / "keep.txt").write_text("x")
    common = ["repro", "--gdb", str(root / "no-gdb"), "--out", str(out)]
    argv = (
        [*common, "--", REPLAY, "-c", mclist, BASE, str(path)]
        if form != "options"
        else [*common, "--mch", str(path), "--jit", BASE, "--", "-c", mclist]
    )
    before = _snapshot(root)
    code, err = _exit_code(argv)
    assert code == 3, err
    assert (
        "Traceback" not in err
        and len([x for x in err.splitlines() if x.startswith("spmi-dbg")]) == 1
    ), err
    assert _snapshot(root) == before
    assert leftovers(root) == [] and pwned(root) == []


@pytest.mark.unit
def test_a_published_directory_has_mkdirs_permissions(tmp_path: Path) -> None:
    from spmi_dbg.outdir import publish, stage

    out = tmp_path / "bundle"
    staged = stage(out)
    (staged / "report.md").write_text("x")
    publish(staged, out)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask and leftovers(tmp_path) == []


def test_spmi_report_in_gdb_writes_its_directory_whole(cols: Collections, tmp_path: Path) -> None:
    """`spmi report DIR` inside the debugger: the same output-directory rules (written whole, an
    earlier report replaced, a directory holding other files refused with one line)."""
    from spmi_dbg.driver.loader import gdbinit_line

    gdb = shutil.which("gdb")
    assert gdb is not None
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("x")
    r = subprocess.run(
        gdb_batch(
            gdbinit_line(),
            "run",
            "spmi report r",
            "spmi report r",
            "spmi report foreign",
            "kill",
            args=[*SEED_COMMAND, str(seed_collection(cols))],
            gdb=gdb,
        ),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert r.stdout.count("wrote r: ") == 2, r.stdout + r.stderr
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [
        "diagnosis.json",
        "report.md",
        "repro.mch",
        "repro.mch.mct",
        "why.txt",
    ]
    assert (
        "holds files spmi-dbg did not write (mine.txt)" in r.stderr
        and (foreign / "mine.txt").exists()
    )
    assert leftovers(tmp_path) == []


def _peak_rss_kb(argv: list[str], cwd: Path) -> int:
    """The child's peak resident set (KB), from its own rusage (os.wait4)."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0, argv
    return int(usage.ru_maxrss)


def test_dump_json_stays_within_a_multiple_of_its_record(tmp_path: Path) -> None:
    """Issue 30 item 5: `mch dump --json` of a 1.4 MB record of 100,000 empty maps peaked at 232 MB
    (rows and text built whole): its peak over a one-map record's, per byte of record, stays under
    20."""
    from spmi_dbg.mch import encode as E

    big, small = tmp_path / "big.mch", tmp_path / "small.mch"
    big.write_bytes(E.record(E.packet(1 + i % 150, E.lwm([])) for i in range(100_000)))
    small.write_bytes(E.record([E.packet(1, E.lwm([]))]))
    cmd = [sys.executable, "-m", "spmi_dbg", "mch", "dump", "--json"]
    base = _peak_rss_kb([*cmd, str(small), "1"], tmp_path)
    peak = _peak_rss_kb([*cmd, str(big), "1"], tmp_path)
    ratio = (peak - base) * 1024 / big.stat().st_size
    assert ratio <= 20, (peak, base, ratio)


def test_path_errors_are_one_line_in_every_pipeline(tmp_path: Path) -> None:
    """Issue 30 item 2: a collection or bundle path that is too long, a symlink loop, a path through
    a file, a directory or a device, given to repro, triage, bisect and recheck: one line each,
    never a traceback (EACCES is the same class; the tests run as root, which is never refused)."""
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "afile").write_text("")
    bad = [
        str(tmp_path / ("a" * 300 + ".mch")),
        str(tmp_path / "loop1"),
        str(tmp_path / "afile" / "x.mch"),
        str(tmp_path),
        "/dev/null",
    ]
    for path in bad:
        for args in (
            ("repro", "--out", "r", "--", REPLAY, BASE, path),
            ("triage", "--out", "t", "--", REPLAY, BASE, path),
            ("bisect", path, "--jits", "/dev/null"),
            ("recheck", path, "--jit", BASE),
        ):
            r = run_cli(*args, cwd=tmp_path)
            assert r.returncode == 3, (args, r.stderr)
            one_error_line(r)


def test_permission_denied_is_one_line_in_every_command() -> None:
    """Issue 30 item 2, EACCES: a collection in a directory its user may not search. As root (CI)
    the commands run as nobody (setpriv), since root is never refused; the native verifier and the
    Python verify say the same line."""
    base = Path(tempfile.mkdtemp(prefix="spmi-eacces-", dir="/tmp"))
    try:
        base.chmod(0o755)
        (base / "tmp").mkdir(mode=0o777)
        (base / "tmp").chmod(0o777)
        locked = base / "locked"
        locked.mkdir()
        mch = locked / "x.mch"
        mch.write_bytes(b"")
        locked.chmod(0)
        as_user: list[str] = []
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv")
            assert setpriv, "setpriv (util-linux) is needed to run the commands as nobody"
            as_user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        env = dict(os.environ, TMPDIR=str(base / "tmp"), HOME=str(base / "tmp"))
        script = str(Path(sys.executable).with_name("spmi-dbg"))
        lines: dict[str, str] = {}
        for args in (
            ("mch", "info", str(mch)),
            ("mch", "list", str(mch)),
            ("mch", "dump", str(mch), "1"),
            ("mch", "index", str(mch)),
            ("mch", "verify", str(mch)),
            ("repro", "--out", str(base / "tmp" / "r"), "--", REPLAY, BASE, str(mch)),
            ("triage", "--out", str(base / "tmp" / "t"), "--", REPLAY, BASE, str(mch)),
            ("recheck", str(locked), "--jit", BASE, "--out", str(base / "tmp" / "c")),
            ("bisect", str(locked), "--jits", "/dev/null", "--out", str(base / "tmp" / "b")),
        ):
            r = subprocess.run(
                [*as_user, script, *args], capture_output=True, text=True, env=env,
                cwd=base / "tmp", timeout=120
            )  # fmt: skip
            assert r.returncode in (1, 2, 3), (args, r.stderr)
            line = one_error_line(r)
            assert "Permission denied" in line, (args, line)
            lines[" ".join(args[:2])] = line
        python = subprocess.run(
            [*as_user, sys.executable, "-m", "spmi_dbg", "mch", "verify", str(mch)],
            capture_output=True, text=True, env=env, cwd=base / "tmp", timeout=120
        )  # fmt: skip
        assert one_error_line(python) == lines["mch verify"]
    finally:
        for d in base.rglob("*"):
            if d.is_dir() and not d.is_symlink():
                d.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
