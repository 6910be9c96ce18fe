"""SARIF 2.1.0 (issue 28 item 6, issue 38 item 1): what repro, triage and recheck found, for GitHub
code scanning, Azure DevOps and the converters a CI uses. Made from report.json, triage.json and
recheck.json data alone.

- A result is a failure found, nothing else: a run that found nothing has an empty `results` and its
  invocation says how it went (`executionSuccessful`, `exitCode`); an input error or a tool failure
  is a `toolExecutionNotification`, never a result.
- One rule per bucket, one result per failure (a triage: per member). Every result has
  `partialFingerprints` from its bucket (`spmiDbgBucket/v1`: the crash signature's key, or the
  failure's, with source paths cut to their repository tail: the same on every machine and
  collection for the same bug), so code scanning keeps an alert the same alert from run to run.
- Every result has a location: the JIT's or superpmi's source line when known (an assert's; a
  crash's faulting frame with a file and line), else the collection as the artifact with the method
  context as a logical location, else the bundle's repro.mch.
- Levels: a crash, a hang or a JIT assert `error`; a failed compile `warning`; missing data (the
  collection's problem, not the JIT's) `note`. recheck: fixed `kind: pass`, still failing `kind:
  fail` at the original's level, changed `kind: fail` `warning`, cannot tell `kind: review` (a
  result that is not a failure has level `none`, SARIF 3.27.10).

Source paths: an official build's `/_/` is its repository's root (SourceLink's path map), so
`/_/src/coreclr/jit/gentree.cpp` is the repository-relative `src/coreclr/jit/gentree.cpp` (3.1:
`/_/src/src/jit/...` is `src/src/jit/...` of the source tarball, `src/jit/...` of dotnet/coreclr);
a path outside it (a local build) stays absolute, as a file URI."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from spmi_dbg import __version__
from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.failures.output import bucket_name
from spmi_dbg.report.model import ExpectedStop
from spmi_dbg.report.parsed import ReportJson, TriageJson
from spmi_dbg.report.triage_model import CrashBucket, FailureBucket

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/dotnet/runtime/tree/main/src/coreclr/tools/superpmi"
FINGERPRINT = "spmiDbgBucket/v1"
# a failure's kind -> the level of its results
LEVELS = {
    "crash": "error",
    "hang": "error",
    "assert": "error",
    "error": "warning",
    "missing": "note",
}
# recheck's status -> (kind, level: None for the original's)
RECHECK = {
    "fixed": ("pass", "none"),
    "still failing": ("fail", None),
    "changed": ("fail", "warning"),
    "cannot tell": ("review", "none"),
}

Json = dict[str, Any]


def source_uri(path: str) -> tuple[str, bool]:
    """(uri, repository-relative) of a source path."""
    p = posixpath.normpath(path)
    if p.startswith("/_/"):
        rel = p[3:]
        if rel.startswith("src/src/"):  # 3.1's source tarball: dotnet/coreclr's src/
            rel = rel[4:]
        return quote(rel), True
    if p.startswith("/"):
        return PurePosixPath(p).as_uri(), False
    return quote(p), True


def _file_uri(path: str) -> str:
    """An artifact that is not source (a collection, a repro.mch): a file URI when absolute, else
    the path as given (relative to where the run was)."""
    return PurePosixPath(path).as_uri() if path.startswith("/") else quote(path)


def _source(path: str | None, line: int | None) -> Json | None:
    if not path or not line or line <= 0:
        return None
    uri, relative = source_uri(path)
    artifact: Json = {"uri": uri}
    if relative:
        artifact["uriBaseId"] = "SRCROOT"
    return {"physicalLocation": {"artifactLocation": artifact, "region": {"startLine": int(line)}}}


def _crash_source(diagnosis: Diagnosis | None) -> Json | None:
    """The faulting frame's source (the first frame with a file and a line)."""
    for f in diagnosis.frames if diagnosis is not None else []:
        if f.file and f.line:
            return _source(f.file, f.line)
    return None


