"""repro and triage on the real superpmi (tests/support/real.py): the right method context numbers
from builds whose stacks lie (3.1's mc->index is the loaded count; -O2 main's registers are
garbage), checked against what superpmi does with each method context alone."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..support.pipeline import (
    assert_null_map,
    report,
    repro,
    repro_args,
    triage,
    validate,
    winner_range,
)
from ..support.real import Real

# A real build (SPMI_DBG_REAL_SUPERPMI): the live half of the conformance suite.
pytestmark = pytest.mark.live

JIT_STRESS = ("-jitoption", "JitStress=1")


def _crashes_alone(real: Real, numbers: list[int], program: Path) -> list[int]:
    """The numbers whose native replay alone (-c N) dies of a signal."""
    out = []
    for n in numbers:
        r = subprocess.run(
            [str(program), *JIT_STRESS, "-c", str(n), str(real.jit_checked), str(real.api)],
            capture_output=True,
            timeout=60,
        )
        if r.returncode < 0:
            out.append(n)
    return out


@pytest.mark.parametrize("debugger", ["gdb", "lldb"])
def test_null_map_crash_from_a_range_not_starting_at_1(
    real: Real, tmp_path: Path, debugger: str
) -> None:
    """The Checked JIT asks for a signature the Release JIT never recorded: method context 2000 of
    api-reljit.mch dies in MethodContext::repGetMethodSig. 3.1's mc->index there is 1 (the count
    loaded): rejected by the -c list."""
    r = repro(
        *repro_args(
            *real.command("-c", "2000-5514", mch=real.api_reljit), out="b", workers=2, verify_runs=2
        ),
        cwd=tmp_path,
        timeout=600,
        debugger=debugger,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    rep = report(tmp_path / "b")
    validate(rep)
    # Two partitions (2000-3757, 3758-5514) race; the Checked JIT dies at the first record of
    # either. The number is the winner's first record, from mcIndex, checked against its -c list and
    # the record's IL size.
    loc = rep["locate"]
    spec, first = winner_range(rep)
    assert first in (2000, 3758) and loc["method_context"] == first, loc
    assert loc["method_context_source"].startswith("mcIndex argument of JitInstance::CompileMethod")
    assert loc["method_context_rejected"] == []  # mcIndex is the first candidate, and it passed
    d = rep["diagnosis"]
    mc = d["method_context"]
    assert mc["number"] == first and mc["checks"][0] == f"in the -c list {spec}", mc
    # read twice, agreeing
    assert sum(c.startswith(f"record {first}'s IL size ") for c in mc["checks"]) == 2, mc
    assert mc["name"] is None and any(
        f"record {first}: method name not recorded" in n for n in d["notes"]
    ), d["notes"]
    assert_null_map(d, "MethodContext", "GetMethodSig")
    assert d["faulting_module"]["role"] == "superpmi (replay host)"
    copy = tmp_path / "mcs-copy.mch"
    c = real.mcs_run("-copy", str(first), real.api_reljit, copy)
    assert c.returncode == 0, c.stdout + c.stderr
    assert (tmp_path / "b" / "repro.mch").read_bytes() == copy.read_bytes()
    assert (
        "reproduced death by SIGSEGV (100%, accepted); under the debugger: same bucket" in r.stdout
    ), r.stdout
    # The method as the JIT saw it, from a Release JIT's collection: no names, said once; the IL,
    # the flags and the callees all the same (issue 41 items 4-5)
    m = rep["method"]
    assert m["method_context"] == first and m["name"] is None and m["lines"][0]["offset"] == 0
    assert sum("holds no names for the method" in n for n in m["notes"]) == 1
    assert m["flags"]["era"] == "3.1" and m["flags"]["summary"]
    md = (tmp_path / "b" / "report.md").read_text()
    assert "#### The method" in md and md.count("holds no names for the method") == 1


def _triage_json(tmp_path: Path, program: Path, real: Real) -> dict[str, Any]:
    r = triage(
        *repro_args(
            str(program), *JIT_STRESS, str(real.jit_checked), str(real.api), out="t", workers=2
        ),
        cwd=tmp_path,
    )
    assert r.returncode in (0, 2), r.stdout + r.stderr
    data: dict[str, Any] = json.loads((tmp_path / "t" / "triage.json").read_text())
    validate(data, "triage-3.json")
    return data


def test_jit_stress_triage_crashes_are_those_that_crash_alone(real: Real, tmp_path: Path) -> None:
    """-O2 superpmi with JitStress=1 dies at every method context whose GetGSCookie map is absent
    (197 of them): triage finds each one, with its number from the stack checked, and accounts for
    every method context once."""
    data = _triage_json(tmp_path, real.superpmi, real)
    crashes = sorted(c["method_context"] for c in data["crashes"])
    # each number says where it came from and what was rejected before it (the -O2 main's garbage
    # registers)
    assert all(
        c["method_context_source"] and isinstance(c["method_context_rejected"], list)
        for c in data["crashes"]
    )
    assert len(crashes) == len(set(crashes))
    assert _crashes_alone(real, crashes, real.superpmi) == crashes  # every one crashes alone
    # ... and nothing else does: the rest replays to the end without a crash
    rest = tmp_path / "rest.mcl"
    chosen = set(crashes)
    rest.write_text("".join(f"{n}\n" for n in range(1, 5658) if n not in chosen))
    r = subprocess.run(
        [str(real.superpmi), *JIT_STRESS, "-c", str(rest), str(real.jit_checked), str(real.api)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode in (0, 1, 3), r.returncode  # failed compiles and missing data, no signal
    assert f"Loaded {5657 - len(crashes)}  " in r.stdout
    assert len(crashes) >= 150
    (cov,) = data["coverage"]
    assert cov["method_contexts"] == 5657
    assert cov["crashed"] == len(crashes) and cov["not_reached"] == 0
    assert (
        cov["replayed_clean"] + cov["crashed"] + cov["failed_compile"] + cov["not_reached"] == 5657
    )
    assert all(
        "GetGSCookie" in b["signature"] or "GetStaticFieldCurrentClass" in b["signature"]
        for b in data["buckets"]
    )
    # each bucket's smallest member with its first IL lines, named where api.mch recorded names
    heads = [b["smallest"]["il_head"] for b in data["buckets"]]
    assert all(h and h[0].startswith("IL_0000:") for h in heads), heads
    # each bucket's repro report shows its method as the JIT saw it, named as api.mch recorded
    methods = [
        json.loads((tmp_path / "t" / Path(b["repro"]["bundle"]).name / "report.json").read_text())[
            "method"
        ]
        for b in data["buckets"]
        if b["repro"] is not None
    ]
    assert methods and all(m is not None and m["name"] for m in methods)
    assert any(ln["named"] for m in methods for ln in m["lines"]), "no token named in any bucket"


def test_jit_stress_triage_on_o0_superpmi_reports_missing(real: Real, tmp_path: Path) -> None:
    """The same source built -O0 checks the map and reports MISSING ('There is no such LWM') where
    -O2 crashes."""
    data = _triage_json(tmp_path, real.superpmi_o0, real)
    assert data["crashes"] == []
    (cov,) = data["coverage"]
    assert cov["crashed"] == 0 and cov["not_reached"] == 0 and cov["method_contexts"] == 5657
    missing = sorted(
        {
            int(str(m).rsplit(":", 1)[-1])
            for f in data["failure_buckets"]
            if f["kind"] == "missing" and "no such LWM" in f["title"]
            for m in f["method_contexts"]
        }
    )
    assert len(missing) >= 150
    assert _crashes_alone(real, missing, real.superpmi) == missing  # each one is where -O2 crashes
