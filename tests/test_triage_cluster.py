"""`spmi-dbg triage` on a real dask.distributed cluster started by the tests (a `dask scheduler` and
two `dask worker` processes on 127.0.0.1): three collections with crashes of four kinds give the
same buckets and the same coverage as on this machine; a worker SIGKILL'd in the middle of a replay
loses nothing; a coordinator SIGKILL'd mid-run is continued by --resume without replaying finished
partitions; an unreachable scheduler and a path the workers cannot see are one-line input errors."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .support.cluster import cluster, free_port
from .support.common import Collections, replaying, wait_for, whole_texts
from .support.natives import BASE, REPLAY, SEED_COMMAND
from .support.pipeline import repro_args, triage, validate

# in benchmarks.mch: the replay that is running when a worker or the coordinator is killed
HANG = 230
TIMEOUT = "6"  # --timeout: the hang's length
EXPECTED = {  # bucket kind -> members, whatever ran the partitions
    "seed": ["benchmarks.mch:50", "libraries.pmi.mch:100", "libraries.pmi.mch:250"],
    "overflow": ["benchmarks.mch:280", "coreclr_tests.mch:120"],
    "abort": ["benchmarks.mch:160", "coreclr_tests.mch:230"],
    "hang": [f"benchmarks.mch:{HANG}"],
}


@pytest.fixture(scope="module")
def collections(tmp_path_factory: pytest.TempPathFactory, cols: Collections) -> Path:
    """Three Arm64 collections in one directory (each poison record in the same 100-record partition
    as the crash it causes)."""
    d = tmp_path_factory.mktemp("mch")
    for name, inject in (
        ("libraries.pmi", [("seed-arm64", 100), ("seed-arm64", 250), ("jit-assert", 40)]),
        (
            "coreclr_tests",
            [("stack-overflow", 120), ("poison", 220), ("poison-crash", 230), ("jit-null", 30)],
        ),
        (
            "benchmarks",
            [
                ("seed-arm64", 50),
                ("poison", 150),
                ("poison-crash", 160),
                ("hang", HANG),
                ("stack-overflow", 280),
            ],
        ),
    ):
        src = cols.get(f"cluster-{name}", 300, arch="arm64", seed=5, inject=inject)
        for suffix in ("", ".mct"):
            os.link(f"{src}{suffix}", d / f"{name}.mch{suffix}")
    return d


def args(collections: Path, out: str, *extra: str, bundles: str = "missing") -> list[str]:
    """`bundles`: --failure (default: missing, of which there is none: no bundles)."""
    return [
        "--mch",
        str(collections),
        "--partition-methods",
        "100",
        "--timeout",
        TIMEOUT,
        "--failure",
        bundles,
        "--out",
        out,
        *extra,
        "--",
        *SEED_COMMAND,
    ]


def kinds(data: dict[str, Any]) -> dict[str, list[str]]:
    out = {}
    for b in data["buckets"]:
        sig = b["signature"] or ""
        kind = (
            "hang"
            if b["kind"] == "hang"
            else "seed"
            if "CompileMethod" in (b["title"] or "")
            else "abort"
            if b["signal"] == "SIGABRT"
            else "overflow"
            if "fgMorphTree" in sig
            else sig
        )
        out[kind] = sorted(b["method_contexts"])
    return out


def check_full_coverage(data: dict[str, Any]) -> None:
    validate(data, "triage-3.json")
    assert [c["collection"] for c in data["coverage"]] == [
        "benchmarks.mch",
        "coreclr_tests.mch",
        "libraries.pmi.mch",
    ]
    for c in data["coverage"]:
        assert c["method_contexts"] == 300 and c["not_reached"] == 0, c
        assert c["replayed_clean"] + c["crashed"] + c["failed_compile"] + c["not_reached"] == 300
    crashed = {c["collection"]: c["crashed"] for c in data["coverage"]}
    assert crashed == {"benchmarks.mch": 4, "coreclr_tests.mch": 2, "libraries.pmi.mch": 2}


def test_cluster_gives_the_local_buckets(collections: Path, tmp_path: Path) -> None:
    """The same buckets, coverage and repro bundles (crash and assert buckets, --verify-runs 1); on
    the cluster the bundles are built by the workers."""
    local = triage(
        *args(collections, "local", "--workers", "2", "--verify-runs", "1", bundles="crash,assert"),
        cwd=tmp_path,
    )
    assert local.returncode == 0, local.stdout + local.stderr
    with cluster(tmp_path) as c:
        r = triage(
            *args(
                collections,
                "dask",
                "--scheduler",
                c.address,
                "--verify-runs",
                "1",
                bundles="crash,assert",
            ),
            cwd=tmp_path,
        )
    assert r.returncode == 0, r.stdout + r.stderr
    here = json.loads((tmp_path / "local" / "triage.json").read_text())
    there = json.loads((tmp_path / "dask" / "triage.json").read_text())
    assert kinds(here) == kinds(there) == EXPECTED
    assert {b["bucket"] for b in here["buckets"]} == {b["bucket"] for b in there["buckets"]}
    check_full_coverage(here)
    check_full_coverage(there)
    assert here["coverage"] == [{**c, "path": c["path"]} for c in there["coverage"]]
    assert there["engine"]["name"] == "dask" and there["engine"]["scheduler"] == c.address
    assert there["engine"]["partitions"] == 9 and there["engine"]["workers"] == 2
    # printed when a cluster is used (plain lines: piped)
    assert "dashboard http://127.0.0.1:" in r.stderr
    # Both workers ran partitions; every method context's failures (assert, first-chance) are there
    # too.
    by = {
        s["by"]
        for p in (tmp_path / "dask" / "partitions").glob("p[0-9]*.json")
        for s in json.loads(p.read_text())["segments"]
    }
    assert by == {f"{w.address} ({w.name})" for w in c.workers}
    rep = there["reported_by_superpmi"]
    assert [g["method_contexts"] for g in rep["asserts"]] == [["libraries.pmi.mch:40"]]
    assert [g["method_contexts"] for g in there["first_chance"]] == [["coreclr_tests.mch:30"]]
    # One verified bundle per bucket either way; on the cluster each built by a worker, in the
    # shared --out.
    for data in (here, there):
        reps = [b["repro"] for b in data["buckets"]] + [
            b["repro"] for b in data["failure_buckets"] if b["repro"]
        ]
        assert len(reps) == 5 and all(rep["outcome"] == "verified" for rep in reps), reps
        assert all((tmp_path / rep["bundle"] / "repro.sh").is_file() for rep in reps)
    built = there["engine"]["bundle_workers"]
    assert len(built) == 5 and {b["worker"] for b in built} <= {
        f"{w.address} ({w.name})" for w in c.workers
    }
    assert here["engine"]["bundle_workers"] == []
    md = (tmp_path / "dask" / "triage.md").read_text()
    assert "| benchmarks.mch | 300 |" in md and "on the dask cluster" in md


def finished(parts: Path) -> dict[str, bytes]:
    """The journals of the partitions done: name -> bytes."""
    return {
        p.name: p.read_bytes()
        for p in parts.glob("p[0-9]*.json")
        if json.loads(p.read_bytes())["done"]
    }


def resumed_exactly(r: subprocess.CompletedProcess[str], out: Path, done: dict[str, bytes]) -> None:
    """A resume that gave the full answer, replaying none of the partitions `done` before."""
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads((out / "triage.json").read_text())
    assert kinds(data) == EXPECTED
    check_full_coverage(data)
    resumed = {f"p{i}.json" for i in data["engine"]["resumed_partitions"]}
    assert set(done) <= resumed  # finished before the kill: not replayed again
    for name, before in done.items():
        assert (out / "partitions" / name).read_bytes() == before


def _running(out: Path, number: int) -> dict[str, Any] | None:
    for p in sorted((out / "partitions").glob("p[0-9]*.json")):
        try:
            j = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        r = j.get("running")
        if r and r["from"] <= number <= r["to"]:
            return dict(r)
    return None


def _spawn(argv: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "spmi_dbg", "triage", *argv],
        cwd=cwd,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, COLUMNS="200"),
    )


def test_a_worker_killed_mid_replay_loses_nothing(collections: Path, tmp_path: Path) -> None:
    with cluster(tmp_path) as c:
        coordinator = _spawn(args(collections, "t", "--scheduler", c.address), tmp_path)
        running = wait_for(lambda: _running(tmp_path / "t", HANG))
        wait_for(lambda: replaying(HANG, collections))  # inside the hang's replay
        victim = next(w for w in c.workers if running["by"].startswith(w.address))
        victim.kill()
        out, err = coordinator.communicate(timeout=300)
    assert coordinator.returncode == 0, out + err
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    assert kinds(data) == EXPECTED
    check_full_coverage(data)
    retried = [n for n in data["notes"] if "died; replayed again from" in n]
    assert len(retried) == 1 and victim.address in retried[0], data["notes"]


def test_coordinator_killed_then_resume(collections: Path, tmp_path: Path) -> None:
    with cluster(tmp_path) as c:
        argv = args(collections, "t", "--scheduler", c.address)
        coordinator = _spawn(argv, tmp_path)
        wait_for(lambda: _running(tmp_path / "t", HANG))
        parts = tmp_path / "t" / "partitions"
        wait_for(lambda: any(json.loads(p.read_text())["done"] for p in parts.glob("p[0-9]*.json")))
        coordinator.send_signal(signal.SIGKILL)
        coordinator.wait(timeout=30)
        done = finished(parts)
        assert done and len(done) < 9
        r = triage(*args(collections, "t", "--scheduler", c.address, "--resume"), cwd=tmp_path)
    resumed_exactly(r, tmp_path / "t", done)
    bad = triage(
        *repro_args(REPLAY, BASE, out="t", options=("--mch", str(collections), "--resume")),
        cwd=tmp_path,
    )
    assert bad.returncode == 3 and "--resume" in bad.stderr and "Traceback" not in bad.stderr, (
        bad.stderr
    )


def test_max_crashes_stops_the_cluster(collections: Path, tmp_path: Path) -> None:
    """--max-crashes on a cluster: the running tasks are stopped through the cluster-wide event, and
    what they did not reach is accounted as such."""
    with cluster(tmp_path) as c:
        start = time.monotonic()
        r = triage(
            *args(collections, "t", "--scheduler", c.address, "--max-crashes", "2"), cwd=tmp_path
        )
        took = time.monotonic() - start
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    validate(data, "triage-3.json")
    # one count across the cluster
    assert data["stopped_at_max_crashes"] and len(data["crashes"]) == 2
    stopped = sum(
        r["count"]
        for c in data["coverage"]
        for r in c["not_reached_reasons"]
        if r["reason"].startswith("--max-crashes reached")
    )
    assert stopped > 0
    for c in data["coverage"]:
        assert c["replayed_clean"] + c["crashed"] + c["failed_compile"] + c["not_reached"] == 300
    assert took < 60, took


def test_unreachable_scheduler_is_one_line(collections: Path, tmp_path: Path) -> None:
    start = time.monotonic()
    r = triage(
        *args(collections, "t", "--scheduler", f"tcp://127.0.0.1:{free_port()}"), cwd=tmp_path
    )
    assert time.monotonic() - start < 40
    assert r.returncode == 3, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and "--scheduler: no dask scheduler there (Connection refused)" in lines[0]
    ), r.stderr
    for address, said in (
        ("tcp://", "not a scheduler address"),
        ("inproc://x", "not a scheduler address"),
        ("udp://127.0.0.1:1", "udp:// is not supported"),
    ):
        r = triage(*args(collections, "t", "--scheduler", address), cwd=tmp_path)
        assert r.returncode == 3 and said in r.stderr and len(r.stderr.strip().splitlines()) == 1, (
            r.stderr
        )
    assert not (tmp_path / "t" / "triage.json").exists()


def test_a_path_missing_on_the_workers(collections: Path, tmp_path: Path) -> None:
    """The worker runs in a mount namespace where the collections' directory is an empty tmpfs."""
    hide = [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        f'mount -t tmpfs tmpfs {shlex.quote(str(collections))} && exec "$@"',
        "sh",
    ]
    with cluster(tmp_path, workers=0) as c:
        w = c.add_worker("blind", hide)
        c.wait_for_workers(1)
        r = triage(*args(collections, "t", "--scheduler", c.address), cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("triage: ")]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert (
        f"worker {w.address} (blind): {collections}/" in lines[0] and ": not found" in lines[0]
    ), lines