def _record(artifact: str | None, member: str | None, name: str | None = None) -> Json | None:
    """A method context: the collection (or repro.mch) as the artifact, the record as a logical
    location."""
    if not artifact:
        return None
    out: Json = {"physicalLocation": {"artifactLocation": {"uri": _file_uri(artifact)}}}
    if member:
        logical: Json = {"fullyQualifiedName": member, "kind": "function"}
        if name:
            logical["name"] = name
        out["logicalLocations"] = [logical]
    return out


def _locations(*candidates: Json | None) -> list[Json]:
    """The first location known (every result has one)."""
    return [next(c for c in candidates if c is not None)] if any(candidates) else []


def _log(rules: list[Json], results: list[Json], invocation: Json) -> Json:
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "spmi-dbg",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "invocations": [invocation],
                "originalUriBaseIds": {"SRCROOT": {"description": {"text": "the repository root"}}},
                "results": results,
            }
        ],
    }


def _invocation(exit_code: Any, successful: bool, notes: list[tuple[str, str]]) -> Json:
    """How the run went: `notes` are (level, text) of what it says beside its results."""
    out: Json = {"executionSuccessful": successful}
    if isinstance(exit_code, int):
        out["exitCode"] = exit_code
    if notes:
        out["toolExecutionNotifications"] = [
            {"level": level, "message": {"text": text}} for level, text in notes
        ]
    return out


def _rule(rule_id: str, title: str, level: str, help_text: str | None = None) -> Json:
    rule: Json = {
        "id": rule_id,
        "name": "SuperPMIFailure",
        "shortDescription": {"text": title[:1000] or rule_id},
        "fullDescription": {"text": title or rule_id},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["superpmi", "jit"]},
    }
    if help_text:
        rule["help"] = {"text": help_text}
    return rule


def _result(rule_id: str, level: str, text: str, location: list[Json], properties: Json) -> Json:
    return {
        "ruleId": rule_id,
        "kind": "fail",
        "level": level,
        "message": {"text": text},
        "locations": location,
        "partialFingerprints": {FINGERPRINT: rule_id},
        "properties": properties,
    }


def repro_sarif(report: ReportJson) -> Json:
    """report.sarif: the repro's failure, one rule and one result; none when it found nothing."""
    doc = report.doc
    found = doc.outcome in ("verified", "not-verified", "crashed")
    if not found:
        failed = doc.outcome in ("input-error", "tool-failure")
        said = doc.failure or doc.title or doc.outcome
        note = [("error" if failed else "note", said)]
        return _log([], [], _invocation(doc.exit_code, not failed, note))
    failure = doc.failure_found
    title = doc.title or "SuperPMI failure"
    command = doc.repro_command
    held = doc.repro.method_contexts[0] if doc.repro and doc.repro.method_contexts else None
    if failure:
        rule_id = bucket_name(failure.kind, failure.key)
        level = LEVELS.get(failure.kind, "error")
        number: int | None = failure.method_context
        source = _source(failure.file, failure.source_line)
    else:
        expected = doc.verification.expected if doc.verification else ExpectedStop()
        rule_id = expected.bucket or f"{expected.kind}-{expected.signal or 'unknown'}"
        level = LEVELS.get(expected.kind, "error")
        number = doc.locate.method_context if doc.locate else None
        source = _crash_source(report.diagnosis)
    member = f"{PurePosixPath(doc.command.input).name}:{number}" if number else None
    text = title + (
        f". Repro (repro.mch holds {member or f'method context {held}'}): `{command}`"
        if command
        else ""
    )
    where = _locations(
        source,
        _record(doc.command.input, member),
        _record(posixpath.join(doc.bundle, "repro.mch") if doc.bundle else None, None),
    )
    result = _result(
        rule_id,
        level,
        text,
        where,
        {"outcome": doc.outcome, "bundle": doc.bundle, "method_context": member},
    )
    return _log(
        [_rule(rule_id, title, level, command)], [result], _invocation(doc.exit_code, True, [])
    )


