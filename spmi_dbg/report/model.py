"""report.json's envelope and parts as types (JsonFacts): what the renderers read, by attribute.
Each part holds the fields report.json has had; a field added later has a default, so that a
report.json of an earlier schema is still read (what it lacks takes its default). Parts whose
shape is really open (a log's recorded failures, the machine's configuration, each partition's
run) stay `dict[str, Any]`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spmi_dbg.analysis.stacks import ThreadStack
from spmi_dbg.failures.output import Failure
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.report.method_part import MethodPart

Open = dict[str, Any]


@dataclass(frozen=True)
class EnvVar(JsonFact):
    name: str
    value: str


@dataclass(frozen=True)
class CommandPart(JsonFact):
    """The user's command as the run read it."""

    program: str
    jits: list[str]
    input: str
    options: list[str] = field(default_factory=list)
    selection: str | None = None
    method_contexts: int | None = None
    notes: list[str] = field(default_factory=list)
    from_log: Open | None = None
    emulator: list[str] = field(default_factory=list)
    environment: list[EnvVar] = field(default_factory=list)
    repro_environment: list[EnvVar] = field(default_factory=list)

    @property
    def asm_diffs(self) -> bool:
        """Two JITs and an -a option: superpmi compares their code."""
        return len(self.jits) > 1 and any(o.lower().startswith("-a") for o in self.options)


@dataclass(frozen=True)
class PhasePart(JsonFact):
    name: str
    status: str = ""
    seconds: float = 0.0
    detail: str = ""


@dataclass(frozen=True)
class ExpectedStop(JsonFact):
    """How the crash was expected to end (the locate's expectation, the verification's)."""

    kind: str = "crash"
    signal: str | None = None
    bucket: str | None = None


@dataclass(frozen=True)
class LocatePart(JsonFact):
    """The crash's partitions under the debugger: which one won, the number and how it was
    found."""

    workers: int = 0
    timeout: float = 0.0
    partitions: list[Open] = field(default_factory=list)
    winner: int | None = None
    method_context: int | None = None
    method_context_source: str | None = None
    method_context_rejected: Any = None
    expected: ExpectedStop | None = None
    bisection: Any = None
    notes: list[str] = field(default_factory=list)
    first_found: str | None = None
    stops_passed_total: int = 0
    stops_passed: list[Open] = field(default_factory=list)
    hang_threads: list[ThreadStack] = field(default_factory=list)

    @property
    def hang(self) -> bool:
        return self.expected is not None and self.expected.kind == "hang"


@dataclass(frozen=True)
class ReproPart(JsonFact):
    """The repro collection in the bundle."""

    file: str = "repro.mch"
    index: str = "repro.mch.mct"
    records: int = 0
    method_contexts: list[int] = field(default_factory=list)
    bytes: int = 0


@dataclass(frozen=True)
class VerificationPart(JsonFact):
    expected: ExpectedStop = field(default_factory=ExpectedStop)
    native_runs: list[Open] = field(default_factory=list)
    debugger_run: Open | None = None
    debugger_failures: Any = None
    reproduced: int = 0
    runs: int = 0
    rate: float = 0.0
    accepted: bool = False
    notes: list[str] = field(default_factory=list)
    summary: str = ""


@dataclass(frozen=True)
class MinimizationPart(JsonFact):
    method_contexts: list[int] = field(default_factory=list)
    candidates: int = 0
    tests: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SettingsPart(JsonFact):
    """The JIT settings given and those the failure needs (a minimization's answer)."""

    given: list[str] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    tests: int = 0
    seconds: float = 0.0
    summary: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SwitchPart(JsonFact):
    option: str
    value: str
    turns_off: str = ""
    outcome: str = ""


@dataclass(frozen=True)
class NeedsPart(JsonFact):
    jit: str | None = None
    needs: list[SwitchPart] = field(default_factory=list)
    summary: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SummaryPart(JsonFact):
    """A part the renderers read only the summary of (the environment experiment)."""

    summary: str = ""


