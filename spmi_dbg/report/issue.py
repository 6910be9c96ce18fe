"""report.json's words for dotnet/runtime's bug template, from report.json's data alone: the title,
and the `issue` section's description, reproduction steps, expected and actual behaviour,
regression, known workarounds and other information (the configuration is the run's:
spmi_dbg.repro.report_data). A crash and a compile failure (`repro --failure`: "Assertion failed
'<expr>' in '<method>' during '<phase>'", dotnet/runtime's words for a JIT assert) each have their
own title, description and expectation; the facts are the phrasebook's (spmi_dbg.report.phrases)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spmi_dbg import shell
from spmi_dbg.analysis.facts import KnownBugMatch
from spmi_dbg.report import phrases
from spmi_dbg.report.model import (
    Actual,
    CommandPart,
    Configuration,
    IssueSection,
    Other,
    RegressionWords,
    ReportDoc,
    Reproduction,
    SettingsPart,
    VerificationWords,
)
from spmi_dbg.report.parsed import ReportJson

Data = dict[str, Any]

VERBS = {
    "SIGSEGV": "segfaults",
    "SIGABRT": "aborts",
    "SIGBUS": "dies of SIGBUS (bus error)",
    "SIGILL": "dies of SIGILL (illegal instruction)",
    "SIGFPE": "dies of SIGFPE (arithmetic exception)",
    "SIGTRAP": "dies of an unhandled debug break (SIGTRAP)",
}
NO_WINNER = {
    "no-crash": "no crash",
    "input-error": "the replay rejected its input",
    "tool-failure": "the debugger failed",
}


def issue(report: ReportJson, configuration: Configuration) -> IssueSection:
    """The `issue` section, words over the report's data and facts."""
    doc = report.doc
    return IssueSection(
        description=description(report),
        reproduction=reproduction(doc),
        expected=expected(doc),
        actual=actual(report),
        regression=regression(doc),
        workarounds=workarounds(report),
        configuration=configuration,
        other=other(report),
    )


def _collection(doc: ReportDoc) -> str:
    return Path(doc.command.input).name


def signal_name(report: ReportJson) -> str | None:
    """The stop's signal: the diagnosis', else the one the run expected (a hang's, a stop with no
    siginfo)."""
    d = report.diagnosis
    sig = d.signal if d is not None else None
    return (sig.name if sig else None) or report.doc.expected_stop.signal


# -------------------------------------------------------------------------------------- the title
def title(report: ReportJson) -> str:
    doc = report.doc
    if doc.target is not None:
        noun = doc.target.noun or doc.target.describe  # report.json before `noun`: as it was
        return failure_title(report) or f"no {noun} in {_collection(doc)}"
    if doc.locate is None or doc.locate.winner is None:
        what = NO_WINNER.get(doc.outcome, doc.outcome)
        return f"{what} in {_collection(doc)}"
    mc = doc.locate.method_context
    return phrases.crash_title(
        signal_name(report),
        report.diagnosis,
        hang=doc.locate.hang,
        where=f" for method context {mc}" if mc else "",
    )


def failure_title(report: ReportJson) -> str | None:
    f = report.doc.failure_found
    if not f:
        return None
    mc = f.method_context
    if f.kind == "assert":
        # dotnet/runtime's titles are the JIT's own line: "... during '<phase>'". Only the running
        # phase is said so; 3.1's JIT knows only the phase completed last ("after"), which the
        # description says, never the title as if it were the running one.
        phase, when = assert_phase(report)
        where = "" if phase is None or when != "during" else f" during '{phase}'"
        return f"Assertion failed '{f.message}' in '{f.method}'{where}"
    if f.kind == "error":
        return f"superpmi: the compile of method context {mc} fails ({f.message})"
    return f"superpmi: missing data for method context {mc}: {f.message}"


def assert_phase(report: ReportJson) -> tuple[str | None, str]:
    """The assert's phase and how to say it: ("P", "during") when the ISSUE line names it; else the
    JIT's state at the debugger's stop in the assert (3.1: Compiler::previousCompletedPhase, the
    phase completed last: "after"); else (None, "")."""
    f = report.doc.failure_found
    if f is not None and f.phase:
        return f.phase, "during"
    jit = report.diagnosis.jit if report.diagnosis else None
    if jit and jit.phase_name:
        return jit.phase_name, jit.phase_when or "during"
    return None, ""


