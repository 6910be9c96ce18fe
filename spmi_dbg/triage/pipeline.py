"""`spmi-dbg triage`: replay every partition of every collection past every crash (run.py, on this
machine or a dask cluster), bucket the crashes (buckets.py) and the failures superpmi reported
itself (failure_buckets.py: asserts, failed compiles, missing data) across collections, account for
every method context (coverage.py), build one verified repro bundle per bucket of the chosen kinds
from its smallest member (the repro pipeline from isolate on), and write triage.json + triage.md
(report/triage.py)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path

from spmi_dbg import exits
from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.errors import InputError, UsageError
from spmi_dbg.failures.target import FailureTarget
from spmi_dbg.outdir import check_out_dir, locked
from spmi_dbg.repro.capability import cannot_show
from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.result import ReproOptions, ReproResult
from spmi_dbg.triage.buckets import bucket_crashes
from spmi_dbg.triage.cluster import DaskEngine
from spmi_dbg.triage.coverage import coverage
from spmi_dbg.triage.engine import BundleJob, Engine, LocalEngine
from spmi_dbg.triage.failure_buckets import bucket_failures, failed_members
from spmi_dbg.triage.method_facts import read_il_heads, read_method_facts
from spmi_dbg.triage.plan import (
    TriagePartition,
    check_resumable,
    command_for,
    member_names,
    plan_json,
    plan_partitions,
)
from spmi_dbg.triage.result import (
    BUNDLE_KINDS,
    PARTITIONS_DIR,
    PLAN_FILE,
    TRIAGE_FILES,
    TriageOptions,
    TriageResult,
)
from spmi_dbg.triage.run import TriageProgress, replay_partitions
from spmi_dbg.triage.task import TaskSettings
from spmi_dbg.triage.triage_data import write_triage

__all__ = [
    "BUNDLE_KINDS",
    "TriageOptions",
    "TriageResult",
    "open_engine",
    "run_triage",
    "with_collections",
]


def open_engine(opts: TriageOptions) -> Engine:
    if opts.scheduler is None:
        return LocalEngine(opts.repro.workers)
    return DaskEngine(opts.scheduler, access=opts.scheduler_access)


def run_triage(
    opts: TriageOptions, progress: TriageProgress | None = None, engine: Engine | None = None
) -> TriageResult:
    start = time.monotonic()
    r = opts.repro
    check_out_dir(opts.out, ours=TRIAGE_FILES, subdirs="bucket-")  # before any replay
    names = member_names([c.input for c in opts.commands])
    commands = {c.input: c for c in opts.commands}
    if opts.resume and not (opts.out / PARTITIONS_DIR / PLAN_FILE).is_file():
        raise InputError(
            str(opts.out), f"--resume: no triage to resume here (no {PARTITIONS_DIR}/{PLAN_FILE})"
        )
    with locked(opts.out):
        opts.out.mkdir(parents=True, exist_ok=True)
        directory = (opts.out / PARTITIONS_DIR).absolute()  # as the workers see it (a shared path)
        engine = engine or open_engine(opts)
        ready = time.monotonic()
        try:
            partitions = _plan(opts, directory, engine.workers)
            found = replay_partitions(
                commands,
                partitions,
                directory,
                engine=engine,
                settings=TaskSettings(r.debugger, r.timeout, opts.max_crashes, opts.diagnose_all),
                progress=progress,
                names=names,
            )
            result = TriageResult(
                opts,
                found,
                names,
                replay_seconds=time.monotonic() - ready,
                engine_seconds=ready - start,
            )
            # the one step that reads the collections; the grouping reads only facts
            facts = read_method_facts(
                [*((c.collection, c.number) for c in found.crashes), *failed_members(found.outputs)]
            )
            result.buckets = bucket_crashes(found.crashes, facts)
            result.failure_buckets = bucket_failures(found.outputs, names, facts)
            result.il_heads = read_il_heads(
                [
                    *((b.smallest.crash.collection, b.smallest.number) for b in result.buckets),
                    *((f.smallest.collection, f.smallest.number) for f in result.failure_buckets),
                ]
            )
            result.coverage = coverage(found.journals, names)
            if not result.buckets and not result.failure_buckets:
                found.notes += _unread_settings(list(commands.values()), opts)
            built = engine.run_bundles(_bundle_jobs(opts, result, commands), found.engine)
        finally:
            engine.close()
        _take_bundles(result, built)
        result.seconds = time.monotonic() - start
        # the journals and transcripts name paths, the user and the host: working state only
        if r.redact:
            found.notes.append(
                f"--redact: {PARTITIONS_DIR}/ (the partitions' journals, output and debugger "
                "transcripts) was removed once the triage was complete"
            )
        result.files, result.doc = write_triage(result)
        if r.redact:
            shutil.rmtree(directory, ignore_errors=True)
    return result


def _unread_settings(commands: list[ReproCommand], opts: TriageOptions) -> list[str]:
    """Beside a triage that found nothing: what its JITs could not show (a setting they never read,
    an assert sought from a JIT without asserts), once each."""
    assert_sought = opts.repro.failure.kind == "assert"
    seen: dict[str, None] = {}
    for cmd in commands:
        for u in cannot_show(cmd, assert_expected=assert_sought):
            seen.setdefault(u.text, None)
    return list(seen)


def _take_bundles(result: TriageResult, built: dict[str, ReproResult]) -> None:
    """The buckets' bundles, and the exit status they make: 0 when every bundle verified (or when
    crashes were bucketed and no bundle was asked for)."""
    result.bundles = {b.key: built[b.key] for b in result.buckets if b.key in built}
    result.failure_bundles = {b.key: built[b.key] for b in result.failure_buckets if b.key in built}
    bundles = [*result.bundles.values(), *result.failure_bundles.values()]
    if bundles:
        ok = all(x.exit_code == exits.VERIFIED for x in bundles)
        result.exit_code = exits.VERIFIED if ok else exits.NOT_VERIFIED
    elif result.buckets:
        result.exit_code = exits.VERIFIED  # crashes found and bucketed; no bundle was asked for
    elif result.run.tool_failures:
        result.exit_code = exits.TOOL_FAILURE
    if result.run.engine.system_stops or any(x.exit_code == exits.INCOMPLETE for x in bundles):
        # a partition's task or a bundle the system stopped (a full disk for a moment): its method
        # contexts after that point were never replayed, or the bundle not written; the journals
        # make a resume exact, and it makes the bundles again
        result.exit_code = exits.INCOMPLETE


def _bundle_jobs(
    opts: TriageOptions, result: TriageResult, commands: dict[str, ReproCommand]
) -> list[BundleJob]:
    """A repro bundle for each bucket of the --failure kinds, from its smallest member, on that
    member's collection."""

    def options(key: str, failure: FailureTarget, collection: str) -> ReproOptions:
        # every option of the triage's, but the member's collection, its own bundle and target; no
        # --core (a bundle replays its member afresh)
        return dataclasses.replace(
            opts.repro,
            command=commands[collection],
            out=opts.out / f"bucket-{key}",
            failure=failure,
            core=None,
        )

    jobs: list[BundleJob] = []
    if "crash" in opts.bundle_kinds:
        for b in result.buckets:
            small = b.smallest.crash
            jobs.append(
                BundleJob(
                    b.key, options(b.key, FailureTarget(), small.collection), located=small.located
                )
            )
    for fb in result.failure_buckets:
        if fb.kind in opts.bundle_kinds:
            jobs.append(
                BundleJob(
                    fb.key,
                    options(fb.key, FailureTarget(fb.kind), fb.smallest.collection),
                    failure=fb.smallest.failure,
                )
            )
    return jobs


