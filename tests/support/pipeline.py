"""`spmi-dbg repro` and `spmi-dbg triage` as the user runs them (real command line, real debugger,
real processes), and what their bundles are checked with."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from .common import ROOT, Collections, seed_collection
from .natives import BASE, DIFF, REPLAY
from .sarif_check import check_file

SCHEMAS = ROOT / "spmi_dbg" / "report" / "schema"
FIXTURE = ROOT / "tests" / "fixtures" / "superpmi.4.log.in"

TRIAGE_INJECT = [
    ("seed-arm64", 150),
    ("seed-arm64", 300),
    ("seed-arm64", 450),
    ("poison", 100),
    ("poison-crash", 110),
    ("poison", 400),
    ("poison-crash", 410),
    ("stack-overflow", 200),
    ("stack-overflow", 500),
    ("jit-null", 50),
    ("jit-assert", 60),
]


def repro(
    *args: str,
    cwd: Path,
    timeout: float = 240,
    debugger: str = "gdb",
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`spmi-dbg repro ARGS`; with debugger="lldb", `spmi-dbg repro --debugger lldb ARGS` (gdb is
    the default and is not named); `env`: the whole environment (default: this one's)."""
    assert shutil.which("gdb") is not None, "gdb is required (.ci/run installs it)"
    env = dict(os.environ if env is None else env, COLUMNS="200")
    chosen = () if debugger == "gdb" else ("--debugger", debugger)
    return subprocess.run(
        [sys.executable, "-m", "spmi_dbg", "repro", *chosen, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


@dataclass(frozen=True)
class ReproRun:
    """One `spmi-dbg repro` that exited 0, run once for the several tests that read it (a
    module-scoped fixture): the debugger, the command's result, where it ran, its bundle and
    report.json."""

    debugger: str
    result: subprocess.CompletedProcess[str]
    cwd: Path
    bundle: Path
    report: dict[str, Any]

    def text(self, name: str) -> str:
        """A text file of the bundle."""
        return (self.bundle / name).read_text()


def repro_run(
    *args: str, cwd: Path, out: str | None = None, debugger: str = "gdb", timeout: float = 240
) -> ReproRun:
    """`spmi-dbg repro ARGS` in `cwd`, which must exit 0; its bundle is `cwd / out`, or the one it
    wrote under its default name (spmi-repro-<bucket>) when `out` is None."""
    r = repro(*args, cwd=cwd, debugger=debugger, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    bundle = cwd / out if out is not None else next(cwd.glob("spmi-repro-*"))
    return ReproRun(debugger, r, cwd, bundle, report(bundle))


def repro_args(
    *command: str | Path,
    out: str | Path | None = None,
    workers: int | str | None = None,
    verify_runs: int | str | None = None,
    options: Sequence[str | Path] = (),
) -> list[str]:
    """`spmi-dbg repro`'s (or triage's) arguments: the tool's options (`--workers`,
    `--verify-runs`, `--out` when given), then `--` and the superpmi command."""
    args = [str(o) for o in options]
    for flag, value in (("--workers", workers), ("--verify-runs", verify_runs), ("--out", out)):
        if value is not None:
            args += [flag, str(value)]
    return [*args, "--", *(str(c) for c in command)]


def winner_range(rep: dict[str, Any]) -> tuple[str, int]:
    """report.json's winning partition: its -c range and its first method context."""
    loc = rep["locate"]
    (spec,) = [p["compile"] for p in loc["partitions"] if p["partition"] == loc["winner"]]
    return str(spec), int(str(spec).split("-")[0].split(",")[0])


def assert_null_map(d: dict[str, Any], owner: str, member: str) -> None:
    assert (d["null_map"]["owner_type"], d["null_map"]["member"]) == (owner, member), d["null_map"]


def assert_refused(
    run: Callable[..., subprocess.CompletedProcess[str]],
    cases: dict[tuple[str, ...], str],
    cwd: Path,
) -> None:
    """Each command line `run(*ARGS)` (repro or triage) is refused before any work: exit status 3
    and, usage lines aside, one line on stderr that says TEXT, with no traceback."""
    for args, text in cases.items():
        r = run(*args, cwd=cwd)
        assert r.returncode == 3, (args, r.stdout, r.stderr)
        lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("usage:")]
        assert len(lines) == 1 and text in lines[0] and "Traceback" not in r.stderr, (
            args,
            r.stderr,
        )


def triage(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spmi_dbg", "triage", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ, COLUMNS="200"),
        timeout=600,
    )


def triage_collection(cols: Collections) -> Path:
    """Three distinct fatal crash kinds, each repeated, plus a first-chance fault and a JIT
    assert."""
    return cols.get("triage-three", 600, arch="arm64", seed=2, inject=TRIAGE_INJECT)


def validate(data: dict[str, Any], name: str = "report-5.json") -> None:
    """`data` against a shipped JSON schema (report.json by default)."""
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


def validate_sarif(path: Path) -> dict[str, Any]:
    """A .sarif file against the SARIF 2.1.0 schema (tests/schemas/) and what GitHub code scanning
    requires; its data."""
    return check_file(path)


def report(bundle: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((bundle / "report.json").read_text())
    return data


def assert_seed_diagnosis(d: dict[str, Any], number: int = 300) -> None:
    """The seed crash as every driver must tell it: the method context, SIGSEGV near null, the base
    JIT's compile result without a CompileMethod map."""
    assert d["method_context"]["number"] == number and d["method_context"]["name"]
    assert d["signal"]["name"] == "SIGSEGV" and d["signal"]["near_null"]
    assert_null_map(d, "CompileResult", "CompileMethod")
    assert d["null_map"]["role"].startswith("base compile result")


def no_replays_left(path: Path) -> bool:
    """No spmi-replay process still has this collection on its command line."""
    needle = str(path).encode()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if needle in cmdline and b"spmi-replay" in cmdline:
                return False
    return True


def _core_limit() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def make_core(argv: list[str], cwd: Path) -> Path:
    """Run the crashing replay with core dumps on; the kernel writes `core` (or core.PID) into
    cwd."""
    pattern = Path("/proc/sys/kernel/core_pattern").read_text().strip()
    assert pattern.startswith("core") and "/" not in pattern, (
        f"core_pattern is {pattern!r}: this test needs core files written to the working directory"
    )
    r = subprocess.run(argv, cwd=cwd, preexec_fn=_core_limit, capture_output=True, timeout=60)
    assert r.returncode == -signal.SIGSEGV, r.stderr
    cores = sorted(cwd.glob("core*"))
    assert len(cores) == 1, f"no core file written in {cwd} (core_pattern {pattern!r})"
    return cores[0]


def render_fixture(tmp_path: Path, cols: Collections) -> tuple[Path, Path]:
    """The fixture log with real paths: the bundled binaries as Core_Root/JITs, sample
    collections."""
    col_dir = tmp_path / "collections"
    col_dir.mkdir()
    big = col_dir / "big.mch"
    shutil.copyfile(seed_collection(cols), big)
    shutil.copyfile(cols.get("fromlog-clean", 300), col_dir / "clean.mch")
    values = {
        "{SPMI}": str(tmp_path / "spmi"),
        "{SRC}": "/home/user/runtime",
        "{JITS}": str(Path(BASE).parent),
        "{COLS}": str(col_dir),
        "{CORE_ROOT}": str(Path(REPLAY).parent),
        "{TMP}": str(tmp_path / "tmpq3v_spmi"),
    }  # superpmi.py's temp dir: gone since
    text = FIXTURE.read_text()
    for k, v in values.items():
        text = text.replace(k, v)
    assert Path(BASE).parent == Path(DIFF).parent and "{" not in text
    log = tmp_path / "superpmi.4.log"
    log.write_text(text)
    return log, big


def clean_shell(script: Path) -> subprocess.CompletedProcess[str]:
    """A bundle's repro.sh run as from a fresh login: only PATH and HOME in the environment."""
    return subprocess.run(
        [
            "env",
            "-i",
            f"PATH={os.environ['PATH']}",
            f"HOME={os.environ.get('HOME', '/')}",
            "sh",
            str(script),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
