"""What `spmi-dbg repro` is asked (ReproOptions) and what it found (ReproResult, its phases' records): the types
the phases fill (pipeline.py, failure_pipeline.py) and the bundle is written from (bundle.py, report_data.py,
report_failure.py, display.py), apart from all of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from spmi_dbg import exits
from spmi_dbg.driver.base import Driver
from spmi_dbg.failures.target import FailureTarget
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.failure_locate import FailureLocated, FailureVerification
from spmi_dbg.repro.isolate import Isolated
from spmi_dbg.repro.jitoptions import OptionMinimization
from spmi_dbg.repro.locate import Located, LocateProgress
from spmi_dbg.repro.minimize import Minimization
from spmi_dbg.repro.regression import Regression
from spmi_dbg.repro.verify import Verification

PhaseName = Literal["locate", "isolate", "verify", "minimize", "isolate-minimized", "verify-minimized",
                    "regression", "minimize-options", "diagnose", "jit-output"]
PhaseStatus = Literal["running", "ok", "failed"]
Outcome = Literal["running", "verified", "not-verified", "no-crash", "no-failure", "input-error", "tool-failure",
                  "bundle-error"]
VERIFY_TIMEOUT_CAP = 60.0  # a repro is one or a few method contexts: a hang shows well within this


@dataclass
class ReproOptions:
    command: ReproCommand
    debugger: Driver
    out: Path | None = None
    workers: int = 1
    timeout: float = 1800.0
    verify_runs: int = 3
    core: Path | None = None  # --core: locate is the post-mortem diagnosis of this core file (read by `debugger`)
    redact: bool = False  # --redact: home directory, user name and host name replaced in the bundle's files
    debug_dirs: tuple[str, ...] = ()  # --debug-dir: where separate debug files are
    failure: FailureTarget = field(default_factory=FailureTarget)  # --failure: a crash, or superpmi's own failure

    @property
    def debugger_name(self) -> str:
        return self.debugger.name

    @property
    def verify_timeout(self) -> float:
        return min(self.timeout, VERIFY_TIMEOUT_CAP)


@dataclass
class PhaseRecord:
    name: PhaseName
    status: PhaseStatus = "running"
    seconds: float = 0.0
    detail: str = ""


class ReproProgress(LocateProgress, Protocol):
    def phase_started(self, name: str) -> None: ...

    def phase_finished(self, phase: PhaseRecord) -> None: ...


@dataclass
class ReproResult:
    options: ReproOptions
    partitions: list[Partition]
    phases: list[PhaseRecord] = field(default_factory=list)
    located: Located | None = None
    isolated: Isolated | None = None  # the repro in the bundle (after minimization, if any)
    single: Verification | None = None  # the crashing record alone
    minimization: Minimization | None = None
    verification: Verification | None = None  # of the repro in the bundle
    regression: Regression | None = None  # the repro with each JIT alone (two JITs only)
    out: Path | None = None
    files: list[Path] = field(default_factory=list)
    outcome: Outcome = "running"
    exit_code: int = exits.NOT_VERIFIED
    failed_phase: str | None = None
    failure: str | None = None
    failure_traceback: str | None = None
    bundle_error: str | None = None
    report: dict[str, Any] | None = None  # report.json's data, once the bundle is written
    seconds: float = 0.0
    # --failure (a compile failure superpmi reports itself): spmi_dbg.repro.failure_pipeline
    failure_located: FailureLocated | None = None
    failure_verification: FailureVerification | None = None
    option_minimization: OptionMinimization | None = None
    repro_command: ReproCommand | None = None  # the command repro.sh runs (only the JIT settings needed)
    jit_output: Path | None = None  # the JIT's own output for the repro (JitStdOutFile)
    jit_output_note: str | None = None  # why there is none

    @property
    def method_contexts(self) -> list[int]:
        if self.isolated is not None:
            return list(self.isolated.numbers)
        mc = self.located.method_context if self.located else None
        return [mc] if mc else []
