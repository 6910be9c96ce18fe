"""The summary of a report as `key: value` rows (the terminal's panel, a piped run's lines,
`spmi-dbg report --format text`), from report.json's data alone."""

from __future__ import annotations

from typing import Any

from spmi_dbg.report import phrases
from spmi_dbg.report.parsed import ReportJson, facts_alone

RESULTS = {
    "verified": "verified repro",
    "not-verified": "crash found, repro not verified",
    "no-crash": "no crash",
    "no-failure": "no such failure",
    "crashed": "superpmi crashed before the failure sought",
    "input-error": "input error",
    "tool-failure": "tool failure",
}

Row = tuple[str, str]


def rows(report: ReportJson) -> list[Row]:
    data = report.data
    located = data["locate"] or {}
    out = [
        (
            "result",
            f"{RESULTS.get(data['outcome'], data['outcome'])} (exit {data['exit_code']}, "
            f"{data['seconds']:.1f} s)",
        )
    ]
    if data["failure"]:
        out.append(
            ("why", (f"{data['failed_phase']}: " if data["failed_phase"] else "") + data["failure"])
        )
    out += _located(report, located)
    if located.get("winner") is not None:
        out += _stop(report, located)
    out += _target(data)
    out += _outcome(data)
    out += _causes_and_bugs(report)
    if located.get("winner") is None:
        out += [("note", n) for n in located.get("notes") or []]
    out.append(("bundle", data["bundle"]))
    return out


def _located(report: ReportJson, located: dict[str, Any]) -> list[Row]:
    """The method context the crash was found in, its name, and how it was found."""
    out: list[Row] = []
    if located.get("method_context"):
        mc = report.diagnosis.method_context if report.diagnosis else None
        out.append(
            ("method context", f"{located['method_context']}  [{located['method_context_source']}]")
        )
        if mc and mc.name:
            out.append(("name", f"{mc.name} (IL size {mc.il_size})"))
    if located.get("first_found"):
        out.append(("note", located["first_found"]))
    return out


def _stop(report: ReportJson, located: dict[str, Any]) -> list[Row]:
    """What the stop was: the title, the signal (or the hang) and the phrasebook's facts. A stop
    without its diagnosis has the facts of none."""
    data = report.data
    target = data.get("target")
    out = [("what", data["title"])]
    a = data["issue"]["actual"]
    if a["hang"]:
        out.append(("signal", f"none: a hang, interrupted after {located['timeout']:g} s"))
    elif a["signal"] and (not target or a["signal"] != "SIGTRAP"):
        said = phrases.signal_text(a["signal"], a["fault_address"], a["near_null"], phrases.SUMMARY)
        out.append(("signal", said))
    d = report.diagnosis or facts_alone()
    return out + phrases.fact_lines(d, phrases.SUMMARY, at_fault=not target)


def _target(data: dict[str, Any]) -> list[Row]:
    """A compile failure's: the line superpmi reported, the JIT settings it needs, the JIT's
    output."""
    target = data.get("target")
    # the JIT settings the failure needs: a compile failure's target, a crash's experiment
    settings = (target or {}).get("options") or data.get("jit_settings")
    said = [("JIT settings", str(settings["summary"]))] if settings and settings["given"] else []
    if not target:
        return said
    out: list[Row] = []
    if target.get("failure"):
        out.append(("failure", target["failure"]["line"]))
    out += said
    jo = target.get("jit_output") or {}
    if jo.get("file") or jo.get("note"):
        out.append(
            ("JIT output", f"{data['bundle']}/{jo['file']}" if jo.get("file") else str(jo["note"]))
        )
    return out


def _outcome(data: dict[str, Any]) -> list[Row]:
    """The repro, its verification, the regression answer and what the failure needs."""
    out: list[Row] = []
    if data["repro"]:
        r = data["repro"]
        out.append(
            (
                "repro",
                f"{data['bundle']}/{r['file']} ({r['records']} record(s): "
                f"{', '.join(map(str, r['method_contexts']))})",
            )
        )
    v = data["verification"]
    if v is not None:
        out.append(("verification", v["summary"]))
    env = data.get("environment_experiment")
    if env:
        out.append(("environment", env["summary"]))
    reg = data["issue"]["regression"]
    if reg["answered"]:
        out.append(("regression", reg["conclusion"]))
    if data.get("needs"):
        out.append(("needs", data["needs"]["summary"]))
    return out


def _causes_and_bugs(report: ReportJson) -> list[Row]:
    """The pipeline's own causes (the stop's are among the facts), then the known bugs: the
    crash's own first, then those in how the crash was reported."""
    said = {c.kind for c in report.diagnosis.causes} if report.diagnosis else set()
    out = [("why", f"{c.kind}: {c.advice}") for c in report.causes if c.kind not in said]
    bugs = sorted(report.known_bugs, key=lambda b: not phrases.is_about_the_crash(b))
    return out + [phrases.known_bug_summary(b) for b in bugs]


def render_text(report: ReportJson) -> str:
    return "\n".join(f"{k}: {v}" for k, v in rows(report)) + "\n"
