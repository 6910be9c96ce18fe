"""The phases of `spmi-dbg repro`, in order (docs/architecture.md, "Data flow of spmi-dbg repro"):
locate (+ capture: the winning stop's full diagnosis) -> isolate -> verify -> [minimize -> isolate
-> verify]
-> bundle. Each phase's function returns its value, and the runner (_run_phases; failure_pipeline's
for a compile failure) takes it into the result as soon as the phase returns: whatever phase fails,
the bundle still gets what the earlier ones produced, and the report says which phase failed and
why."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg import exits
from spmi_dbg.analysis.facts import Cause
from spmi_dbg.driver.base import Replays
from spmi_dbg.driver.pool import Warm
from spmi_dbg.errors import SpmiDbgError, is_system_stop, printable, system_stop_said
from spmi_dbg.failures.output import Failure, read_lines
from spmi_dbg.outdir import check_out_dir, locked
from spmi_dbg.repro.bundle import write_bundle
from spmi_dbg.repro.capability import cannot_show
from spmi_dbg.repro.command import USER_FILES, Partition, ReproCommand
from spmi_dbg.repro.crash_experiments import CrashExperiments
from spmi_dbg.repro.env_experiment import find_environment
from spmi_dbg.repro.failure_pipeline import run_failure_phases
from spmi_dbg.repro.isolate import isolate
from spmi_dbg.repro.locate import locate, locate_core
from spmi_dbg.repro.minimize import minimize
from spmi_dbg.repro.models import Located
from spmi_dbg.repro.phase import REPLAY_INPUT_FAILURES, PhaseFailed, phase
from spmi_dbg.repro.result import (
    BUNDLE_FILES,
    CrashTarget,
    Outcome,
    ReproOptions,
    ReproProgress,
    ReproResult,
    bundle_dir_for,
)
from spmi_dbg.repro.setup_causes import (
    diff_needs_compile_results,
    version_mismatch,
)
from spmi_dbg.repro.verify import Verification, verify
from spmi_dbg.tempfiles import temp_dir


def run_repro(
    opts: ReproOptions,
    progress: ReproProgress | None = None,
    *,
    located: Located | None = None,
    failure: Failure | None = None,
    debuggers: Warm | None = None,
) -> ReproResult:
    """The whole pipeline; with `located` (a crash already found and identified, e.g. by triage) or
    `failure` (a compile failure superpmi reported, for `opts.failure`) it starts at isolate. The
    bundle is written in any case. `debuggers`: warm sessions to replay in, the caller's to close
    (default: a pool of the pipeline's own)."""
    start = time.monotonic()
    # the result keeps the user's options (it travels to a cluster's client: a Warm holds sessions)
    result = ReproResult(opts, opts.command.locate_partitions(opts.workers))
    # the locate's debuggers go on to verify (driver/pool.py); a triage's bundle: its partitions'
    warm = debuggers if debuggers is not None else Warm(opts.debugger)
    opts = dataclasses.replace(opts, debugger=warm)
    with temp_dir("repro") as tmp, contextlib.ExitStack() as held:
        if debuggers is None:
            held.enter_context(warm)  # closed before the working directory goes
        work = Path(tmp)
        # before any replay: one run per bundle directory (InputError if taken)
        if opts.out is not None:
            check_out_dir(opts.out, ours=BUNDLE_FILES, subdirs=USER_FILES)
            held.enter_context(locked(opts.out))
        try:
            if opts.failure.is_crash:
                _run_phases(opts, result, work, progress, located)
            else:
                run_failure_phases(opts, result, work, progress, given=failure)
        except PhaseFailed:
            stopped = result.target.under_debugger if result.target else None
            if stopped is None or stopped.winner is None:
                result.outcome, result.exit_code = "tool-failure", exits.TOOL_FAILURE
            else:
                result.outcome, result.exit_code = "not-verified", exits.NOT_VERIFIED
        if result.out is None:  # no target to name it: by the outcome
            result.out = bundle_dir_for(opts.out, result.target, result.outcome)
        out = result.out
        result.seconds = time.monotonic() - start
        try:
            if opts.out is None:  # the default name is known only now
                check_out_dir(
                    out, ours=BUNDLE_FILES, subdirs=USER_FILES, option="the bundle directory"
                )
                held.enter_context(locked(out))
            result.bundle = write_bundle(result, work)  # the repro now lives in the bundle
        except (SpmiDbgError, OSError) as e:  # the report cannot tell this one: the summary does
            if is_system_stop(e):  # a full or failing disk: the run is incomplete, not wrong
                assert isinstance(e, OSError)
                reason = system_stop_said(e)
                result.outcome, result.exit_code = "bundle-error", exits.INCOMPLETE
            else:
                reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            result.bundle_error = (
                f"the bundle could not be written to {printable(str(out))}: {reason}"
            )
            # nothing is claimed verified that the user does not have
            if result.exit_code == exits.VERIFIED:
                result.outcome, result.exit_code = "bundle-error", exits.NOT_VERIFIED
    return result


def _run_phases(
    opts: ReproOptions,
    result: ReproResult,
    work: Path,
    progress: ReproProgress | None,
    given: Located | None = None,
) -> None:
    """A crash's phases in order, each one's value taken into `result` as soon as it returns."""
    cmd = opts.command
    with phase(result, "locate", progress) as ph:
        located = given if given is not None else _locate(opts, result.partitions, work, progress)
        result.target = CrashTarget(located)
        ph.detail = _locate_detail(located)
        if located.winner is None and located.tool_failures:
            raise PhaseFailed(
                "; ".join(
                    f"partition {r.partition.index}: {' / '.join(r.failures)}"
                    for r in located.tool_failures
                )
            )
    if located.winner is None:
        result.outcome, result.exit_code, result.error = _no_crash(located)
        result.causes += _causes_without_a_crash(located, cmd)
        if result.outcome == "no-crash" and len(result.partitions) > 1:
            located.notes.append(
                "each partition replays from a fresh process: a crash that needs "
                "state left by records of an earlier partition shows only with "
                "--workers 1"
            )
        if result.outcome == "no-crash":  # a setting the JIT never read changed nothing
            located.notes += [u.text for u in cannot_show(cmd, assert_expected=False)]
        return
    # decided here, once: by the crash's bucket, unless --out names it
    result.out = bundle_dir_for(opts.out, result.target, result.outcome)
    v = _Verifying(opts, result, located, work, progress).run()
    if not v.accepted:
        result.outcome, result.exit_code = "not-verified", exits.NOT_VERIFIED
        return
    # Verified: the experiments on the repro (the JIT settings it needs, which JIT crashes alone).
    result.outcome, result.exit_code = "verified", exits.VERIFIED
    CrashExperiments(opts, result, located, work, progress).run()


@dataclass
class _Verifying:
    """The crash found, isolated and verified, minimized when the record alone does not crash."""

    opts: ReproOptions
    result: ReproResult
    located: Located
    work: Path
    progress: ReproProgress | None

    def __post_init__(self) -> None:
        target, expected = self.result.target, self.located.expectation
        assert isinstance(target, CrashTarget) and expected is not None
        assert self.located.winner is not None
        self.target, self.expected, self.winner = target, expected, self.located.winner
        self.out = self.result.bundle_dir()

    def run(self) -> Verification:
        """The crashing record alone, verified; when its native runs do not crash, the earlier
        records it needs (ddmin), isolated and verified again. The last verification."""
        result, progress = self.result, self.progress
        with phase(result, "isolate", progress) as ph:
            mc = self.located.method_context
            if mc is None:
                raise PhaseFailed("no method context number: " + "; ".join(self.located.notes))
            result.isolated = isolate(self.opts.command.input, [mc], self.work / "bundle")
            ph.detail = f"method context {mc} -> {self.out / result.isolated.mch.name}"
        with phase(result, "verify", progress) as ph:
            self.target.single = self.target.verification = single = self.verified("verify")
            ph.detail = single.summary()
        # Minimize only when the native runs say the record alone does not crash: not with
        # --verify-runs 0 (only the debugger run, which verifies nothing), nor when they reproduced
        # and the debugger's bucket differs. Before the records, the environment: a variable of the
        # user's the clean environment lacks.
        if not single.native or single.native_accepted:
            return single
        if single.reproduced == 0:
            found = self.environment_found()
            if found is not None:
                return found
        return self.minimized(mc)

    def environment_found(self) -> Verification | None:
        """The variables of the user's environment the repro needs (env_experiment), recorded and
        verified in the clean environment with them; None when the environment is not the
        cause."""
        result, opts = self.result, self.opts
        assert result.isolated is not None
        with phase(result, "environment", self.progress) as ph:
            exp = find_environment(
                opts.command,
                result.isolated.mch,
                self.expected,
                timeout=opts.verify_timeout,
                workdir=self.work,
            )
            result.environment_experiment = exp
            ph.detail = exp.summary() if exp is not None else "no variable beyond the recorded ones"
        if exp is None or not exp.found:
            return None
        opts.command = dataclasses.replace(opts.command, env=(*opts.command.env, *exp.needed))
        with phase(result, "verify-environment", self.progress) as ph:
            self.target.single = self.target.verification = v = self.verified("verify-environment")
            ph.detail = v.summary()
        return v if v.native_accepted else None

    def minimized(self, mc: int) -> Verification:
        """The earlier records the crash needs (ddmin), isolated with it and verified."""
        result, progress, opts = self.result, self.progress, self.opts
        with phase(result, "minimize", progress) as ph:
            result.minimization = m = minimize(
                opts.command,
                self.winner.partition,
                mc,
                self.expected,
                timeout=opts.timeout,
                workdir=self.work,
            )
            ph.detail = "; ".join(m.notes)
            if not m.succeeded:
                raise PhaseFailed(
                    "the crashing record alone does not reproduce, and no set of "
                    f"earlier records does: {ph.detail}"
                )
        with phase(result, "isolate-minimized", progress) as ph:
            result.isolated = isolate(opts.command.input, m.numbers, self.work / "bundle")
            numbers = ", ".join(map(str, m.numbers))
            ph.detail = f"method contexts {numbers} -> {self.out / result.isolated.mch.name}"
        with phase(result, "verify-minimized", progress) as ph:
            self.target.verification = v = self.verified("verify-minimized")
            ph.detail = v.summary()
        return v

    def verified(self, label: str) -> Verification:
        """The isolated repro replayed natively --verify-runs times, and once under the
        debugger."""
        assert self.result.isolated is not None
        return verify(
            self.opts.command,
            self.result.isolated.mch,
            self.expected,
            Replays(self.opts.debugger, self.opts.verify_timeout, self.work),
            runs=self.opts.verify_runs,
            label=label,
        )


def _locate(
    opts: ReproOptions, partitions: list[Partition], work: Path, progress: ReproProgress | None
) -> Located:
    """The crash: the post-mortem diagnosis of --core, else the partitions replayed under the
    debugger (the method contexts a superpmi.py log names first)."""
    cmd = opts.command
    if opts.core is not None:
        return locate_core(
            cmd, partitions, opts.core, opts.debugger, timeout=opts.timeout, workdir=work
        )
    hints = tuple(int(n) for n in (cmd.log or {}).get("hints") or ())
    return locate(
        cmd,
        partitions,
        Replays(opts.debugger, opts.timeout, work),
        progress=progress,
        hints=hints,
        workers=opts.workers,
        first_found=opts.first_found,
    )


def _causes_without_a_crash(located: Located, cmd: ReproCommand) -> list[Cause]:
    """What superpmi's own output says of the setup when no partition crashed
    (repro/setup_causes.py): a JIT of another JIT-EE version, `-a` without compile results."""
    stderr = {id(r): read_lines(r.stderr) for r in located.runs}
    mismatch = next(
        (
            c
            for r in located.runs
            if (
                c := version_mismatch(
                    r.outcome.exit_status if r.outcome else None, stderr[id(r)], cmd.jits
                )
            )
        ),
        None,
    )
    replayed = sum(len(r.partition.numbers) for r in located.runs)
    lines = [line for r in located.runs for line in stderr[id(r)]]
    no_cr = diff_needs_compile_results(cmd.options, cmd.jits, lines, replayed)
    return [c for c in (mismatch, no_cr) if c is not None]


def _no_crash(located: Located) -> tuple[Outcome, int, str | None]:
    """Every partition ran to its end. An exit status superpmi uses for bad input is an input
    error."""
    for run in located.runs:
        status = run.outcome.exit_status if run.outcome else None
        if status in REPLAY_INPUT_FAILURES:
            first = next(
                (line for line in read_lines(run.stderr) if line.startswith("ERROR: ")), ""
            )
            return (
                "input-error",
                exits.PIPELINE_INPUT,
                f"the replay failed with exit status {status} ({REPLAY_INPUT_FAILURES[status]})"
                + (f": {first[7:]}" if first else ""),
            )
    return "no-crash", exits.NO_CRASH, None


def _locate_detail(located: Located) -> str:
    parts = []
    for r in located.runs:
        o = r.outcome
        status = (
            f"exited with status {o.exit_status}"
            if o is not None and o.kind == "exited"
            else r.status
        )
        stops = f", {len(o.passed)} stop(s) passed on" if o is not None and o.passed else ""
        retry = f", {len(r.failures)} debugger failure(s)" if r.failures else ""
        parts.append(
            f"partition {r.partition.index} (-c {r.partition.spec}): {status}{stops}{retry}"
        )
    if located.winner is not None and located.method_context is not None:
        parts.append(f"method context {located.method_context} [{located.method_context_source}]")
    return "; ".join(parts + located.notes)
