"""The phrasebook (spmi_dbg.report.phrases): each fact's words in each style, and the goal it
serves: a new fact reaches `spmi why`, report.md, report.json's facts, the summary rows and
triage.md through its fact and its phrase alone, with no view changed. The views here are the real
renderers on a real repro's report.json and a real triage."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.analysis.facts import (
    Diagnosis,
    Handling,
    HandlingKind,
    JitFact,
    KnownBugMatch,
    ModuleFact,
    ModuleRole,
    NullMap,
    SignalFact,
)
from spmi_dbg.commands.why import jit_line, render_text
from spmi_dbg.report import issue, parsed, phrases
from spmi_dbg.report.markdown import render_repro_markdown
from spmi_dbg.report.model import FactLine
from spmi_dbg.report.parsed import ReportJson, TriageJson
from spmi_dbg.report.text import rows
from spmi_dbg.report.triage import triage_markdown

from .support.common import Collections, seed_collection
from .support.natives import SEED_COMMAND
from .support.pipeline import report, repro_args, triage


def _jit(**changes: Any) -> JitFact:
    j = JitFact(
        frame=3,
        function="Compiler::fgMorph",
        module="libclrjit.so",
        source="frame 3 (this)",
        method="Ns.C:M",
        il_size=77,
        phase="PHASE_MORPH_GLOBAL",
        phase_value=9,
        phase_name="Morph - Global",
        method_context=12,
        opt_level="MinOpts",
        phase_when="during",
    )
    return dataclasses.replace(j, **changes)


def _null_map() -> NullMap:
    return NullMap(
        owner_type="CompileResult",
        member="CompileMethod",
        role="base compile result (cr1)",
        map_type="LightWeightMap<DWORD, Agnostic_CompileMethodResults>",
        packet_id=118,
        packet_name="PacketCR_CompileMethod",
        explanation="the base JIT's compile result has no CompileMethod map (packet 118 ...)",
        source="this of CompileResult::repCompileMethod",
    )


@pytest.mark.unit
def test_the_jit_in_each_style() -> None:
    j = _jit()
    assert phrases.jit_text(j, phrases.WHY) == (
        "compiling Ns.C:M (IL size 77) during Morph - Global "
        "[PHASE_MORPH_GLOBAL], method context 12, MinOpts"
    )
    assert phrases.jit_text(j, phrases.MARKDOWN) == (
        "compiling `Ns.C:M` (IL size 77) during Morph - Global (PHASE_MORPH_GLOBAL), MinOpts"
    )
    assert phrases.jit_text(j, phrases.SUMMARY) == (
        "compiling Ns.C:M (IL size 77) during Morph - Global (PHASE_MORPH_GLOBAL), MinOpts"
    )
    unknown = _jit(
        method=None,
        il_size=None,
        phase=None,
        phase_value=None,
        phase_name=None,
        method_context=None,
        opt_level=None,
    )
    assert phrases.jit_text(unknown, phrases.WHY) == "method not known yet, phase not known yet"
    assert phrases.jit_text(unknown, phrases.MARKDOWN) == "compiling a method not known yet"
    numbered = _jit(phase=None, phase_name=None, phase_when="after")  # only the number was read
    assert "after phase 9," in phrases.jit_text(numbered, phrases.SUMMARY)
    # `spmi why`'s line is the phrasebook's
    assert jit_line(_jit()) == phrases.jit_text(_jit(), phrases.WHY)


@pytest.mark.unit
def test_the_null_map_and_the_signal_in_each_style() -> None:
    nm = _null_map()
    assert phrases.null_map_text(nm, phrases.WHY) == (
        "CompileResult::CompileMethod of the base compile result "
        "(cr1), packet 118 PacketCR_CompileMethod"
    )
    assert phrases.null_map_text(nm, phrases.MARKDOWN).startswith(
        "`CompileResult::CompileMethod` of the base"
    )
    assert (
        phrases.null_map_text(nm, phrases.SUMMARY)
        == "CompileResult::CompileMethod of the base compile result (cr1)"
    )
    assert phrases.null_map_cause(nm) == "the base JIT's compile result has no CompileMethod map"
    assert (
        phrases.signal_text("SIGSEGV", 0x14, True, phrases.WHY)
        == "SIGSEGV at address 0x14 (near null)"
    )
    assert (
        phrases.signal_text("SIGSEGV", 0x14, True, phrases.SUMMARY) == "SIGSEGV at 0x14 (near null)"
    )
    assert phrases.signal_text("SIGABRT", None, False, phrases.MARKDOWN) == "`SIGABRT`"


def _diagnosis() -> Diagnosis:
    return Diagnosis(
        schema=1,
        debugger="gdb",
        arch="x86_64",
        signal=SignalFact("SIGSEGV", 11, 1, 0x14, True, "$_siginfo"),
        handling=Handling(HandlingKind.FATAL, "fault outside the JIT's protected call"),
        faulting_module=ModuleFact("/bin/superpmi", ModuleRole.SUPERPMI, "the pc's mapping"),
        method_context=None,
        null_map=_null_map(),
        instruction=None,
        assertion=None,
        folded=["CompileResult::repCompileMethod", "NearDiffer::compare"],
        signature="S",
        bucket="b",
        jit=_jit(),
    )


@pytest.mark.unit
def test_a_fault_and_a_debug_break() -> None:
    """A compile-failure target stops at a debug break superpmi asked for: no faulting module, no
    SIGTRAP."""
    d = _diagnosis()
    labels = [label for label, _ in phrases.fact_lines(d, phrases.MARKDOWN)]
    assert labels == ["faulting module", "", "null map", "stack", "signature"]
    assert "faulting module" not in [
        label for label, _ in phrases.fact_lines(d, phrases.MARKDOWN, at_fault=False)
    ]
    assert d.signal is not None
    trap = dataclasses.replace(d, signal=dataclasses.replace(d.signal, name="SIGTRAP"))
    assert phrases.fact_lines(trap, phrases.WHY, at_fault=False)[0][1] != "SIGTRAP"
    assert phrases.fact_lines(trap, phrases.WHY)[0][1].startswith("SIGTRAP at address 0x14")
    no_map = dataclasses.replace(d, null_map=None)
    assert ("null map", "none") in phrases.fact_lines(no_map, phrases.SUMMARY)
    why = render_text(_diagnosis()).splitlines()
    assert why[0] == "SIGSEGV at address 0x14 (near null)  [$_siginfo]"
    assert "method context: not found in the stack" in why and why[-2:] == [
        "signature: S",
        "bucket: b",
    ]


# ------------------------------------------------------------------------ a new fact, one place
# The faulting thread's name: a field added to the diagnosis, as a new fact is (analysis/facts.py)
DiagnosisPlus = dataclasses.make_dataclass(
    "DiagnosisPlus",
    [("thread", dict[str, Any] | None, dataclasses.field(default=None))],
    bases=(Diagnosis,),
)


def _thread(d: Diagnosis, style: phrases.Style, at_fault: bool) -> list[phrases.Line]:
    t = getattr(d, "thread", None)
    return [("thread", style.code(str(t["name"])) + f" (LWP {t['lwp']})")] if t else []


def _thread_cell(d: Diagnosis) -> str:
    return str((getattr(d, "thread", None) or {}).get("name"))


@pytest.fixture()
def thread_phrase(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The faulting thread's name, added as a new fact would be: its field in the diagnosis (read
    from report.json and triage.json by the one conversion), its phrase, its place in each style's
    order, a column of the triage table. Nothing else changes."""
    monkeypatch.setattr(parsed, "Diagnosis", DiagnosisPlus)
    monkeypatch.setitem(phrases.PHRASES, "thread", _thread)
    for name in ("WHY", "MARKDOWN", "SUMMARY"):
        style = getattr(phrases, name)
        monkeypatch.setattr(
            phrases, name, dataclasses.replace(style, order=(*style.order, "thread"))
        )
    monkeypatch.setattr(
        phrases, "TRIAGE_COLUMNS", (*phrases.TRIAGE_COLUMNS, ("thread", _thread_cell))
    )
    yield


