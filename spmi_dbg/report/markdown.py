"""A repro bundle's report.md, rendered from report.json's data alone, in the sections of
dotnet/runtime's bug template (Description, Reproduction Steps, Expected behavior, Actual behavior,
Regression?, Known Workarounds, Configuration, Other information). Kept under GitHub's
65,536-character issue body: long parts (frames, logs) are cut or referenced as attachments, never
pasted whole."""

from __future__ import annotations

from spmi_dbg.failures.target import BREAK_SWITCH
from spmi_dbg.report import phrases
from spmi_dbg.report.method_part import method_section
from spmi_dbg.report.model import (
    Actual,
    BisectAnswer,
    Configuration,
    NeedsPart,
    Other,
    RegressionWords,
    ReportDoc,
)
from spmi_dbg.report.parsed import ReportJson

GITHUB_BODY_LIMIT = 65536
BUDGET = 60000  # leaves room for what the user adds
MAX_FRAMES = 60
MAX_NOTES = 40


def render_repro_markdown(report: ReportJson) -> str:
    """report.md of a repro bundle (`spmi-dbg repro`, `spmi-dbg report`); the in-debugger
    bundle's is spmi_dbg.commands.bundle's."""
    doc = report.doc
    i = doc.words
    out = [f"# {doc.title}", "", "### Description", "", i.description, ""]
    out += _reproduction(doc)
    out += ["### Expected behavior", "", i.expected, ""]
    out += _actual(report, i.actual)
    if doc.method is not None:
        out += method_section(doc.method, _record_of(doc, doc.method.method_context))
    out += ["### Regression?", "", *_regression(i.regression), ""]
    out += _needs(doc.needs)  # report.json before `needs`: none
    out += ["### Known Workarounds", ""]
    out += [f"- {w}" for w in i.workarounds] or ["None known."]
    out += ["", "### Configuration", "", *_configuration(i.configuration), ""]
    out += ["### Other information", "", *_other(doc, i.other)]
    text = "\n".join(out).rstrip() + "\n"
    # a pathological case (huge names, notes): cut, and say where the rest is
    if len(text) > BUDGET:
        text = (
            text[:BUDGET] + "\n\n(cut to stay under GitHub's issue size limit: see report.json)\n"
        )
    return text


def _record_of(doc: ReportDoc, number: int) -> tuple[str, int] | None:
    """The bundle's collection and the record number method context `number` has in it."""
    r = doc.repro
    if r is None or number not in r.method_contexts:
        return None
    return r.file, r.method_contexts.index(number) + 1


def _reproduction(doc: ReportDoc) -> list[str]:
    r = doc.words.reproduction
    out = ["### Reproduction Steps", ""]
    out += [f"{n}. {step}" for n, step in enumerate(r.steps, 1)]
    out += ["", "```sh", r.command, "```", ""]
    m = doc.minimization
    if m and m.method_contexts:
        out += [
            f"The crashing record alone does not fail: the repro keeps the earlier record(s) "
            f"{', '.join(map(str, m.method_contexts[:-1]))} (ddmin over {m.candidates} "
            f"earlier records of its partition, {m.tests} native replays).",
            "",
        ]
    return out


def _actual(report: ReportJson, a: Actual) -> list[str]:
    doc = report.doc
    d = report.diagnosis
    out = ["### Actual behavior", ""]
    failure = doc.failure_found
    if failure:
        out += ["superpmi reports:", "", "```", failure.line, "```", ""]
        if not doc.winner:
            return out
        out.append(
            f"Under the debugger (`{BREAK_SWITCH.get(failure.kind, '-boa')}`) the replay "
            "stops there:"
        )
    elif doc.locate is None or doc.locate.winner is None:
        return [*out, doc.words.description, ""]
    located = doc.locate
    assert located is not None
    if a.hang:
        out.append(
            "superpmi neither exits nor crashes: it was interrupted after "
            f"{located.timeout:g} s (a hang); the stack below is where it was running."
        )
    elif a.signal and (not failure or a.signal != "SIGTRAP"):
        said = phrases.signal_text(a.signal, a.fault_address, a.near_null, phrases.MARKDOWN)
        reason = (a.handling or {}).get("reason")
        out.append(said + (f" — {reason}" if a.handling else ""))
    out.append("")
    facts = phrases.fact_lines(d, phrases.MARKDOWN, at_fault=not failure) if d else []
    out += [*phrases.joined(facts, "- "), ""]
    if a.frames:
        out += [
            "<details><summary>Backtrace of the faulting thread</summary>",
            "",
            "```",
            *a.frames[:MAX_FRAMES],
        ]
        if len(a.frames) > MAX_FRAMES:
            out.append("...")
        out += ["```", "", "</details>", ""]
    if located.hang_threads:
        out += ["<details><summary>All threads at the interrupt</summary>", "", "```"]
        for t in located.hang_threads[:16]:
            out.append(f"thread {t.id} ({t.target_id or ''})")
            out += [f"  #{f.level} {f.function}" for f in t.frames[:20]]
        out += ["```", "", "</details>", ""]
    return out


