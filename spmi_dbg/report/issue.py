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
from spmi_dbg.report import phrases

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


def issue(data: Data, configuration: Data) -> Data:
    """The `issue` section; `data` must already have its title."""
    return {
        "description": description(data),
        "reproduction": reproduction(data),
        "expected": expected(data),
        "actual": actual(data),
        "regression": regression(data),
        "workarounds": workarounds(data),
        "configuration": configuration,
        "other": other(data),
    }


def _collection(data: Data) -> str:
    return Path(data["command"]["input"]).name


def _winner(data: Data) -> bool:
    return bool(data["locate"]) and data["locate"]["winner"] is not None


def _expected_stop(data: Data) -> Data:
    return (data["locate"] or {}).get("expected") or {}


def signal_name(data: Data) -> str | None:
    """The stop's signal: the diagnosis', else the one the run expected (a hang's, a stop with no
    siginfo)."""
    sig = (data["diagnosis"] or {}).get("signal") or {}
    return sig.get("name") or _expected_stop(data).get("signal")


# ------------------------------------------------------------------------------------------ the
# title
def title(data: Data) -> str:
    if data.get("target"):
        target = data["target"]
        noun = target.get("noun") or target["describe"]  # report.json before `noun`: as it was
        return failure_title(data) or f"no {noun} in {_collection(data)}"
    if not _winner(data):
        what = NO_WINNER.get(str(data["outcome"]), str(data["outcome"]))
        return f"{what} in {_collection(data)}"
    mc = data["locate"]["method_context"]
    return phrases.crash_title(
        signal_name(data),
        data["diagnosis"] or {},
        hang=_expected_stop(data).get("kind") == "hang",
        where=f" for method context {mc}" if mc else "",
    )


def failure_title(data: Data) -> str | None:
    f = (data.get("target") or {}).get("failure")
    if not f:
        return None
    mc = f["method_context"]
    if f["kind"] == "assert":
        # dotnet/runtime's titles are the JIT's own line: "... during '<phase>'". Only the running
        # phase is said so; 3.1's JIT knows only the phase completed last ("after"), which the
        # description says, never the title as if it were the running one.
        phase, when = assert_phase(data)
        where = "" if phase is None or when != "during" else f" during '{phase}'"
        return f"Assertion failed '{f['message']}' in '{f['method']}'{where}"
    if f["kind"] == "error":
        return f"superpmi: the compile of method context {mc} fails ({f['message']})"
    return f"superpmi: missing data for method context {mc}: {f['message']}"


def assert_phase(data: Data) -> tuple[str | None, str]:
    """The assert's phase and how to say it: ("P", "during") when the ISSUE line names it; else the
    JIT's state at the debugger's stop in the assert (3.1: Compiler::previousCompletedPhase, the
    phase completed last: "after"); else (None, "")."""
    f = ((data.get("target") or {}).get("failure")) or {}
    if f.get("phase"):
        return str(f["phase"]), "during"
    jit = ((data.get("diagnosis") or {}).get("jit")) or {}
    if jit.get("phase_name"):
        return str(jit["phase_name"]), str(jit.get("phase_when") or "during")
    return None, ""


# ------------------------------------------------------------------------------------ the
# description
def description(data: Data) -> str:
    if data.get("target"):
        return failure_description(data)
    if not _winner(data):
        return f"{data['title']}: every partition of {_collection(data)} ran to its end."
    d = data["diagnosis"] or {}
    text = _what_happened(data, d)
    jit = d.get("jit") or {}
    phase = phrases.phase_text(jit)
    if jit.get("method") or phase:
        text += " while " + (
            f"compiling `{jit['method']}`" if jit.get("method") else "the JIT was compiling it"
        )
        text += f" {phase}" if phase else ""
    if d.get("null_map"):
        text += f": {phrases.null_map_cause(d['null_map'])}"
    text += "."
    fm = d.get("faulting_module")
    if fm and fm.get("role"):
        text += " " + phrases.module_clause(fm)
    for c in data.get("causes") or d.get("causes") or []:  # the setup, not the JIT
        text += f" Why: {c['advice']} (`{c['kind']}`)."
    return (
        text
        + _settings_sentence(data.get("jit_settings"))
        + _repro_sentence(data)
        + "".join(" " + phrases.known_bug_sentence(b) for b in _bugs_in_order(data))
    )


