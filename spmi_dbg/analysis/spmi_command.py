"""The `spmi ...` command inside gdb and lldb: one argparse definition, one implementation over the view.
The debugger adapters only pass the argument string and print the result (or the one-line error)."""

from __future__ import annotations

import argparse
import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.analysis.diagnosis import diagnose
from spmi_dbg.analysis.render import render_text
from spmi_dbg.analysis.view import Process
from spmi_dbg.errors import SpmiDbgError


@dataclass(frozen=True)
class CommandResult:
    text: str
    error: str | None = None


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        raise _UsageError(message or "")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="spmi", description="SuperPMI-aware crash diagnosis (spmi-dbg).", add_help=True)
    sub = p.add_subparsers(dest="verb", metavar="VERB")
    sub.add_parser("why", help="explain the current stop: signal, module, method context, null map, instruction")
    d = sub.add_parser("diagnose", help="the full diagnosis")
    d.add_argument("--json", action="store_true", help="as JSON (what the unattended pipeline reads)")
    d.add_argument("--quick", action="store_true", help="skip the collection lookup and disassembly")
    sub.add_parser("context", help="the method context being replayed: number, name, IL size, input file")
    r = sub.add_parser("repro", help="write the current method context, byte-exact, to OUT (+ its .mct)")
    r.add_argument("out", nargs="?", help="output .mch (default: repro-<N>.mch in the current directory)")
    return p


HELP = build_parser().format_help()


def run(process: Process, arguments: str) -> CommandResult:
    parser = build_parser()
    try:
        args = parser.parse_args(shlex.split(arguments))
    except _UsageError as e:
        msg = str(e).strip()
        return CommandResult(HELP if not msg else "", None if not msg else f"spmi: {msg}")
    if args.verb is None:
        return CommandResult(HELP)
    try:
        return _dispatch(process, args)
    except SpmiDbgError as e:
        return CommandResult("", f"spmi {args.verb}: {e}")


def _dispatch(process: Process, args: argparse.Namespace) -> CommandResult:
    if args.verb == "why":
        return CommandResult(render_text(diagnose(process)))
    if args.verb == "diagnose":
        d = diagnose(process, full=not args.quick)
        return CommandResult(json.dumps(d.to_json(), indent=None if args.json else 2, sort_keys=True)
                             if args.json else render_text(d))
    if args.verb == "context":
        d = diagnose(process)
        mc = d.method_context
        if mc is None:
            return CommandResult("", "spmi context: no method context found in the stack: " + "; ".join(d.notes))
        return CommandResult("\n".join([
            f"method context {mc['number']}  [{mc['source']}]",
            f"name     {mc.get('name') or '(no name recorded)'}",
            f"IL size  {mc.get('il_size') if mc.get('il_size') is not None else '(unknown)'}",
            f"input    {mc.get('input') or '(unknown)'}",
        ]))
    if args.verb == "repro":
        return _repro(process, args.out)
    return CommandResult(HELP)


def _repro(process: Process, out: str | None) -> CommandResult:
    from spmi_dbg.mch.collection import Collection

    d = diagnose(process, full=False)
    mc = d.method_context
    if mc is None:
        return CommandResult("", "spmi repro: no method context found in the stack")
    if not mc.get("input"):
        return CommandResult("", "spmi repro: the input collection is not known (no command line)")
    number = int(mc["number"])
    dest = Path(out or f"repro-{number}.mch")
    with Collection.open(mc["input"]) as col:
        toc = col.extract([number], dest)
    return CommandResult(f"wrote method context {number} of {mc['input']} to {dest} (index {toc})")
