"""A repro bundle's report.md, rendered from report.json's data alone, in the sections of
dotnet/runtime's bug template (Description, Reproduction Steps, Expected behavior, Actual behavior,
Regression?, Known Workarounds, Configuration, Other information). Kept under GitHub's
65,536-character issue body: long parts (frames, logs) are cut or referenced as attachments, never
pasted whole."""

from __future__ import annotations

from typing import Any

from spmi_dbg.failures.target import BREAK_SWITCH
from spmi_dbg.report import phrases
from spmi_dbg.report.parsed import ReportJson

GITHUB_BODY_LIMIT = 65536
BUDGET = 60000  # leaves room for what the user adds
MAX_FRAMES = 60
MAX_NOTES = 40


def render_repro_markdown(report: ReportJson) -> str:
    """report.md of a repro bundle (`spmi-dbg repro`, `spmi-dbg report`); the in-debugger
    bundle's is spmi_dbg.commands.bundle's."""
    data = report.data
    i = data["issue"]
    out = [f"# {data['title']}", "", "### Description", "", i["description"], ""]
    out += _reproduction(data)
    out += ["### Expected behavior", "", i["expected"], ""]
    out += _actual(report, i["actual"])
    out += ["### Regression?", "", *_regression(i["regression"]), ""]
    out += _needs(data.get("needs"))  # report.json before `needs`: none
    out += ["### Known Workarounds", ""]
    out += [f"- {w}" for w in i["workarounds"]] or ["None known."]
    out += ["", "### Configuration", "", *_configuration(i["configuration"]), ""]
    out += ["### Other information", "", *_other(data, i["other"])]
    text = "\n".join(out).rstrip() + "\n"
    # a pathological case (huge names, notes): cut, and say where the rest is
    if len(text) > BUDGET:
        text = (
            text[:BUDGET] + "\n\n(cut to stay under GitHub's issue size limit: see report.json)\n"
        )
    return text


def _reproduction(data: dict[str, Any]) -> list[str]:
    r = data["issue"]["reproduction"]
    out = ["### Reproduction Steps", ""]
    out += [f"{n}. {step}" for n, step in enumerate(r["steps"], 1)]
    out += ["", "```sh", r["command"], "```", ""]
    if data["minimization"] and data["minimization"]["method_contexts"]:
        m = data["minimization"]
        out += [
            f"The crashing record alone does not fail: the repro keeps the earlier record(s) "
            f"{', '.join(map(str, m['method_contexts'][:-1]))} (ddmin over {m['candidates']} "
            f"earlier records of its partition, {m['tests']} native replays).",
            "",
        ]
    return out


def _actual(report: ReportJson, a: dict[str, Any]) -> list[str]:
    data = report.data
    d = report.diagnosis
    out = ["### Actual behavior", ""]
    target = data.get("target")
    failure = (target or {}).get("failure")
    if failure:
        out += ["superpmi reports:", "", "```", failure["line"], "```", ""]
        if not data["locate"] or data["locate"]["winner"] is None:
            return out
        out.append(
            f"Under the debugger (`{BREAK_SWITCH.get(str(failure['kind']), '-boa')}`) the replay "
            "stops there:"
        )
    elif not data["locate"] or data["locate"]["winner"] is None:
        return [*out, data["issue"]["description"], ""]
    if a["hang"]:
        out.append(
            "superpmi neither exits nor crashes: it was interrupted after "
            f"{data['locate']['timeout']:g} s (a hang); the stack below is where it was running."
        )
    elif a["signal"] and (not failure or a["signal"] != "SIGTRAP"):
        said = phrases.signal_text(
            a["signal"], a["fault_address"], a["near_null"], phrases.MARKDOWN
        )
        out.append(said + (f" — {a['handling']['reason']}" if a.get("handling") else ""))
    out.append("")
    facts = phrases.fact_lines(d, phrases.MARKDOWN, at_fault=not failure) if d else []
    out += [*phrases.joined(facts, "- "), ""]
    if a["frames"]:
        out += [
            "<details><summary>Backtrace of the faulting thread</summary>",
            "",
            "```",
            *a["frames"][:MAX_FRAMES],
        ]
        if len(a["frames"]) > MAX_FRAMES:
            out.append("...")
        out += ["```", "", "</details>", ""]
    threads = (data["locate"] or {}).get("hang_threads") or []
    if threads:
        out += ["<details><summary>All threads at the interrupt</summary>", "", "```"]
        for t in threads[:16]:
            out.append(f"thread {t['id']} ({t.get('target_id') or ''})")
            out += [f"  #{f['level']} {f['function']}" for f in t["frames"][:20]]
        out += ["```", "", "</details>", ""]
    return out


def _regression(r: dict[str, Any]) -> list[str]:
    b = r.get("bisect")  # spmi-dbg bisect on the bundle: the answer it leads with
    bisected = _bisect(b) if b else []
    others = [a for a in r.get("bisects") or [] if a is not b and a != b]
    if others:
        bisected += ["Other bisections of this bundle:", ""]
        bisected += [f"- {_where(a)}: {a['answer']}" for a in others] + [""]
    if not r["answered"]:
        return [
            *bisected,
            f"Unknown by experiment: {r['conclusion']}." if b else f"Unknown: {r['conclusion']}.",
        ]
    out = [*bisected, f"By experiment: {r['conclusion']}.", ""]
    for key in REGRESSION_RUNS:
        j = r.get(key)
        if j is None:
            continue
        runs = j["runs"]
        said = (
            runs[0]
            if len(runs) == 1
            else "; ".join(f"run {n}: {run}" for n, run in enumerate(runs, 1))
        )
        settings = ""
        if "settings" in j:  # report.json before the settings were recorded: not said
            given = ", ".join(f"`{s}`" for s in j["settings"]) or "no JIT settings"
            settings = f" with {j.get('settings_of') or 'its own'} settings ({given})"
        out.append(f"- {j['role']} alone{settings} (`{j['path']}`): {said}")
    return out