def _regression(r: RegressionWords) -> list[str]:
    b = r.bisect  # spmi-dbg bisect on the bundle: the answer it leads with
    bisected = _bisect(b) if b else []
    others = [a for a in r.bisects if a is not b and a != b]
    if others:
        bisected += ["Other bisections of this bundle:", ""]
        bisected += [f"- {a.where()}: {a.answer}" for a in others] + [""]
    if not r.answered:
        return [
            *bisected,
            f"Unknown by experiment: {r.conclusion}." if b else f"Unknown: {r.conclusion}.",
        ]
    out = [*bisected, f"By experiment: {r.conclusion}.", ""]
    for j in r.runs():
        said = (
            j.runs[0]
            if len(j.runs) == 1
            else "; ".join(f"run {n}: {run}" for n, run in enumerate(j.runs, 1))
        )
        settings = ""
        if j.settings is not None:  # report.json before the settings were recorded: not said
            given = ", ".join(f"`{s}`" for s in j.settings) or "no JIT settings"
            settings = f" with {j.settings_of or 'its own'} settings ({given})"
        out.append(f"- {j.role} alone{settings} (`{j.path}`): {said}")
    return out


def _bisect(b: BisectAnswer) -> list[str]:
    """spmi-dbg bisect's answer, with the commits between the last good and the first bad build."""
    tried = f"{b.tried} of {b.builds} builds tried" + (f" from {b.where()}" if b.source else "")
    out = [f"By bisection (`spmi-dbg bisect`, {tried}): {b.answer}.", ""]
    for c in b.range_commits:
        pr = f" (dotnet/runtime#{c.pr})" if c.pr else ""
        out.append(f"- `{c.commit[:12]}` {c.subject or ''}{pr}")
    return [*out, ""] if b.range_commits else out


def _configuration(c: Configuration) -> list[str]:
    return [
        f"- OS: {c.os} (kernel {c.kernel}), host architecture {c.host_arch}",
        f"- target: {c.target}",
        f"- {c.superpmi.text()}",
        *[f"- {j.text()}" for j in c.jits],
        f"- {c.collection.text()}",
        f"- debugger: {c.debugger.version or c.debugger.name}",
        *([f"- emulator: `{c.emulator.command}` ({c.emulator.version})"] if c.emulator else []),
        f"- spmi-dbg {c.spmi_dbg} (Python {c.python})",
    ]


def _needs(n: NeedsPart | None) -> list[str]:
    """What the failure needs: the JIT's switches tried one by one on the repro (not a culprit)."""
    if not n:
        return []
    out = ["#### What the failure needs", ""]
    if n.needs:
        out += [
            "By experiment, one replay of the repro per switch (it says what the failure needs, "
            "not which change caused it):",
            "",
            "| switch | turns off | outcome |",
            "|---|---|---|",
        ]
        for t in n.needs:
            outcome = t.outcome.removesuffix(" with")  # "gone", "still fails", ...
            out.append(f"| `{t.option}={t.value}` | {t.turns_off} | {outcome} |")
        out.append("")
    out += [f"{note}." for note in n.notes]
    return [*out, ""] if n.notes else out


def _other(doc: ReportDoc, o: Other) -> list[str]:
    out = []
    v = doc.verification
    if o.verification is not None and v is not None:
        expected = v.expected
        out.append(
            f"- verification: {v.summary}; {expected.kind} expected"
            + (f", bucket `{expected.bucket}`" if expected.bucket else "")
        )
    if doc.failed_phase:
        out.append(f"- failed phase: {doc.failed_phase}: {doc.failure}")
    out += [f"- {h}" for h in o.how_found]
    jit_output = doc.target.jit_output if doc.target is not None else None
    if jit_output:
        out.append(
            f"- JIT output: `{jit_output.file}` ({jit_output.bytes} bytes: "
            "JitStdOutFile with JitDump=* and JitDisasm=* on the repro)"
            if jit_output.file
            else f"- JIT output: {jit_output.note}"
        )
    m = o.minimization
    if m:
        out.append(
            "- minimization: the record alone did not reproduce; "
            f"ddmin over {m.candidates} earlier record(s), {m.tests} native replays, "
            f"{m.seconds:.1f} s: " + ("; ".join(m.notes) or "no notes")
        )
    out += [f"- note: {n}" for n in o.notes[:MAX_NOTES]]
    out += ["", "| phase | status | seconds | detail |", "|---|---|---|---|"]
    out += [f"| {p.name} | {p.status} | {p.seconds:.2f} | {_cell(p.detail)} |" for p in o.phases]
    out += [
        "",
        "Found by spmi-dbg (`spmi-dbg repro`); the bundle also holds `report.json`, "
        "`diagnosis.json`, `debugger.log` and the replay's own `replay.stdout`/`replay.stderr`.",
    ]
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:2000]
