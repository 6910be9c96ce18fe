"""report.json for a compile-failure target (`repro --failure`): the "target" section (the failure superpmi
reported, where it was found, the JIT settings it needs and those it does not, the JIT's own output), and the
title and description in dotnet/runtime's words for a JIT assert: "Assertion failed '<expr>' in '<method>'
during '<phase>'". 3.1's assert line names no phase: the phase is then the one the JIT's state shows at the
debugger's stop in the assert (diagnosis "jit"), said as such, or none."""

from __future__ import annotations

from typing import Any

from spmi_dbg.repro.result import ReproResult


def target_data(result: ReproResult) -> dict[str, Any] | None:
    """report.json's "target" section, as the target gives it (a crash has none)."""
    return result.target_section()


def assert_phase(data: dict[str, Any]) -> tuple[str | None, str]:
    """The assert's phase and how to say it: ("P", "during") when the ISSUE line names it; else the JIT's state
    at the debugger's stop in the assert (3.1: Compiler::previousCompletedPhase, the phase completed last:
    "after"); else (None, "")."""
    f = ((data.get("target") or {}).get("failure")) or {}
    if f.get("phase"):
        return str(f["phase"]), "during"
    jit = ((data.get("diagnosis") or {}).get("jit")) or {}
    if jit.get("phase_name"):
        return str(jit["phase_name"]), str(jit.get("phase_when") or "during")
    return None, ""


def failure_title(data: dict[str, Any]) -> str | None:
    t = data.get("target")
    f = (t or {}).get("failure")
    if not f:
        return None
    mc = f["method_context"]
    if f["kind"] == "assert":
        phase, when = assert_phase(data)
        where = "" if phase is None else f" {when} '{phase}'"
        return f"Assertion failed '{f['message']}' in '{f['method']}'{where}"
    if f["kind"] == "error":
        return f"superpmi: the compile of method context {mc} fails ({f['message']})"
    return f"superpmi: missing data for method context {mc}: {f['message']}"


def failure_description(data: dict[str, Any]) -> str:
    t = data["target"]
    f = t["failure"]
    if f is None:
        return f"{data['failure'] or 'no such failure'}."
    d = data["diagnosis"] or {}
    mcf = d.get("method_context") or {}
    who = f"method context {f['method_context']}"
    extra = ", ".join(x for x in (mcf.get("name") and f"`{mcf['name']}`",
                                   mcf.get("il_size") is not None and f"IL size {mcf['il_size']}") if x)
    if extra:
        who += f" ({extra})"
    if f["kind"] == "assert":
        phase, when = assert_phase(data)
        source = (((data.get("diagnosis") or {}).get("jit")) or {}).get("phase_source")
        during = "" if phase is None else f" {when} {phase}" if not (f.get("phase") is None and source) else \
            f" {when} {phase} ({source} at the debugger's stop in the assert)"
        text = (f"The JIT asserts `{f['message']}` at `{f['file']}` line {f['source_line']} while compiling "
                f"`{f['method']}`{during}, replaying {who}.")
    elif f["kind"] == "error":
        text = f"The compile of {who} fails: superpmi caught `{f['message']}`."
    else:
        text = f"Replaying {who} needs data the collection does not have: {f['message']}."
    opts = t.get("options")
    if opts and opts["given"]:
        text += f" It {opts['summary']}."
    if data["repro"]:
        verdict = "verified" if data["outcome"] == "verified" else "NOT verified"
        text += f" A {data['repro']['records']}-record repro collection is attached ({verdict})."
    return text


def failure_expected(data: dict[str, Any]) -> str:
    kind = data["target"]["kind"]
    what = {"assert": "without a JIT assert", "error": "without a failed compile",
            "missing": "without missing data"}.get(kind, "without a failure")
    return f"superpmi replays the method context(s) {what} (exit status 0)."