def _where(b: dict[str, Any]) -> str:
    """Which search an answer is: its builds' source and range (an answer of before: unnamed)."""
    if not b.get("source"):
        return "an earlier bisection"
    first, last = b.get("range") or ["?", "?"]
    return f"`{b['source']}`, {first[:12]}..{last[:12]}"


def _bisect(b: dict[str, Any]) -> list[str]:
    """spmi-dbg bisect's answer, with the commits between the last good and the first bad build."""
    tried = f"{b['tried']} of {b['builds']} builds tried" + (
        f" from {_where(b)}" if b.get("source") else ""
    )
    out = [f"By bisection (`spmi-dbg bisect`, {tried}): {b['answer']}.", ""]
    for c in b.get("range_commits") or []:
        pr = f" (dotnet/runtime#{c['pr']})" if c.get("pr") else ""
        out.append(f"- `{str(c['commit'])[:12]}` {c.get('subject') or ''}{pr}")
    return [*out, ""] if b.get("range_commits") else out


# the regression experiment's runs, in the order the report lists them
REGRESSION_RUNS = (
    "base_jit",
    "diff_jit",
    "base_jit_with_diff_settings",
    "diff_jit_with_base_settings",
)


def _identity(b: dict[str, Any]) -> str:
    if not b.get("path"):
        return f"{b['role']}: (none)"
    if b.get("error"):
        return f"{b['role']}: `{b['path']}` ({b['error']})"
    build = f", build-id {b['build_id']}" if b.get("build_id") else ""
    symbols = b.get("symbols")
    if symbols:
        where = symbols.get("where")
        sym = (
            "; symbols "
            + (where if where == "in the binary" else f"from `{where}` ({symbols.get('how')})")
            if symbols.get("found")
            else f"; no symbols: {symbols.get('note')}"
        )
    else:
        sym = ""
    return f"{b['role']}: `{b['path']}` ({b['size']:,} bytes, modified {b['mtime']}{build}{sym})"


def _configuration(c: dict[str, Any]) -> list[str]:
    dbg = c["debugger"]
    return [
        f"- OS: {c['os']} (kernel {c['kernel']}), host architecture {c['host_arch']}",
        f"- target: {c['target']}",
        f"- {_identity(c['superpmi'])}",
        *[f"- {_identity(j)}" for j in c["jits"]],
        f"- {_identity(c['collection'])}",
        f"- debugger: {dbg['version'] or dbg['name']}",
        *(
            [f"- emulator: `{c['emulator']['command']}` ({c['emulator']['version']})"]
            if c.get("emulator")
            else []
        ),
        f"- spmi-dbg {c['spmi_dbg']} (Python {c['python']})",
    ]


def _needs(n: dict[str, Any] | None) -> list[str]:
    """What the failure needs: the JIT's switches tried one by one on the repro (not a culprit)."""
    if not n:
        return []
    out = ["#### What the failure needs", ""]
    if n["needs"]:
        out += [
            "By experiment, one replay of the repro per switch (it says what the failure needs, "
            "not which change caused it):",
            "",
            "| switch | turns off | outcome |",
            "|---|---|---|",
        ]
        for t in n["needs"]:
            outcome = str(t["outcome"]).removesuffix(" with")  # "gone", "still fails", ...
            out.append(f"| `{t['option']}={t['value']}` | {t['turns_off']} | {outcome} |")
        out.append("")
    out += [f"{note}." for note in n["notes"]]
    return [*out, ""] if n["notes"] else out


def _other(data: dict[str, Any], o: dict[str, Any]) -> list[str]:
    out = []
    v = o["verification"]
    if v is not None:
        expected = data["verification"]["expected"]
        out.append(
            f"- verification: {data['verification']['summary']}; {expected['kind']} expected"
            + (f", bucket `{expected['bucket']}`" if expected["bucket"] else "")
        )
    if data["failed_phase"]:
        out.append(f"- failed phase: {data['failed_phase']}: {data['failure']}")
    out += [f"- {h}" for h in o["how_found"]]
    jit_output = (data.get("target") or {}).get("jit_output")
    if jit_output:
        out.append(
            f"- JIT output: `{jit_output['file']}` ({jit_output['bytes']} bytes: "
            "JitStdOutFile with JitDump=* and JitDisasm=* on the repro)"
            if jit_output.get("file")
            else f"- JIT output: {jit_output.get('note')}"
        )
    m = o["minimization"]
    if m:
        out.append(
            "- minimization: the record alone did not reproduce; "
            f"ddmin over {m['candidates']} earlier record(s), {m['tests']} native replays, "
            f"{m['seconds']:.1f} s: " + ("; ".join(m["notes"]) or "no notes")
        )
    out += [f"- note: {n}" for n in o["notes"][:MAX_NOTES]]
    out += ["", "| phase | status | seconds | detail |", "|---|---|---|---|"]
    out += [
        f"| {p['name']} | {p['status']} | {p['seconds']:.2f} | {_cell(p['detail'])} |"
        for p in o["phases"]
    ]
    out += [
        "",
        "Found by spmi-dbg (`spmi-dbg repro`); the bundle also holds `report.json`, "
        "`diagnosis.json`, `debugger.log` and the replay's own `replay.stdout`/`replay.stderr`.",
    ]
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:2000]
