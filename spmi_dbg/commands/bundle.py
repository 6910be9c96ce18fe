"""A report bundle written from inside a debugger (`spmi report DIR`): diagnosis.json, why.txt,
report.md and the method context's record as repro.mch (+ .mct), byte-exact. Files are written
atomically."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.commands.why import render_text
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch.collection import Collection
from spmi_dbg.method.seen import read_method
from spmi_dbg.outdir import check_out_dir, locked, publish, stage
from spmi_dbg.report import phrases
from spmi_dbg.report.method_part import MethodPart, method_section


def render_stop_markdown(d: Diagnosis, method: MethodPart | None = None) -> str:
    """report.md of an in-debugger bundle (`spmi report DIR`), from the stop's diagnosis: the
    phrasebook's title and facts, `spmi why`'s text, the method as the JIT saw it and the frames. A
    repro bundle's report.md is spmi_dbg.report.markdown's."""
    sig = d.signal
    mc = d.method_context
    title = phrases.crash_title(
        sig.name if sig else "stop",
        d,
        hang=d.hang,
        where=f" for method context {mc.number}" if mc is not None and mc.number else "",
    )
    lines = [f"# {title}", "", "## Description", ""]
    what = f"{sig.name if sig else 'A stop'} ({d.handling.kind}: {d.handling.reason})"
    if d.null_map is not None:
        what += (
            f"; null map {phrases.null_map_text(d.null_map, phrases.SUMMARY)}: "
            f"{d.null_map.explanation}"
        )
    lines += [
        what,
        "",
        *phrases.joined(phrases.fact_lines(d, phrases.MARKDOWN), "- "),
        "",
        "## Diagnosis",
        "",
        "```",
        render_text(d),
        "```",
        "",
        *(method_section(method, ("repro.mch", 1)) if method is not None else []),
        "<details><summary>Frames</summary>",
        "",
        "```",
    ]
    lines += [phrases.frame_text(f) for f in d.frames[:60]]
    lines += ["```", "", "</details>", ""]
    return "\n".join(lines)


REPORT_FILES = frozenset({"diagnosis.json", "why.txt", "report.md", "repro.mch", "repro.mch.mct"})


def write_bundle(d: Diagnosis, out: Path) -> list[Path]:
    """The bundle, checked, locked, built beside `out` and renamed into place whole
    (spmi_dbg.outdir): an existing `out` must hold only an earlier report of this kind."""
    check_out_dir(out, ours=REPORT_FILES, option="the report directory")
    method = _method(d)
    with locked(out):
        staged = stage(out)
        try:
            names = []
            for name, text in (
                ("diagnosis.json", json.dumps(d.to_json(), indent=2, sort_keys=True) + "\n"),
                ("why.txt", render_text(d) + "\n"),
                ("report.md", render_stop_markdown(d, method)),
            ):
                (staged / name).write_text(text)
                names.append(name)
            mc = d.method_context
            if mc is not None and mc.input:
                with Collection.open(mc.input) as col:
                    toc = col.extract([mc.number], staged / "repro.mch")
                names += ["repro.mch", toc.name]
            publish(staged, out)
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise
    return [out / name for name in names]


def _method(d: Diagnosis) -> MethodPart | None:
    """The stop's method context's method, from its collection; None when the collection or its
    compile request cannot be read (the rest of the bundle is written all the same)."""
    mc = d.method_context
    if mc is None or not mc.input:
        return None
    try:
        return MethodPart.of(read_method(mc.input, mc.number), d.jit)
    except (SpmiDbgError, OSError):
        return None
