"""The summary of a report as `key: value` rows (the terminal's panel, a piped run's lines,
`spmi-dbg report --format text`), from report.json's data alone."""

from __future__ import annotations

from spmi_dbg.report import phrases
from spmi_dbg.report.model import LocatePart, ReportDoc
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
    doc = report.doc
    out = [
        (
            "result",
            f"{RESULTS.get(doc.outcome, doc.outcome)} (exit {doc.exit_code}, {doc.seconds:.1f} s)",
        )
    ]
    if doc.failure:
        out.append(("why", (f"{doc.failed_phase}: " if doc.failed_phase else "") + doc.failure))
    located = doc.locate or LocatePart()
    out += _located(report, located)
    if located.winner is not None:
        out += _stop(report, located)
    out += _target(doc)
    out += _outcome(doc)
    out += _causes_and_bugs(report)
    if located.winner is None:
        out += [("note", n) for n in located.notes]
    out.append(("bundle", doc.bundle))
    return out


def _located(report: ReportJson, located: LocatePart) -> list[Row]:
    """The method context the crash was found in, its name, and how it was found."""
    out: list[Row] = []
    if located.method_context:
        mc = report.diagnosis.method_context if report.diagnosis else None
        out.append(
            ("method context", f"{located.method_context}  [{located.method_context_source}]")
        )
        if mc and mc.name:
            out.append(("name", f"{mc.name} (IL size {mc.il_size})"))
    if located.first_found:
        out.append(("note", located.first_found))
    return out


def _stop(report: ReportJson, located: LocatePart) -> list[Row]:
    """What the stop was: the title, the signal (or the hang) and the phrasebook's facts. A stop
    without its diagnosis has the facts of none."""
    doc = report.doc
    out = [("what", doc.title)]
    a = doc.words.actual
    if a.hang:
        out.append(("signal", f"none: a hang, interrupted after {located.timeout:g} s"))
    elif a.signal and (doc.target is None or a.signal != "SIGTRAP"):
        said = phrases.signal_text(a.signal, a.fault_address, a.near_null, phrases.SUMMARY)
        out.append(("signal", said))
    d = report.diagnosis or facts_alone()
    return out + phrases.fact_lines(d, phrases.SUMMARY, at_fault=doc.target is None)


def _target(doc: ReportDoc) -> list[Row]:
    """A compile failure's: the line superpmi reported, the JIT settings it needs, the JIT's
    output."""
    settings = doc.settings
    said = [("JIT settings", settings.summary)] if settings and settings.given else []
    if doc.target is None:
        return said
    out: list[Row] = []
    if doc.target.failure:
        out.append(("failure", doc.target.failure.line))
    out += said
    jo = doc.target.jit_output
    if jo is not None and (jo.file or jo.note):
        out.append(("JIT output", f"{doc.bundle}/{jo.file}" if jo.file else str(jo.note)))
    return out


def _outcome(doc: ReportDoc) -> list[Row]:
    """The repro, its verification, the regression answer and what the failure needs."""
    out: list[Row] = []
    r = doc.repro
    if r:
        out.append(
            (
                "repro",
                f"{doc.bundle}/{r.file} ({r.records} record(s): "
                f"{', '.join(map(str, r.method_contexts))})",
            )
        )
    if doc.verification is not None:
        out.append(("verification", doc.verification.summary))
    if doc.environment_experiment:
        out.append(("environment", doc.environment_experiment.summary))
    reg = doc.words.regression
    if reg.answered:
        out.append(("regression", reg.conclusion))
    if doc.needs:
        out.append(("needs", doc.needs.summary))
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
