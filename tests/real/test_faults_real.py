"""Nothing lost under faults, on the real 3.1.23 build (issue 37 item 6, the live twin of
tests/test_faults.py): a JitStress=1 triage of api.mch (crashes and failed compiles by the dozen)
killed -9 at a point the seed picks, its output directory moved, and resumed there; and the same
triage on a disk that fails its writes (EIO). Each ends in the accounting of an uninterrupted run,
method context by method context."""

from __future__ import annotations

import errno
import json
import random
from pathlib import Path
from typing import Any

import pytest

from ..support.common import killed_at, run_cli, whole_texts
from ..support.faultdisk import FailingDisk, build_shim
from ..support.pipeline import triage
from ..support.real import Real

pytestmark = pytest.mark.live

JIT_STRESS = ("-jitoption", "JitStress=1")
COUNTS = ("method_contexts", "replayed_clean", "crashed", "failed_compile", "not_reached")


def _args(real: Real) -> list[str]:
    return [
        "--workers",
        "2",
        "--partition-methods",
        "300",
        "--",
        str(real.superpmi),
        *JIT_STRESS,
        "-c",
        "1-1800",
        str(real.jit_checked),
        str(real.api),
    ]


def _accounting(out: Path) -> dict[str, Any]:
    data = json.loads((out / "triage.json").read_text())
    return {
        "coverage": [{k: c[k] for k in COUNTS} for c in data["coverage"]],
        "crashes": sorted((c["member"], c["bucket"]) for c in data["crashes"]),
        # superpmi's own lines, by kind (3.1's failed compiles are its missing-data asserts)
        "reported": {
            kind: sorted(m for g in groups for m in g["method_contexts"])
            for kind, groups in data["reported_by_superpmi"].items()
        },
    }


@pytest.fixture(scope="module")
def uninterrupted(real: Real, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("ref")
    r = triage("--out", "ref", *_args(real), cwd=d)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    out = _accounting(d / "ref")
    assert out["crashes"] and out["reported"]["missing"], out  # the faults land among both
    out["returncode"] = r.returncode
    return out


@pytest.mark.parametrize("seed", [17, 41])
def test_real_triage_killed_moved_and_resumed_is_exact(
    real: Real, tmp_path: Path, uninterrupted: dict[str, Any], seed: int
) -> None:
    rng = random.Random(seed)
    done_before = rng.randrange(1, 5)  # of 6 partitions
    parts = tmp_path / "t" / "partitions"

    def the_point() -> bool:
        journals = [json.loads(t) for t in whole_texts(parts.glob("p[0-9]*.json"))]
        return sum(j["done"] for j in journals) >= done_before

    killed_at(["triage", "--out", "t", *_args(real)], tmp_path, the_point, timeout=600)
    moved = tmp_path / "after the $(move) 'x'"
    (tmp_path / "t").rename(moved)
    again = triage("--resume", "--out", str(moved), *_args(real), cwd=tmp_path)
    said = f"seed {seed}: killed after {done_before} partition(s) done, moved"
    assert again.returncode == uninterrupted["returncode"], f"{said}\n{again.stderr}"
    got = _accounting(moved)
    assert got == {k: v for k, v in uninterrupted.items() if k != "returncode"}, said


def test_real_triage_on_a_failing_disk_stops_in_one_line_and_goes_on_exactly(
    real: Real, tmp_path: Path, uninterrupted: dict[str, Any]
) -> None:
    seed = 23
    shim = build_shim(tmp_path)
    counting = FailingDisk(shim, tmp_path / "c", tmp_path / "c.count")
    (tmp_path / "c").mkdir()
    run_cli("triage", "--out", "c/t", *_args(real), cwd=tmp_path, timeout=1200, env=counting.env())
    start = random.Random(seed).randrange(counting.writes())
    said = f"seed {seed}: EIO from write {start} of {counting.writes()}, for good"
    disk = FailingDisk(shim, tmp_path / "d", tmp_path / "d.count", errno.EIO, start)
    (tmp_path / "d").mkdir()
    faulty = run_cli(
        "triage", "--out", "d/t", *_args(real), cwd=tmp_path, timeout=1200, env=disk.env()
    )
    assert faulty.returncode == 5 and "Traceback" not in faulty.stderr, f"{said}\n{faulty.stderr}"
    (line,) = [x for x in faulty.stderr.splitlines() if x.startswith("spmi-dbg triage: error:")]
    assert "(EIO)" in line, f"{said}\n{line}"
    resume = "resume: spmi-dbg triage --resume" in line
    again = triage(*(["--resume"] if resume else []), "--out", "d/t", *_args(real), cwd=tmp_path)
    assert again.returncode == uninterrupted["returncode"], f"{said}\n{again.stderr}"
    got = _accounting(tmp_path / "d" / "t")
    assert got == {k: v for k, v in uninterrupted.items() if k != "returncode"}, said
