"""Bisect of a command and `-c N` (no bundle): the failure to look for is the one the bad build
shows, from what superpmi did with it: a death by a signal (its bucket from one replay under the
debugger), else the first of superpmi's own failure lines (an assert, a failed compile) for N."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from spmi_dbg.bisect.verdict import Expected, Target, under_debugger
from spmi_dbg.driver.base import Driver
from spmi_dbg.errors import ToolFailure
from spmi_dbg.failures.output import read_output
from spmi_dbg.repro.expect import bucket_of, signal_of
from spmi_dbg.repro.native import run_native


def discover(
    target: Target, jit: Path, *, timeout: float, workdir: Path, debugger: Driver | None
) -> tuple[Expected | str, float]:
    """The bad build's failure, or why there is none (the rest of a line that names the build); and
    the seconds its replays took (they count as the bisect's replay time, not its own)."""
    cmd = target.with_build(jit)
    workdir.mkdir(parents=True, exist_ok=True)
    out, err = workdir / "discover.stdout", workdir / "discover.stderr"
    run = run_native(cmd.native_argv(target.compile_list), timeout=timeout, stdout=out, stderr=err)
    if run.timed_out:
        return Expected("hang"), run.seconds
    if run.signal is not None:
        bucket, seconds = None, run.seconds
        if debugger is not None:
            try:
                outcome = under_debugger(
                    cmd, target.compile_list, debugger, timeout, workdir / "discover.debugger"
                )
            except ToolFailure as e:
                return f"crashes, but its crash could not be diagnosed: {e}", seconds
            seconds += outcome.seconds
            if outcome.kind == "fatal" and signal_of(outcome) == run.signal:
                bucket = bucket_of(outcome)
        return Expected("crash", run.signal, bucket), seconds
    failures = [f for f in read_output(out, err).failures if f.kind != "missing"]
    if failures:
        return Expected(failures[0].kind, key=failures[0].key), run.seconds
    return f"does not fail: {run.describe()}", run.seconds


def with_expected(target: Target, expected: Expected) -> Target:
    return replace(target, expected=expected)