def _what_happened(data: Data, d: Data) -> str:
    """`superpmi segfaults in F (called from G) for method context N (`name`, IL size S)`."""
    who = phrases.method_context_text(
        data["locate"].get("method_context"), d.get("method_context"), phrases.MARKDOWN
    )
    folded = [f for f in d.get("folded") or [] if f and f != "??"]
    where = f" in {folded[0]}" if folded else ""
    if len(folded) > 1:
        where += f" (called from {folded[1]})"
    if _expected_stop(data).get("kind") == "hang":
        return f"superpmi hangs{where} while replaying {who}"
    sig = signal_name(data) or "a signal"
    return f"superpmi {VERBS.get(sig, f'dies of {sig}')}{where} for {who}"


def _settings_sentence(settings: Data | None) -> str:
    return f" It {settings['summary']}." if settings and settings["given"] else ""


def _repro_sentence(data: Data) -> str:
    if not data["repro"]:
        return ""
    verdict = "verified" if data["outcome"] == "verified" else "NOT verified"
    return f" A {data['repro']['records']}-record repro collection is attached ({verdict})."


def _bugs_in_order(data: Data) -> list[Data]:
    """The crash's own known bugs first, then those in how the crash was reported."""
    return sorted(data["known_bugs"], key=lambda b: not phrases.is_about_the_crash(b))


def failure_description(data: Data) -> str:
    t = data["target"]
    f = t["failure"]
    if f is None:
        return f"{data['failure'] or 'no such failure'}."
    d = data["diagnosis"] or {}
    who = phrases.method_context_text(
        f["method_context"], d.get("method_context"), phrases.MARKDOWN
    )
    if f["kind"] == "assert":
        phase, when = assert_phase(data)
        source = (d.get("jit") or {}).get("phase_source")
        during = (
            ""
            if phase is None
            else f" {when} {phase}"
            if not (f.get("phase") is None and source)
            else f" {when} {phase} ({source} at the debugger's stop in the assert)"
        )
        text = (
            f"The JIT asserts `{f['message']}` at `{f['file']}` line {f['source_line']} while "
            "compiling "
            f"`{f['method']}`{during}, replaying {who}."
        )
    elif f["kind"] == "error":
        text = f"The compile of {who} fails: superpmi caught `{f['message']}`."
    else:
        text = f"Replaying {who} needs data the collection does not have: {f['message']}."
    return text + _settings_sentence(t.get("options")) + _repro_sentence(data)


# ------------------------------------------------------------------------- reproduction and
# expectation
def reproduction(data: Data) -> Data:
    rep = data["repro"]
    if rep is None:
        return {
            "attachment": None,
            "command": shell.join(_argv(data)),
            "steps": [
                f"Run `{shell.join(_argv(data))}` (no single-method repro was produced: see Other "
                "information)."
            ],
        }
    numbers = ", ".join(map(str, rep["method_contexts"]))
    steps = [
        f"Download the attached `repro.mch` (method context(s) {numbers} of `{_collection(data)}`, "
        f"byte-for-byte, {rep['bytes']} bytes; `repro.mch.mct` is its index)."
    ]
    opts = data.get("jit_settings")
    if opts and opts["given"]:
        needed = ", ".join(f"`{s}`" for s in opts["needed"]) or "none of the JIT settings given"
        dropped = "; ".join(opts["dropped"])
        steps.append(
            f"The failure needs these JIT settings: {needed}"
            + (f" (not needed: {dropped})" if dropped else "")
            + "; the command has only them."
        )
    steps.append("Run `repro.sh` from the bundle, or the same command with your paths:")
    return {"attachment": "repro.mch", "command": data["repro_command"], "steps": steps}


