"""The report of a repro run: report.json (versioned schema) and report.md (ready to paste into a GitHub
issue), both from the pipeline's ReproResult; the diagnosis text is analysis' own `spmi why` rendering."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

from spmi_dbg import __version__
from spmi_dbg.analysis.diagnosis import Diagnosis, FrameInfo
from spmi_dbg.analysis.render import render_text
from spmi_dbg.repro.bundle import repro_script
from spmi_dbg.repro.isolate import REPRO_NAME
from spmi_dbg.repro.pipeline import ReproResult

SCHEMA_VERSION = 1


# ------------------------------------------------------------------------------------------------ report.json
def report_json(result: ReproResult, files: list[str]) -> dict[str, Any]:
    cmd = result.options.command
    located = result.located
    return {
        "schema": SCHEMA_VERSION,
        "tool": f"spmi-dbg {__version__}",
        "outcome": result.outcome,
        "exit_code": result.exit_code,
        "failed_phase": result.failed_phase,
        "failure": result.failure,
        "failure_traceback": result.failure_traceback,
        "seconds": round(result.seconds, 3),
        "command": {"program": cmd.program, "jits": list(cmd.jits), "input": cmd.input, "options": list(cmd.options),
                    "selection": None if cmd.selection is None else _spec(cmd.selection),
                    "method_contexts": cmd.count, "notes": list(cmd.notes), "from_log": cmd.log},
        "debugger": result.options.debugger_name,
        "phases": [dataclasses.asdict(p) | {"seconds": round(p.seconds, 3)} for p in result.phases],
        "locate": None if located is None else {
            "workers": len(result.partitions), "timeout": result.options.timeout,
            "partitions": [r.to_json() for r in located.runs],
            "winner": located.winner.partition.index if located.winner else None,
            "method_context": located.method_context, "method_context_source": located.method_context_source,
            "expected": None if located.expectation is None else dataclasses.asdict(located.expectation),
            "bisection": located.bisection, "notes": located.notes,
            "stops_passed_total": sum(len(r.outcome.passed) for r in located.runs if r.outcome),
            "stops_passed": [dataclasses.asdict(s) | {"partition": r.partition.index}
                             for r in located.runs if r.outcome for s in r.outcome.passed][:1000],
            "hang_threads": located.winner.outcome.threads if located.winner and located.winner.outcome else []},
        "diagnosis": located.diagnosis if located else None,
        "repro": result.isolated.to_json() if result.isolated else None,
        "verification_single_record": result.single.to_json() if result.single else None,
        "minimization": result.minimization.to_json() if result.minimization else None,
        "verification": result.verification.to_json() if result.verification else None,
        "bundle": str(result.out),
        "files": files,
    }


def _spec(numbers: tuple[int, ...]) -> str:
    from spmi_dbg.mch.mclist import compress_ranges

    return compress_ranges(list(numbers))


# ------------------------------------------------------------------------------------------------ report.md
def diagnosis_object(data: dict[str, Any]) -> Diagnosis:
    names = {f.name for f in dataclasses.fields(Diagnosis)}
    kw = {k: v for k, v in data.items() if k in names}
    kw["frames"] = [FrameInfo(**f) for f in data.get("frames") or []]
    return Diagnosis(**kw)


def title(result: ReproResult) -> str:
    located = result.located
    d = located.diagnosis if located else None
    mc = located.method_context if located else None
    where = f" for method context {mc}" if mc else ""
    if located is None or located.winner is None:
        return {"no-crash": "no crash", "input-error": "the replay rejected its input",
                "tool-failure": "the debugger failed"}.get(result.outcome, result.outcome) + \
            f" in {Path(result.options.command.input).name}"
    frames = [f for f in (d or {}).get("signature_frames") or (d or {}).get("folded") or [] if f and f != "??"]
    top = f" in {frames[0]}" if frames else ""
    if located.expectation and located.expectation.kind == "hang":
        return f"superpmi hangs{top}{where}"
    sig = ((d or {}).get("signal") or {}).get("name") or (located.expectation.signal if located.expectation else "")
    nm = (d or {}).get("null_map")
    null = f" (null {nm['owner_type']}::{nm['member']} of the {nm['role']})" if nm else ""
    return f"superpmi {sig}{top}{where}{null}"


def _result_line(result: ReproResult) -> str:
    v = result.verification
    text = {"verified": "verified repro", "not-verified": "crash found, repro NOT verified",
            "no-crash": "no crash", "input-error": "input error", "tool-failure": "tool failure"}.get(
        result.outcome, result.outcome)
    if v is not None:
        text += f" ({v.reproduced}/{v.total} runs, {v.rate:.0%})"
    return text


def report_markdown(result: ReproResult) -> str:
    cmd = result.options.command
    located = result.located
    d = located.diagnosis if located else None
    lines = [f"# {title(result)}", "", "| | |", "|---|---|", f"| result | {_result_line(result)} |"]
    if result.failed_phase:
        lines.append(f"| failed phase | {result.failed_phase}: {_cell(result.failure or '')} |")
    elif result.failure:
        lines.append(f"| failure | {_cell(result.failure)} |")
    if located and located.method_context:
        mc = (d or {}).get("method_context") or {}
        extra = ", ".join(x for x in (mc.get("name") and f"`{mc['name']}`",
                                       mc.get("il_size") is not None and f"IL size {mc['il_size']}") if x)
        lines.append(f"| method context | {located.method_context}{' (' + extra + ')' if extra else ''} — "
                     f"{_cell(located.method_context_source)} |")
    if d and d.get("signal") and not d.get("hang"):
        s = d["signal"]
        addr = f" at 0x{s['address']:x}" if s.get("address") is not None else ""
        lines.append(f"| signal | {s['name']}{addr}{' (near null)' if s.get('near_null') else ''} |")
    if d and d.get("null_map"):
        nm = d["null_map"]
        lines.append(f"| null map | `{nm['owner_type']}::{nm['member']}` of the {nm['role']} |")
    if d and d.get("faulting_module"):
        fm = d["faulting_module"]
        lines.append(f"| faulting module | {fm['role']}: `{fm['path']}` |")
    if located and located.expectation and located.expectation.bucket:
        lines.append(f"| bucket | `{located.expectation.bucket}` |")
    lines.append(f"| command | `{_cell(shlex.join(cmd.argv()))}` |")
    lines.append("")
    if result.isolated is not None:
        lines += ["## Reproduce", "", "```sh", repro_script(result).rstrip(), "```", "",
                  f"`{REPRO_NAME}` holds method context(s) {', '.join(map(str, result.isolated.numbers))} of "
                  f"`{cmd.input}`, byte-for-byte ({sum(result.isolated.sizes)} bytes).", ""]
    if d is not None:
        lines += ["## Diagnosis", "", "```", render_text(diagnosis_object(d)), "```", ""]
        if d.get("hang"):
            lines += [f"The replay neither exited nor stopped fatally within {result.options.timeout:g} s and was "
                      "interrupted; the stack above is where it was spinning.", ""]
    for label, v in (("Verification of the single record", result.single if result.minimization else None),
                     ("Verification", result.verification)):
        if v is not None:
            lines += [f"## {label}", "", v.summary() + ".", ""]
            lines += [f"- native run {i}: {r.describe()}" for i, r in enumerate(v.native, 1)]
            lines += [f"- note: {n}" for n in v.notes] + [""]
    if result.minimization is not None:
        m = result.minimization
        lines += ["## Minimization", "", f"The crashing record alone does not fail: ddmin over the {m.candidates} "
                  f"earlier record(s) of its partition kept {', '.join(map(str, m.numbers[:-1])) or 'none'} "
                  f"({m.tests} native replays).", ""] + [f"- {n}" for n in m.notes] + [""]
    lines += ["## How it was found", "", "| phase | status | seconds | detail |", "|---|---|---|---|"]
    lines += [f"| {p.name} | {p.status} | {p.seconds:.2f} | {_cell(p.detail)} |" for p in result.phases]
    lines.append("")
    notes = list(cmd.notes) + (located.notes if located else [])
    if notes:
        lines += [f"- {n}" for n in notes] + [""]
    if d is not None and d.get("frames"):
        lines += ["<details><summary>Frames</summary>", "", "```"]
        lines += [f"#{f['index']} {f['function']}" + (f" at {f['file']}:{f['line']}" if f.get("file") else "")
                  + (" [inlined]" if f.get("inlined") else "") for f in d["frames"][:60]]
        lines += ["```", "", "</details>", ""]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
