"""What `spmi-dbg repro` is asked (ReproOptions) and what it found (ReproResult, its phases'
records): the types the phases fill (pipeline.py, failure_pipeline.py) and the bundle is written
from (bundle.py, report_data.py, display.py), apart from all of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from spmi_dbg import exits
from spmi_dbg.analysis.facts import Cause, Diagnosis
from spmi_dbg.driver.base import Driver
from spmi_dbg.failures.output import Failure
from spmi_dbg.failures.target import FailureTarget
from spmi_dbg.report.parsed import ReportJson
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.env_experiment import EnvExperiment
from spmi_dbg.repro.failure_locate import FailureLocated, FailureRun, FailureVerification
from spmi_dbg.repro.isolate import Isolated
from spmi_dbg.repro.jitoptions import OptionMinimization
from spmi_dbg.repro.locate import LocateProgress
from spmi_dbg.repro.minimize import Minimization
from spmi_dbg.repro.models import Located, PartitionRun
from spmi_dbg.repro.needs import Needs
from spmi_dbg.repro.regression import Regression
from spmi_dbg.repro.verify import Verification

PhaseName = Literal[
    "locate",
    "isolate",
    "verify",
    "environment",  # the variables of the user's environment the repro needs (env_experiment)
    "verify-environment",
    "minimize",
    "isolate-minimized",
    "verify-minimized",
    "regression",
    "minimize-options",
    "diagnose",
    "diagnose-crash",  # --failure found none, but a replay died: the crash, under the debugger
    "jit-output",
    "needs",
]
PhaseStatus = Literal["running", "ok", "failed"]
Outcome = Literal[
    "running",
    "verified",
    "not-verified",
    "no-crash",
    "no-failure",
    "crashed",  # --failure: none of the kind sought, but superpmi died (the crash is said)
    "input-error",
    "tool-failure",
    "bundle-error",
]
VERIFY_TIMEOUT_CAP = 60.0  # a repro is one or a few method contexts: a hang shows well within this
JIT_OUTPUT_FILE = "jit-stdout.txt"  # in the bundle: the JIT's own output (compile failures)


@dataclass
class ReproOptions:
    command: ReproCommand
    debugger: Driver
    out: Path | None = None
    workers: int = 1
    timeout: float = 1800.0
    verify_runs: int = 3
    # --core: locate is the post-mortem diagnosis of this core file (read by `debugger`)
    core: Path | None = None
    # --redact: home directory, user name and host name replaced in the bundle's files
    redact: bool = False
    debug_dirs: tuple[str, ...] = ()  # --debug-dir: where separate debug files are
    # --failure: a crash, or superpmi's own failure
    failure: FailureTarget = field(default_factory=FailureTarget)
    # --first-found: the first crash in time wins, not the command's first
    first_found: bool = False
    # --needs / --no-needs: what the failure needs (repro/needs.py); auto: asserts and JIT faults
    needs: Literal["auto", "on", "off"] = "auto"

    @property
    def debugger_name(self) -> str:
        return self.debugger.name

    @property
    def verify_timeout(self) -> float:
        return min(self.timeout, VERIFY_TIMEOUT_CAP)

    def nothing_found(self) -> Target:
        """A target of the kind sought, with nothing found (report.json's view of a failed
        locate)."""
        if self.failure.is_crash:
            return CrashTarget(Located([]))
        return CompileFailureTarget(FailureLocated(self.failure, []))


@dataclass
class PhaseRecord:
    name: PhaseName
    status: PhaseStatus = "running"
    seconds: float = 0.0
    detail: str = ""


class ReproProgress(LocateProgress, Protocol):
    def phase_started(self, name: str) -> None: ...

    def phase_finished(self, phase: PhaseRecord) -> None: ...


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _every_partition(runs: list[PartitionRun] | list[FailureRun]) -> tuple[bytes, bytes]:
    """Every partition's output, in order, with a header each."""
    out, err = b"", b""
    for r in runs:
        head = f"==== partition {r.partition.index} (-c {r.partition.spec})\n".encode()
        out += head + _read(r.stdout)
        err += head + _read(r.stderr)
    return out, err


