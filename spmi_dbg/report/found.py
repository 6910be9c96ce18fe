"""What a triage found, counted once (issue 38 item 2): crash buckets and crashes, and superpmi's
own failures by kind (JIT asserts, failed compiles, missing data) with their buckets and members.
The summary's result line, triage.md's title, `spmi report`'s title and triage.json's `found` are
all this count; SARIF has one result per member counted here."""

from __future__ import annotations

from typing import Any

# kind -> (its buckets, its members), as said
KINDS = {
    "crash": ("crash bucket(s)", "crash(es)"),
    "assert": ("assert bucket(s)", "assert(s)"),
    "error": ("failed-compile bucket(s)", "failed compile(s)"),
    "missing": ("missing-data bucket(s)", "missing-data failure(s)"),
}


def found(data: dict[str, Any]) -> dict[str, dict[str, int]]:
    """triage.json's `found`: per kind, its buckets and its members (a crash bucket's members are
    the crashes diagnosed; a storm's crashes not diagnosed are `not_diagnosed`)."""
    out = {"crash": {"buckets": len(data["buckets"]), "count": len(data["crashes"])}}
    for kind in ("assert", "error", "missing"):
        mine = [b for b in data.get("failure_buckets") or [] if b["kind"] == kind]
        out[kind] = {"buckets": len(mine), "count": sum(int(b["count"]) for b in mine)}
    storm = sum(int(g["count"]) for g in data.get("not_diagnosed") or [])
    out["not_diagnosed"] = {"buckets": len(data.get("not_diagnosed") or []), "count": storm}
    return out


def found_phrase(data: dict[str, Any]) -> str:
    """`1 crash bucket(s), 3 crash(es); 2 assert bucket(s), 247 assert(s)`: the crashes always, the
    other kinds when there are some."""
    counts = data.get("found") or found(data)
    crash = counts["crash"]
    parts = [f"{crash['buckets']} crash bucket(s), {crash['count']} crash(es)"]
    storm = counts.get("not_diagnosed") or {}
    if storm.get("count"):
        parts[0] += f" diagnosed, {storm['count']} more not diagnosed (storm)"
    for kind in ("assert", "error", "missing"):
        c = counts.get(kind) or {}
        if c.get("buckets"):
            buckets, members = KINDS[kind]
            parts.append(f"{c['buckets']} {buckets}, {c['count']} {members}")
    return "; ".join(parts)
