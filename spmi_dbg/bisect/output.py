"""Bisect, what it says (issue 28 item 4): bisect.json (the answer and every build tried, with its
verdict and evidence), bisect.md (for the issue), bisect-run.sh (a `git bisect run` script for an
engineer who builds the JIT at each step: exit 0 good, 1 bad, 125 skip, through `spmi-dbg recheck
--git-bisect`), and the summary lines. Written atomically."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg import __version__, exits, shell
from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.bisect.order import Commit
from spmi_dbg.bisect.search import Outcome
from spmi_dbg.bisect.store import Flavor
from spmi_dbg.bisect.verdict import Target
from spmi_dbg.errors import InputError
from spmi_dbg.report.markdown import render_repro_markdown
from spmi_dbg.report.parsed import ReportJson

BISECT_SCHEMA = 1


@dataclass
class BisectResult:
    target: Target
    outcome: Outcome
    commits: dict[str, Commit] = field(default_factory=dict)  # by build name
    # the commits between the last good and the first bad (a checkout: all of them, with subjects)
    range_commits: list[Commit] = field(default_factory=list)
    flavor: Flavor | None = None
    seconds: float = 0.0
    bundle: Path | None = None
    source: str | None = None  # the store (--store) or the list (--jits) the builds came from

    @property
    def exit_code(self) -> int:
        return exits.FOUND if self.outcome.exact else exits.NOT_FOUND

    def _build(self, index: int | None) -> dict[str, Any] | None:
        if index is None:
            return None
        b = self.outcome.builds[index]
        v = self.outcome.verdict_of(index)
        c = self.commits.get(b.name)
        return {
            "build": b.name,
            "jit": None if b.jit is None else str(b.jit),
            "verdict": v.kind if v else None,
            "evidence": v.evidence if v else None,
            "subject": c.subject if c else None,
            "pr": c.pr if c else None,
        }

    def to_json(self) -> dict[str, Any]:
        o = self.outcome
        return {
            "schema": BISECT_SCHEMA,
            "tool": f"spmi-dbg {__version__}",
            "exit_code": self.exit_code,
            "answer": self.answer(),
            "seconds": round(self.seconds, 3),
            "expected": self.target.expected.to_json(),
            "expected_text": self.target.expected.describe(),
            "command": self.target.command.argv(self.target.compile_list),
            "varies": ["base", "diff"][self.target.varies]
            if len(self.target.command.jits) > 1
            else "jit",
            "flavor": self.flavor.describe() if self.flavor else None,
            "builds": len(o.builds),
            "first_bad": self._build(o.first_bad),
            "last_good": self._build(o.last_good),
            "exact": o.exact,
            "stopped": o.stopped,
            "range": [b.name for b in o.between],
            "range_commits": [c.to_json() for c in self.range_commits],
            "skipped": [
                {"build": t.build.name, "reason": t.verdict.reason, "evidence": t.verdict.evidence}
                for t in o.tried
                if t.verdict.kind == "skip"
            ],
            "tried": [t.to_json() for t in sorted(o.tried, key=lambda t: t.index)],
            "replays": o.replays,  # every replay it ran: the search's and the discovery's
            "discovery_replays": o.discovery_replays,
            "replay_seconds": round(
                o.discovery_seconds + sum(t.verdict.seconds for t in o.tried), 3
            ),
            "notes": o.notes,
        }

    def answer(self) -> str:
        o = self.outcome
        if o.stopped:
            return f"no answer: {o.stopped}"
        assert o.first_bad is not None and o.last_good is not None
        bad, good = o.builds[o.first_bad].name, o.builds[o.last_good].name
        if o.exact:
            return f"first bad build: {bad}{self._subject(bad)} (last good: {good})"
        return (
            f"first bad build somewhere after {good} up to {bad}: the {len(o.between)} build(s) "
            "between were skipped (" + ", ".join(b.name for b in o.between[:10]) + ")"
        )

    def _subject(self, name: str) -> str:
        c = self.commits.get(name)
        return f" `{c.subject}`" if c and c.subject else ""


def summary(r: BisectResult) -> list[str]:
    o = r.outcome
    lines = [f"bisect: {r.answer()}"]
    for t in sorted(o.tried, key=lambda t: t.index):
        v = t.verdict
        why = f" ({v.reason})" if v.reason else ""
        lines.append(f"  {t.build.name}: {v.kind}{why}: {v.evidence}")
    lines.append(
        f"bisect: {len(o.tried)} of {len(o.builds)} builds tried, {o.replays} replays, "
        f"{r.seconds:.1f} s"
    )
    return lines


def triage_table(answers: list[tuple[str, Path, int]]) -> str:
    """A triage's bisections: one row a bucket, from each one's bisect.json."""
    lines = [
        "# spmi-dbg bisect of a triage",
        "",
        "| bucket | answer | exact | builds tried | replays | details |",
        "|---|---|---|---|---|---|",
    ]
    for bucket, out, _ in answers:
        try:
            data = json.loads((out / "bisect.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            lines.append(f"| `{bucket}` | no answer ({e}) | - | - | - | - |")
            continue
        answer = str(data.get("answer") or "-").replace("|", "\\|")
        lines.append(
            f"| `{bucket}` | {answer} | {'yes' if data.get('exact') else 'no'} | "
            f"{len(data.get('tried') or [])} of {data.get('builds')} | {data.get('replays')} | "
            f"[bisect.md]({out.name}/bisect.md) |"
        )
    return "\n".join(lines) + "\n"


def markdown(r: BisectResult) -> str:
    data = r.to_json()
    lines = [
        f"# spmi-dbg bisect: {r.answer()}",
        "",
        f"Looking for: {data['expected_text']}, replaying `{shell.join(data['command'])}` with "
        f"each build's {_role(data['varies'])}.",
        "",
    ]
    if r.range_commits:
        lines += ["## Commits between the last good and the first bad build", ""]
        for c in r.range_commits:
            pr = f" (dotnet/runtime#{c.pr})" if c.pr else ""
            lines.append(f"- `{c.hash[:12]}` {c.subject}{pr}")
        lines.append("")
    lines += ["## Builds tried", "", "| build | verdict | evidence |", "|---|---|---|"]
    for t in sorted(r.outcome.tried, key=lambda t: t.index):
        v = t.verdict
        verdict = f"{v.kind} ({v.reason})" if v.reason else v.kind
        ev = v.evidence.replace("|", "\\|")
        lines.append(f"| `{t.build.name}` | {verdict} | {ev} |")
    lines += [
        "",
        f"{len(r.outcome.tried)} of {len(r.outcome.builds)} builds tried, "
        f"{r.outcome.replays} replays, {r.seconds:.1f} s.",
        "",
    ]
    lines += [f"- {n}" for n in r.outcome.notes]
    return "\n".join(lines).rstrip() + "\n"


def _role(varies: str) -> str:
    return {"base": "base JIT (JIT1)", "diff": "diff JIT (JIT2)"}.get(varies, "JIT")


def run_script(target_file: Path, flavor: Flavor | None, jit_file: str) -> str:
    """bisect-run.sh: `git bisect run` from a dotnet/runtime checkout, building the JIT at each
    step ($SPMI_BISECT_BUILD, default `./build.sh clr.jit -c <Build>`) and replaying the target."""
    f = flavor or Flavor("linux", "x64", "Checked")
    jit = f"artifacts/bin/coreclr/{f.os}.{f.arch}.{f.build}/{jit_file}"
    build = f"./build.sh clr.jit -c {f.build}"
    target = shell.quote(str(target_file))
    script = shell.quote(str(target_file.parent / "bisect-run.sh"))
    # the spmi-dbg that wrote it (its Python), whatever PATH git bisect run has
    tool = f"{shell.quote(sys.executable)} -m spmi_dbg"
    return f"""#!/bin/sh