def test_a_tls_cluster_runs_the_triage_and_refuses_a_client_without_its_certificate(
    collections: Path, tmp_path: Path
) -> None:
    """Issue 30 item 6: scheduler and workers on TLS with certificates the test makes; the
    triage's client presents its own (--tls-ca-file, --tls-cert, --tls-key) and gets the local
    buckets; a client without them is refused in one line."""
    from .support.cluster import credentials

    tls = credentials(tmp_path / "pki")
    with cluster(tmp_path, tls=tls) as c:
        assert c.address.startswith("tls://")
        r = triage(*args(collections, "tls", "--scheduler", c.address, *tls.flags()), cwd=tmp_path)
        assert r.returncode in (0, 1), r.stdout + r.stderr
        data = json.loads((tmp_path / "tls" / "triage.json").read_text())
        assert data["engine"]["name"] == "dask" and data["engine"]["scheduler"] == c.address
        check_full_coverage(data)
        assert kinds(data) == EXPECTED
        bare = triage(*args(collections, "bare", "--scheduler", c.address), cwd=tmp_path)
        assert bare.returncode == 3, bare.stdout + bare.stderr
        lines = [x for x in bare.stderr.splitlines() if x.startswith("spmi-dbg triage: error: ")]
        assert len(lines) == 1 and "--scheduler: " in lines[0], bare.stderr
        # and the scheduler itself refuses a client that trusts it but whose certificate its CA
        # did not sign
        from distributed import Client
        from distributed.security import Security

        stranger = credentials(tmp_path / "stranger")
        foreign = Security(
            tls_ca_file=str(tls.ca),
            tls_client_cert=str(stranger.cert),
            tls_client_key=str(stranger.key),
            require_encryption=True,
        )
        with pytest.raises((OSError, TimeoutError)):
            Client(c.address, timeout="5s", set_as_default=False, security=foreign).close()


