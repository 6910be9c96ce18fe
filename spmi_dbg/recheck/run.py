"""Recheck (issue 28 item 5): each repro (a bundle, each bucket's bundle of a triage directory, or a
bisect's target.json) replayed on a new build -- a new JIT (--jit, or --store with --build), or a
new superpmi (--superpmi: the seed's fix was in superpmi's near differ) -- and said to be fixed
(clean), still failing (its own failure), changed (another failure, named) or cannot tell (missing
data, another JIT-EE version, a JIT that does not load, flaky)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from spmi_dbg import __version__
from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.bisect.target import TARGET_FILE, from_bundle, read_target, triage_bundles
from spmi_dbg.bisect.verdict import Target, Verdict, probe
from spmi_dbg.driver.base import Driver
from spmi_dbg.errors import InputError
from spmi_dbg.report.sarif import recheck_sarif

Status = Literal["fixed", "still failing", "changed", "cannot tell"]


@dataclass
class Recheck:
    name: str  # the bundle (or target.json) as given
    target: Target
    verdict: Verdict

    @property
    def status(self) -> Status:
        v = self.verdict
        if v.kind == "good":
            return "fixed"
        if v.kind == "bad":
            return "still failing"
        return "changed" if v.reason == "other-failure" else "cannot tell"

    def line(self) -> str:
        return f"{self.name}: {self.status}: {self.verdict.evidence}"

    def to_json(self) -> dict[str, Any]:
        return {
            "repro": self.name,
            "status": self.status,
            "expected": self.target.expected.to_json(),
            # the collection it replays (a bundle's repro.mch): where its SARIF result points
            "repro_mch": str(self.target.command.input),
            **self.verdict.to_json(),
        }


def targets_of(paths: list[Path]) -> list[tuple[str, Target]]:
    """Each path's repros: a bundle, a target.json (or a bisect's --out), a triage directory's
    bucket bundles."""
    out: list[tuple[str, Target]] = []
    for p in paths:
        try:
            kind = _kind(p)
        except OSError as e:  # not there, too long, a loop, not searchable: one line
            raise InputError(str(p), f"cannot open: {e.strerror}") from None
        if kind == "target":
            out.append((str(p), read_target(p)))
        elif kind == "triage":
            out += _triage(p)
        elif kind == "bundle":
            out.append((str(p), from_bundle(p)))
        elif kind == "bisect":
            out.append((str(p), read_target(p / TARGET_FILE)))
        else:
            raise InputError(
                str(p),
                "expected a repro bundle (report.json), a triage directory (triage.json) or "
                "a bisect target (target.json)",
            )
    return out


def _kind(p: Path) -> str:
    """What a REPRO path is (OSError when the system refuses to look: the caller says it)."""
    os.stat(p)
    if p.is_file() and p.name.endswith(".json"):
        return "target"
    for name, kind in (
        ("triage.json", "triage"),
        ("report.json", "bundle"),
        (TARGET_FILE, "bisect"),
    ):
        if (p / name).is_file():
            return kind
    return ""


def _triage(directory: Path) -> list[tuple[str, Target]]:
    return [(f"{directory}:{b}", from_bundle(p)) for b, p in triage_bundles(directory)]


def recheck(
    targets: list[tuple[str, Target]],
    *,
    jit: Path | None,
    superpmi: Path | None,
    runs: int,
    timeout: float,
    work: Path,
    debugger: Driver | None,
) -> list[Recheck]:
    out: list[Recheck] = []
    for k, (name, target) in enumerate(targets, 1):
        v = probe(
            target,
            jit=jit,
            superpmi=superpmi,
            runs=runs,
            timeout=timeout,
            workdir=work / f"r{k}",
            debugger=debugger,
        )
        out.append(Recheck(name, target, v))
    return out


def write(out: Path, results: list[Recheck], build: str) -> list[Path]:
    """recheck.json and recheck.sarif in `out`."""
    data = {
        "schema": 1,
        "tool": f"spmi-dbg {__version__}",
        "build": build,
        "all_fixed": all(r.status == "fixed" for r in results),
        "repros": [r.to_json() for r in results],
    }
    files = [out / "recheck.json", out / "recheck.sarif"]
    atomic_write_text(files[0], json.dumps(data, indent=2) + "\n")
    atomic_write_text(files[1], json.dumps(recheck_sarif(data), indent=2) + "\n")
    return files