@dataclass(frozen=True)
class JitOutputPart(JsonFact):
    file: str | None = None
    bytes: int | None = None
    note: str | None = None


@dataclass(frozen=True)
class TargetPart(JsonFact):
    """A compile failure sought (`repro --failure`): the kind, what superpmi reported, where."""

    kind: str
    describe: str = ""
    text: str | None = None
    noun: str | None = None
    failure: Failure | None = None
    partitions: list[Open] = field(default_factory=list)
    failures_seen: int = 0
    notes: list[str] = field(default_factory=list)
    options: SettingsPart | None = None
    jit_output: JitOutputPart | None = None


@dataclass(frozen=True)
class JitAlonePart(JsonFact):
    role: str
    path: str | None = None
    settings: list[str] | None = None
    settings_of: str | None = None
    argv: list[str] | None = None
    runs: list[str] = field(default_factory=list)
    crashes: bool = False


@dataclass(frozen=True)
class Reproduction(JsonFact):
    attachment: str | None
    command: str
    steps: list[str]


@dataclass(frozen=True)
class FactLine(JsonFact):
    label: str
    text: str


@dataclass(frozen=True)
class Actual(JsonFact):
    """What happened: the stop's facts as data, and in words (`facts`)."""

    signal: str | None = None
    fault_address: int | None = None
    near_null: bool | None = None
    signal_source: str | None = None
    hang: bool = False
    handling: Open | None = None
    instruction: Open | None = None
    null_map: Open | None = None
    jit: Open | None = None
    faulting_module: Open | None = None
    assertion: Open | None = None
    signature: Any = None
    bucket: str | None = None
    backtrace: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    facts: list[FactLine] = field(default_factory=list)


@dataclass(frozen=True)
class RangeCommit(JsonFact):
    commit: str
    subject: str | None = None
    pr: int | None = None


@dataclass(frozen=True)
class BisectAnswer(JsonFact):
    """spmi-dbg bisect's answer on the bundle (spmi_dbg/bisect/output.py writes it)."""

    answer: str
    exact: bool = False
    first_bad: Any = None
    last_good: Any = None
    range_commits: list[RangeCommit] = field(default_factory=list)
    builds: int = 0
    tried: int = 0
    source: str | None = None
    range: list[str] | None = None

    def where(self) -> str:
        """Which search it is: its builds' source and range (an answer of before: unnamed)."""
        if not self.source:
            return "an earlier bisection"
        first, last = self.range or ["?", "?"]
        return f"`{self.source}`, {first[:12]}..{last[:12]}"


@dataclass(frozen=True)
class RegressionWords(JsonFact):
    """Regression? answered by experiment (each JIT alone) or not, and bisect's answers."""

    answered: bool
    conclusion: str
    base_jit: JitAlonePart | None = None
    diff_jit: JitAlonePart | None = None
    base_jit_with_diff_settings: JitAlonePart | None = None
    diff_jit_with_base_settings: JitAlonePart | None = None
    bisect: BisectAnswer | None = None
    bisects: list[BisectAnswer] = field(default_factory=list)

    def runs(self) -> list[JitAlonePart]:
        """The experiment's runs, in the order the report lists them."""
        each = (
            self.base_jit,
            self.diff_jit,
            self.base_jit_with_diff_settings,
            self.diff_jit_with_base_settings,
        )
        return [r for r in each if r is not None]


@dataclass(frozen=True)
class VerificationWords(JsonFact):
    rate: float
    runs: int
    reproduced: int
    accepted: bool


@dataclass(frozen=True)
class Other(JsonFact):
    verification: VerificationWords | None = None
    how_found: list[str] = field(default_factory=list)
    minimization: MinimizationPart | None = None
    notes: list[str] = field(default_factory=list)
    phases: list[PhasePart] = field(default_factory=list)