@dataclass
class CrashTarget:
    """A crash (a fatal stop or a hang under the debugger) as the target: where locate found it, and
    the verifications of the record alone and of the repro in the bundle."""

    located: Located
    single: Verification | None = None  # the crashing record alone
    verification: Verification | None = None  # of the repro in the bundle

    jit_output: None = None  # the JIT's own output is taken for a compile failure only

    @property
    def method_context(self) -> int | None:
        return self.located.method_context

    @property
    def under_debugger(self) -> Located | None:
        """The replays that ran under the debugger (the stop, its diagnosis, the transcripts)."""
        return self.located

    @property
    def diagnosis(self) -> Diagnosis | None:
        return self.located.diagnosis

    def describe(self) -> str:
        """What the repro is expected to do (repro.sh's "Expected:" line)."""
        e = self.located.expectation
        return (
            f"{e.describe() if e else 'a failure'}"
            + (f" (bucket {e.bucket})" if e and e.bucket else "")
            + "."
        )

    def bundle_name(self) -> str | None:
        e = self.located.expectation
        if e is None:
            return None
        mc = self.located.method_context or "unknown"
        return f"spmi-repro-{e.bucket}" if e.bucket else f"spmi-repro-{e.kind}-{mc}"

    def replay_output(self) -> tuple[bytes, bytes]:
        """The winning partition's output; without a winner every partition's."""
        w = self.located.winner
        return (
            (_read(w.stdout), _read(w.stderr))
            if w is not None
            else _every_partition(self.located.runs)
        )

    def report_section(self, settings: OptionMinimization | None) -> None:
        """report.json's "target" section: a crash has none (its facts are in "locate" and
        "diagnosis")."""
        return None


@dataclass(frozen=True)
class JitOutput:
    """The JIT's own output for the repro (JitStdOutFile), or why there is none."""

    file: Path | None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.file is not None and self.file.is_file():
            return {"file": JIT_OUTPUT_FILE, "bytes": self.file.stat().st_size}
        return {"file": None, "note": self.note}

    def summary(self) -> str:
        if self.file is not None:
            size = self.file.stat().st_size
            return f"{size} bytes of JIT output (JitStdOutFile, JitDump=*, JitDisasm=*)"
        return self.note or "no JIT output"


@dataclass
class CompileFailureTarget:
    """A compile failure superpmi reports itself (`--failure`) as the target: where the native
    locate found it, the verification of the repro in the bundle, and the diagnose phase's run under
    the debugger."""

    located: FailureLocated
    verification: FailureVerification | None = None  # of the repro in the bundle
    diagnosed: Located | None = None  # the diagnose phase's replay under the debugger
    jit_output: JitOutput | None = None  # the jit-output phase's

    single: None = None  # no verification of the record alone apart from the repro's

    @property
    def failure(self) -> Failure | None:
        return self.located.failure

    @property
    def method_context(self) -> int | None:
        return self.located.failure.method_context if self.located.failure else None

    @property
    def under_debugger(self) -> Located | None:
        return self.diagnosed

    @property
    def diagnosis(self) -> Diagnosis | None:
        return self.diagnosed.diagnosis if self.diagnosed else None

    def describe(self) -> str:
        f = self.located.failure
        return f"superpmi reports {f.describe()}: {f.line}" if f else "a failure."

    def bundle_name(self) -> str | None:
        f = self.located.failure
        return f"spmi-repro-{f.kind}-{f.method_context}" if f else None

    def replay_output(self) -> tuple[bytes, bytes]:
        """The native partition run that reported the failure (else every partition's)."""
        f = self.located.failure
        found_in = self.located.run_of(f.method_context) if f is not None else None
        if found_in is not None:
            return _read(found_in.stdout), _read(found_in.stderr)
        return _every_partition(self.located.runs)

    def report_section(self, settings: OptionMinimization | None) -> dict[str, Any]:
        """report.json's "target" section: the kind sought, the failure superpmi reported, where it
        was found, the JIT settings it needs and those it does not (`settings`), the JIT's own
        output."""
        sought, located, f = self.located.target, self.located, self.located.failure
        return {
            "kind": sought.kind,
            "text": sought.text,
            "describe": sought.describe(),
            "noun": sought.noun(),
            "failure": f.to_json() if f else None,
            "partitions": [r.to_json() for r in located.runs],
            "failures_seen": len(located.seen),
            "notes": list(located.notes),
            "options": settings.to_json() if settings else None,
            "jit_output": (self.jit_output or JitOutput(None)).to_json(),
        }


