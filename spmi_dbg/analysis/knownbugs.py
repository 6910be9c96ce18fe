"""The known-bug table (known_bugs.toml): upstream issues a diagnosis matches, with the link and the
fix. Matched inside the debugger (`spmi why`, from the diagnosis and the process's command line) and
again by the pipeline with what only it knows (a `-p` it dropped, superpmi.py's log lines, the
replay's output)."""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.analysis.facts import Diagnosis, KnownBugInfo, KnownBugMatch, NearKnownBug
from spmi_dbg.superpmi_argv import option_value, parse_command

TABLE = Path(__file__).with_name("known_bugs.toml")
CRITERIA = ("signal", "near_null", "frames", "null_map", "target", "parallel", "text")
# what an entry is about: the crash itself, or how the crash was reported
ABOUT = ("crash", "reporting")


@dataclass(frozen=True)
class KnownBug(KnownBugInfo):
    """An entry of the table with its match criteria."""

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
        about = b.get("about", "crash")
        if about not in ABOUT:
            raise ValueError(
                f"{path}: bug {b.get('id')}: about = {about!r}, expected one of {list(ABOUT)}"
            )
        if about == "reporting" and not b.get("said"):
            raise ValueError(
                f'{path}: bug {b.get("id")}: about = "reporting" needs said (its words in a '
                "summary)"
            )
        out.append(
            KnownBug(
                b["id"],
                b["title"],
                b["url"],
                b.get("fix", ""),
                b.get("fix_url", ""),
                b.get("cause", ""),
                about=about,
                said=b.get("said", ""),
                match=dict(b.get("match", {})),
            )
        )
    return tuple(out)


def facts_of(
    diagnosis: Diagnosis | None,
    *,
    argv: list[str] | None = None,
    parallel: bool = False,
    texts: list[str] | None = None,
) -> Facts:
    """Facts from a diagnosis (None: the pipeline found a crash it could not diagnose); `argv` the
    replay's command line (a `-stride` worker or a `-p` run is parallel), `texts` more text to
    search (superpmi.py log lines, the replay's output)."""
    d = diagnosis
    sig, nm = (d.signal, d.null_map) if d is not None else (None, None)
    out = Facts(
        signal=sig.name if sig else None,
        near_null=bool(sig and sig.near_null),
        frames=list(d.folded) if d is not None else [],
        null_map=f"{nm.owner_type}::{nm.member}" if nm else None,
        target=_target(argv, d.arch if d is not None else None),
        parallel=parallel,
        texts=list(texts or []),
    )
    if argv is not None and parse_command(argv).worker:
        out.parallel = True
    if d is not None and d.assertion is not None:
        out.texts.append(str(d.assertion.expr or ""))
    return out


def _target(argv: list[str] | None, arch: str | None) -> str | None:
    given = option_value(argv or [], "-target")
    if given is not None:
        t = given.lower()
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


def match(f: Facts) -> list[KnownBugMatch]:
    """The known bugs these facts match."""
    return [
        KnownBugMatch(
            bug.id,
            bug.title,
            bug.url,
            bug.fix,
            bug.fix_url,
            bug.cause,
            about=bug.about,
            said=bug.said,
            matched=sorted(bug.match),
        )
        for bug in table()
        if bug.match and not _holds(bug, f)
    ]


def near_misses(f: Facts) -> list[NearKnownBug]:
    """Known bugs of more than one criterion that miss by exactly one (said, never claimed as the
    cause)."""
    out = []
    for bug in table():
        failed = _holds(bug, f)
        if len(bug.match) > 1 and len(failed) == 1:
            out.append(NearKnownBug(bug.id, bug.title, bug.url, failed[0]))
    return out