@dataclass(frozen=True)
class Symbols(JsonFact):
    found: bool = False
    where: str | None = None
    how: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class BinaryIdentity(JsonFact):
    """A binary of the run (or the collection): where, how big, when, which build."""

    role: str
    path: str | None = None
    error: str | None = None
    size: int = 0
    mtime: str = ""
    build_id: str | None = None
    machine: str | None = None
    symbols: Symbols | None = None

    def text(self) -> str:
        if not self.path:
            return f"{self.role}: (none)"
        if self.error:
            return f"{self.role}: `{self.path}` ({self.error})"
        build = f", build-id {self.build_id}" if self.build_id else ""
        sym = ""
        if self.symbols is not None:
            where = self.symbols.where
            sym = (
                "; symbols "
                + (where if where == "in the binary" else f"from `{where}` ({self.symbols.how})")
                if self.symbols.found
                else f"; no symbols: {self.symbols.note}"
            )
        return (
            f"{self.role}: `{self.path}` ({self.size:,} bytes, modified {self.mtime}{build}{sym})"
        )


@dataclass(frozen=True)
class DebuggerIdentity(JsonFact):
    name: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class EmulatorIdentity(JsonFact):
    command: str
    version: str | None = None


@dataclass(frozen=True)
class Configuration(JsonFact):
    """The bug template's configuration: the machine, the target, the binaries' identities."""

    os: str
    kernel: str
    host_arch: str
    target: str
    superpmi: BinaryIdentity
    collection: BinaryIdentity
    debugger: DebuggerIdentity
    spmi_dbg: str
    python: str = ""
    jits: list[BinaryIdentity] = field(default_factory=list)
    emulator: EmulatorIdentity | None = None


@dataclass(frozen=True)
class IssueSection(JsonFact):
    """The words for dotnet/runtime's bug template (spmi_dbg.report.issue writes them)."""

    description: str
    reproduction: Reproduction
    expected: str
    actual: Actual
    regression: RegressionWords
    workarounds: list[str]
    configuration: Configuration
    other: Other


@dataclass(frozen=True)
class ReportDoc(JsonFact):
    """report.json as the renderers read it (its diagnosis, known bugs and causes: ReportJson's
    facts, read by the analysis' own types)."""

    outcome: str
    exit_code: int
    command: CommandPart
    schema: int = 0
    tool: str = ""
    failed_phase: str | None = None
    failure: str | None = None
    failure_traceback: str | None = None
    seconds: float = 0.0
    debugger: str | None = None
    phases: list[PhasePart] = field(default_factory=list)
    locate: LocatePart | None = None
    repro: ReproPart | None = None
    repro_command: str | None = None
    repro_argv: list[str] | None = None
    verification_single_record: Open | None = None
    minimization: MinimizationPart | None = None
    environment_experiment: SummaryPart | None = None
    verification: VerificationPart | None = None
    target: TargetPart | None = None
    jit_settings: SettingsPart | None = None
    regression: Open | None = None
    needs: NeedsPart | None = None
    method: MethodPart | None = None  # the failing method as the JIT saw it
    bundle: str = ""
    files: list[str] = field(default_factory=list)
    title: str = ""
    issue: IssueSection | None = None  # None only while the words are being written

    @property
    def winner(self) -> bool:
        """A partition stopped where the crash is (the locate found it)."""
        return self.locate is not None and self.locate.winner is not None

    @property
    def failure_found(self) -> Failure | None:
        return self.target.failure if self.target is not None else None

    @property
    def expected_stop(self) -> ExpectedStop:
        expected = self.locate.expected if self.locate is not None else None
        return expected or ExpectedStop(kind="")

    @property
    def settings(self) -> SettingsPart | None:
        """The JIT settings the failure needs: a compile failure's target's, a crash's
        experiment's."""
        own = self.target.options if self.target is not None else None
        return own or self.jit_settings

    @property
    def words(self) -> IssueSection:
        assert self.issue is not None, "report.json without its issue section"
        return self.issue