# -------------------------------------------------------------------------------- the description
def description(report: ReportJson) -> str:
    doc = report.doc
    if doc.target is not None:
        return failure_description(report)
    if not doc.winner:
        return f"{title(report)}: every partition of {_collection(doc)} ran to its end."
    d = report.diagnosis
    text = _what_happened(report)
    jit = d.jit if d else None
    phase = phrases.phase_text(jit) if jit else None
    if (jit and jit.method) or phase:
        text += " while " + (
            f"compiling `{jit.method}`" if jit and jit.method else "the JIT was compiling it"
        )
        text += f" {phase}" if phase else ""
    if d and d.null_map:
        text += f": {phrases.null_map_cause(d.null_map)}"
    text += "."
    if d and d.faulting_module:
        text += " " + phrases.module_clause(d.faulting_module)
    for c in report.causes or (d.causes if d else []):  # the setup, not the JIT
        text += f" Why: {c.advice} (`{c.kind}`)."
    return (
        text
        + _settings_sentence(doc.jit_settings)
        + _repro_sentence(doc)
        + "".join(" " + phrases.known_bug_sentence(b) for b in _bugs_in_order(report))
    )


def _what_happened(report: ReportJson) -> str:
    """`superpmi segfaults in F (called from G) for method context N (`name`, IL size S)`."""
    doc = report.doc
    d = report.diagnosis
    who = phrases.method_context_text(
        doc.locate.method_context if doc.locate else None,
        d.method_context if d else None,
        phrases.MARKDOWN,
    )
    folded = [f for f in (d.folded if d else []) if f and f != "??"]
    where = f" in {folded[0]}" if folded else ""
    if len(folded) > 1:
        where += f" (called from {folded[1]})"
    if doc.expected_stop.kind == "hang":
        return f"superpmi hangs{where} while replaying {who}"
    sig = signal_name(report) or "a signal"
    return f"superpmi {VERBS.get(sig, f'dies of {sig}')}{where} for {who}"


def _settings_sentence(settings: SettingsPart | None) -> str:
    return f" It {settings.summary}." if settings and settings.given else ""


def _repro_sentence(doc: ReportDoc) -> str:
    if not doc.repro:
        return ""
    verdict = "verified" if doc.outcome == "verified" else "NOT verified"
    return f" A {doc.repro.records}-record repro collection is attached ({verdict})."


def _bugs_in_order(report: ReportJson) -> list[KnownBugMatch]:
    """The crash's own known bugs first, then those in how the crash was reported."""
    return sorted(report.known_bugs, key=lambda b: not phrases.is_about_the_crash(b))


def failure_description(report: ReportJson) -> str:
    doc = report.doc
    t = doc.target
    f = t.failure if t is not None else None
    if t is None or f is None:
        return f"{doc.failure or 'no such failure'}."
    d = report.diagnosis
    who = phrases.method_context_text(
        f.method_context, d.method_context if d else None, phrases.MARKDOWN
    )
    if f.kind == "assert":
        phase, when = assert_phase(report)
        source = d.jit.phase_source if d and d.jit else None
        during = (
            ""
            if phase is None
            else f" {when} {phase}"
            if not (f.phase is None and source)
            else f" {when} {phase} ({source} at the debugger's stop in the assert)"
        )
        text = (
            f"The JIT asserts `{f.message}` at `{f.file}` line {f.source_line} while "
            f"compiling `{f.method}`{during}, replaying {who}."
        )
    elif f.kind == "error":
        text = f"The compile of {who} fails: superpmi caught `{f.message}`."
    else:
        text = f"Replaying {who} needs data the collection does not have: {f.message}."
    return text + _settings_sentence(t.options) + _repro_sentence(doc)


