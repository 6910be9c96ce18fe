"""The phases of `spmi-dbg repro --failure assert|error|missing|any[:TEXT]`: a compile failure
superpmi reports itself (docs/superpmi-conventions.md 1.1) as the target, in place of a crash.

locate (native replays of CHUNKS_PER_WORKER contiguous partitions per worker, in order, read for
superpmi's failure lines as they come) -> isolate -> minimize-options (ddmin over the command's
-jitoption/-jit2option settings and their list elements) -> verify (K native runs of the repro
report the same failure; none with --verify-runs 0: then not verified) -> [minimize over earlier
records -> isolate -> verify, when the record alone does not fail] -> diagnose (one run under the
debugger with -boa for an assert, so that it stops in MyICJI::doAssert; -boe and the very first stop
for a failed compile, so that it stops at the compile's first-chance fault or at superpmi's break
after it; -box for missing data) -> jit-output (the JIT's own output for the repro method,
JitStdOutFile with JitDump=* and JitDisasm=*, where the JIT has them) -> bundle.

run_failure_phases runs them in order; each phase's function returns its value, and the runner takes
it into the result as soon as the phase returns, so a phase that fails leaves the earlier phases'
values for the bundle."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg import exits
from spmi_dbg.analysis.signature import in_bucket
from spmi_dbg.driver.base import Replays
from spmi_dbg.driver.request import ReplayRequest
from spmi_dbg.errors import ToolFailure
from spmi_dbg.failures.output import Failure, read_lines
from spmi_dbg.failures.target import BREAK_SWITCH
from spmi_dbg.mch.mclist import compress_ranges
from spmi_dbg.repro.capability import cannot_show
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.expect import expectation_of
from spmi_dbg.repro.failure_locate import (
    FailureLocated,
    FailureVerification,
    locate_failure,
    verify_failure,
)
from spmi_dbg.repro.failure_run import reproduces, run_for_failures
from spmi_dbg.repro.isolate import isolate
from spmi_dbg.repro.jitoptions import (
    JitSetting,
    OptionMinimization,
    SplitOptions,
    minimize_settings,
    settings_of,
    with_settings,
)
from spmi_dbg.repro.locate import ATTEMPTS, locate
from spmi_dbg.repro.minimize import ddmin
from spmi_dbg.repro.models import Located, PartitionRun
from spmi_dbg.repro.needs import Needs, with_option
from spmi_dbg.repro.needs import Outcome as NeedsOutcome
from spmi_dbg.repro.needs_phase import needs_phase
from spmi_dbg.repro.phase import REPLAY_INPUT_FAILURES, PhaseFailed, phase
from spmi_dbg.repro.result import (
    JIT_OUTPUT_FILE,
    CompileFailureTarget,
    JitOutput,
    Outcome,
    ReproOptions,
    ReproProgress,
    ReproResult,
    bundle_dir_for,
)
from spmi_dbg.repro.setup_causes import version_mismatch

# Switches that break unconditionally (a debug break kills a replay no debugger is attached to): not
# in native runs of a failure target.
_BREAKS = ("-boe", "-box")
# Locate cuts the selection into this many contiguous partitions per worker, replayed in order: a
# failure at 75% of the selection is then found after about 75%/workers of a native replay's time
# (with one partition per worker, every partition before the failure's must be replayed whole: at
# least 1/workers of it).
CHUNKS_PER_WORKER = 4


def run_failure_phases(
    opts: ReproOptions,
    result: ReproResult,
    work: Path,
    progress: ReproProgress | None,
    *,
    given: Failure | None = None,
) -> None:
    """`given`: the failure is already known (triage found it): locate is skipped."""
    _FailureRun(opts, result, work, progress).run(given)


@dataclass
class _FailureRun:
    """The failure sought, located, isolated, its settings minimized, verified (its earlier records
    minimized when the record alone does not fail), diagnosed under the debugger, its JIT output
    and what it needs: the crash path's _Verifying, for a failure superpmi reports itself."""

    opts: ReproOptions
    result: ReproResult
    work: Path
    progress: ReproProgress | None

    def __post_init__(self) -> None:
        self.cmd = _without_breaks(self.opts.command)

    def run(self, given: Failure | None) -> None:
        result, progress, cmd, work = self.result, self.progress, self.cmd, self.work
        with phase(result, "locate", progress) as ph:
            located = self._locate(given)
            result.target = found = CompileFailureTarget(located)
            ph.detail = _locate_detail(located)
        f = located.failure
        if f is None:
            self._not_found(located)
            return
        # decided here, once: by the failure's kind and method context, unless --out names it
        result.out = out = bundle_dir_for(self.opts.out, result.target, result.outcome)
        mc = f.method_context
        with phase(result, "isolate", progress) as ph:
            result.isolated = isolate(cmd.input, [mc], work / "bundle")
            ph.detail = f"method context {mc} -> {out / result.isolated.mch.name}"
        # The whole command (without breaks) until its settings are minimized.
        result.repro_command = final = cmd
        split, settings = settings_of(cmd)
        if settings:
            with phase(result, "minimize-options", progress) as ph:
                m = self._minimize_options(split, settings, result.isolated.mch, f)
                result.option_minimization = m
                ph.detail = f"{m.summary()} ({m.tests} replays)"
            result.repro_command = final = with_settings(cmd, split, m.needed)
        with phase(result, "verify", progress) as ph:
            found.verification = v = self._verified(final, f)
            ph.detail = v.summary()
        if v.runs and not v.accepted:  # the record alone does not fail (no run: nothing says so)
            minimized = self._minimized(final, f)
            v = minimized if minimized is not None else v
        # The debugger's run is recorded before it starts: a failing debugger leaves its attempts.
        found.diagnosed = diagnosed = _diagnose_run(located, f, list(result.isolated.numbers), work)
        with phase(result, "diagnose", progress) as ph:
            ph.detail = self._diagnose(final, f, diagnosed)
        with phase(result, "jit-output", progress) as ph:
            found.jit_output = j = self._jit_output(final, result.isolated.mch)
            ph.detail = j.summary()
        needs = self.opts.needs
        if v.accepted and (needs == "on" or (needs == "auto" and f.kind == "assert")):
            result.needs = self._failure_needs(final, f)
        result.outcome, result.exit_code = (
            ("verified", exits.VERIFIED) if v.accepted else ("not-verified", exits.NOT_VERIFIED)
        )

    def _minimized(self, final: ReproCommand, f: Failure) -> FailureVerification | None:
        """The earlier records the failure needs (ddmin), isolated with it and verified (None: no
        set of them makes it fail)."""
        result, progress = self.result, self.progress
        found = result.target
        assert isinstance(found, CompileFailureTarget)
        with phase(result, "minimize", progress) as ph:
            kept, ph.detail = self._minimize_records(final, found.located, f)
        if kept is None:
            return None
        numbers = [*kept, f.method_context]
        with phase(result, "isolate-minimized", progress) as ph:
            result.isolated = isolate(final.input, numbers, self.work / "bundle")
            ph.detail = f"method contexts {', '.join(map(str, numbers))}"
        with phase(result, "verify-minimized", progress) as ph:
            found.verification = v = self._verified(final, f, len(numbers), "verify-minimized")
            ph.detail = v.summary()
        return v

    def _verified(
        self, final: ReproCommand, f: Failure, number_in_repro: int = 1, label: str = "verify"
    ) -> FailureVerification:
        """The isolated repro replayed natively --verify-runs times, for the failure's key."""
        assert self.result.isolated is not None
        return verify_failure(
            final,
            self.result.isolated.mch,
            f,
            Replays(None, self.opts.verify_timeout, self.work),
            runs=self.opts.verify_runs,
            number_in_repro=number_in_repro,
            label=label,
        )

    def _not_found(self, located: FailureLocated) -> None:
        """No such failure: what superpmi said instead (a JIT of another JIT-EE version), or the
        crash that came first, diagnosed."""
        result, cmd = self.result, self.cmd
        result.outcome, result.exit_code, result.error = _nothing_found(located)
        for r in located.runs:  # superpmi refused the JIT: another JIT-EE version
            cause = version_mismatch(r.run.returncode, read_lines(r.stderr), cmd.jits)
            if cause is not None:
                result.causes.append(cause)
                break
        if result.outcome == "no-failure" and located.crashed() is None:
            # a JIT that could not show it: no asserts, a setting it never reads
            unable = cannot_show(cmd, assert_expected=self.opts.failure.kind == "assert")
            if unable:
                result.error = f"{result.error}; " + "; ".join(u.text for u in unable)
        if result.outcome == "no-failure" and located.crashed() is not None:
            with phase(result, "diagnose-crash", self.progress) as ph:
                said = self._the_crash_instead(located)
                ph.detail = said
            result.outcome, result.exit_code, result.error = "crashed", exits.NOT_VERIFIED, said

    def _locate(self, given: Failure | None) -> FailureLocated:
        opts, cmd = self.opts, self.cmd
        if given is not None:
            return FailureLocated(
                opts.failure,
                [],
                given,
                [f"given: {given.describe()} (found by the run that called this one)"],
            )
        chunks = cmd.partitions(max(1, opts.workers) * CHUNKS_PER_WORKER)
        return locate_failure(
            cmd, chunks, opts.failure, timeout=opts.timeout, workdir=self.work, workers=opts.workers
        )

    def _the_crash_instead(self, located: FailureLocated) -> str:
        """--failure found nothing of its kind, but a partition's replay died: the first such
        partition is replayed under the debugger, and what killed superpmi is said with its method
        context and bucket (the crash is the answer the user's command gave)."""
        run = located.crashed()
        assert run is not None
        sought = located.target.noun()
        died = f"{run.run.signal} in partition {run.partition.index} (-c {run.partition.spec})"
        where = self.work / "crash"
        where.mkdir(parents=True, exist_ok=True)
        try:
            crash = locate(
                self.cmd,
                [Partition(1, run.partition.numbers)],
                Replays(self.opts.debugger, self.opts.timeout, where),
                workers=1,
            )
        except ToolFailure as e:
            crash = None
            died += f" (the debugger could not say more: {e})"
        d = crash.diagnosis if crash is not None else None
        if crash is not None and d is not None and crash.method_context:
            top = d.folded[0] if d.folded else "?"
            null = f", null {d.null_map.owner_type}::{d.null_map.member}" if d.null_map else ""
            died = (
                f"{d.signal.name if d.signal else run.run.signal} at method context "
                f"{crash.method_context} in {top}{null} ({in_bucket(d.bucket)})"
            )
        return (
            f"no {sought} before superpmi died: {died}; run without --failure for the crash "
            "(its repro and report)"
        )

    def _minimize_options(
        self, split: SplitOptions, given: tuple[JitSetting, ...], mch: Path, f: Failure
    ) -> OptionMinimization:
        """The JIT settings (options and environment) the failure needs (ddmin, each test a native
        replay of the repro `mch`)."""

        def fails(settings: list[JitSetting]) -> bool:
            trial = with_settings(self.cmd, split, settings)
            _, failures = run_for_failures(
                trial.native_argv(None, mch),
                timeout=self.opts.verify_timeout,
                workdir=self.work,
                name="minimize-options",
            )
            return reproduces(failures, f.key, 1)

        return minimize_settings(given, fails)

    def _failure_needs(self, cmd: ReproCommand, f: Failure) -> Needs | None:
        """The JIT's switches tried on the verified repro (repro/needs.py), each replay read for
        superpmi's failure lines; one JIT commands only. A failure here is said in the report."""
        if self.result.isolated is None:
            return None
        mch, number = self.result.isolated.mch, len(self.result.isolated.numbers)

        def trial(key: str, value: str) -> tuple[NeedsOutcome, str]:
            run, failures = run_for_failures(
                with_option(cmd, key, value).native_argv(None, mch),
                timeout=self.opts.verify_timeout,
                workdir=self.work,
                name=f"needs-{key}",
            )
            said = run.describe()
            if reproduces(failures, f.key, number):
                return "still fails with", said
            if any(x.kind == "missing" for x in failures):
                return "cannot tell (missing data)", said
            if run.returncode == 0 and not failures:
                return "gone with", said
            return "fails otherwise", said + "".join(f"; {x.describe()}" for x in failures[:1])

        return needs_phase(self.opts, self.result, cmd, trial, self.progress)

    def _minimize_records(
        self, cmd: ReproCommand, located: FailureLocated, f: Failure
    ) -> tuple[list[int] | None, str]:
        """The record alone does not fail: which earlier records of its partition it needs
        (ddmin), each test a native replay of `-c <subset + record>` on the collection; with the
        phase's detail. None: no set of them brings the failure back."""
        mc = f.method_context
        run = located.run_of(mc)
        earlier = [n for n in run.partition.numbers if n < mc] if run is not None else []
        cache: dict[tuple[int, ...], bool] = {}

        def fails(subset: list[int]) -> bool:
            key = tuple(subset)
            if key not in cache:
                _, failures = run_for_failures(
                    cmd.native_argv(compress_ranges([*subset, mc])),
                    timeout=self.opts.timeout,
                    workdir=self.work,
                    name="minimize",
                )
                cache[key] = reproduces(failures, f.key, mc)
            return cache[key]

        if not earlier:
            return None, "the record is the first of its partition: nothing earlier"
        if not fails(earlier):
            return None, (
                "the record alone does not show the failure, and nothing earlier in its "
                "partition brings it back"
            )
        kept = ddmin(earlier, fails)
        return kept, (
            f"ddmin kept {len(kept)} of {len(earlier)} earlier record(s) in {len(cache)} native "
            "replays"
        )

    def _diagnose(self, cmd: ReproCommand, f: Failure, diagnosed: Located) -> str:
        """Run the failing compile under the debugger with the break switch of its kind (the run's
        outcome, the stop and its expectation go into `diagnosed`); the phase's detail."""
        switch = BREAK_SWITCH[f.kind]
        run = diagnosed.runs[0]
        with_break = dataclasses.replace(cmd, options=(*cmd.options, switch))
        argv = with_break.argv(compress_ranges(list(run.partition.numbers)))
        while run.attempts < ATTEMPTS and run.outcome is None:
            run.attempts += 1
            try:
                run.outcome = self.opts.debugger.run_replay(
                    ReplayRequest(
                        tuple(argv),
                        self.opts.verify_timeout,
                        run.stdout,
                        run.stderr,
                        run.transcript,
                        stop_at_break=True,
                        max_passes=0 if f.kind == "error" else None,
                    )
                )
            except ToolFailure as e:
                run.failures.append(str(e))
        if run.outcome is None:
            raise PhaseFailed(f"the debugger failed twice: {' / '.join(run.failures)}")
        o = run.outcome
        if o.kind == "fatal":
            diagnosed.winner = run
            diagnosed.expectation = expectation_of(o)
            folded = o.diagnosis.folded if o.diagnosis else []
            return f"{switch}: stopped in {', '.join(folded[:3]) or '?'}"
        status = f", exit status {o.exit_status}" if o.exit_status is not None else ""
        diagnosed.notes.append(
            f"under the debugger with {switch} the replay did not stop ({o.kind}{status})"
        )
        return diagnosed.notes[-1]

    def _jit_output(self, cmd: ReproCommand, mch: Path) -> JitOutput:
        """The JIT's own output for the repro `mch`: JitStdOutFile with JitDump=* (a Checked/Debug
        JIT's dump) and JitDisasm=* (its code, also from a Release JIT of .NET 7 on)."""
        dest = self.work / JIT_OUTPUT_FILE
        dest.unlink(missing_ok=True)
        settings = (
            "-jitoption",
            f"JitStdOutFile={dest}",
            "-jitoption",
            "JitDump=*",
            "-jitoption",
            "JitDisasm=*",
        )
        trial = dataclasses.replace(cmd, options=(*cmd.options, *settings))
        run, _ = run_for_failures(
            trial.native_argv(None, mch),
            timeout=self.opts.verify_timeout,
            workdir=self.work,
            name="jit-output",
        )
        if dest.is_file() and dest.stat().st_size > 0:
            return JitOutput(dest)
        return JitOutput(
            None,
            "the JIT wrote nothing to JitStdOutFile with JitDump=* and JitDisasm=* "
            "(a Release JIT has no JitDump; 3.1's Checked JIT writes none under "
            f"superpmi; replay {run.describe()})",
        )


