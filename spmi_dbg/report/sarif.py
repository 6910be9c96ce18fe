"""SARIF 2.1.0 (issue 28 item 6): what repro, triage and recheck found, for GitHub code scanning and
Azure DevOps: one rule per bucket, one result per failure, located at the JIT source file and line
of an assert, else at the faulting frame's source where the diagnosis established it, with the
repro command in the message. Made from report.json, triage.json and recheck.json data alone.

Source paths: an official build's `/_/` is its repository's root (SourceLink's path map), so
`/_/src/coreclr/jit/gentree.cpp` is the repository-relative `src/coreclr/jit/gentree.cpp` (3.1:
`/_/src/src/jit/...` is `src/src/jit/...` of the source tarball, `src/jit/...` of dotnet/coreclr);
a path outside it (a local build) stays absolute, as a file URI."""

from __future__ import annotations

import hashlib
import posixpath
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from spmi_dbg import __version__

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/dotnet/runtime/tree/main/src/coreclr/tools/superpmi"


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


def _location(path: str | None, line: int | None) -> list[dict[str, Any]]:
    if not path:
        return []
    uri, relative = source_uri(path)
    artifact: dict[str, Any] = {"uri": uri}
    if relative:
        artifact["uriBaseId"] = "SRCROOT"
    physical: dict[str, Any] = {"artifactLocation": artifact}
    if line and line > 0:
        physical["region"] = {"startLine": int(line)}
    return [{"physicalLocation": physical}]


def _crash_location(diagnosis: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The faulting frame's source (the first frame with a file and a line)."""
    for f in (diagnosis or {}).get("frames") or []:
        if f.get("file") and f.get("line"):
            return _location(str(f["file"]), int(f["line"]))
    return []


def _log(rules: list[dict[str, Any]], results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "spmi-dbg",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }


def _rule(rule_id: str, title: str, help_text: str | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": rule_id,
        "name": "SuperPMIFailure",
        "shortDescription": {"text": title[:1000] or rule_id},
    }
    if help_text:
        rule["help"] = {"text": help_text}
    return rule


def repro_sarif(report: dict[str, Any]) -> dict[str, Any]:
    """report.sarif: the repro's failure, one rule and one result."""
    target = report.get("target") or {}
    failure = target.get("failure")
    d = report.get("diagnosis")
    title = str(report.get("title") or "SuperPMI failure")
    if failure:
        rule_id = f"{failure['kind']}-{_short(str(failure['key']))}"
        where = _location(failure.get("file"), failure.get("source_line"))
    else:
        expected = (report.get("verification") or {}).get("expected") or {}
        rule_id = str(expected.get("bucket") or f"crash-{expected.get('signal') or 'unknown'}")
        where = _crash_location(d)
    command = report.get("repro_command")
    text = title + (f". Repro: `{command}`" if command else "")
    result: dict[str, Any] = {
        "ruleId": rule_id,
        "level": "error",
        "message": {"text": text},
        "locations": where,
        "properties": {"outcome": report.get("outcome"), "bundle": report.get("bundle")},
    }
    return _log([_rule(rule_id, title, command)], [result] if report.get("outcome") else [])


def triage_sarif(triage: dict[str, Any]) -> dict[str, Any]:
    """triage.sarif: a rule per bucket (crashes and superpmi's own failures), a result per member;
    the storm's crashes not diagnosed under one rule of their own, without a location."""
    rules: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for b in triage.get("buckets") or []:
        rep = b.get("repro") or {}
        rules.append(_rule(b["bucket"], str(b["title"]), rep.get("command")))
        where = _crash_location(b.get("diagnosis"))
        for m in b["method_contexts"]:
            results.append(_result(b["bucket"], f"{b['title']}: {m}", where, rep, m))
    for b in triage.get("failure_buckets") or []:
        rep = b.get("repro") or {}
        rules.append(_rule(b["bucket"], str(b["title"]), rep.get("command")))
        f = b.get("failure") or {}
        where = _location(f.get("file"), f.get("source_line"))
        for m in b["method_contexts"]:
            results.append(_result(b["bucket"], f"{b['title']}: {m}", where, rep, m))
    for g in triage.get("not_diagnosed") or []:
        rules.append(
            _rule(
                g["bucket"],
                f"crashed ({g['signal']}) in the storm of {g['storm_bucket']}, not diagnosed",
            )
        )
        for m in g["method_contexts"]:
            text = f"crashed ({g['signal']}), not diagnosed: {m}"
            results.append(_result(g["bucket"], text, [], {}, m))
    return _log(rules, results)


def _result(
    rule_id: str, text: str, where: list[dict[str, Any]], repro: dict[str, Any], member: str
) -> dict[str, Any]:
    command = repro.get("command")
    return {
        "ruleId": rule_id,
        "level": "error",
        "message": {"text": text + (f". Repro: `{command}`" if command else "")},
        "locations": where,
        "properties": {"method_context": member, "bundle": repro.get("bundle")},
    }


def recheck_sarif(recheck: dict[str, Any]) -> dict[str, Any]:
    """recheck.sarif: one result per repro: level error still failing, warning changed, note
    cannot tell, none fixed."""
    rules: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    levels = {
        "fixed": "none",
        "still failing": "error",
        "changed": "warning",
        "cannot tell": "note",
    }
    for r in recheck.get("repros") or []:
        exp = r.get("expected") or {}
        rule_id = str(exp.get("bucket") or exp.get("key") or "repro")
        rule_id = rule_id if len(rule_id) <= 64 else _short(rule_id)
        if not any(x["id"] == rule_id for x in rules):
            rules.append(_rule(rule_id, str(exp.get("key") or exp.get("bucket") or rule_id)))
        results.append(
            {
                "ruleId": rule_id,
                "level": levels.get(str(r["status"]), "warning"),
                "message": {"text": f"{r['repro']}: {r['status']}: {r['evidence']}"},
                "properties": {"status": r["status"], "build": recheck.get("build")},
            }
        )
    return _log(rules, results)


def _short(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:10]
