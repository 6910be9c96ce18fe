"""A report bundle written from inside a debugger (`spmi report DIR`): diagnosis.json, why.txt, report.md and
the method context's record as repro.mch (+ .mct), byte-exact. Files are written atomically."""

from __future__ import annotations

import json
from pathlib import Path

from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.commands.why import render_text
from spmi_dbg.mch.collection import Collection


def render_markdown(d: Diagnosis) -> str:
    mc = d.method_context
    sig = d.signal
    nm = d.null_map
    title = f"superpmi {sig.name if sig else 'stop'} in {d.folded[0] if d.folded else '?'}"
    if mc is not None and mc.number:
        title += f" for method context {mc.number}"
    lines = [f"# {title}", "", "## Description", ""]
    what = f"{sig.name if sig else 'A stop'} ({d.handling.kind}: {d.handling.reason})"
    if nm is not None:
        what += f"; null map {nm.owner_type}::{nm.member} of the {nm.role}: {nm.explanation}"
    lines += [what, "", "## Diagnosis", "", "```", render_text(d), "```", "", "<details><summary>Frames</summary>",
              "", "```"]
    lines += [f"#{f.index} {f.function}" + (f" at {f.file}:{f.line}" if f.file else "") +
              (" [inlined]" if f.inlined else "") for f in d.frames[:60]]
    lines += ["```", "", "</details>", ""]
    return "\n".join(lines)


def write_bundle(d: Diagnosis, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (("diagnosis.json", json.dumps(d.to_json(), indent=2, sort_keys=True) + "\n"),
                       ("why.txt", render_text(d) + "\n"), ("report.md", render_markdown(d))):
        atomic_write_text(out / name, text)
        written.append(out / name)
    mc = d.method_context
    if mc is not None and mc.input:
        with Collection.open(mc.input) as col:
            toc = col.extract([mc.number], out / "repro.mch")
        written += [out / "repro.mch", toc]
    return written
