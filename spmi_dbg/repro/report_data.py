"""report.json: everything a repro run found, as data (versioned schema: spmi_dbg/report/schema/report-N.json).
This is repro's own serializer; report.md and the text summary are rendered from this data alone
(spmi_dbg.report.markdown, spmi_dbg.report.text), so `spmi-dbg report BUNDLE`
re-renders a bundle without the run. The `issue` section holds the facts of dotnet/runtime's bug template:
description, reproduction steps, expected and actual behaviour, regression (by experiment), known
workarounds, configuration, other information (how each fact was obtained)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from spmi_dbg import __version__, shell
from spmi_dbg.analysis import knownbugs
from spmi_dbg.analysis.facts import Diagnosis, to_json
from spmi_dbg.report.schema import REPORT_SCHEMA_VERSION
from spmi_dbg.repro import identity
from spmi_dbg.repro.report_failure import failure_description, failure_expected, failure_title, target_data
from spmi_dbg.repro.result import ReproResult

_VERBS = {"SIGSEGV": "segfaults", "SIGABRT": "aborts", "SIGBUS": "dies of SIGBUS (bus error)",
          "SIGILL": "dies of SIGILL (illegal instruction)", "SIGFPE": "dies of SIGFPE (arithmetic exception)",
          "SIGTRAP": "dies of an unhandled debug break (SIGTRAP)"}


def report_data(result: ReproResult, files: list[str], *, replay_output: str = "") -> dict[str, Any]:
    cmd = result.options.command
    target = result.target
    located = target.under_debugger if target else None
    d = target.diagnosis if target else None
    data: dict[str, Any] = {
        "schema": REPORT_SCHEMA_VERSION,
        "tool": f"spmi-dbg {__version__}",
        "outcome": result.outcome,
        "exit_code": result.exit_code,
        "failed_phase": result.error_phase,
        "failure": result.error,
        "failure_traceback": result.error_traceback,
        "seconds": round(result.seconds, 3),
        "command": {"program": cmd.program, "jits": list(cmd.jits), "input": cmd.input, "options": list(cmd.options),
                    "selection": None if cmd.selection is None else cmd.selection.spec(),
                    "method_contexts": cmd.count, "notes": list(cmd.notes), "from_log": cmd.log,
                    "emulator": list(cmd.emulator)},
        "debugger": result.options.debugger_name,
        "phases": [dataclasses.asdict(p) | {"seconds": round(p.seconds, 3)} for p in result.phases],
        "locate": None if located is None else {
            "workers": len(result.partitions), "timeout": result.options.timeout,
            "partitions": [r.to_json() for r in located.runs],
            "winner": located.winner.partition.index if located.winner else None,
            "method_context": located.method_context, "method_context_source": located.method_context_source,
            "method_context_rejected": located.method_context_rejected,
            "expected": None if located.expectation is None else dataclasses.asdict(located.expectation),
            "bisection": located.bisection, "notes": located.notes,
            "stops_passed_total": sum(len(r.outcome.passed) for r in located.runs if r.outcome),
            "stops_passed": [s.to_json() | {"partition": r.partition.index}
                             for r in located.runs if r.outcome for s in r.outcome.passed][:1000],
            "hang_threads": located.winner.outcome.threads if located.winner and located.winner.outcome else []},
        "diagnosis": d.to_json() if d is not None else None,
        "repro": result.isolated.to_json() if result.isolated else None,
        "repro_command": None if result.isolated is None else
        (result.repro_command or cmd).shell_line(result.isolated.mch.name),
        "verification_single_record": target.single.to_json() if target and target.single else None,
        "minimization": result.minimization.to_json() if result.minimization else None,
        "verification": target.verification.to_json() if target and target.verification else None,
        "target": target_data(result),
        "jit_settings": result.option_minimization.to_json() if result.option_minimization else None,
        "regression": result.regression.to_json() if result.regression else None,
        "known_bugs": _known_bugs(result, d, replay_output),
        "bundle": str(result.out),
        "files": files,
    }
    data = in_bundle(result, data)
    data["title"] = title(data)
    data["issue"] = issue(data, result)
    return data



def in_bundle(result: ReproResult, value: Any) -> Any:
    """`value` with every path under the directory the repro was isolated into (a temporary one, gone once the
    bundle is written: the regression runs' argv, a diagnosis of the repro) naming the bundle instead."""
    if result.isolated is None or result.out is None:
        return value
    staged, final = str(result.isolated.mch.parent), str(Path(result.out).absolute())
    if staged == final:
        return value
    pattern = re.compile(re.escape(staged) + r"(?=/|$)")

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return pattern.sub(lambda _: final, v)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v

    return walk(value)


def _known_bugs(result: ReproResult, d: Diagnosis | None, output: str) -> list[dict[str, Any]]:
    """The diagnosis' own matches, and those only the pipeline can see: a `-p` it dropped (the crash was in a
    worker), superpmi.py's log lines, the replay's output."""
    if d is None and (result.target is None or result.target.under_debugger is None):
        return []
    cmd = result.options.command
    parallel = any("dropped `-p`" in n for n in cmd.notes)
    texts = [output, *list((cmd.log or {}).get("failures") or [])]
    facts = knownbugs.facts_of(d, argv=cmd.argv(), parallel=parallel, texts=texts)
    found = {b.id: b for b in d.known_bugs} if d is not None else {}
    for b in knownbugs.match(facts):
        found.setdefault(b.id, b)
    return [to_json(b) for b in found.values()]


def title(data: dict[str, Any]) -> str:
    if data.get("target"):
        return failure_title(data) or f"no {data['target']['describe']} in {Path(data['command']['input']).name}"
    located = data["locate"]
    d = data["diagnosis"]
    mc = located["method_context"] if located else None
    where = f" for method context {mc}" if mc else ""
    if located is None or located["winner"] is None:
        what = {"no-crash": "no crash", "input-error": "the replay rejected its input",
                "tool-failure": "the debugger failed"}.get(str(data["outcome"]), str(data["outcome"]))
        return f"{what} in {Path(data['command']['input']).name}"
    frames = [f for f in (d or {}).get("signature_frames") or (d or {}).get("folded") or [] if f and f != "??"]
    top = f" in {frames[0]}" if frames else ""
    expected = located["expected"] or {}
    if expected.get("kind") == "hang":
        return f"superpmi hangs{top}{where}"
    sig = ((d or {}).get("signal") or {}).get("name") or expected.get("signal") or ""
    nm = (d or {}).get("null_map")
    null = f" (null {nm['owner_type']}::{nm['member']} of the {nm['role']})" if nm else ""
    return f"superpmi {sig}{top}{where}{null}"


# ------------------------------------------------------------------------------------------------ the issue
def issue(data: dict[str, Any], result: ReproResult) -> dict[str, Any]:
    cmd = data["command"]
    d = data["diagnosis"] or {}
    located = data["locate"] or {}
    return {"description": description(data), "reproduction": _reproduction(data),
            "expected": _expected(data), "actual": _actual(d, located), "regression": _regression(data),
            "workarounds": [f"{b['id']}" + (f" ({b['said']})" if b.get("about", "crash") != "crash" and b.get("said")
                                             else "") + f": {b['fix']}" for b in data["known_bugs"] if b.get("fix")],
            "configuration": _configuration(data, result, cmd), "other": _other(data)}


def description(data: dict[str, Any]) -> str:
    if data.get("target"):
        return failure_description(data)
    d = data["diagnosis"] or {}
    located = data["locate"] or {}
    mc = located.get("method_context")
    if not located.get("winner"):
        return f"{data['title']}: every partition of {Path(data['command']['input']).name} ran to its end."
    mcf = d.get("method_context") or {}
    who = f"method context {mc}" if mc else "an unidentified method context"
    extra = ", ".join(x for x in (mcf.get("name") and f"`{mcf['name']}`",
                                   mcf.get("il_size") is not None and f"IL size {mcf['il_size']}") if x)
    if extra:
        who += f" ({extra})"
    folded = [f for f in d.get("folded") or [] if f and f != "??"]
    where = f" in {folded[0]}" if folded else ""
    if len(folded) > 1:
        where += f" (called from {folded[1]})"
    expected = located.get("expected") or {}
    if expected.get("kind") == "hang":
        text = f"superpmi hangs{where} while replaying {who}"
    else:
        sig = (d.get("signal") or {}).get("name") or expected.get("signal") or "a signal"
        text = f"superpmi {_VERBS.get(sig, f'dies of {sig}')}{where} for {who}"
    jit = d.get("jit") or {}
    if jit.get("method") or _phase(jit):
        text += " while " + (f"compiling `{jit['method']}`" if jit.get("method") else "the JIT was compiling it")
        text += f" {jit.get('phase_when') or 'during'} {_phase(jit)}" if _phase(jit) else ""
    nm = d.get("null_map")
    if nm:
        why = str(nm.get("explanation") or "").split(" (packet", 1)[0]
        if not why:
            why = "the {}::{} map of the {} is null".format(nm["owner_type"], nm["member"], nm["role"])
        text += f": {why}"
    text += "."
    fm = d.get("faulting_module")
    if fm and fm.get("role"):
        role = str(fm["role"])
        where_ = "superpmi itself (the replay host), not in a JIT" if role.startswith("superpmi") else \
            f"the {role}"
        text += f" The faulting code is in {where_}" + (f" (`{Path(fm['path']).name}`)." if fm.get("path") else ".")
    js = data.get("jit_settings")
    if js and js["given"]:
        text += f" It {js['summary']}."
    if data["repro"]:
        n = data["repro"]["records"]
        verdict = "verified" if data["outcome"] == "verified" else "NOT verified"
        text += f" A {n}-record repro collection is attached ({verdict})."
    for b in data["known_bugs"]:
        if b.get("about", "crash") == "crash":
            text += f" Known upstream: {b['id']}, {b['title']}."
    for b in data["known_bugs"]:  # how the crash was reported, not its cause
        if b.get("about", "crash") != "crash":
            text += f" Also: {b.get('said') or 'reported wrong'} ({b['id']}, {b['title']})."
    return text


def _phase(jit: dict[str, Any]) -> str | None:
    """The JIT's phase as a person reads it: the display name, else the enumerator."""
    return jit.get("phase_name") or jit.get("phase") or None


def _reproduction(data: dict[str, Any]) -> dict[str, Any]:
    rep = data["repro"]
    if rep is None:
        return {"attachment": None, "command": shell.join(_argv(data)), "steps": [
            f"Run `{shell.join(_argv(data))}` (no single-method repro was produced: see Other information)."]}
    numbers = ", ".join(map(str, rep["method_contexts"]))
    steps = [f"Download the attached `repro.mch` (method context(s) {numbers} of "
             f"`{Path(data['command']['input']).name}`, byte-for-byte, {rep['bytes']} bytes; `repro.mch.mct` is its "
             "index)."]
    opts = data.get("jit_settings")
    if opts and opts["given"]:
        needed = ", ".join(f"`{s}`" for s in opts["needed"]) or "none of the JIT settings given"
        dropped = "; ".join(opts["dropped"])
        steps.append(f"The failure needs these JIT settings: {needed}" + (f" (not needed: {dropped})" if dropped
                                                                          else "") + "; the command has only them.")
    steps.append("Run `repro.sh` from the bundle, or the same command with your paths:")
    return {"attachment": "repro.mch", "command": data["repro_command"], "steps": steps}


def _argv(data: dict[str, Any]) -> list[str]:
    c = data["command"]
    return [c["program"], *c["options"], *c["jits"], c["input"]]


def _expected(data: dict[str, Any]) -> str:
    if data.get("target"):
        return failure_expected(data)
    if len(data["command"]["jits"]) > 1 and any(o.lower().startswith("-a") for o in data["command"]["options"]):
        return ("superpmi replays the method context(s) and compares the two JITs' code without crashing (exit "
                "status 0, or 2 when the code differs).")
    return "superpmi replays the method context(s) without crashing (exit status 0; 1 for a failed compile)."


def _actual(d: dict[str, Any], located: dict[str, Any]) -> dict[str, Any]:
    sig = d.get("signal") or {}
    return {"signal": sig.get("name") or ((located.get("expected") or {}).get("signal")),
            "fault_address": sig.get("address"), "near_null": sig.get("near_null"),
            "signal_source": sig.get("source"), "hang": bool(d.get("hang")),
            "handling": d.get("handling"), "instruction": d.get("instruction"), "null_map": d.get("null_map"),
            "jit": d.get("jit"),
            "faulting_module": d.get("faulting_module"), "assertion": d.get("assertion"),
            "backtrace": list(d.get("folded") or []),
            "frames": [f"#{f['index']} {f['function']}" + (f" at {f['file']}:{f['line']}" if f.get("file") else "")
                       + (" [inlined]" if f.get("inlined") else "") for f in (d.get("frames") or [])[:60]],
            "signature": d.get("signature"), "bucket": d.get("bucket")}


def _regression(data: dict[str, Any]) -> dict[str, Any]:
    r = data["regression"]
    if r is not None:
        return {"answered": True, "conclusion": r["conclusion"], "base_jit": r["base_jit"], "diff_jit": r["diff_jit"]}
    jits = data["command"]["jits"]
    why = ("one JIT only in the command: replay the repro with another build of the JIT to tell"
           if len(jits) < 2 else "not answered: the repro was not verified")
    return {"answered": False, "conclusion": why}


def _configuration(data: dict[str, Any], result: ReproResult, cmd: dict[str, Any]) -> dict[str, Any]:
    target = next((cmd["options"][i + 1] for i, o in enumerate(cmd["options"][:-1]) if o.lower() == "-target"),
                  None)
    recorded = ((data["diagnosis"] or {}).get("method_context") or {}).get("target_arch")
    jits = cmd["jits"]
    roles = ["base JIT (JIT1)", "diff JIT (JIT2)"] if len(jits) > 1 else ["JIT"]
    name = result.options.debugger_name
    return identity.machine() | {
        "target": target or recorded or "the host's (no -target)",
        "superpmi": identity.binary(cmd["program"], "superpmi", result.options.debug_dirs),
        "jits": [identity.binary(j, roles[i] if i < len(roles) else "JIT", result.options.debug_dirs)
                 for i, j in enumerate(jits)],
        "collection": identity.binary(cmd["input"], "collection"),
        "debugger": {"name": name, "version": identity.debugger_version(name)},
        "emulator": None if not cmd["emulator"] else {"command": " ".join(cmd["emulator"]),
                                                      "version": identity.debugger_version(cmd["emulator"][0])},
        "spmi_dbg": __version__}


def _other(data: dict[str, Any]) -> dict[str, Any]:
    d = data["diagnosis"] or {}
    located = data["locate"] or {}
    how: list[str] = []
    if located.get("method_context"):
        how.append(f"method context {located['method_context']}: {located['method_context_source']}")
    if d.get("signal"):
        how.append(f"signal: {d['signal'].get('source')}")
    if d.get("null_map"):
        how.append(f"null map: {d['null_map'].get('source')}")
    if d.get("faulting_module"):
        how.append(f"faulting module: {d['faulting_module'].get('source')}")
    if d.get("jit"):
        j = d["jit"]
        how.append(f"JIT state: the Compiler of {j['source']}" + (f"; method from {j['method_source']}"
                                                                    if j.get("method_source") else "")
                   + (f"; phase from {j['phase_source']}" if j.get("phase_source") else "")
                   + (f"; IL size {j['info_check']}" if j.get("info_check") else "")
                   + "".join(f"; {t}" for t in j.get("tried") or []))
    v = data["verification"]
    m = data["minimization"]
    return {"verification": None if v is None else {"rate": v["rate"], "runs": v["runs"],
                                                    "reproduced": v["reproduced"], "accepted": v["accepted"]},
            "how_found": how, "minimization": m,
            "notes": list(data["command"]["notes"]) + list(located.get("notes") or []) + list(d.get("notes") or []),
            "phases": [{"name": p["name"], "status": p["status"], "seconds": p["seconds"], "detail": p["detail"]}
                       for p in data["phases"]]}
