"""Bisect's and recheck's verdicts on what the real superpmi 3.1.23 printed (the data half: its
transcripts): another JIT-EE version and a JIT that does not load are skips, the assert is bad for
its key only, the crash bad for its signal."""

from __future__ import annotations

import signal

import pytest

from spmi_dbg.bisect.verdict import Expected, Verdict, classify_run
from spmi_dbg.failures.output import parse_output
from spmi_dbg.repro.native import NativeRun

from ..support.real import Reference

pytestmark = pytest.mark.unit  # none of these tests starts a process


def _classify(reference: Reference, name: str, expected: Expected) -> Verdict:
    t = reference.transcript(name)
    rc = t.rc
    # a shell says 128+N for signal N; 254 and 255 are exit statuses
    sig = signal.Signals(rc - 128).name if 128 < rc < 128 + 65 else None
    run = NativeRun(t.argv, -(rc - 128) if sig else rc, sig, False, 0.0)
    out, err = t.stdout.splitlines(), t.stderr.splitlines()
    return classify_run(run, out, err, parse_output(out, err).failures, expected)


def test_another_jit_ee_version_and_a_jit_that_does_not_load_are_skips(
    reference: Reference,
) -> None:
    v = _classify(reference, "11-wrong-version-identifier", Expected("assert", key="x"))
    assert (v.kind, v.reason) == ("skip", "jit-ee-version")
    assert "Jit Compiler has wrong version identifier (exit 254)" in v.evidence
    v = _classify(reference, "11b-jit-file-missing", Expected("assert", key="x"))
    assert (v.kind, v.reason) == ("skip", "jit-does-not-load")
    assert "LoadLibrary failed" in v.evidence


def test_an_assert_is_bad_for_its_own_key_only(reference: Reference) -> None:
    t = reference.transcript("06-assert-stressregs400-c543")
    (failure,) = parse_output(t.stdout.splitlines(), t.stderr.splitlines()).failures
    name = "06-assert-stressregs400-c543"
    assert _classify(reference, name, Expected("assert", key=failure.key)).kind == "bad"
    other = _classify(reference, name, Expected("assert", key="assert: other (x.cpp:1)"))
    assert (other.kind, other.reason, other.bucket) == ("skip", "other-failure", failure.key)


def test_a_crash_is_bad_for_its_signal_and_missing_data_cannot_tell(reference: Reference) -> None:
    crash = Expected("crash", "SIGSEGV")
    assert _classify(reference, "09-checked-on-reljit-segv", crash).kind == "bad"
    v = _classify(reference, "04d-jitstress1-c8-missing", crash)
    assert (v.kind, v.reason) == ("skip", "missing-data")
    assert _classify(reference, "01-clean-release-1-1200", crash).kind == "good"
