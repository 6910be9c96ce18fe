"""triage.json's envelope and parts as types (JsonFacts): what triage.md, the summary and the SARIF
log read, by attribute. A field added later has a default (a triage.json of before still reads);
parts whose shape is open (a diagnosis carried as JSON, each partition's segment) stay data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spmi_dbg.failures.output import Failure
from spmi_dbg.jsonfacts import JsonFact

Open = dict[str, Any]


@dataclass(frozen=True)
class TriageCommand(JsonFact):
    program: str
    jits: list[str]
    input: str
    argv: list[str]
    options: list[str] = field(default_factory=list)
    method_contexts: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TriageCollection(JsonFact):
    collection: str
    path: str
    method_contexts: int = 0
    argv: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Engine(JsonFact):
    name: str
    workers: int
    partitions: int = 0
    scheduler: str | None = None
    dashboard: str | None = None
    resumed_partitions: list[int] = field(default_factory=list)
    resubmitted: list[Open] = field(default_factory=list)
    task_failures: list[Open] = field(default_factory=list)
    bundle_workers: list[Open] = field(default_factory=list)


@dataclass(frozen=True)
class Reason(JsonFact):
    reason: str
    count: int


@dataclass(frozen=True)
class Coverage(JsonFact):
    """One collection: every method context once, in one of four columns."""

    collection: str
    method_contexts: int
    replayed_clean: int
    crashed: int
    failed_compile: int
    not_reached: int
    path: str | None = None
    partitions: int = 0
    not_diagnosed: int = 0
    not_reached_reasons: list[Reason] = field(default_factory=list)
    not_reached_lists: list[Open] = field(default_factory=list)
    worker_killers: Any = None


@dataclass(frozen=True)
class Member(JsonFact):
    member: str
    method_context: int
    collection: str = ""
    name: str | None = None
    il_size: int | None = None
    il_head: list[str] = field(default_factory=list)  # a smallest member's first IL lines


@dataclass(frozen=True)
class BucketRepro(JsonFact):
    """A bucket's repro bundle (spmi-dbg repro run on its smallest member)."""

    bundle: str
    outcome: str
    exit_code: int = 0
    method_contexts: list[int] = field(default_factory=list)
    rate: float | None = None
    summary: str | None = None
    command: str | None = None


@dataclass(frozen=True)
class Grouped(JsonFact):
    """Members of one kind of thing (a bucket, a storm's undiagnosed crashes, a stop passed on)."""

    bucket: str
    count: int
    method_contexts: list[Any]


@dataclass(frozen=True)
class CrashBucket(Grouped):
    kind: str = "crash"
    title: str = ""
    signal: str | None = None
    signature: Any = None
    members: list[Member] = field(default_factory=list)
    smallest: Member | None = None
    null_map: Open | None = None
    jit: Open | None = None
    faulting_module: Open | None = None
    known_bugs: list[Open] = field(default_factory=list)
    diagnosis: Open | None = None
    repro: BucketRepro | None = None


@dataclass(frozen=True)
class FailureBucket(Grouped):
    kind: str = "assert"
    key: str = ""
    title: str = ""
    members: list[Member] = field(default_factory=list)
    smallest: Member | None = None
    failure: Failure | None = None
    jit_settings: str | None = None
    repro: BucketRepro | None = None


@dataclass(frozen=True)
class NotDiagnosed(Grouped):
    storm_bucket: str = ""
    signal: str = ""
    reason: str = "storm"


@dataclass(frozen=True)
class KeyGroup(JsonFact):
    """Stops passed on, or what superpmi reported itself, by key."""

    key: str
    count: int
    method_contexts: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class ReportedBySuperpmi(JsonFact):
    asserts: list[KeyGroup] = field(default_factory=list)
    missing: list[KeyGroup] = field(default_factory=list)
    failed_compiles: list[KeyGroup] = field(default_factory=list)

    def kinds(self) -> list[tuple[str, list[KeyGroup]]]:
        return [
            ("asserts", self.asserts),
            ("missing", self.missing),
            ("failed_compiles", self.failed_compiles),
        ]


@dataclass(frozen=True)
class ToolFailure(JsonFact):
    partition: int
    compile: str
    failures: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class InputFailure(JsonFact):
    exit_status: int
    name: str


@dataclass(frozen=True)
class TriageCause(JsonFact):
    kind: str
    advice: str
    crashes: int = 0
    buckets: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TriageDoc(JsonFact):
    """triage.json as the renderers read it."""

    exit_code: int
    command: TriageCommand
    engine: Engine
    schema: int = 0
    tool: str = ""
    seconds: float = 0.0
    replay_seconds: float = 0.0
    engine_seconds: float = 0.0
    collections: list[TriageCollection] = field(default_factory=list)
    debugger: str | None = None
    workers: int = 0
    max_crashes: int | None = None
    stopped_at_max_crashes: bool = False
    coverage: list[Coverage] = field(default_factory=list)
    crashes: list[Open] = field(default_factory=list)
    not_diagnosed: list[NotDiagnosed] = field(default_factory=list)
    buckets: list[CrashBucket] = field(default_factory=list)
    bundle_kinds: list[str] = field(default_factory=list)
    failure_buckets: list[FailureBucket] = field(default_factory=list)
    segments: list[Open] = field(default_factory=list)
    first_chance: list[KeyGroup] = field(default_factory=list)
    reported_by_superpmi: ReportedBySuperpmi = field(default_factory=ReportedBySuperpmi)
    replay_input_errors: list[InputFailure] = field(default_factory=list)
    tool_failures: list[ToolFailure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    causes: list[TriageCause] = field(default_factory=list)
    found: Open | None = None
