"""triage.json (the data) and triage.md (rendered from that data alone): the bucket table, each bucket's
members, smallest member and repro bundle, the first-chance stops passed on, what superpmi reported itself."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from spmi_dbg import __version__
from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.repro.pipeline import REPLAY_INPUT_FAILURES
from spmi_dbg.triage.buckets import Bucket, first_chance, reported_by_superpmi
from spmi_dbg.triage.pipeline import TriageResult

SCHEMA_VERSION = 1


def triage_json(result: TriageResult) -> dict[str, Any]:
    r = result.options.repro
    cmd = r.command
    run = result.run
    inputs = sorted({run_.outcome.exit_status for run_ in run.segments
                     if run_.outcome is not None and run_.outcome.exit_status in REPLAY_INPUT_FAILURES} - {None})
    return {
        "schema": SCHEMA_VERSION,
        "tool": f"spmi-dbg {__version__}",
        "exit_code": result.exit_code,
        "seconds": round(result.seconds, 3),
        "replay_seconds": round(result.replay_seconds, 3),
        "command": {"program": cmd.program, "jits": list(cmd.jits), "input": cmd.input, "options": list(cmd.options),
                    "argv": cmd.argv(), "method_contexts": cmd.count, "notes": list(cmd.notes)},
        "debugger": r.debugger_name,
        "workers": r.workers,
        "max_crashes": result.options.max_crashes,
        "stopped_at_max_crashes": run.stopped_early,
        "crashes": [{"method_context": c.number, "bucket": c.bucket, "partition": c.run.partition.index,
                     "segment": c.run.partition.spec, "kind": c.located.expectation.kind if c.located.expectation
                     else "crash", "method_context_source": c.located.method_context_source}
                    for c in run.crashes],
        "buckets": [_bucket(b, result) for b in result.buckets],
        "segments": [s.to_json() for s in run.segments],
        "first_chance": [g.to_json() for g in first_chance(run.passed)],
        "reported_by_superpmi": {k: [g.to_json() for g in v] for k, v in reported_by_superpmi(run.segments).items()},
        "replay_input_errors": [{"exit_status": s, "name": REPLAY_INPUT_FAILURES[s]} for s in inputs if s is not None],
        "tool_failures": [{"partition": t.partition.index, "segment": t.partition.spec, "failures": t.failures}
                          for t in run.tool_failures],
        "notes": run.notes,
    }


def _bucket(b: Bucket, result: TriageResult) -> dict[str, Any]:
    d = b.diagnosis
    repro = result.bundles.get(b.key)
    small = b.smallest
    return {
        "bucket": b.key, "kind": b.kind, "signal": b.signal, "signature": d.get("signature"),
        "title": _title(b), "count": len(b.members),
        "method_contexts": [m.number for m in b.members],
        "members": [{"method_context": m.number, "name": m.name, "il_size": m.il_size} for m in b.members],
        "smallest": {"method_context": small.number, "name": small.name, "il_size": small.il_size},
        "null_map": d.get("null_map"), "faulting_module": d.get("faulting_module"),
        "known_bugs": d.get("known_bugs") or [],
        "repro": None if repro is None else {
            "bundle": str(repro.out), "outcome": repro.outcome, "exit_code": repro.exit_code,
            "method_contexts": repro.method_contexts,
            "rate": None if repro.verification is None else round(repro.verification.rate, 4),
            "summary": None if repro.verification is None else repro.verification.summary()},
    }


def _title(b: Bucket) -> str:
    d = b.diagnosis
    frames = [f for f in d.get("signature_frames") or d.get("folded") or [] if f and f != "??"]
    top = f" in {frames[0]}" if frames else ""
    if b.kind == "hang":
        return f"superpmi hangs{top}"
    nm = d.get("null_map")
    null = f" (null {nm['owner_type']}::{nm['member']} of the {nm['role']})" if nm else ""
    return f"superpmi {b.signal or 'crash'}{top}{null}"


def triage_markdown(data: dict[str, Any]) -> str:
    cmd = data["command"]
    buckets = data["buckets"]
    crashes = len(data["crashes"])
    lines = [f"# spmi-dbg triage: {len(buckets)} crash bucket(s), {crashes} crash(es) in "
             f"{Path(cmd['input']).name}", "",
             f"`{shlex.join(cmd['argv'])}`", "",
             f"{cmd['method_contexts']} method contexts replayed in {data['workers']} partition(s) under "
             f"{data['debugger']}, resumed after each crash; {data['seconds']:.1f} s in all "
             f"({data['replay_seconds']:.1f} s of replay)."
             + (f" Stopped after --max-crashes {data['max_crashes']}." if data["stopped_at_max_crashes"] else ""),
             ""]
    if buckets:
        lines += ["| bucket | what | count | method contexts | smallest (IL size) | repro | known bug |",
                  "|---|---|---|---|---|---|---|"]
        for b in buckets:
            mcs = ", ".join(map(str, b["method_contexts"][:12])) + (" ..." if b["count"] > 12 else "")
            s = b["smallest"]
            rep = b["repro"] or {}
            outcome = str(rep.get("outcome") or "-")
            verdict = {"verified": "verified", "not-verified": "NOT verified"}.get(outcome, outcome)
            bundle = f"[{Path(rep['bundle']).name}]({Path(rep['bundle']).name}/report.md)" if rep.get("bundle") else ""
            known = ", ".join(f"[{k['id']}]({k['url']})" for k in b["known_bugs"]) or "-"
            lines.append(f"| `{b['bucket']}` | {_cell(b['title'])} | {b['count']} | {mcs} | {s['method_context']} "
                         f"({s['il_size'] if s['il_size'] is not None else '?'}) | {verdict} {bundle} | {known} |")
        lines.append("")
        for b in buckets:
            lines += [f"## `{b['bucket']}`: {b['title']}", "", f"- signature: `{b['signature']}`",
                      f"- method contexts ({b['count']}): {', '.join(map(str, b['method_contexts']))}",
                      f"- smallest by IL size: {b['smallest']['method_context']} "
                      f"(`{b['smallest']['name'] or '?'}`, IL size {b['smallest']['il_size']})"]
            if b["repro"]:
                lines.append(f"- repro: `{b['repro']['bundle']}`: {b['repro']['summary'] or b['repro']['outcome']}")
            for k in b["known_bugs"]:
                lines.append(f"- known bug [{k['id']}]({k['url']}): {k['title']}; fix: {k['fix']}")
            lines.append("")
    else:
        lines += ["No crash: every partition ran to its end.", ""]
    fc = data["first_chance"]
    if fc:
        lines += ["## Stops passed on (the replay survived them)", "", "| stop | count | method contexts |",
                  "|---|---|---|"]
        lines += [f"| {_cell(g['key'])} | {g['count']} | {_list(g['method_contexts'])} |" for g in fc]
        lines.append("")
    rep = data["reported_by_superpmi"]
    if any(rep.values()):
        lines += ["## Reported by superpmi itself", "", "| kind | what | count | method contexts |",
                  "|---|---|---|---|"]
        for kind, label in (("asserts", "JIT assert"), ("missing", "missing data"),
                            ("failed_compiles", "failed compile")):
            lines += [f"| {label} | {_cell(g['key'])} | {g['count']} | {_list(g['method_contexts'])} |"
                      for g in rep[kind]]
        lines.append("")
    for t in data["tool_failures"]:
        lines.append(f"- tool failure in partition {t['partition']} (-c {t['segment']}): {'; '.join(t['failures'])}")
    for e in data["replay_input_errors"]:
        lines.append(f"- the replay exited with status {e['exit_status']} ({e['name']}): check its input")
    for n in data["notes"] + cmd["notes"]:
        lines.append(f"- {n}")
    return "\n".join(lines).rstrip() + "\n"


def triage_text(data: dict[str, Any]) -> str:
    """The summary as `key: value` lines."""
    out = [f"result: {len(data['buckets'])} bucket(s), {len(data['crashes'])} crash(es) in {data['command']['input']} "
           f"(exit {data['exit_code']}, {data['seconds']:.1f} s)"]
    for b in data["buckets"]:
        rep = b["repro"] or {}
        s = b["smallest"]
        known = "".join(f"; known bug {k['id']}" for k in b["known_bugs"])
        more = " ..." if b["count"] > 10 else ""
        members = ", ".join(map(str, b["method_contexts"][:10]))
        out.append(f"bucket {b['bucket']}: {b['title']} x{b['count']} ({members}{more}); smallest "
                   f"{s['method_context']} (IL size {s['il_size']}); repro {rep.get('outcome', '-')}: "
                   f"{rep.get('bundle', '-')}{known}")
    out += [f"passed on: {g['key']} x{g['count']}" for g in data["first_chance"]]
    for kind, groups in data["reported_by_superpmi"].items():
        out += [f"reported by superpmi ({kind}): {g['key']} x{g['count']}" for g in groups]
    if data["stopped_at_max_crashes"]:
        out.append(f"note: stopped after --max-crashes {data['max_crashes']}")
    out += [f"note: {n}" for n in data["notes"]]
    return "\n".join(out) + "\n"


def _list(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:20])) + (" ..." if len(numbers) > 20 else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def write_triage(result: TriageResult, work: Path) -> list[Path]:
    from spmi_dbg.report.redact import Redactor

    out = result.options.out
    data = triage_json(result)
    if result.options.repro.redact:
        data = json.loads(Redactor.here().text(json.dumps(data)))
    files = [out / "triage.json", out / "triage.md"]
    atomic_write_text(files[0], json.dumps(data, indent=2) + "\n")
    atomic_write_text(files[1], triage_markdown(data))
    return files
