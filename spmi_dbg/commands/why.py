"""`spmi why`: a Diagnosis as text for a human, in SuperPMI's terms."""

from __future__ import annotations

from spmi_dbg.analysis.facts import Diagnosis, JitFact
from spmi_dbg.report import phrases


def jit_line(j: JitFact) -> str:
    """`compiling X (IL size N) during <phase> [PHASE_X], method context M, MinOpts` (3.1's JIT:
    `after <phase>`): what is known of it; what is not is said so (`tried` says why)."""
    return phrases.jit_text(j, phrases.WHY)


def render_jit(j: JitFact) -> str:
    """`spmi jit`: every field, and what could not be read or was not believed."""
    phase = phrases.phase_text(j)
    rows = [
        ("method", j.method and f"{j.method}  [{j.method_source}]"),
        ("phase", phase and f"{phase}  [{j.phase_source}]"),
        (
            "enumerator",
            None
            if j.phase is None and j.phase_value is None
            else f"{j.phase or '?'} ({j.phase_value})",
        ),
        ("method context", None if j.method_context is None else str(j.method_context)),
        ("IL size", None if j.il_size is None else f"{j.il_size}  [{j.info_check}]"),
        ("optimization", j.opt_level),
        ("Compiler", j.source),
        ("JIT", j.module),
    ]
    out = [f"{k:<15}{v}" for k, v in rows if v]
    out += [f"not known: {t}" for t in j.tried]
    return "\n".join(out)


def render_text(d: Diagnosis) -> str:
    """`spmi why`: every fact the diagnosis established, in the phrasebook's words
    (spmi_dbg.report.phrases)."""
    return "\n".join(phrases.joined(phrases.fact_lines(d, phrases.WHY)))
