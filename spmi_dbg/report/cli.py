"""`spmi-dbg report BUNDLE [--format md|json|text] [--redact] [--gh-issue]`: re-render a repro
bundle (or a triage directory) from its report.json (triage.json) alone; `--gh-issue` prints the `gh
issue create` command for it without running it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from spmi_dbg import shell
from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.errors import InputError
from spmi_dbg.jsonfacts import FactJsonError
from spmi_dbg.report.found import found_phrase
from spmi_dbg.report.markdown import render_repro_markdown
from spmi_dbg.report.parsed import ReportJson, TriageJson
from spmi_dbg.report.redact import Redactor, add_redact_argument
from spmi_dbg.report.schema import (
    REPORT_SCHEMA_VERSION,
    REPORT_SCHEMAS_READ,
    TRIAGE_SCHEMA_VERSION,
)
from spmi_dbg.report.text import render_text
from spmi_dbg.report.triage import triage_markdown, triage_text

GH_REPO = "dotnet/runtime"


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="re-render a repro bundle or a triage directory (Markdown, JSON, text)",
        description="Re-render a bundle written by `spmi-dbg repro` (report.json) or a directory "
        "written by `spmi-dbg triage` (triage.json), from its data alone.",
    )
    p.add_argument(
        "bundle", type=Path, help="the bundle directory (or its report.json / triage.json)"
    )
    p.add_argument(
        "--format", choices=("md", "json", "text"), default="md", help="output format (default md)"
    )
    add_redact_argument(p)
    p.add_argument(
        "--gh-issue",
        action="store_true",
        help=f"print the `gh issue create` command for this report ({GH_REPO}); nothing is run",
    )
    p.set_defaults(func=run)


def load(path: Path) -> tuple[str, dict[str, Any], Path]:
    """("report" | "triage", the data, its file)."""
    if path.is_dir():
        candidates = [path / "report.json", path / "triage.json"]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise InputError(
                str(path),
                "not a bundle: no report.json (spmi-dbg repro) or triage.json (spmi-dbg triage)",
            )
        path = found
    kind = "triage" if path.name == "triage.json" else "report"
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise InputError(str(path), "not found") from None
    except OSError as e:
        raise InputError(str(path), f"cannot read: {e.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(
            str(path), f"line {e.lineno} column {e.colno} (offset {e.pos}): not valid JSON: {e.msg}"
        ) from None
    want = TRIAGE_SCHEMA_VERSION if kind == "triage" else REPORT_SCHEMA_VERSION
    readable = (want,) if kind == "triage" else REPORT_SCHEMAS_READ
    if not isinstance(data, dict) or data.get("schema") not in readable:
        got = data.get("schema") if isinstance(data, dict) else None
        raise InputError(
            str(path),
            f"schema {got}, expected {want}: written by another spmi-dbg version; "
            f"run spmi-dbg {'triage' if kind == 'triage' else 'repro'} again",
        )
    return kind, data, path


def read(path: Path, kind: str, data: dict[str, Any]) -> ReportJson | TriageJson:
    """The data with its facts read by the one conversion (jsonfacts), once: a hand-edited or cut
    report names the field that is not the form spmi-dbg writes."""
    try:
        return TriageJson.read(data) if kind == "triage" else ReportJson.read(data)
    except FactJsonError as e:
        raise InputError(str(path), f"{e}: not the form spmi-dbg writes") from None


def run(args: argparse.Namespace) -> int:
    kind, data, path = load(args.bundle)
    directory = path.parent
    redactor = Redactor.here() if args.redact else None
    if redactor is not None:
        data = redactor.data(data)
    parsed = read(path, kind, data)
    if args.gh_issue:
        title = data["title"] if kind == "report" else _triage_title(data)
        body = directory / ("report.md" if kind == "report" else "triage.md")
        # the bundle's own files stay as they are: the redacted body beside them
        if redactor is not None:
            body = body.with_name(body.stem + ".redacted.md")
            atomic_write_text(body, render(parsed, "md"))
        print(
            shell.join(
                [
                    "gh",
                    "issue",
                    "create",
                    "--repo",
                    GH_REPO,
                    "--title",
                    title,
                    "--body-file",
                    str(body),
                ]
            )
        )
        return 0
    try:
        text = render(parsed, args.format)
    except (KeyError, TypeError, AttributeError) as e:  # a key or a value of another form
        raise InputError(
            str(directory), f"cannot render: {type(e).__name__} {e}: not the form spmi-dbg writes"
        ) from None
    sys.stdout.write(text)
    return 0


def _triage_title(data: dict[str, Any]) -> str:
    return f"superpmi: {found_phrase(data)} in {Path(data['command']['input']).name}"


def render(parsed: ReportJson | TriageJson, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(parsed.data, indent=2) + "\n"
    if isinstance(parsed, TriageJson):
        return triage_markdown(parsed) if fmt == "md" else triage_text(parsed)
    return render_repro_markdown(parsed) if fmt == "md" else render_text(parsed)