def triage_sarif(triage: TriageJson) -> Json:
    """triage.sarif: a rule per bucket (crashes and superpmi's own failures), a result per member;
    the storm's crashes not diagnosed under one rule of their own."""
    doc = triage.doc
    rules: list[Json] = []
    results: list[Json] = []
    paths = {c.collection: c.path for c in doc.collections}
    for b in triage.buckets:
        level = LEVELS.get(b.part.kind, "error")
        _bucket(b.part, level, _crash_source(b.diagnosis), paths, rules, results)
    for fb in doc.failure_buckets:
        f = fb.failure
        level = LEVELS.get(fb.kind, "warning")
        source = _source(f.file, f.source_line) if f is not None else None
        _bucket(fb, level, source, paths, rules, results)
    for g in doc.not_diagnosed:
        title = f"crashed ({g.signal}) in the storm of {g.storm_bucket}, not diagnosed"
        rules.append(_rule(g.bucket, title, "error"))
        for m in g.method_contexts:
            where = _locations(_record(paths.get(str(m).rsplit(":", 1)[0]), m))
            text = f"crashed ({g.signal}), not diagnosed: {m}"
            results.append(_result(g.bucket, "error", text, where, {"method_context": m}))
    stopped = [f"{t.compile}: {t.failures}" for t in doc.tool_failures]
    notes = [("error", f"the debugger failed replaying -c {s}") for s in stopped]
    notes += [("note", n) for n in doc.notes]
    not_reached = sum(c.not_reached for c in doc.coverage)
    if not_reached:
        notes.append(("warning", f"{not_reached} method context(s) not reached"))
    return _log(rules, results, _invocation(doc.exit_code, not stopped, notes))


def _bucket(
    b: CrashBucket | FailureBucket,
    level: str,
    source: Json | None,
    paths: Mapping[str, str | None],
    rules: list[Json],
    results: list[Json],
) -> None:
    """A bucket's rule and a result per member. The bundle's repro.mch holds one member (its
    smallest): that member's result gives the repro command, the others name the member it holds."""
    rep = b.repro
    command = rep.command if rep is not None else None
    bundle = rep.bundle if rep is not None else None
    held = b.smallest.member if bundle and b.smallest is not None else None
    rules.append(_rule(b.bucket, b.title, level, command))
    for m in b.method_contexts:
        if command and m == held:
            said = f". Repro (repro.mch holds {m}): `{command}`"
        elif command:
            said = f". Same bucket as {held}, whose repro is in {bundle}: `{command}`"
        else:
            said = ""
        where = _locations(
            source,
            _record(paths.get(str(m).rsplit(":", 1)[0]), m),
            _record(posixpath.join(bundle, "repro.mch") if bundle else None, m),
        )
        props = {"method_context": m, "bundle": bundle}
        results.append(_result(b.bucket, level, f"{b.title}: {m}{said}", where, props))


def recheck_sarif(recheck: Json) -> Json:
    """recheck.sarif: one result per repro, its bucket's fingerprint (the alert it rechecks):
    fixed `kind: pass`, still failing `kind: fail` at the original's level, changed a failing
    `warning`, cannot tell `kind: review`."""
    rules: list[Json] = []
    results: list[Json] = []
    for r in recheck.get("repros") or []:
        exp = r.get("expected") or {}
        key = exp.get("key")
        rule_id = str(exp.get("bucket") or (key and bucket_name(str(exp["kind"]), key)) or "repro")
        original = LEVELS.get(str(exp.get("kind") or "crash"), "error")
        if not any(x["id"] == rule_id for x in rules):
            rules.append(_rule(rule_id, str(exp.get("key") or rule_id), original))
        kind, level = RECHECK.get(str(r["status"]), ("review", "none"))
        where = _locations(_record(r.get("repro_mch") or r.get("repro"), r.get("repro")))
        results.append(
            {
                "ruleId": rule_id,
                "kind": kind,
                "level": level or original,
                "message": {"text": f"{r['repro']}: {r['status']}: {r['evidence']}"},
                "locations": where,
                "partialFingerprints": {FINGERPRINT: rule_id},
                "properties": {"status": r["status"], "build": recheck.get("build")},
            }
        )
    return _log(rules, results, _invocation(recheck.get("exit_code"), True, []))