# --------------------------------------------------------------- reproduction and expectation
def reproduction(doc: ReportDoc) -> Reproduction:
    rep = doc.repro
    if rep is None:
        return Reproduction(
            None,
            shell.join(_argv(doc.command)),
            [
                f"Run `{shell.join(_argv(doc.command))}` (no single-method repro was produced: "
                "see Other information)."
            ],
        )
    numbers = ", ".join(map(str, rep.method_contexts))
    steps = [
        f"Download the attached `repro.mch` (method context(s) {numbers} of `{_collection(doc)}`, "
        f"byte-for-byte, {rep.bytes} bytes; `repro.mch.mct` is its index)."
    ]
    opts = doc.jit_settings
    if opts and opts.given:
        needed = ", ".join(f"`{s}`" for s in opts.needed) or "none of the JIT settings given"
        dropped = "; ".join(opts.dropped)
        steps.append(
            f"The failure needs these JIT settings: {needed}"
            + (f" (not needed: {dropped})" if dropped else "")
            + "; the command has only them."
        )
    steps.append("Run `repro.sh` from the bundle, or the same command with your paths:")
    return Reproduction("repro.mch", doc.repro_command or "", steps)


def _argv(c: CommandPart) -> list[str]:
    """The user's command as it ran: its recorded variables (sh's NAME=VALUE prefix), its options,
    its -c list, its JITs and collection."""
    env = [f"{v.name}={v.value}" for v in c.environment]
    selection = ["-c", str(c.selection)] if c.selection else []
    return [*env, c.program, *c.options, *selection, *c.jits, c.input]


def expected(doc: ReportDoc) -> str:
    if doc.target is not None:
        what = {
            "assert": "without a JIT assert",
            "error": "without a failed compile",
            "missing": "without missing data",
        }.get(doc.target.kind, "without a failure")
        return f"superpmi replays the method context(s) {what} (exit status 0)."
    if doc.command.asm_diffs:
        return (
            "superpmi replays the method context(s) and compares the two JITs' code without "
            "crashing (exit status 0, or 2 when the code differs)."
        )
    return (
        "superpmi replays the method context(s) without crashing "
        "(exit status 0; 1 for a failed compile)."
    )


# --------------------------------------------------------------------------------- actual behaviour
ACTUAL_FACTS = (
    "handling",
    "instruction",
    "null_map",
    "jit",
    "faulting_module",
    "assertion",
    "signature",
    "bucket",
)  # the diagnosis' facts the section carries as report.json has them


def actual(report: ReportJson) -> Actual:
    """What happened: the stop's facts as data, and in words (`facts`: report.md's list of them)."""
    d = report.diagnosis
    sig = d.signal if d else None
    at_fault = report.doc.target is None
    facts = phrases.fact_lines(d, phrases.MARKDOWN, at_fault=at_fault) if d else []
    carried = report.data["diagnosis"] or {}
    return Actual.from_json(
        {key: carried.get(key) for key in ACTUAL_FACTS}
        | {
            "signal": signal_name(report),
            "fault_address": sig.address if sig else None,
            "near_null": sig.near_null if sig else None,
            "signal_source": sig.source if sig else None,
            "hang": bool(d and d.hang),
            "backtrace": list(d.folded) if d else [],
            "frames": [phrases.frame_text(f) for f in d.frames[:60]] if d else [],
            "facts": [{"label": label, "text": text} for label, text in facts],
        }
    )


# ------------------------------------------------------------------- regression, workarounds, other
def regression(doc: ReportDoc) -> RegressionWords:
    r = doc.regression
    if r is not None:
        return RegressionWords.from_json(r | {"answered": True})
    why = (
        "one JIT only in the command: replay the repro with another build of the JIT to tell"
        if len(doc.command.jits) < 2
        else "not answered: the repro was not verified"
    )
    return RegressionWords(False, why)


def workarounds(report: ReportJson) -> list[str]:
    """Each known bug's fix: `id (what it hid): fix`."""
    bugs = report.known_bugs
    said = {b.id: f" ({b.said})" for b in bugs if not phrases.is_about_the_crash(b) and b.said}
    return [f"{b.id}{said.get(b.id, '')}: {b.fix}" for b in bugs if b.fix]


def other(report: ReportJson) -> Other:
    doc = report.doc
    d = report.diagnosis
    located = doc.locate
    how = (
        [f"method context {located.method_context}: {located.method_context_source}"]
        if located is not None and located.method_context
        else []
    )
    v = doc.verification
    return Other(
        verification=None
        if v is None
        else VerificationWords(v.rate, v.runs, v.reproduced, v.accepted),
        how_found=how + (phrases.how_found(d) if d else []),
        minimization=doc.minimization,
        notes=[
            *doc.command.notes,
            *(located.notes if located is not None else []),
            *(d.notes if d else []),
        ],
        phases=doc.phases,
    )