def test_a_plain_tcp_scheduler_elsewhere_is_refused_unless_insecure(
    collections: Path, tmp_path: Path
) -> None:
    """Plain tcp:// off this machine is refused before any connection, naming the way out; with
    --insecure-scheduler it is tried (here: nobody answers) after a one-line warning."""
    address = "tcp://192.0.2.1:8786"  # TEST-NET-1: never reached
    r = triage(*args(collections, "t", "--scheduler", address), cwd=tmp_path)
    assert r.returncode == 3
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("spmi-dbg triage: error: ")]
    assert "plain tcp://" in line and "--insecure-scheduler" in line and "tls://" in line
    r = triage(
        *args(collections, "t", "--scheduler", address, "--insecure-scheduler"), cwd=tmp_path
    )
    assert r.returncode == 3
    assert "warning: --insecure-scheduler: " in r.stderr
    assert "no dask scheduler" in r.stderr


def test_a_scheduler_killed_mid_run_is_one_line_and_a_resume_on_a_new_one_is_exact(
    collections: Path, tmp_path: Path
) -> None:
    """Issue 37 items 2-3 on a real cluster: the scheduler SIGKILL'd while a worker replays the
    hang. The coordinator stops with exit 5 and one line naming the scheduler's address and the
    --resume command, no traceback, every finished journal whole; the resume on a new cluster
    gives the full accounting, replaying no finished partition again."""
    parts = tmp_path / "t" / "partitions"
    with cluster(tmp_path) as c:
        coordinator = _spawn(args(collections, "t", "--scheduler", c.address), tmp_path)
        wait_for(lambda: _running(tmp_path / "t", HANG))
        wait_for(lambda: replaying(HANG, collections))
        wait_for(
            lambda: any(json.loads(t)["done"] for t in whole_texts(parts.glob("p[0-9]*.json")))
        )
        os.killpg(c.scheduler.pid, signal.SIGKILL)
        out, err = coordinator.communicate(timeout=300)
    assert coordinator.returncode == 5, out + err
    lines = [x for x in err.splitlines() if x.startswith("spmi-dbg triage: error: ")]
    assert "Traceback" not in err and len(lines) == 1, err
    assert c.address in lines[0] and "--resume" in lines[0], lines[0]
    done = finished(parts)  # (each journal read whole: none torn)
    assert done and not (tmp_path / "t" / "triage.json").exists()
    with cluster(tmp_path) as again:
        r = triage(*args(collections, "t", "--scheduler", again.address, "--resume"), cwd=tmp_path)
    resumed_exactly(r, tmp_path / "t", done)
