"""The summary of a report as `key: value` rows (the terminal's panel, a piped run's lines,
`spmi-dbg report
--format text`), from report.json's data alone."""

from __future__ import annotations

from typing import Any

from spmi_dbg.report import phrases

RESULTS = {
    "verified": "verified repro",
    "not-verified": "crash found, repro not verified",
    "no-crash": "no crash",
    "no-failure": "no such failure",
    "crashed": "superpmi crashed before the failure sought",
    "input-error": "input error",
    "tool-failure": "tool failure",
}


def rows(data: dict[str, Any]) -> list[tuple[str, str]]:
    located = data["locate"] or {}
    d = data["diagnosis"] or {}
    target = data.get("target")
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
    if located.get("method_context"):
        mc = d.get("method_context") or {}
        out.append(
            ("method context", f"{located['method_context']}  [{located['method_context_source']}]")
        )
        if mc.get("name"):
            out.append(("name", f"{mc['name']} (IL size {mc.get('il_size')})"))
    if located.get("first_found"):
        out.append(("note", located["first_found"]))
    if located.get("winner") is not None:
        out.append(("what", data["title"]))
        a = data["issue"]["actual"]
        if a["hang"]:
            out.append(("signal", f"none: a hang, interrupted after {located['timeout']:g} s"))
        elif a["signal"] and (not target or a["signal"] != "SIGTRAP"):
            out.append(
                (
                    "signal",
                    phrases.signal_text(
                        a["signal"], a["fault_address"], a["near_null"], phrases.SUMMARY
                    ),
                )
            )
        out += phrases.fact_lines(d, phrases.SUMMARY, at_fault=not target)
    if target:
        if target.get("failure"):
            out.append(("failure", target["failure"]["line"]))
        if target.get("options") and target["options"]["given"]:
            out.append(("JIT settings", target["options"]["summary"]))
        jo = target.get("jit_output") or {}
        if jo.get("file") or jo.get("note"):
            out.append(
                (
                    "JIT output",
                    f"{data['bundle']}/{jo['file']}" if jo.get("file") else str(jo["note"]),
                )
            )
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
    reg = data["issue"]["regression"]
    if reg["answered"]:
        out.append(("regression", reg["conclusion"]))
    if data.get("needs"):
        out.append(("needs", data["needs"]["summary"]))
    # the pipeline's own causes (the stop's are among the facts above)
    said = {c["kind"] for c in d.get("causes") or []}
    out += [
        ("why", f"{c['kind']}: {c['advice']}")
        for c in data.get("causes") or []
        if c["kind"] not in said
    ]
    bugs = data["known_bugs"]  # the crash's own first, then those in how the crash was reported
    out += [
        phrases.known_bug_summary(b)
        for b in sorted(bugs, key=lambda b: not phrases.is_about_the_crash(b))
    ]
    if located.get("winner") is None:
        out += [("note", n) for n in located.get("notes") or []]
    out.append(("bundle", data["bundle"]))
    return out


def render_text(data: dict[str, Any]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in rows(data)) + "\n"