def _locate_detail(located: FailureLocated) -> str:
    f = located.failure
    seen = f"{len(located.seen)} failure(s) reported in {len(located.runs)} partition(s)"
    first = [f"the first {located.target.noun()}: {f.describe()}"] if f else []
    return "; ".join([seen, *first, *located.notes])


def _nothing_found(located: FailureLocated) -> tuple[Outcome, int, str]:
    """Nothing of the kind sought: an input error when superpmi refused a partition, else no such
    failure."""
    rejected = _input_failure(located)
    if rejected is not None:
        return "input-error", exits.PIPELINE_INPUT, rejected
    return "no-failure", exits.NO_CRASH, located.no_such_failure()


def _input_failure(located: FailureLocated) -> str | None:
    """A partition superpmi refused (exit status 255 GeneralFailure, 254 JitFailedToInit:
    docs/superpmi-conventions.md 1.2): an input error, with its first ERROR line, never "no such
    failure"."""
    for r in located.runs:
        status = r.run.returncode
        if r.started and not r.run.stopped and status in REPLAY_INPUT_FAILURES:
            errors = (line for line in read_lines(r.stderr) if line.startswith("ERROR: "))
            first = next(errors, None)
            said = (
                f": {first[7:]}"
                if first
                else (
                    ": superpmi printed no ERROR line (3.1 prints only its header lines for a -c "
                    "past the collection's end)"
                )
            )
            return (
                f"the replay of partition {r.partition.index} (-c {r.partition.spec}) failed "
                f"with exit status {status} ({REPLAY_INPUT_FAILURES[status]}){said}"
            )
    return None


