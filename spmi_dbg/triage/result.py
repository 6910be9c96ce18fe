"""What a triage is asked (TriageOptions) and what it found (TriageResult), and the names of what it
writes: the types the pipeline fills (pipeline.py) and triage.json is made from (triage_data.py),
apart from both."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg import exits
from spmi_dbg.failures.output import ReplayOutput
from spmi_dbg.report.parsed import TriageJson
from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.result import ReproOptions, ReproResult
from spmi_dbg.triage.buckets import Bucket
from spmi_dbg.triage.coverage import Coverage
from spmi_dbg.triage.failure_buckets import FailureBucket
from spmi_dbg.triage.run import TriageRun

BUNDLE_KINDS = ("crash", "assert", "error", "missing")
DEFAULT_BUNDLE_KINDS = frozenset({"crash", "assert"})
PARTITIONS_DIR = "partitions"  # under --out: the plan and every partition's journal and output
PLAN_FILE = "plan.json"  # in PARTITIONS_DIR: written before any replay; what --resume goes on from
# and bucket-*/ (repro bundles)
# members/: the member lists of buckets too long for a line (report/triage.py MEMBERS_DIR)
TRIAGE_FILES = frozenset({"triage.json", "triage.md", "triage.sarif", PARTITIONS_DIR, "members"})


@dataclass
class TriageOptions:
    # command (on the first collection), debugger, workers, timeout, verify runs
    repro: ReproOptions
    out: Path
    max_crashes: int = 1000
    # --failure: which buckets get repro bundles
    bundle_kinds: frozenset[str] = DEFAULT_BUNDLE_KINDS
    # one per collection (default: repro.command)
    commands: list[ReproCommand] = field(default_factory=list)
    scheduler: str | None = None  # a dask scheduler's address
    scheduler_access: Any = None  # cluster.SchedulerAccess: TLS credentials, --insecure-scheduler
    partition_methods: int | None = None
    resume: bool = False
    # every crash under the debugger, even in a storm (no sweep: triage/sweep.py)
    diagnose_all: bool = False

    def __post_init__(self) -> None:
        if not self.commands:
            self.commands = [self.repro.command]


@dataclass
class TriageResult:
    options: TriageOptions
    run: TriageRun
    names: dict[str, str] = field(default_factory=dict)  # collection path -> member prefix
    buckets: list[Bucket] = field(default_factory=list)
    bundles: dict[str, ReproResult] = field(default_factory=dict)  # by bucket key
    failure_buckets: list[FailureBucket] = field(default_factory=list)
    # (collection, number) -> its first IL lines: each bucket's smallest member's
    il_heads: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    failure_bundles: dict[str, ReproResult] = field(default_factory=dict)  # by failure bucket key
    coverage: list[Coverage] = field(default_factory=list)
    seconds: float = 0.0
    replay_seconds: float = 0.0  # the plan and the partitions' replay, from the engine being ready
    # opening the engine (a cluster: importing dask.distributed, connecting)
    engine_seconds: float = 0.0
    exit_code: int = exits.NO_CRASH
    files: list[Path] = field(default_factory=list)
    doc: TriageJson | None = None  # triage.json as written: what the summary prints

    @property
    def outputs(self) -> list[tuple[str, ReplayOutput]]:
        return self.run.outputs
