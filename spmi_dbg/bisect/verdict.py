"""Bisect and recheck, what a build does with the repro (issue 28 item 2), from what superpmi did:

- **bad**: the repro's failure: a crash dying by the same signal whose stop under the debugger is in
  the same bucket (fault site and null map), or the same assert (expression and place) or the same
  failed compile's exception in superpmi's own lines;
- **good**: it replays clean (any exit status superpmi gives a replay that ran: 0, or 2 for diffs);
- **skip**, with the reason: a clean replay by a build that could not have failed so (an assert on
  a JIT without asserts, a setting the JIT does not read: repro/capability.py), a JIT of another
  JIT-EE version (`Jit Compiler has wrong version
  identifier`, exit 254, in 3.1 and today), a JIT that does not load or start (exit 254 without that
  line: `LoadLibrary failed`), missing data only (the collection cannot tell), another failure
  (named by its bucket or key), a build that did not behave the same on every run (flaky), or no
  build.

Each replay is native (`ReproCommand.native_argv`: the recorded environment only); a crash of the
repro's signal is replayed once more under the debugger when the repro knows its bucket."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from spmi_dbg.analysis.signature import in_bucket
from spmi_dbg.driver.base import Driver
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.request import ReplayRequest
from spmi_dbg.errors import ToolFailure
from spmi_dbg.failures.output import Failure, read_lines, read_output, same_key
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.repro.capability import cannot_show
from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.expect import Expectation, bucket_of, signal_of
from spmi_dbg.repro.native import NativeRun, run_native
from spmi_dbg.repro.setup_causes import WRONG_VERSION

VerdictKind = Literal["bad", "good", "skip"]
SkipReason = Literal[
    "jit-ee-version",
    "jit-does-not-load",
    "missing-data",
    "other-failure",
    "flaky",
    "no-build",
    "cannot-show",  # clean, but the build could not have failed so (repro/capability.py)
]


@dataclass(frozen=True)
class Expected(JsonFact):
    """The repro's failure: a crash or hang (its Expectation), or one of superpmi's own failure
    lines by its kind and key (Failure.key). Nothing known yet: no kind."""

    kind: str | None = None  # crash, hang, or the failure line's kind
    signal: str | None = None  # a crash's
    bucket: str | None = None  # a crash's or a hang's
    key: str | None = None  # a failure line's

    def __post_init__(self) -> None:
        if self.kind is not None and self.crash is None and self.key is None:
            raise ValueError(f"a failure of kind {self.kind!r} without its key")

    @property
    def crash(self) -> Expectation | None:
        if self.kind not in ("crash", "hang"):
            return None
        return Expectation("hang" if self.kind == "hang" else "crash", self.signal, self.bucket)

    def describe(self) -> str:
        crash = self.crash
        if crash is not None:
            b = f" in bucket {crash.bucket}" if crash.bucket else ""
            return f"{crash.describe()}{b}"
        return str(self.key)

    def to_json(self) -> dict[str, Any]:
        if self.crash is not None:
            return {"kind": self.kind, "signal": self.signal, "bucket": self.bucket}
        return {"kind": self.kind, "key": self.key}


@dataclass(frozen=True)
class Target:
    """What a build replays: the repro's command (its collection, its options and environment,
    restricted to `compile_list` when given) and which of its JITs the build replaces."""

    command: ReproCommand
    expected: Expected
    varies: int = 0  # the JIT the builds replace: 0 JIT1 (base, or the only one), 1 JIT2 (diff)
    compile_list: str | None = None

    def with_build(self, jit: Path | None = None, superpmi: Path | None = None) -> ReproCommand:
        cmd = self.command
        if jit is not None:
            jits = list(cmd.jits)
            jits[self.varies] = str(jit)
            cmd = replace(cmd, jits=tuple(jits))
        if superpmi is not None:
            cmd = replace(cmd, program=str(superpmi))
        return cmd


@dataclass
class Verdict:
    kind: VerdictKind
    evidence: str  # one line: what superpmi did
    reason: SkipReason | None = None
    bucket: str | None = None  # another failure's bucket or key
    replays: int = 0
    seconds: float = 0.0  # the replays' own time
    runs: list[dict[str, Any]] = field(default_factory=list)
    by: str = ""  # where it was probed: host (pid)

    def to_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "verdict": self.kind,
            "reason": self.reason,
            "evidence": self.evidence,
            "other_failure": self.bucket,
            "replays": self.replays,
            "seconds": round(self.seconds, 4),
        }


def classify_run(
    run: NativeRun, stdout: list[str], stderr: list[str], failures: list[Failure], exp: Expected
) -> Verdict:
    """One native replay's verdict (a crash of the expected signal: "bad", to be confirmed by its
    bucket under the debugger where the repro has one)."""
    status = run.returncode
    if status == 254:
        said = next((x.strip() for x in stderr if WRONG_VERSION in x), None)
        if said is not None:
            return Verdict("skip", f"superpmi said: {said} (exit 254)", "jit-ee-version")
        first = next((x.strip() for x in stderr if x.startswith("ERROR")), "no ERROR line")
        return Verdict(
            "skip",
            f"the JIT did not start (exit 254, JitFailedToInit): {first}",
            "jit-does-not-load",
        )
    crash = exp.crash
    if run.timed_out:
        if crash is not None and crash.kind == "hang":
            return Verdict("bad", f"still running after {run.seconds:.1f} s: a hang")
        return Verdict("skip", "a hang (killed)", "other-failure", "hang")
    if run.signal is not None:
        if crash is not None and crash.kind == "crash" and crash.signal in (None, run.signal):
            return Verdict("bad", f"killed by {run.signal}")
        return Verdict("skip", f"killed by {run.signal}", "other-failure", f"crash-{run.signal}")
    if exp.key is not None:
        same = next((f for f in failures if same_key(f.key, exp.key)), None)
        if same is not None:
            return Verdict("bad", f"superpmi said: {same.line.strip()}")
    other = next((f for f in failures if f.kind != "missing"), None)
    if other is not None:
        return Verdict("skip", f"superpmi said: {other.line.strip()}", "other-failure", other.key)
    if failures:
        return Verdict(
            "skip",
            f"missing data only ({failures[0].message}): the collection cannot tell",
            "missing-data",
        )
    if status is not None and status not in (0, 2):
        first = next((x.strip() for x in stderr if x.startswith("ERROR")), "no ERROR line")
        return Verdict("skip", f"exit status {status}: {first}", "other-failure", f"exit-{status}")
    return Verdict("good", f"replayed clean (exit status {status})")


def probe(
    target: Target,
    *,
    jit: Path | None = None,
    superpmi: Path | None = None,
    runs: int,
    timeout: float,
    workdir: Path,
    debugger: Driver | None,
) -> Verdict:
    """The build's verdict from `runs` native replays (they must agree: else flaky) and, for a crash
    whose bucket the repro knows, one replay under the debugger."""
    cmd = target.with_build(jit, superpmi)
    workdir.mkdir(parents=True, exist_ok=True)
    out, err = workdir / "replay.stdout", workdir / "replay.stderr"
    verdicts: list[Verdict] = []
    seconds = 0.0
    for _ in range(max(1, runs)):
        run = run_native(
            cmd.native_argv(target.compile_list), timeout=timeout, stdout=out, stderr=err
        )
        seconds += run.seconds
        output = read_output(out, err)
        v = classify_run(
            run,
            read_lines(out),
            read_lines(err),
            [*output.failures, *_unclaimed(output.failures, output.failed_compiles)],
            target.expected,
        )
        v.runs.append(run.to_json())
        verdicts.append(v)
    first = verdicts[0]
    result = Verdict(first.kind, first.evidence, first.reason, first.bucket)
    result.replays, result.seconds = len(verdicts), seconds
    result.by = f"{socket.gethostname()} (pid {os.getpid()})"
    result.runs = [r for v in verdicts for r in v.runs]
    if any(
        (v.kind, v.reason, v.bucket) != (first.kind, first.reason, first.bucket) for v in verdicts
    ):
        result.kind, result.reason, result.bucket = "skip", "flaky", None
        result.evidence = "not the same on every run: " + "; ".join(v.evidence for v in verdicts)
        return result
    crash = target.expected.crash
    if result.kind == "bad" and crash is not None and crash.bucket and debugger is not None:
        _confirm(result, cmd, target, crash, debugger, timeout, workdir)
    if result.kind == "good":
        unable = cannot_show(cmd, assert_expected=target.expected.kind == "assert")
        if unable:
            result.kind, result.reason = "skip", "cannot-show"
            result.evidence += "; but " + "; ".join(u.text for u in unable)
    return result


def _unclaimed(failures: list[Failure], failed: list[Failure]) -> list[Failure]:
    """The failed compiles no failure line accounts for (a method context superpmi counted as
    failed without saying why)."""
    seen = {f.method_context for f in failures}
    return [f for f in failed if f.method_context not in seen]


def under_debugger(
    cmd: ReproCommand, compile_list: str | None, debugger: Driver, timeout: float, stem: Path
) -> ReplayOutcome:
    """One replay of the target under the debugger, its files beside `stem` (.stdout, .stderr,
    .log); a debugger that fails raises ToolFailure."""
    return debugger.run_replay(
        ReplayRequest(
            tuple(cmd.argv(compile_list)),
            timeout,
            stdout=stem.with_name(stem.name + ".stdout"),
            stderr=stem.with_name(stem.name + ".stderr"),
            transcript=stem.with_name(stem.name + ".log"),
            env=cmd.replay_env(),
        )
    )


def _confirm(
    result: Verdict,
    cmd: ReproCommand,
    target: Target,
    crash: Expectation,
    debugger: Driver,
    timeout: float,
    workdir: Path,
) -> None:
    """The crash's bucket, from its stop under the debugger: the repro's (bad), or another
    failure."""
    try:
        outcome = under_debugger(cmd, target.compile_list, debugger, timeout, workdir / "debugger")
    except ToolFailure as e:
        result.kind, result.reason = "skip", "other-failure"
        result.evidence += f"; the debugger failed ({e}): its bucket is not established"
        return
    result.replays += 1
    result.seconds += outcome.seconds
    bucket = bucket_of(outcome)
    if crash.matches_outcome(outcome):
        result.evidence += f"; under {debugger.name}: {in_bucket(bucket)}"
        return
    result.kind, result.reason, result.bucket = "skip", "other-failure", bucket
    result.evidence += (
        f"; under {debugger.name}: {signal_of(outcome) or outcome.kind} {in_bucket(bucket)}, "
        f"not {crash.bucket_key}"
    )
