"""Issue 27 item 2, a crash storm's sweep (triage/sweep.py), on the replay core as 3.1 behaves (no
fault handler: a null map kills superpmi natively, as the real 3.1.23 superpmi does with a Checked
JIT on a Release collection; tests/real/test_causes_real.py is the live twin): once most of a
partition's crashes are in one bucket, its rest is replayed without a debugger but for a sample
spread over it; every method context is still accounted for exactly once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.mch.mclist import MCList
from spmi_dbg.triage.sweep import SAMPLES, SweepState

from .support.common import Collections
from .support.natives import BASE, REPLAY
from .support.pipeline import repro_args, triage, validate

METHODS = 240
STORM = [n for n in range(1, METHODS + 1) if n % 4 != 0]  # 180 of 240


@pytest.fixture(autouse=True)
def _era31(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPMI_REPLAY_ERA", "3.1")


def _storm(cols: Collections) -> Path:
    return cols.get("sweep-storm", METHODS, inject=[("null-map", n) for n in STORM])


def _triage(mch: Path, tmp_path: Path, *extra: str) -> tuple[dict[str, Any], str]:
    r = triage(
        *repro_args(
            REPLAY,
            BASE,
            str(mch),
            out="t",
            verify_runs=1,
            options=("--env", "SPMI_REPLAY_ERA", "--max-crashes", "100000", *extra),
        ),
        cwd=tmp_path,
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    validate(data, "triage-3.json")
    return data, r.stdout


def _numbers(members: list[str]) -> list[int]:
    return [int(m.rsplit(":", 1)[1]) for m in members]


def test_a_storm_is_swept_natively_but_for_a_sample_spread_over_it(
    cols: Collections, tmp_path: Path
) -> None:
    data, out = _triage(_storm(cols), tmp_path, "--partition-methods", str(METHODS))
    diagnosed = [c["method_context"] for c in data["crashes"]]
    (group,) = data["not_diagnosed"]
    swept = _numbers(group["method_contexts"])
    # every crash once: diagnosed or not, nothing lost, nothing invented
    assert sorted(diagnosed + swept) == STORM
    assert not set(diagnosed) & set(swept)
    assert group["signal"] == "SIGSEGV" and group["reason"] == "storm"
    (bucket,) = data["buckets"]
    assert group["storm_bucket"] == bucket["bucket"]
    (cov,) = data["coverage"]
    assert (cov["crashed"], cov["not_diagnosed"]) == (len(STORM), len(swept))
    assert cov["replayed_clean"] == METHODS - len(STORM) and cov["not_reached"] == 0
    # the storm starts after its 10th crash; then one sample a slot
    assert len(diagnosed) <= 10 + SAMPLES
    journal = json.loads((tmp_path / "t" / "partitions" / "p1.json").read_text())
    slots = journal["storm"]["slots"]
    assert len(slots) == SAMPLES and slots[0] == journal["storm"]["since"]
    for k, first in enumerate(slots):
        end = slots[k + 1] if k + 1 < len(slots) else METHODS + 1
        assert any(first <= n < end for n in diagnosed), (k, first, diagnosed)
    listed = (tmp_path / "t" / "members" / f"{group['bucket']}.txt").read_text().splitlines()
    assert _numbers(listed) == swept
    assert f"{len(STORM)} crashed ({len(swept)} not diagnosed: storm)" in out
    assert f"not diagnosed: {len(swept)} crash(es) (SIGSEGV) replayed without a debugger" in out
    md = (tmp_path / "t" / "triage.md").read_text()
    assert "## Crashes not diagnosed: the storm of " in md
    # said once, however quickly the triage ran (a last look after the partitions are done)
    assert out.count("note: systematic: ") == 1


def test_diagnose_all_diagnoses_every_crash_of_a_storm(cols: Collections, tmp_path: Path) -> None:
    n = 80
    mch = cols.get("sweep-storm-80", n, inject=[("null-map", k) for k in STORM if k <= n])
    data, _ = _triage(mch, tmp_path, "--diagnose-all")
    assert data["not_diagnosed"] == []
    assert sorted(c["method_context"] for c in data["crashes"]) == [k for k in STORM if k <= n]
    assert data["coverage"][0]["not_diagnosed"] == 0


def test_max_crashes_counts_the_crashes_not_diagnosed(cols: Collections, tmp_path: Path) -> None:
    data, _ = _triage(
        _storm(cols), tmp_path, "--partition-methods", str(METHODS), "--max-crashes", "40"
    )
    swept = [n for g in data["not_diagnosed"] for n in _numbers(g["method_contexts"])]
    diagnosed = [c["method_context"] for c in data["crashes"]]
    assert swept and len(diagnosed) + len(swept) == 40
    (cov,) = data["coverage"]
    assert cov["crashed"] == 40 and cov["not_reached"] > 0
    assert (
        cov["replayed_clean"] + cov["crashed"] + cov["failed_compile"] + cov["not_reached"]
        == METHODS
    )
    # nothing after the 40th crash was replayed: the last crash is the last number accounted
    last = max(diagnosed + swept)
    assert cov["replayed_clean"] == sum(1 for k in range(1, last + 1) if k % 4 == 0)


def test_a_native_hang_in_a_storm_goes_back_to_the_debugger(
    cols: Collections, tmp_path: Path
) -> None:
    """The sweep replays without a debugger; a replay that hangs is replayed under the debugger,
    which diagnoses the hang (its bucket, its method context)."""
    n, hang = 120, 111
    crashes = [k for k in range(1, n + 1) if k % 4 != 0 and k != hang]
    mch = cols.get("sweep-hang", n, inject=[*(("null-map", k) for k in crashes), ("hang", hang)])
    data, _ = _triage(mch, tmp_path, "--partition-methods", str(n), "--timeout", "4")
    hung = [b for b in data["buckets"] if b["kind"] == "hang"]
    assert len(hung) == 1 and _numbers(hung[0]["method_contexts"]) == [hang], data["buckets"]
    swept = [k for g in data["not_diagnosed"] for k in _numbers(g["method_contexts"])]
    assert hang not in swept and swept
    diagnosed = [c["method_context"] for c in data["crashes"]]
    assert sorted(diagnosed + swept) == sorted([*crashes, hang])


@pytest.mark.unit
def test_sweep_windows_stop_before_a_slot_whose_sample_is_due() -> None:
    rest = MCList.of(range(101, 201))
    s = SweepState.start("b", rest)
    assert s.slots == [101, 126, 151, 176]
    assert s.under_debugger(101) and s.under_debugger(130)
    s.sampled_at(101)
    assert not s.under_debugger(102) and s.under_debugger(126)
    s.window = 64
    assert s.native_window(rest.between(102, 200)).spec() == "102-125"
    s.sampled_at(126)
    assert s.native_window(rest.between(102, 200)).spec() == "102-150"
    s.window = 1
    assert s.native_window(rest.between(102, 200)).spec() == "102"
    s.crashed(102, "SIGSEGV")
    again = SweepState.from_json(json.loads(json.dumps(s.to_json())))
    assert again == s