def _without_breaks(cmd: ReproCommand) -> ReproCommand:
    kept = [o for o in cmd.options if not o.lower().startswith(_BREAKS)]
    if len(kept) == len(cmd.options):
        return cmd
    dropped = [o for o in cmd.options if o.lower().startswith(_BREAKS)]
    return dataclasses.replace(
        cmd,
        options=tuple(kept),
        notes=(
            *cmd.notes,
            f"dropped {' '.join(dropped)}: a debug break kills a replay no debugger is "
            "attached to (the diagnose phase adds the switch its stop needs)",
        ),
    )


def _diagnose_run(located: FailureLocated, f: Failure, numbers: list[int], work: Path) -> Located:
    """The diagnose phase's one replay under the debugger, not yet run: on the collection with `-c`
    (the numbers the report names)."""
    found_in = located.run_of(f.method_context)
    part = Partition(found_in.partition.index if found_in is not None else 1, tuple(numbers))
    run = PartitionRun(
        part, work / "diagnose.stdout", work / "diagnose.stderr", work / "diagnose.debugger.log"
    )
    return Located(
        [run],
        method_context=f.method_context,
        method_context_source=f"superpmi's own output ({_line_head(f)})",
    )


def _line_head(f: Failure) -> str:
    """The line that gave the method context number (3.1's assert line has none: its failed
    compile's did)."""
    mc = f.method_context
    if f.kind == "assert" and f"#{mc} " not in f.line:
        return (
            f"ERROR: ... method {mc} of size {f.il_size} failed to load and compile correctly, "
            "paired with the ISSUE: <ASSERT> line by its IL size"
        )
    return {
        "assert": f"ISSUE: <ASSERT> #{mc} ...",
        "error": f"ERROR: ... method {mc} of size ... failed to load and compile correctly",
        "missing": f"MISSING: Method context {mc} failed to replay: ...",
    }[f.kind]
