"""The `needs` phase of both pipelines (crash and compile failure): the JIT's switches tried on the
verified repro (repro/needs.py) with the pipeline's own way of replaying it (`trial`). A failure
here is said in the report; the repro stands."""

from __future__ import annotations

from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.needs import Needs, Trial, find_needs, given_keys
from spmi_dbg.repro.phase import experiment
from spmi_dbg.repro.result import ReproOptions, ReproProgress, ReproResult


def needs_phase(
    opts: ReproOptions,
    result: ReproResult,
    cmd: ReproCommand,
    trial: Trial,
    progress: ReproProgress | None,
) -> Needs | None:
    """None for a command with two JITs (whose switches would be which JIT's?) or when the phase
    failed."""
    if len(cmd.jits) != 1:
        return None
    with experiment(result, "needs", progress) as ph:
        n = find_needs(cmd.jits[0], trial, workers=opts.workers, given=given_keys(cmd))
        ph.detail = n.summary()
        return n
    return None
