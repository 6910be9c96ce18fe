"""The phases of `spmi-dbg repro --failure assert|error|missing|any[:TEXT]`: a compile failure superpmi reports
itself (docs/superpmi-conventions.md 1.1) as the target, in place of a crash.

locate (native replays of CHUNKS_PER_WORKER contiguous partitions per worker, in order, read for superpmi's
failure lines as they come) -> isolate -> minimize-options (ddmin over the command's -jitoption/-jit2option
settings and their list elements) -> verify (K native runs of the repro report the same failure; at least one,
also with --verify-runs 0) -> [minimize over earlier records -> isolate -> verify, when the record alone does
not fail] -> diagnose (one run under the debugger with -boa for an assert, so that it stops in
MyICJI::doAssert; -boe and the very first stop for a failed compile, so that it stops at the compile's
first-chance fault or at superpmi's break after it; -box for missing data) -> jit-output (the JIT's own output
for the repro method, JitStdOutFile with JitDump=* and JitDisasm=*, where the JIT has them) -> bundle."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from spmi_dbg import exits
from spmi_dbg.errors import ToolFailure
from spmi_dbg.failures.output import Failure, read_lines
from spmi_dbg.failures.target import BREAK_SWITCH
from spmi_dbg.mch.mclist import compress_ranges
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.expect import expectation_of
from spmi_dbg.repro.failure_locate import FailureLocated, locate_failure, verify_failure
from spmi_dbg.repro.failure_run import reproduces, run_for_failures
from spmi_dbg.repro.isolate import isolate
from spmi_dbg.repro.jitoptions import JitSetting, minimize_settings, split_options
from spmi_dbg.repro.locate import ATTEMPTS, Located, PartitionRun
from spmi_dbg.repro.minimize import ddmin
from spmi_dbg.repro.phase import REPLAY_INPUT_FAILURES, PhaseFailed, phase
from spmi_dbg.repro.result import CompileFailureTarget, ReproOptions, ReproProgress, ReproResult

# Switches that break unconditionally (a debug break kills a replay no debugger is attached to): not in native
# runs of a failure target.
_BREAKS = ("-boe", "-box")
JIT_OUTPUT = "jit-stdout.txt"
# Locate cuts the selection into this many contiguous partitions per worker, replayed in order: a failure at 75%
# of the selection is then found after about 75%/workers of a native replay's time (with one partition per worker,
# every partition before the failure's must be replayed whole: at least 1/workers of it).
CHUNKS_PER_WORKER = 4


def run_failure_phases(opts: ReproOptions, result: ReproResult, work: Path, progress: ReproProgress | None, *,
                       given: Failure | None = None) -> None:
    """`given`: the failure is already known (triage found it): locate is skipped."""
    cmd = _without_breaks(opts.command, result)
    target = opts.failure
    with phase(result, "locate", progress) as ph:
        if given is not None:
            located = FailureLocated(target, [], given, [
                f"given: {given.describe()} (found by the run that called this one)"])
        else:
            chunks = cmd.partitions(max(1, opts.workers) * CHUNKS_PER_WORKER)
            located = locate_failure(cmd, chunks, target, timeout=opts.timeout, workdir=work, workers=opts.workers)
        found = CompileFailureTarget(located)
        result.target = found
        f = located.failure
        ph.detail = "; ".join([f"{len(located.seen)} failure(s) reported in {len(located.runs)} partition(s)"]
                              + ([f"the first {target.describe()}: {f.describe()}"] if f else [])
                              + located.notes)
    if f is None:
        rejected = _input_failure(located)
        if rejected is not None:
            result.outcome, result.exit_code, result.error = "input-error", exits.PIPELINE_INPUT, rejected
            return
        result.outcome, result.exit_code = "no-failure", exits.NO_CRASH
        result.error = located.no_such_failure()
        return
    from spmi_dbg.repro.bundle import out_dir_for

    out = result.out = opts.out or out_dir_for(result)
    mc = f.method_context
    with phase(result, "isolate", progress) as ph:
        result.isolated = isolate(cmd.input, [mc], work / "bundle")
        ph.detail = f"method context {mc} -> {out / result.isolated.mch.name}"
    final = _minimize_options(opts, result, found, cmd, work, progress)
    with phase(result, "verify", progress) as ph:
        v = found.verification = verify_failure(final, result.isolated.mch, f, runs=max(1, opts.verify_runs),
                                                timeout=opts.verify_timeout, workdir=work)
        ph.detail = v.summary()
    if not v.accepted:
        _minimize_records(opts, result, found, final, work, progress)
    numbers = list(result.isolated.numbers)
    _diagnose(opts, result, found, final, numbers, work, progress)
    _jit_output(opts, result, final, work, progress)
    accepted = found.verification is not None and found.verification.accepted
    result.outcome, result.exit_code = ("verified", exits.VERIFIED) if accepted else \
        ("not-verified", exits.NOT_VERIFIED)


def _input_failure(located: FailureLocated) -> str | None:
    """A partition superpmi refused (exit status 255 GeneralFailure, 254 JitFailedToInit:
    docs/superpmi-conventions.md 1.2): an input error, with its first ERROR line, never "no such failure"."""
    for r in located.runs:
        status = r.run.returncode
        if r.started and not r.run.stopped and status in REPLAY_INPUT_FAILURES:
            first = next((line for line in read_lines(r.stderr) if line.startswith("ERROR: ")), None)
            said = f": {first[7:]}" if first else (": superpmi printed no ERROR line (3.1 prints only its header "
                                                   "lines for a -c past the collection's end)")
            return (f"the replay of partition {r.partition.index} (-c {r.partition.spec}) failed with exit status "
                    f"{status} ({REPLAY_INPUT_FAILURES[status]}){said}")
    return None


def _without_breaks(cmd: ReproCommand, result: ReproResult) -> ReproCommand:
    kept = [o for o in cmd.options if not o.lower().startswith(_BREAKS)]
    if len(kept) == len(cmd.options):
        return cmd
    dropped = [o for o in cmd.options if o.lower().startswith(_BREAKS)]
    return dataclasses.replace(cmd, options=tuple(kept), notes=(
        *cmd.notes, f"dropped {' '.join(dropped)}: a debug break kills a replay no debugger is attached to (the "
                    "diagnose phase adds the switch its stop needs)"))


def _minimize_options(opts: ReproOptions, result: ReproResult, found: CompileFailureTarget, cmd: ReproCommand,
                      work: Path, progress: ReproProgress | None) -> ReproCommand:
    """The command with only the JIT settings the failure needs (the whole command when it has none)."""
    split = split_options(cmd.options)
    result.repro_command = cmd
    if not split.settings:
        return cmd
    assert result.isolated is not None
    f = found.failure
    assert f is not None
    mch = result.isolated.mch

    def fails(settings: list[JitSetting]) -> bool:
        trial = dataclasses.replace(cmd, options=split.options(settings))
        _, failures = run_for_failures(trial.native_argv(None, mch), timeout=opts.verify_timeout, workdir=work,
                                       name="minimize-options")
        return reproduces(failures, f.key, 1)

    with phase(result, "minimize-options", progress) as ph:
        m = result.option_minimization = minimize_settings(split.settings, fails)
        ph.detail = f"{m.summary()} ({m.tests} replays)"
    final = dataclasses.replace(cmd, options=split.options(m.needed))
    result.repro_command = final
    return final


def _minimize_records(opts: ReproOptions, result: ReproResult, found: CompileFailureTarget, cmd: ReproCommand,
                      work: Path, progress: ReproProgress | None) -> None:
    """The record alone does not fail: which earlier records of its partition it needs (ddmin), each test a
    native replay of `-c <subset + record>` on the collection."""
    f = found.failure
    assert f is not None
    mc = f.method_context
    run = found.located.run_of(mc)
    earlier = [n for n in run.partition.numbers if n < mc] if run is not None else []
    cache: dict[tuple[int, ...], bool] = {}

    def fails(subset: list[int]) -> bool:
        key = tuple(subset)
        if key not in cache:
            _, failures = run_for_failures(cmd.native_argv(compress_ranges([*subset, mc])), timeout=opts.timeout,
                                           workdir=work, name="minimize")
            cache[key] = reproduces(failures, f.key, mc)
        return cache[key]

    with phase(result, "minimize", progress) as ph:
        if not earlier or not fails(earlier):
            ph.detail = ("the record alone does not show the failure, and nothing earlier in its partition brings "
                         "it back" if earlier else "the record is the first of its partition: nothing earlier")
            return
        kept = ddmin(earlier, fails)
        ph.detail = f"ddmin kept {len(kept)} of {len(earlier)} earlier record(s) in {len(cache)} native replays"
    numbers = [*kept, mc]
    with phase(result, "isolate-minimized", progress) as ph:
        result.isolated = isolate(cmd.input, numbers, work / "bundle")
        ph.detail = f"method contexts {', '.join(map(str, numbers))}"
    with phase(result, "verify-minimized", progress) as ph:
        v = found.verification = verify_failure(cmd, result.isolated.mch, f, runs=max(1, opts.verify_runs),
                                                timeout=opts.verify_timeout, workdir=work,
                                                number_in_repro=len(numbers), label="verify-minimized")
        ph.detail = v.summary()


def _diagnose(opts: ReproOptions, result: ReproResult, found: CompileFailureTarget, cmd: ReproCommand,
              numbers: list[int], work: Path, progress: ReproProgress | None) -> None:
    """The failing compile under the debugger, on the collection with `-c` (the numbers the report names)."""
    f = found.failure
    assert f is not None
    switch = BREAK_SWITCH[f.kind]
    argv = dataclasses.replace(cmd, options=(*cmd.options, switch)).argv(compress_ranges(numbers))
    found_in = found.located.run_of(f.method_context)
    part = Partition(found_in.partition.index if found_in is not None else 1, tuple(numbers))
    run = PartitionRun(part, work / "diagnose.stdout", work / "diagnose.stderr", work / "diagnose.debugger.log")
    located = found.diagnosed = Located([run], method_context=f.method_context,
                                       method_context_source=f"superpmi's own output "
                                                             f"({_line_head(f)})")
    with phase(result, "diagnose", progress) as ph:
        while run.attempts < ATTEMPTS and run.outcome is None:
            run.attempts += 1
            try:
                run.outcome = opts.debugger.run_replay(argv, timeout=opts.verify_timeout, stdout=run.stdout,
                                                       stderr=run.stderr, transcript=run.transcript,
                                                       stop_at_break=True,
                                                       max_passes=0 if f.kind == "error" else None)
            except ToolFailure as e:
                run.failures.append(str(e))
        if run.outcome is None:
            raise PhaseFailed(f"the debugger failed twice: {' / '.join(run.failures)}")
        o = run.outcome
        if o.kind == "fatal":
            located.winner = run
            located.expectation = expectation_of(o)
            ph.detail = f"{switch}: stopped in {', '.join((o.diagnosis.folded if o.diagnosis else [])[:3]) or '?'}"
        else:
            located.notes.append(f"under the debugger with {switch} the replay did not stop ({o.kind}"
                                 + (f", exit status {o.exit_status}" if o.exit_status is not None else "") + ")")
            ph.detail = located.notes[-1]


def _line_head(f: Failure) -> str:
    """The line that gave the method context number (3.1's assert line has none: its failed compile's did)."""
    mc = f.method_context
    if f.kind == "assert" and f"#{mc} " not in f.line:
        return (f"ERROR: ... method {mc} of size {f.il_size} failed to load and compile correctly, paired with the "
                "ISSUE: <ASSERT> line by its IL size")
    return {"assert": f"ISSUE: <ASSERT> #{mc} ...", "error": f"ERROR: ... method {mc} of size ... failed to load "
            "and compile correctly", "missing": f"MISSING: Method context {mc} failed to replay: ..."}[f.kind]


def _jit_output(opts: ReproOptions, result: ReproResult, cmd: ReproCommand, work: Path,
                progress: ReproProgress | None) -> None:
    """The JIT's own output for the repro: JitStdOutFile with JitDump=* (a Checked/Debug JIT's dump) and
    JitDisasm=* (its code, also from a Release JIT of .NET 7 on), on the repro collection."""
    assert result.isolated is not None
    dest = work / JIT_OUTPUT
    dest.unlink(missing_ok=True)
    settings = ("-jitoption", f"JitStdOutFile={dest}", "-jitoption", "JitDump=*", "-jitoption", "JitDisasm=*")
    trial = dataclasses.replace(cmd, options=(*cmd.options, *settings))
    with phase(result, "jit-output", progress) as ph:
        run, _ = run_for_failures(trial.native_argv(None, result.isolated.mch), timeout=opts.verify_timeout,
                                  workdir=work, name="jit-output")
        if dest.is_file() and dest.stat().st_size > 0:
            result.jit_output = dest
            ph.detail = f"{dest.stat().st_size} bytes of JIT output (JitStdOutFile, JitDump=*, JitDisasm=*)"
        else:
            result.jit_output_note = ("the JIT wrote nothing to JitStdOutFile with JitDump=* and JitDisasm=* (a "
                                      "Release JIT has no JitDump; 3.1's Checked JIT writes none under superpmi; "
                                      f"replay {run.describe()})")
            ph.detail = result.jit_output_note