Target = CrashTarget | CompileFailureTarget  # the target found: one value, whichever kind


# Every file `spmi-dbg repro` writes into a bundle (nothing else may be in a directory it replaces).
BUNDLE_FILES = frozenset(
    {
        "repro.mch",
        "repro.mch.mct",
        "repro.sh",
        "diagnosis.json",
        "report.md",
        "report.json",
        "report.sarif",
        "debugger.log",
        "replay.stdout",
        "replay.stderr",
        JIT_OUTPUT_FILE,
    }
)


@dataclass(frozen=True)
class Bundle:
    """What write_bundle wrote: its files, report.json's data, and the repro as it lives in the
    bundle."""

    files: list[Path]
    report: ReportJson
    # repro.mch and repro.mch.mct in the bundle (None: no repro was isolated)
    isolated: Isolated | None


def bundle_dir_for(given: Path | None, target: Target | None, outcome: str) -> Path:
    """Where a repro's bundle goes: --out, else a name by the target's bucket (a crash) or its kind
    and method context (a compile failure), else by the outcome."""
    name = target.bundle_name() if target is not None else None
    return given or Path(name or f"spmi-repro-{outcome}")


@dataclass
class ReproResult:
    options: ReproOptions
    partitions: list[Partition]
    phases: list[PhaseRecord] = field(default_factory=list)
    target: Target | None = None  # the crash or compile failure found (once locate has run)
    # the repro as isolated (after minimization, if any), in the run's work directory, gone with it;
    # the bundle's copy: bundle.isolated
    isolated: Isolated | None = None
    minimization: Minimization | None = None
    # the variables of the user's environment the repro needs, found by experiment (env_experiment)
    environment_experiment: EnvExperiment | None = None
    regression: Regression | None = None  # the repro with each JIT alone (two JITs only)
    # where the bundle goes: decided once (bundle_dir_for), right after locate found the target,
    # else at the end by the outcome
    out: Path | None = None
    outcome: Outcome = "running"
    exit_code: int = exits.NOT_VERIFIED
    # the phase that could not do its work (report.json "failed_phase")
    error_phase: str | None = None
    error: str | None = None  # why, or why there is no target (report.json "failure")
    error_traceback: str | None = None  # a bug of ours (report.json "failure_traceback")
    bundle_error: str | None = None
    bundle: Bundle | None = None  # what the bundle holds, once it is written
    seconds: float = 0.0
    option_minimization: OptionMinimization | None = None
    # the command repro.sh runs (only the JIT settings needed)
    repro_command: ReproCommand | None = None
    needs: Needs | None = None  # what the failure needs: the JIT's switches tried one by one
    # causes in the setup the pipeline established (repro/setup_causes.py); the stop's own are in
    # the diagnosis
    causes: list[Cause] = field(default_factory=list)

    def bundle_dir(self) -> Path:
        """Where the bundle goes, as the pipeline decided it (bundle_dir_for)."""
        assert self.out is not None, "the bundle directory is decided after locate (pipeline)"
        return self.out

    @property
    def method_contexts(self) -> list[int]:
        if self.isolated is not None:
            return list(self.isolated.numbers)
        located = self.target.under_debugger if self.target else None
        mc = located.method_context if located else None
        return [mc] if mc else []

    def target_section(self) -> dict[str, Any] | None:
        """report.json's "target": the target's own section; before locate found one, that of a
        target of the kind sought with nothing found."""
        target = self.target if self.target is not None else self.options.nothing_found()
        return target.report_section(self.option_minimization)