def _plan(opts: TriageOptions, directory: Path, workers: int) -> list[TriagePartition]:
    """The partitions: planned afresh (an earlier triage's partitions are removed), or with --resume
    read back from the plan an interrupted triage of the same command wrote."""
    plan_file = directory / PLAN_FILE
    if opts.resume:
        try:
            saved = json.loads(plan_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(
                str(opts.out), f"--resume: no triage to resume here (no {PARTITIONS_DIR}/plan.json)"
            ) from None
        except (OSError, ValueError) as e:
            raise InputError(str(plan_file), f"--resume: cannot read the plan: {e}") from None
        return check_resumable(saved, opts.commands, str(plan_file))
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir()
    partitions = plan_partitions(opts.commands, workers, opts.partition_methods)
    atomic_write_text(plan_file, json.dumps(plan_json(opts.commands, partitions)) + "\n")
    return partitions


def with_collections(opts: ReproOptions, collections: list[str]) -> list[ReproCommand]:
    """The command on each collection (a -c selection only with one collection)."""
    if len(collections) > 1 and opts.command.selection is not None:
        raise UsageError(
            "-c names method contexts of one collection: leave it out with several collections"
        )
    if not collections:
        return [opts.command]
    out = [command_for(opts.command, c) for c in collections]
    if len(out) == 1 and opts.command.selection is not None:
        out[0] = dataclasses.replace(out[0], selection=opts.command.selection)
    return out
