"""`spmi-dbg demo` and examples/seed-arm64-asmdiffs/run.sh, at a small size, with real gdb and real
processes."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .support.common import BUNDLE_FILES, mc_bytes
from .support.pipeline import assert_null_map

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "seed-arm64-asmdiffs"


def spmi_dbg() -> str:
    exe = Path(sys.executable).parent / "spmi-dbg"
    assert exe.is_file(), (
        f"{exe}: the spmi-dbg entry point is not installed beside the test interpreter"
    )
    return str(exe)


def matches(line: str, pattern: str) -> bool:
    """`*` in an expected.txt line stands for any text; everything else is literal."""
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), line) is not None


def test_demo_example_script(tmp_path: Path) -> None:
    assert shutil.which("gdb") is not None, "gdb is required"
    env = dict(os.environ, SPMI_DBG=spmi_dbg(), COLUMNS="200")
    r = subprocess.run(
        [
            str(EXAMPLE / "run.sh"),
            "--methods",
            "3000",
            "--at",
            "2000",
            "--out",
            "demo",
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.splitlines()

    # The same lines, in the same order, as expected.txt (written for the defaults) says.
    expected = (EXAMPLE / "expected.txt").read_text().splitlines()
    assert [ln.split(":")[0].split(" ")[0] for ln in out] == [
        ln.split(":")[0].split(" ")[0] for ln in expected
    ]
    small = {
        "200,000": "3,000",
        "150,000": "2,000",
        "150000": "2000",
        "spmi-dbg-demo": "demo",
        "243 MB": "4 MB",
        "System.List`1:RemoveSlot (IL size 109)": "*",
    }
    for got, want in zip(out, expected, strict=True):
        for k, v in small.items():
            want = want.replace(k, v)
        assert matches(got, want), (got, want)

    bundle = tmp_path / "demo" / "repro"
    for name in BUNDLE_FILES:
        assert (bundle / name).is_file(), name
    rep = json.loads((bundle / "report.json").read_text())
    d = rep["diagnosis"]
    assert rep["outcome"] == "verified" and rep["exit_code"] == 0
    assert d["method_context"]["number"] == 2000
    assert d["signal"]["name"] == "SIGSEGV" and d["signal"]["near_null"]
    assert_null_map(d, "CompileResult", "CompileMethod")
    assert d["null_map"]["role"].startswith("base compile result")
    assert rep["verification"]["accepted"] and rep["verification"]["debugger_run"]["reproduced"]
    assert rep["repro"]["method_contexts"] == [2000]
    assert rep["command"]["options"] == ["-a", "-target", "arm64", "-bug", "91257"]
    assert any("dropped `-p`" in n for n in rep["command"]["notes"])
    assert (bundle / "repro.mch").read_bytes() == mc_bytes(tmp_path / "demo" / "big.mch", 2000)


def test_demo_bad_arguments(tmp_path: Path) -> None:
    r = subprocess.run(
        [spmi_dbg(), "demo", "--methods", "10", "--at", "11", "--out", "d"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert r.returncode == 3, r.stdout + r.stderr
    assert (
        r.stderr.strip() == "spmi-dbg demo: error: --at 11 is beyond the collection (--methods 10)"
    )


def test_the_running_line_runs_as_printed(tmp_path: Path) -> None:
    """`running spmi-dbg repro ...`, pasted into a shell in the same directory, is the same repro:
    the bundled binaries by their full paths, the demo's --out, every word quoted for sh (a
    directory with a space here)."""
    assert shutil.which("gdb") is not None, "gdb is required"
    out = "demo dir"
    r = subprocess.run(
        [spmi_dbg(), "demo", "--methods", "100", "--at", "60", "--out", out, "--workers", "2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    running = next(ln for ln in r.stdout.splitlines() if ln.startswith("running "))
    words = shlex.split(running.removeprefix("running "))
    assert words[1:7] == ["repro", "--workers", "2", "--out", f"{out}/repro", "--"], words
    assert all(
        Path(w).is_absolute() and Path(w).is_file() for w in (words[7], words[-3], words[-2])
    ), words
    first = json.loads((tmp_path / out / "repro" / "report.json").read_text())
    pasted = subprocess.run(
        ["sh", "-c", running.removeprefix("running ")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert pasted.returncode == 0, pasted.stdout + pasted.stderr
    again = json.loads((tmp_path / out / "repro" / "report.json").read_text())
    assert (
        again["diagnosis"]["method_context"]["number"]
        == first["diagnosis"]["method_context"]["number"]
        == 60
    )
    assert again["command"] == first["command"] and again["outcome"] == "verified"
    # A collection below 1 MB is said in KB, never "(0 MB)".
    collection = next(ln for ln in r.stdout.splitlines() if ln.startswith("collection: "))
    assert re.search(r"100 sample Arm64 method contexts \(\d+ KB\)", collection), collection


@pytest.mark.unit
@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 bytes"),
        (999, "999 bytes"),
        (1000, "1 KB"),
        (120_400, "120 KB"),
        (999_499, "999 KB"),
        (999_999, "1 MB"),
        (1_000_000, "1 MB"),
        (243_000_000, "243 MB"),
        (1_234_000_000, "1,234 MB"),
    ],
)
def test_sizes_are_never_zero_megabytes(size: int, text: str) -> None:
    from spmi_dbg.repro.demo import size_text

    assert size_text(size) == text
