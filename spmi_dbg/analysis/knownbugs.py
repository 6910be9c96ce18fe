"""The known-bug table (known_bugs.toml): upstream issues a diagnosis matches, with the link and the fix.
Matched inside the debugger (`spmi why`, from the diagnosis and the process's command line) and again by the
pipeline with what only it knows (a `-p` it dropped, superpmi.py's log lines, the replay's output)."""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("known_bugs.toml")
CRITERIA = ("signal", "near_null", "frames", "null_map", "target", "parallel", "text")


@dataclass(frozen=True)
class KnownBug:
    id: str
    title: str
    url: str
    fix: str
    fix_url: str
    cause: str
    match: dict[str, Any] = field(default_factory=dict)


@dataclass
class Facts:
    """What a diagnosis tells, plus what the pipeline adds."""

    signal: str | None = None
    near_null: bool = False
    frames: list[str] = field(default_factory=list)
    null_map: str | None = None
    target: str | None = None
    parallel: bool = False
    texts: list[str] = field(default_factory=list)


@functools.cache
def table(path: Path = TABLE) -> tuple[KnownBug, ...]:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    out = []
    for b in data.get("bug", []):
        unknown = set(b.get("match", {})) - set(CRITERIA)
        if unknown:
            raise ValueError(f"{path}: bug {b.get('id')}: unknown criteria {sorted(unknown)}")
        out.append(KnownBug(b["id"], b["title"], b["url"], b.get("fix", ""), b.get("fix_url", ""),
                            b.get("cause", ""), dict(b.get("match", {}))))
    return tuple(out)


def facts_of(diagnosis: dict[str, Any], *, argv: list[str] | None = None, parallel: bool = False,
             texts: list[str] | None = None) -> Facts:
    """Facts from a diagnosis (JSON form); `argv` the replay's command line (a `-stride` worker or a `-p` run
    is parallel), `texts` more text to search (superpmi.py log lines, the replay's output)."""
    sig = diagnosis.get("signal") or {}
    nm = diagnosis.get("null_map")
    a = diagnosis.get("assertion")
    out = Facts(signal=sig.get("name"), near_null=bool(sig.get("near_null")),
                frames=list(diagnosis.get("folded") or []),
                null_map=f"{nm['owner_type']}::{nm['member']}" if nm else None,
                target=_target(argv, diagnosis.get("arch")), parallel=parallel, texts=list(texts or []))
    if argv is not None and any(x.lower() in ("-p", "-parallel", "-stride") for x in argv[1:]):
        out.parallel = True
    if a:
        out.texts.append(str(a.get("expr") or ""))
    return out


def _target(argv: list[str] | None, arch: str | None) -> str | None:
    low = [x.lower() for x in argv or []]
    if "-target" in low and low.index("-target") + 1 < len(low):
        t = low[low.index("-target") + 1]
        return "arm64" if t in ("arm64", "aarch64") else "x64" if t in ("x64", "amd64") else t
    return {"aarch64": "arm64", "x86_64": "x64"}.get(arch or "", arch)


def _holds(bug: KnownBug, f: Facts) -> list[str]:
    """The criteria that do not hold (empty: a match)."""
    m = bug.match
    failed = []
    if "signal" in m and f.signal != m["signal"]:
        failed.append("signal")
    if "near_null" in m and f.near_null != bool(m["near_null"]):
        failed.append("near_null")
    if "frames" in m and not all(name in f.frames for name in m["frames"]):
        failed.append("frames")
    if "null_map" in m and f.null_map != m["null_map"]:
        failed.append("null_map")
    if "target" in m and f.target != m["target"]:
        failed.append("target")
    if "parallel" in m and f.parallel != bool(m["parallel"]):
        failed.append("parallel")
    if "text" in m and not any(re.search(m["text"], t) for t in f.texts):
        failed.append("text")
    return failed


def match(f: Facts) -> list[dict[str, Any]]:
    """The known bugs these facts match, as JSON-ready dicts (id, title, url, fix, fix_url, cause, matched)."""
    out = []
    for bug in table():
        if bug.match and not _holds(bug, f):
            out.append({"id": bug.id, "title": bug.title, "url": bug.url, "fix": bug.fix, "fix_url": bug.fix_url,
                        "cause": bug.cause, "matched": sorted(bug.match)})
    return out


def near_misses(f: Facts) -> list[dict[str, Any]]:
    """Known bugs of more than one criterion that miss by exactly one (said, never claimed as the cause)."""
    out = []
    for bug in table():
        failed = _holds(bug, f)
        if len(bug.match) > 1 and len(failed) == 1:
            out.append({"id": bug.id, "title": bug.title, "url": bug.url, "differs_in": failed[0]})
    return out
