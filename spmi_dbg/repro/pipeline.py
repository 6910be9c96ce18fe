"""The phases of `spmi-dbg repro`, in order (docs/architecture.md, "Data flow of spmi-dbg repro"):
locate (+ capture: the winning stop's full diagnosis) -> isolate -> verify -> [minimize -> isolate
-> verify]
-> bundle. Each phase's function returns its value, and the runner (_run_phases; failure_pipeline's
for a compile failure) takes it into the result as soon as the phase returns: whatever phase fails,
the bundle still gets what the earlier ones produced, and the report says which phase failed and
why."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from spmi_dbg import exits
from spmi_dbg.analysis.facts import Cause
from spmi_dbg.errors import SpmiDbgError, printable
from spmi_dbg.failures.output import Failure, read_lines
from spmi_dbg.outdir import check_out_dir, locked
from spmi_dbg.repro.bundle import BUNDLE_FILES, out_dir_for, write_bundle
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.expect import Expectation
from spmi_dbg.repro.failure_pipeline import run_failure_phases
from spmi_dbg.repro.isolate import isolate
from spmi_dbg.repro.jitoptions import (
    JitSetting,
    OptionMinimization,
    minimize_settings,
    settings_of,
    with_settings,
)
from spmi_dbg.repro.locate import Located, locate, locate_core
from spmi_dbg.repro.minimize import minimize
from spmi_dbg.repro.native import run_native
from spmi_dbg.repro.needs import Needs, with_option
from spmi_dbg.repro.needs import Outcome as NeedsOutcome
from spmi_dbg.repro.needs_phase import needs_phase
from spmi_dbg.repro.phase import REPLAY_INPUT_FAILURES, PhaseFailed, experiment, phase
from spmi_dbg.repro.regression import Regression, regression
from spmi_dbg.repro.result import CrashTarget, Outcome, ReproOptions, ReproProgress, ReproResult
from spmi_dbg.repro.setup_causes import (
    diff_needs_compile_results,
    needs_unrecorded_data,
    version_mismatch,
)
from spmi_dbg.repro.verify import verify
from spmi_dbg.tempfiles import temp_dir


def run_repro(
    opts: ReproOptions,
    progress: ReproProgress | None = None,
    *,
    located: Located | None = None,
    failure: Failure | None = None,
) -> ReproResult:
    """The whole pipeline; with `located` (a crash already found and identified, e.g. by triage) or
    `failure` (a compile failure superpmi reported, for `opts.failure`) it starts at isolate. The
    bundle is written in any case."""
    start = time.monotonic()
    result = ReproResult(opts, opts.command.partitions(opts.workers))
    with temp_dir("repro") as tmp, contextlib.ExitStack() as held:
        work = Path(tmp)
        # before any replay: one run per bundle directory (InputError if taken)
        if opts.out is not None:
            check_out_dir(opts.out, ours=BUNDLE_FILES)
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
        if result.out is None:
            result.out = opts.out or out_dir_for(result)
        result.seconds = time.monotonic() - start
        try:
            if opts.out is None:  # the default name is known only now
                check_out_dir(result.out, ours=BUNDLE_FILES, option="the bundle directory")
                held.enter_context(locked(result.out))
            written = write_bundle(result, work)  # the repro now lives in the bundle
            result.files, result.report, result.isolated = (
                written.files,
                written.report,
                written.isolated,
            )
        except (SpmiDbgError, OSError) as e:  # the report cannot tell this one: the summary does
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            result.bundle_error = (
                f"the bundle could not be written to {printable(str(result.out))}: {reason}"
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
        result.target = target = CrashTarget(located)
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
        return
    out = result.out = opts.out or out_dir_for(result)
    expected = located.expectation
    assert expected is not None
    with phase(result, "isolate", progress) as ph:
        mc = located.method_context
        if mc is None:
            raise PhaseFailed("no method context number: " + "; ".join(located.notes))
        result.isolated = isolate(cmd.input, [mc], work / "bundle")
        ph.detail = f"method context {mc} -> {out / result.isolated.mch.name}"
    with phase(result, "verify", progress) as ph:
        single = verify(
            cmd,
            result.isolated.mch,
            expected,
            opts.debugger,
            runs=opts.verify_runs,
            timeout=opts.verify_timeout,
            workdir=work,
        )
        target.single = target.verification = single
        ph.detail = single.summary()
    v = single
    # Minimize only when the native runs say the record alone does not crash: not with
    # --verify-runs 0 (only the debugger run, which verifies nothing), nor when they reproduced and
    # the debugger's bucket differs.
    if single.native and not single.native_accepted:
        with phase(result, "minimize", progress) as ph:
            result.minimization = m = minimize(
                cmd, located.winner.partition, mc, expected, timeout=opts.timeout, workdir=work
            )
            ph.detail = "; ".join(m.notes)
            if not m.succeeded:
                raise PhaseFailed(
                    "the crashing record alone does not reproduce, and no set of "
                    f"earlier records does: {ph.detail}"
                )
        with phase(result, "isolate-minimized", progress) as ph:
            result.isolated = isolate(cmd.input, m.numbers, work / "bundle")
            ph.detail = (
                f"method contexts {', '.join(map(str, m.numbers))} -> "
                f"{out / result.isolated.mch.name}"
            )
        with phase(result, "verify-minimized", progress) as ph:
            target.verification = v = verify(
                cmd,
                result.isolated.mch,
                expected,
                opts.debugger,
                runs=opts.verify_runs,
                timeout=opts.verify_timeout,
                workdir=work,
                label="verify-minimized",
            )
            ph.detail = v.summary()
    if not v.accepted:
        result.outcome, result.exit_code = "not-verified", exits.NOT_VERIFIED
        return
    # Verified: the experiments on the repro (the JIT settings it needs, which JIT crashes alone).
    result.outcome, result.exit_code = "verified", exits.VERIFIED
    settings = _crash_settings(opts, result, result.isolated.mch, expected, work, progress)
    if settings is not None:
        result.option_minimization, result.repro_command = settings
        cause = _unrecorded_data(opts, result, located, result.isolated.mch, work)
        if cause is not None:
            result.causes.append(cause)
    result.regression = _regression(opts, result, result.isolated.mch, expected, work, progress)
    module = located.diagnosis.faulting_module if located.diagnosis is not None else None
    in_jit = module is not None and module.role.is_jit
    if opts.needs == "on" or (opts.needs == "auto" and in_jit and expected.kind != "hang"):
        result.needs = _crash_needs(opts, result, result.isolated.mch, expected, work, progress)


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
        opts.debugger,
        timeout=opts.timeout,
        workdir=work,
        progress=progress,
        hints=hints,
        workers=opts.workers,
        first_found=opts.first_found,
    )


def _crash_settings(
    opts: ReproOptions,
    result: ReproResult,
    mch: Path,
    expected: Expectation,
    work: Path,
    progress: ReproProgress | None,
) -> tuple[OptionMinimization, ReproCommand] | None:
    """A verified crash repro whose command has JIT settings: which of them the crash needs (ddmin,
    each test a native replay of the repro), then the repro with only those, natively, --verify-runs
    times (at least once); it replaces the full command in repro.sh only when at least half of those
    runs crash the same way. Not for a hang: each test would take the whole timeout. None: no
    settings, a hang, or the experiment failed."""
    cmd = opts.command
    split, given = settings_of(cmd)
    if not given or expected.kind == "hang":
        return None

    def crashes(settings: list[JitSetting], name: str = "minimize-options") -> bool:
        trial = with_settings(cmd, split, settings)
        run = run_native(
            trial.native_argv(None, mch),
            timeout=opts.verify_timeout,
            stdout=work / f"{name}.stdout",
            stderr=work / f"{name}.stderr",
        )
        return run.matches(expected)

    with experiment(result, "minimize-options", progress) as ph:
        # verify has just seen it crash
        m = minimize_settings(given, crashes, known_to_fail=True)
        if m.needed != list(given):
            runs = max(1, opts.verify_runs)
            ok = sum(crashes(m.needed, "verify-options") for _ in range(runs))
            if 2 * ok < runs:
                m.notes.append(
                    f"only {ok}/{runs} replays with the needed settings alone crashed: repro.sh "
                    "keeps all of them"
                )
                m.needed = list(given)
        ph.detail = f"{m.summary()} ({m.tests} replays)"
        return m, with_settings(cmd, split, m.needed)
    return None  # the repro is verified: only the experiment is missing


def _unrecorded_data(
    opts: ReproOptions, result: ReproResult, located: Located, mch: Path, work: Path
) -> Cause | None:
    """`option-needs-unrecorded-data`: the crash needs a setting, the null map is one the collection
    never recorded, and the record replays clean without the settings (one more native run)."""
    m = result.option_minimization
    d = located.diagnosis
    if m is None or not m.needed or d is None or d.null_map is None:
        return None
    split, _ = settings_of(opts.command)
    without = run_native(
        with_settings(opts.command, split, []).native_argv(None, mch),
        timeout=opts.verify_timeout,
        stdout=work / "without-settings.stdout",
        stderr=work / "without-settings.stderr",
    )
    return needs_unrecorded_data(d, m, without)


def _crash_needs(
    opts: ReproOptions,
    result: ReproResult,
    mch: Path,
    expected: Expectation,
    work: Path,
    progress: ReproProgress | None,
) -> Needs | None:
    """The JIT's switches tried on the verified repro (repro/needs.py); one JIT commands only. A
    failure here is said in the report; the repro stands."""
    cmd = result.repro_command or opts.command

    def trial(key: str, value: str) -> tuple[NeedsOutcome, str]:
        run = run_native(
            with_option(cmd, key, value).native_argv(None, mch),
            timeout=opts.verify_timeout,
            stdout=work / f"needs-{key}.stdout",
            stderr=work / f"needs-{key}.stderr",
        )
        if run.matches(expected):
            return "still fails with", run.describe()
        if run.returncode == 0:
            return "gone with", run.describe()
        if run.returncode == 3:
            return "cannot tell (missing data)", run.describe()
        return "fails otherwise", run.describe()

    return needs_phase(opts, result, cmd, trial, progress)


def _regression(
    opts: ReproOptions,
    result: ReproResult,
    mch: Path,
    expected: Expectation,
    work: Path,
    progress: ReproProgress | None,
) -> Regression | None:
    """Which JIT crashes alone (report: "Regression?"). A failure here is said in the report; the
    repro stands."""
    if len(opts.command.jits) < 2:
        return None
    with experiment(result, "regression", progress) as ph:
        r = regression(
            opts.command,
            mch,
            expected,
            runs=2 if opts.verify_runs >= 2 else 1,
            timeout=opts.verify_timeout,
            workdir=work,
        )
        ph.detail = r.conclusion if r else ""
        return r
    return None  # the repro is verified: only the experiment is missing


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
