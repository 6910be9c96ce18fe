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
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from spmi_dbg import __version__
from spmi_dbg.failures.output import bucket_name

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


def _crash_source(diagnosis: Json | None) -> Json | None:
    """The faulting frame's source (the first frame with a file and a line)."""
    for f in (diagnosis or {}).get("frames") or []:
        if f.get("file") and f.get("line"):
            return _source(str(f["file"]), int(f["line"]))
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


def repro_sarif(report: Json) -> Json:
    """report.sarif: the repro's failure, one rule and one result; none when it found nothing."""
    outcome = str(report.get("outcome") or "")
    found = outcome in ("verified", "not-verified", "crashed")
    exit_code = report.get("exit_code")
    if not found:
        failed = outcome in ("input-error", "tool-failure")
        said = str(report.get("failure") or report.get("title") or outcome)
        note = [("error" if failed else "note", said)]
        return _log([], [], _invocation(exit_code, not failed, note))
    target = report.get("target") or {}
    failure = target.get("failure")
    title = str(report.get("title") or "SuperPMI failure")
    command = report.get("repro_command")
    locate = report.get("locate") or {}
    cmd = report.get("command") or {}
    held = ((report.get("repro") or {}).get("method_contexts") or [None])[0]
    if failure:
        rule_id = bucket_name(str(failure["kind"]), str(failure["key"]))
        level = LEVELS.get(str(failure["kind"]), "error")
        number = failure.get("method_context")
        source = _source(failure.get("file"), failure.get("source_line"))
    else:
        expected = (report.get("verification") or {}).get("expected") or {}
        kind = str(expected.get("kind") or "crash")
        rule_id = str(expected.get("bucket") or f"{kind}-{expected.get('signal') or 'unknown'}")
        level = LEVELS.get(kind, "error")
        number = locate.get("method_context")
        source = _crash_source(report.get("diagnosis"))
    member = f"{PurePosixPath(str(cmd.get('input') or '')).name}:{number}" if number else None
    bundle = str(report.get("bundle") or "")
    text = title + (
        f". Repro (repro.mch holds {member or f'method context {held}'}): `{command}`"
        if command
        else ""
    )
    where = _locations(
        source,
        _record(cmd.get("input"), member),
        _record(posixpath.join(bundle, "repro.mch") if bundle else None, None),
    )
    result = _result(
        rule_id,
        level,
        text,
        where,
        {"outcome": outcome, "bundle": bundle, "method_context": member},
    )
    return _log([_rule(rule_id, title, level, command)], [result], _invocation(exit_code, True, []))


def triage_sarif(triage: Json) -> Json:
    """triage.sarif: a rule per bucket (crashes and superpmi's own failures), a result per member;
    the storm's crashes not diagnosed under one rule of their own."""
    rules: list[Json] = []
    results: list[Json] = []
    paths = {c["collection"]: c.get("path") for c in triage.get("collections") or []}
    for b in triage.get("buckets") or []:
        level = LEVELS.get(str(b.get("kind") or "crash"), "error")
        _bucket(b, level, _crash_source(b.get("diagnosis")), paths, rules, results)
    for b in triage.get("failure_buckets") or []:
        f = b.get("failure") or {}
        level = LEVELS.get(str(b["kind"]), "warning")
        _bucket(b, level, _source(f.get("file"), f.get("source_line")), paths, rules, results)
    for g in triage.get("not_diagnosed") or []:
        title = f"crashed ({g['signal']}) in the storm of {g['storm_bucket']}, not diagnosed"
        rules.append(_rule(g["bucket"], title, "error"))
        for m in g["method_contexts"]:
            where = _locations(_record(paths.get(m.rsplit(":", 1)[0]), m))
            text = f"crashed ({g['signal']}), not diagnosed: {m}"
            results.append(_result(g["bucket"], "error", text, where, {"method_context": m}))
    stopped = [
        f"{t.get('compile')}: {t.get('failures')}" for t in triage.get("tool_failures") or []
    ]
    notes = [("error", f"the debugger failed replaying -c {s}") for s in stopped]
    notes += [("note", str(n)) for n in triage.get("notes") or []]
    not_reached = sum(int(c.get("not_reached") or 0) for c in triage.get("coverage") or [])
    if not_reached:
        notes.append(("warning", f"{not_reached} method context(s) not reached"))
    return _log(rules, results, _invocation(triage.get("exit_code"), not stopped, notes))


def _bucket(
    b: Json,
    level: str,
    source: Json | None,
    paths: dict[str, Any],
    rules: list[Json],
    results: list[Json],
) -> None:
    """A bucket's rule and a result per member. The bundle's repro.mch holds one member (its
    smallest): that member's result gives the repro command, the others name the member it holds."""
    rep = b.get("repro") or {}
    command = rep.get("command")
    held = (b.get("smallest") or {}).get("member") if rep.get("bundle") else None
    rules.append(_rule(b["bucket"], str(b["title"]), level, command))
    for m in b["method_contexts"]:
        if command and m == held:
            said = f". Repro (repro.mch holds {m}): `{command}`"
        elif command:
            said = f". Same bucket as {held}, whose repro is in {rep['bundle']}: `{command}`"
        else:
            said = ""
        where = _locations(
            source,
            _record(paths.get(m.rsplit(":", 1)[0]), m),
            _record(posixpath.join(rep["bundle"], "repro.mch") if rep.get("bundle") else None, m),
        )
        props = {"method_context": m, "bundle": rep.get("bundle")}
        results.append(_result(b["bucket"], level, f"{b['title']}: {m}{said}", where, props))


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
