"""`spmi-dbg triage`: replay the whole selection past every crash (run.py), bucket the crashes (buckets.py) and
the failures superpmi reported itself (failure_buckets.py: asserts, failed compiles, missing data), build one
verified repro bundle per bucket of the chosen kinds from its smallest member (the repro pipeline from isolate
on), and write triage.json + triage.md (report/triage.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from spmi_dbg import exits
from spmi_dbg.failures.output import ReplayOutput, read_output
from spmi_dbg.failures.target import FailureTarget
from spmi_dbg.outdir import check_out_dir, locked
from spmi_dbg.repro.pipeline import ReproOptions, ReproResult, run_repro
from spmi_dbg.tempfiles import temp_dir
from spmi_dbg.triage.buckets import Bucket, bucket_crashes
from spmi_dbg.triage.failure_buckets import FailureBucket, bucket_failures
from spmi_dbg.triage.run import TriageProgress, TriageRun, triage

BUNDLE_KINDS = ("crash", "assert", "error", "missing")
DEFAULT_BUNDLE_KINDS = frozenset({"crash", "assert"})


@dataclass
class TriageOptions:
    repro: ReproOptions  # command, debugger, workers, timeout, verify runs
    out: Path
    max_crashes: int = 1000
    bundle_kinds: frozenset[str] = DEFAULT_BUNDLE_KINDS  # --failure: which buckets get repro bundles


@dataclass
class TriageResult:
    options: TriageOptions
    run: TriageRun
    buckets: list[Bucket] = field(default_factory=list)
    bundles: dict[str, ReproResult] = field(default_factory=dict)  # by bucket key
    outputs: list[ReplayOutput] = field(default_factory=list)  # each segment's output, parsed for failures
    failure_buckets: list[FailureBucket] = field(default_factory=list)
    failure_bundles: dict[str, ReproResult] = field(default_factory=dict)  # by failure bucket key
    seconds: float = 0.0
    replay_seconds: float = 0.0
    exit_code: int = exits.NO_CRASH
    files: list[Path] = field(default_factory=list)


def run_triage(opts: TriageOptions, progress: TriageProgress | None = None) -> TriageResult:
    from spmi_dbg.triage.triage_data import TRIAGE_FILES, write_triage

    start = time.monotonic()
    r = opts.repro
    partitions = r.command.partitions(r.workers)
    check_out_dir(opts.out, ours=TRIAGE_FILES, subdirs="bucket-")  # before any replay
    with temp_dir("triage") as tmp, locked(opts.out):
        opts.out.mkdir(parents=True, exist_ok=True)
        work = Path(tmp)
        found = triage(r.command, partitions, r.debugger, timeout=r.timeout, workdir=work,
                       max_crashes=opts.max_crashes, progress=progress)
        result = TriageResult(opts, found, replay_seconds=time.monotonic() - start)
        result.buckets = bucket_crashes(found.crashes, r.command.input)
        result.outputs = [read_output(seg.stdout, seg.stderr) for seg in found.segments]  # read once, used twice
        result.failure_buckets = bucket_failures(result.outputs, r.command.input)

        def bundle_options(key: str, failure: FailureTarget) -> ReproOptions:
            return ReproOptions(command=r.command, debugger=r.debugger, out=opts.out / f"bucket-{key}",
                                workers=r.workers, timeout=r.timeout, verify_runs=r.verify_runs, redact=r.redact,
                                debug_dirs=r.debug_dirs, failure=failure)

        if "crash" in opts.bundle_kinds:
            for b in result.buckets:
                result.bundles[b.key] = run_repro(bundle_options(b.key, FailureTarget()),
                                                  located=b.smallest.crash.located)
        for fb in result.failure_buckets:
            if fb.kind in opts.bundle_kinds:
                target = FailureTarget(fb.kind)
                result.failure_bundles[fb.key] = run_repro(bundle_options(fb.key, target),
                                                           failure=fb.smallest.failure)
        bundles = [*result.bundles.values(), *result.failure_bundles.values()]
        if bundles:
            ok = all(x.exit_code == exits.VERIFIED for x in bundles)
            result.exit_code = exits.VERIFIED if ok else exits.NOT_VERIFIED
        elif result.buckets:
            result.exit_code = exits.VERIFIED  # crashes found and bucketed; no bundle was asked for
        elif found.tool_failures:
            result.exit_code = exits.TOOL_FAILURE
        result.seconds = time.monotonic() - start
        result.files = write_triage(result, work)
    return result