def _argv(data: Data) -> list[str]:
    """The user's command as it ran: its recorded variables (sh's NAME=VALUE prefix), its options,
    its -c list, its JITs and collection."""
    c = data["command"]
    env = [f"{v['name']}={v['value']}" for v in c.get("environment") or []]
    selection = ["-c", str(c["selection"])] if c.get("selection") else []
    return [*env, c["program"], *c["options"], *selection, *c["jits"], c["input"]]


def expected(data: Data) -> str:
    if data.get("target"):
        what = {
            "assert": "without a JIT assert",
            "error": "without a failed compile",
            "missing": "without missing data",
        }.get(data["target"]["kind"], "without a failure")
        return f"superpmi replays the method context(s) {what} (exit status 0)."
    cmd = data["command"]
    if len(cmd["jits"]) > 1 and any(o.lower().startswith("-a") for o in cmd["options"]):
        return (
            "superpmi replays the method context(s) and compares the two JITs' code without "
            "crashing "
            "(exit status 0, or 2 when the code differs)."
        )
    return (
        "superpmi replays the method context(s) without crashing (exit status 0; 1 for a failed "
        "compile)."
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
)  # the diagnosis' facts the section carries as they are


def actual(data: Data) -> Data:
    """What happened: the stop's facts as data, and in words (`facts`: report.md's list of them)."""
    d = data["diagnosis"] or {}
    sig = d.get("signal") or {}
    return {
        "signal": signal_name(data),
        "fault_address": sig.get("address"),
        "near_null": sig.get("near_null"),
        "signal_source": sig.get("source"),
        "hang": bool(d.get("hang")),
        **{key: d.get(key) for key in ACTUAL_FACTS},
        "backtrace": list(d.get("folded") or []),
        "frames": _frames(d),
        "facts": [
            {"label": label, "text": text}
            for label, text in phrases.fact_lines(
                d, phrases.MARKDOWN, at_fault=not data.get("target")
            )
        ],
    }


def _frames(d: Data) -> list[str]:
    return [phrases.frame_text(f) for f in (d.get("frames") or [])[:60]]


# ------------------------------------------------------------------- regression, workarounds, other
def regression(data: Data) -> Data:
    r = data["regression"]
    if r is not None:
        return {"answered": True, "conclusion": r["conclusion"]} | {
            key: r[key]
            for key in (
                "base_jit",
                "diff_jit",
                "base_jit_with_diff_settings",
                "diff_jit_with_base_settings",
            )
            if key in r
        }
    why = (
        "one JIT only in the command: replay the repro with another build of the JIT to tell"
        if len(data["command"]["jits"]) < 2
        else "not answered: the repro was not verified"
    )
    return {"answered": False, "conclusion": why}


def workarounds(data: Data) -> list[str]:
    """Each known bug's fix: `id (what it hid): fix`."""
    said = {
        b["id"]: f" ({b['said']})"
        for b in data["known_bugs"]
        if not phrases.is_about_the_crash(b) and b.get("said")
    }
    return [
        f"{b['id']}{said.get(b['id'], '')}: {b['fix']}" for b in data["known_bugs"] if b.get("fix")
    ]


def other(data: Data) -> Data:
    d = data["diagnosis"] or {}
    located = data["locate"] or {}
    how = (
        [f"method context {located['method_context']}: {located['method_context_source']}"]
        if located.get("method_context")
        else []
    )
    v = data["verification"]
    return {
        "verification": None
        if v is None
        else {k: v[k] for k in ("rate", "runs", "reproduced", "accepted")},
        "how_found": how + phrases.how_found(d),
        "minimization": data["minimization"],
        "notes": [
            *data["command"]["notes"],
            *(located.get("notes") or []),
            *(d.get("notes") or []),
        ],
        "phases": [
            {k: p[k] for k in ("name", "status", "seconds", "detail")} for p in data["phases"]
        ],
    }
