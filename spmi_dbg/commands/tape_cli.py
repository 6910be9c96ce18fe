"""`spmi-dbg why TAPE [--json] [--redact]`: `spmi why` (or `spmi diagnose --json`) of a stop
recorded with `spmi why --record TAPE`, without a debugger, the binaries or the collection: the
diagnosis runs again on what the tape recorded (spmi_dbg.analysis.tape)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from spmi_dbg.analysis import tape
from spmi_dbg.commands.why import render_text
from spmi_dbg.report.redact import Redactor, add_redact_argument


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "why",
        help="explain a recorded stop (a tape written by `spmi why --record FILE`)",
        description="The diagnosis of a stop recorded in a tape (`spmi why --record FILE` in gdb "
        "or lldb), as `spmi why` printed it, without the debugger, the binaries or the collection.",
    )
    p.add_argument("tape", type=Path, help="the tape (JSON)")
    p.add_argument(
        "--json", action="store_true", help="the diagnosis as JSON (spmi diagnose --json)"
    )
    add_redact_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    recorded = tape.load(args.tape)
    d = recorded.diagnose()
    out = (
        json.dumps(d.to_json(), indent=2, sort_keys=True) if args.json else render_text(d)
    ) + "\n"
    if args.redact:
        out = Redactor.here().text(out)
    sys.stdout.write(out)
    return 0