THREAD = {"name": "superpmi-worker", "lwp": 4242}


@pytest.mark.unit
def test_a_new_fact_reaches_why_through_its_phrase_alone(thread_phrase: None) -> None:
    d = DiagnosisPlus(
        **{f.name: getattr(_diagnosis(), f.name) for f in dataclasses.fields(Diagnosis)},
        thread=THREAD,
    )
    assert "thread: superpmi-worker (LWP 4242)" in render_text(d).splitlines()


def test_a_new_fact_reaches_the_report_through_its_phrase_alone(
    thread_phrase: None, seed_bundle: tuple[Path, str]
) -> None:
    data = json.loads(json.dumps(report(seed_bundle[0])))
    data["diagnosis"]["thread"] = THREAD
    r = ReportJson.read(data)
    assert "- thread: `superpmi-worker` (LWP 4242)" in render_repro_markdown(r).splitlines()
    assert ("thread", "superpmi-worker (LWP 4242)") in rows(r)
    actual = issue.actual(r)
    assert FactLine("thread", "`superpmi-worker` (LWP 4242)") in actual.facts


def test_a_new_fact_reaches_the_triage_through_its_phrase_alone(
    thread_phrase: None, cols: Collections, tmp_path: Path
) -> None:
    r = triage(
        *repro_args(
            *SEED_COMMAND,
            str(seed_collection(cols)),
            out="t",
            workers=1,
            verify_runs=1,
            options=("--failure", "crash"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads((tmp_path / "t" / "triage.json").read_text())
    bucket = data["buckets"][0]
    # the smallest member's diagnosis
    assert bucket["diagnosis"]["signature"] == bucket["signature"]
    before = triage_markdown(TriageJson.read(data))
    bucket["diagnosis"]["thread"] = THREAD
    md = triage_markdown(TriageJson.read(data)).splitlines()
    header = next(line for line in md if line.startswith("| bucket |"))
    assert "| JIT phase | thread | count |" in header
    row = next(line for line in md if line.startswith(f"| `{bucket['bucket']}` |"))
    assert "| superpmi-worker |" in row
    assert "  - thread: `superpmi-worker` (LWP 4242)" in md and before != "\n".join(md) + "\n"


@pytest.mark.unit
def test_a_bug_in_how_the_crash_was_reported_is_no_known_bug_of_the_crash() -> None:
    """known_bugs.toml's `about = "reporting"` (#56506: -p hid the crash) is said as "also", in
    every style."""
    hid = KnownBugMatch(
        id="dotnet/runtime#56506",
        title="parallel mode hides a crash",
        url="https://x/56506",
        fix="",
        fix_url="",
        cause="",
        about="reporting",
        said="-p hid the crash",
    )
    seed = KnownBugMatch(
        id="dotnet/runtime#91257",
        title="near differ",
        url="https://x/91257",
        fix="#91783",
        fix_url="https://x/91783",
        cause="",
        about="crash",
        said="",
    )
    d = dataclasses.replace(_diagnosis(), known_bugs=[hid, seed])
    why = phrases.joined(phrases.fact_lines(d, phrases.WHY))
    assert "known bug: dotnet/runtime#91257: near differ" in why
    assert "also: -p hid the crash (dotnet/runtime#56506 https://x/56506)" in why
    assert not any(line.startswith("known bug: dotnet/runtime#56506") for line in why)
    assert phrases.known_bug_summary(hid) == (
        "also",
        "-p hid the crash (dotnet/runtime#56506 https://x/56506)",
    )
