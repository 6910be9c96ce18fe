"""triage.json: what a triage run found, as data (schema spmi_dbg/report/schema/triage-N.json): the
crashes, the buckets with their members, smallest member and repro bundle, the first-chance stops
passed on, what superpmi reported itself. triage.md is rendered from this data alone
(spmi_dbg.report.triage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spmi_dbg import __version__
from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.report import phrases
from spmi_dbg.report.found import found
from spmi_dbg.report.parsed import TriageJson
from spmi_dbg.report.redact import Redactor
from spmi_dbg.report.sarif import triage_sarif
from spmi_dbg.report.schema import TRIAGE_SCHEMA_VERSION
from spmi_dbg.report.triage import members_file, needs_members_file, triage_markdown
from spmi_dbg.repro.phase import REPLAY_INPUT_FAILURES
from spmi_dbg.repro.result import ReproResult
from spmi_dbg.triage.buckets import Bucket, first_chance, reported_by_superpmi
from spmi_dbg.triage.failure_buckets import FailureBucket
from spmi_dbg.triage.models import Crash
from spmi_dbg.triage.result import BUNDLE_KINDS, TRIAGE_FILES, TriageResult

__all__ = ["TRIAGE_FILES", "triage_json", "write_triage"]


def triage_json(result: TriageResult) -> dict[str, Any]:
    run = result.run
    names = result.names
    data = {
        "schema": TRIAGE_SCHEMA_VERSION,
        "tool": f"spmi-dbg {__version__}",
        "exit_code": result.exit_code,
        "seconds": round(result.seconds, 3),
        "replay_seconds": round(result.replay_seconds, 3),
        "engine_seconds": round(result.engine_seconds, 3),
        "command": _command(result),
        "collections": [
            {
                "collection": names[c.input],
                "path": c.input,
                "method_contexts": c.count,
                "argv": c.argv(user=True),
            }
            for c in result.options.commands
        ],
        "debugger": result.options.repro.debugger_name,
        "workers": run.engine.workers,
        "engine": _engine(result),
        "max_crashes": result.options.max_crashes,
        "stopped_at_max_crashes": run.stopped_early,
        "coverage": [c.to_json() for c in result.coverage],
        "crashes": [_crash(c, names) for c in run.crashes],
        "not_diagnosed": _not_diagnosed(result),
        "buckets": [_bucket(b, result) for b in result.buckets],
        "bundle_kinds": [k for k in BUNDLE_KINDS if k in result.options.bundle_kinds],
        "failure_buckets": [_failure_bucket(b, result) for b in result.failure_buckets],
        "segments": [
            s.summary() | {"collection": names[p.collection]}
            for s, p in _segments_with_partitions(result)
        ],
        "first_chance": [g.to_json() for g in first_chance([(names[c], s) for c, s in run.passed])],
        "reported_by_superpmi": {
            k: [g.to_json() for g in v]
            for k, v in reported_by_superpmi([(names[c], o) for c, o in run.outputs]).items()
        },
        "replay_input_errors": _input_errors(result),
        "tool_failures": run.tool_failures,
        "notes": run.notes + [n for j in run.journals for n in j.notes],
        "causes": _causes(result),
    }
    data["found"] = found(data)  # the one count of what was found (report/found.py)
    return data


def _not_diagnosed(result: TriageResult) -> list[dict[str, Any]]:
    """The storms' crashes replayed without a debugger (triage/sweep.py), by storm bucket and
    signal: accounted as crashed, their numbers from their own replays, nothing said of their
    bucket."""
    groups: dict[tuple[str, str], list[str]] = {}
    for c in result.run.not_diagnosed:
        groups.setdefault((c.storm, c.signal), []).append(c.member)
    return [
        {
            "bucket": f"not-diagnosed-{storm}-{signal}",
            "storm_bucket": storm,
            "signal": signal,
            "reason": "storm",
            "count": len(members),
            "method_contexts": members,
        }
        for (storm, signal), members in sorted(groups.items())
    ]


def _causes(result: TriageResult) -> list[dict[str, Any]]:
    """Each cause in the setup the buckets' diagnoses establish (analysis/causes.py), once, with
    the buckets and the crashes it explains (its evidence: the first bucket's)."""
    out: dict[str, dict[str, Any]] = {}
    for b in result.buckets:
        for c in b.diagnosis.causes if b.diagnosis is not None else []:
            entry = out.setdefault(c.kind, c.to_json() | {"buckets": [], "crashes": 0})
            entry["buckets"].append(b.key)
            entry["crashes"] += len(b.members)
    return sorted(out.values(), key=lambda c: -int(c["crashes"]))


def _command(result: TriageResult) -> dict[str, Any]:
    cmd = result.options.repro.command
    return {
        "program": cmd.program,
        "jits": list(cmd.jits),
        "input": cmd.input,
        "options": list(cmd.options),
        "argv": cmd.argv(user=True),
        "method_contexts": sum(c.method_contexts for c in result.coverage),
        "notes": list(cmd.notes),
    }


def _engine(result: TriageResult) -> dict[str, Any]:
    """Where the partitions ran, and what the engine had to do again."""
    engine = result.run.engine
    return {
        "name": engine.name,
        "scheduler": engine.address,
        "dashboard": engine.dashboard,
        "workers": engine.workers,
        "partitions": len(result.run.partitions),
        "resumed_partitions": result.run.resumed,
        "resubmitted": [
            {"partition": k, "times": v} for k, v in sorted(engine.resubmitted.items())
        ],
        "task_failures": [
            {"partition": k, "why": v} for k, v in sorted(engine.task_failures.items())
        ],
        "bundle_workers": [
            {"bucket": k, "worker": v} for k, v in sorted(engine.bundle_workers.items())
        ],
    }


def _crash(c: Crash, names: dict[str, str]) -> dict[str, Any]:
    located = c.located
    return {
        "method_context": c.number,
        "collection": names[c.collection],
        "member": c.member,
        "bucket": c.bucket,
        "partition": c.run.partition.index,
        "segment": c.run.partition.spec,
        "kind": located.expectation.kind if located.expectation else "crash",
        "method_context_source": located.method_context_source,
        "method_context_rejected": located.method_context_rejected,
    }


def _input_errors(result: TriageResult) -> list[dict[str, Any]]:
    """The replays superpmi refused as input errors (exit 255/254), by status."""
    statuses = {r.outcome.exit_status for r in result.run.segments if r.outcome is not None}
    inputs = sorted(s for s in statuses if s is not None and s in REPLAY_INPUT_FAILURES)
    return [{"exit_status": s, "name": REPLAY_INPUT_FAILURES[s]} for s in inputs]


def _segments_with_partitions(result: TriageResult) -> list[tuple[Any, Any]]:
    by_index = {p.index: p for p in result.run.partitions}
    return [(s, by_index[s.partition.index]) for s in result.run.segments]


def _member(m: Any) -> dict[str, Any]:
    return {
        "member": m.member,
        "collection": m.member.rsplit(":", 1)[0],
        "method_context": m.number,
        "name": m.name,
        "il_size": m.il_size,
    }


def _smallest(m: Any, collection: str, result: TriageResult) -> dict[str, Any]:
    """A bucket's smallest member, with its first IL lines."""
    return _member(m) | {"il_head": result.il_heads.get((collection, m.number), [])}


def _bucket(b: Bucket, result: TriageResult) -> dict[str, Any]:
    """The bucket, its members and the smallest one's diagnosis (its facts taken from that JSON)."""
    d = b.diagnosis.to_json() if b.diagnosis is not None else None
    facts = d or {}
    return {
        "bucket": b.key,
        "kind": b.kind,
        "signal": b.signal,
        "signature": facts.get("signature"),
        "title": phrases.crash_title(b.signal, b.diagnosis, hang=b.kind == "hang"),
        "count": len(b.members),
        "method_contexts": [m.member for m in b.members],
        "members": [_member(m) for m in b.members],
        "smallest": _smallest(b.smallest, b.smallest.crash.collection, result),
        "null_map": facts.get("null_map"),
        "jit": facts.get("jit"),
        "faulting_module": facts.get("faulting_module"),
        "known_bugs": facts.get("known_bugs") or [],
        "diagnosis": d,
        "repro": _repro(result.bundles.get(b.key)),
    }


def _repro(repro: ReproResult | None) -> dict[str, Any] | None:
    if repro is None:
        return None
    v = repro.target.verification if repro.target else None
    return {
        "bundle": str(repro.out),
        "outcome": repro.outcome,
        "exit_code": repro.exit_code,
        "method_contexts": repro.method_contexts,
        "rate": None if v is None else round(v.rate, 4),
        "summary": None if v is None else v.summary(),
        # the repro's command line, run in the bundle (its repro.sh)
        "command": None
        if repro.isolated is None
        else (repro.repro_command or repro.options.command).shell_line(repro.isolated.mch.name),
    }


def _failure_bucket(b: FailureBucket, result: TriageResult) -> dict[str, Any]:
    small = b.smallest
    repro = result.failure_bundles.get(b.key)
    needed = (
        repro.option_minimization.summary()
        if repro is not None and repro.option_minimization
        else None
    )
    return {
        "bucket": b.key,
        "kind": b.kind,
        "key": b.failure_key,
        "title": b.title,
        "count": len(b.members),
        "method_contexts": [m.member for m in b.members],
        "members": [_member(m) for m in b.members],
        "smallest": _smallest(small, small.collection, result),
        "failure": small.failure.to_json(),
        "jit_settings": needed,
        "repro": _repro(repro),
    }


def write_triage(result: TriageResult) -> tuple[list[Path], TriageJson]:
    """triage.json, triage.md, triage.sarif and the long member lists, written; and triage.json
    as read once, what the summary is printed from."""
    out = result.options.out
    data = triage_json(result)
    if result.options.repro.redact:
        data = Redactor.here().data(data)
    files = [out / "triage.json", out / "triage.md", out / "triage.sarif"]
    # the member lists triage.md and the summary cut short, each whole in its own file
    for b in [*data["buckets"], *data["failure_buckets"], *data["not_diagnosed"]]:
        if needs_members_file(b["method_contexts"]):
            path = out / members_file(b["bucket"])
            path.parent.mkdir(exist_ok=True)
            atomic_write_text(path, "".join(f"{m}\n" for m in b["method_contexts"]))
            files.append(path)
    atomic_write_text(files[0], json.dumps(data, indent=2) + "\n")
    read = TriageJson.read(data)
    atomic_write_text(files[1], triage_markdown(read))
    atomic_write_text(files[2], json.dumps(triage_sarif(read), indent=2) + "\n")
    return files, read