# git bisect run: from a dotnet/runtime checkout,
#   git bisect start <bad> <good> && git bisect run {script}
# Each step builds the JIT ($SPMI_BISECT_BUILD, default: {build}) and replays the repro with it
# ($SPMI_BISECT_JIT, default: {jit}): exit 0 good, 1 bad, 125 skip (the build failed, another JIT-EE
# version, missing data, another failure). Written by spmi-dbg {__version__}.
${{SPMI_BISECT_BUILD:-{build}}} >/dev/null 2>&1 || exit 125
exec {tool} recheck --git-bisect --jit "${{SPMI_BISECT_JIT:-{jit}}}" {target}
"""


def regression_answer(r: BisectResult) -> dict[str, Any]:
    """What a bundle's report says of the bisection (report.json `bisect`, report.md's
    Regression? section)."""
    data = r.to_json()
    return {
        "answer": r.answer(),
        "exact": data["exact"],
        "first_bad": data["first_bad"],
        "last_good": data["last_good"],
        "range_commits": data["range_commits"],
        "builds": data["builds"],
        "tried": len(data["tried"]),
        "source": r.source,
        "range": [r.outcome.builds[0].name, r.outcome.builds[-1].name],
    }


def kept_answers(data: dict[str, Any], answer: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The bundle's bisect answers with `answer` added (one per store and range: a search done
    again replaces its earlier answer), and the one the report leads with: an exact answer before a
    range, the latest among equals. An exact answer is never replaced by a vaguer one."""
    before = data.get("bisects") or ([data["bisect"]] if data.get("bisect") else [])
    same = (answer.get("source"), answer.get("range"))
    kept = [a for a in before if (a.get("source"), a.get("range")) != same] + [answer]
    order = {id(a): k for k, a in enumerate(kept)}
    best = max(kept, key=lambda a: (bool(a.get("exact")), order[id(a)]))
    return kept, best


def annotate_bundle(bundle: Path, r: BisectResult) -> list[Path]:
    """The bundle's report.json gains `bisect` (and its issue's regression the answer); report.md
    is rendered again from it. Both written atomically; nothing else in the bundle changes."""
    path = bundle / "report.json"
    answer = regression_answer(r)
    try:  # both files made before either is written
        data = json.loads(path.read_text(encoding="utf-8"))
        data["bisects"], best = kept_answers(data, answer)
        data["bisect"] = best
        data["issue"]["regression"]["bisect"] = best
        data["issue"]["regression"]["bisects"] = data["bisects"]
        markdown = render_repro_markdown(ReportJson.read(data))
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
    ) as e:  # both files checked before either is written
        why = e.strerror if isinstance(e, OSError) else f"{type(e).__name__}: {e}"
        raise InputError(str(path), f"not a report.json spmi-dbg wrote ({why})") from None
    atomic_write_text(path, json.dumps(data, indent=2) + "\n")
    atomic_write_text(bundle / "report.md", markdown)
    return [path, bundle / "report.md"]


def write(out: Path, r: BisectResult, target_file: Path, jit_file: str) -> list[Path]:
    files = [out / "bisect.json", out / "bisect.md", out / "bisect-run.sh"]
    atomic_write_text(files[0], json.dumps(r.to_json(), indent=2) + "\n")
    atomic_write_text(files[1], markdown(r))
    atomic_write_text(files[2], run_script(target_file, r.flavor, jit_file))
    os.chmod(files[2], 0o755)
    return files
