"""The `spmi ...` command inside gdb and lldb: one argparse definition, one implementation over the
view. The debugger adapters (spmi_dbg.ext.gdb, spmi_dbg.ext.lldb) only pass the argument string and
print the result (or the one-line error). The diagnosis itself is spmi_dbg.analysis'; this package
parses, renders and writes files."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any

from spmi_dbg.analysis import tape, taperecord
from spmi_dbg.analysis.diagnosis import Diagnosis, diagnose
from spmi_dbg.analysis.jitstate import jit_state
from spmi_dbg.analysis.view import Process, with_stop_signal
from spmi_dbg.atomic import atomic_write_text, check_output
from spmi_dbg.commands.bundle import write_bundle
from spmi_dbg.commands.inspect import disasm, maps
from spmi_dbg.commands.result import CommandResult
from spmi_dbg.commands.why import render_jit, render_text
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch.collection import Collection
from spmi_dbg.method.callees import callees_text
from spmi_dbg.method.seen import read_method
from spmi_dbg.report.method_part import MethodPart, method_text
from spmi_dbg.report.redact import Redactor
from spmi_dbg.superpmi_argv import parse_command


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # as every spmi-dbg parser (spmi_dbg.usage): `--js` is not `--json`
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        raise _UsageError(message or "")


RECORD_HELP = (
    "also write a tape of this stop to FILE: what the diagnosis read (frames, values, memory, "
    "registers, modules, signal), for `spmi-dbg why FILE` without the build"
)


REDACT_HELP = "with --record: the home directory, user and host names replaced in the tape"


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="spmi", description="SuperPMI-aware crash diagnosis (spmi-dbg).", add_help=True
    )
    sub = p.add_subparsers(dest="verb", metavar="VERB")
    w = sub.add_parser(
        "why",
        help="explain the current stop: signal, module, method context, null map, instruction",
    )
    w.add_argument("--record", metavar="FILE", help=RECORD_HELP)
    w.add_argument("--redact", action="store_true", help=REDACT_HELP)
    d = sub.add_parser("diagnose", help="the full diagnosis")
    d.add_argument("--record", metavar="FILE", help=RECORD_HELP)
    d.add_argument("--redact", action="store_true", help=REDACT_HELP)
    d.add_argument(
        "--json", action="store_true", help="as JSON (what the unattended pipeline reads)"
    )
    d.add_argument(
        "--quick", action="store_true", help="skip the collection lookup and disassembly"
    )
    d.add_argument(
        "--signal",
        metavar="SIG",
        help="the stop's signal, for targets that give no siginfo (qemu's "
        "gdbstub): used only when the debugger cannot read it",
    )
    sub.add_parser(
        "context", help="the method context being replayed: number, name, IL size, input file"
    )
    sub.add_parser(
        "jit", help="what the JIT was doing: the method being compiled, the phase, IL size, options"
    )
    m = sub.add_parser(
        "maps", help="the maps of a MethodContext/CompileResult: item counts, null ones marked"
    )
    m.add_argument(
        "expr",
        nargs="?",
        help="a MethodContext* or CompileResult* expression (default: the current "
        "method context and its compile results)",
    )
    m.add_argument(
        "--all", action="store_true", help="list the never-recorded (null) maps one by one too"
    )
    da = sub.add_parser(
        "disasm", help="disassemble a compile result's code (Arm64: literal pool split off)"
    )
    da.add_argument("cr", help="cr1 | cr2 | a CompileResult* expression")
    rp = sub.add_parser(
        "report", help="write a report bundle (diagnosis.json, why.txt, report.md, repro.mch)"
    )
    rp.add_argument("dir", nargs="?", help="output directory (default: spmi-report-<bucket>)")
    il = sub.add_parser(
        "il",
        help="the IL of the method context being replayed, with the recorded names, its JIT "
        "flags, and the instruction the JIT is importing marked",
    )
    il.add_argument("--json", action="store_true", help="as data (report.json's `method`)")
    c = sub.add_parser(
        "callees", help="the callees the JIT looked at in the method context being replayed"
    )
    c.add_argument("--il", action="store_true", help="with each callee's IL")
    r = sub.add_parser(
        "repro", help="write the current method context, byte-exact, to OUT (+ its .mct)"
    )
    r.add_argument(
        "out", nargs="?", help="output .mch (default: repro-<N>.mch in the current directory)"
    )
    return p


# built once: building it costs ~2.5 ms (argparse's gettext lookups), once per stop
_PARSER = build_parser()
HELP = _PARSER.format_help()


def _parse(arguments: str) -> argparse.Namespace | CommandResult:
    """The arguments, or what to answer instead (the help, or a usage error)."""
    try:
        args = _PARSER.parse_args(shlex.split(arguments))
    except _UsageError as e:
        msg = str(e).strip()
        return CommandResult(HELP if not msg else "", None if not msg else f"spmi: {msg}")
    return CommandResult(HELP) if args.verb is None else args


def without_process(
    arguments: str,
    *,
    ended: bool = False,
    status: int | None = None,
    signal: str | None = None,
    detail: str | None = None,
    argv: list[str] | None = None,
) -> CommandResult:
    """`spmi ...` when the debugger has no live process: before the first run ("run the program
    first"), or after the program ended (`ended`): with exit `status`, by `signal`, or killed
    (neither known). `detail` is the debugger's own word on it; `argv` the program's command line,
    when the debugger tells it. There is no stop to read, so every verb answers the same: nothing
    to diagnose. The help and usage errors are as with a process."""
    args = _parse(arguments)
    if isinstance(args, CommandResult):
        return args
    if not ended:
        return CommandResult("", "spmi: no process (run the program first)")
    if status is not None:
        how = f"exited with status {status}"
    elif signal is not None:
        how = f"was terminated by {signal}"
    else:
        how = "was killed"
    extra = f" ({detail})" if detail else ""
    return CommandResult(
        "",
        f"spmi {args.verb}: the program {how}{extra}: nothing to diagnose (the spmi "
        "commands read a stopped process)" + _lost_worker(status, argv),
    )


def _lost_worker(status: int | None, argv: list[str] | None) -> str:
    """A superpmi `-p` parent that exited 1: the pattern of a worker that died unseen."""
    if status != 1 or argv is None or not parse_command(argv).parallel:
        return ""
    return (
        "; a superpmi -p parent exits 1 without a word when a worker dies "
        "(dotnet/runtime#56506): its summary counts fewer method contexts than it replays. The "
        "debugger sees only the parent: run the command without -p here, or "
        "`spmi-dbg repro -- <the command>`, which drops -p and finds the crash"
    )


def run(process: Process, arguments: str) -> CommandResult:
    args = _parse(arguments)
    if isinstance(args, CommandResult):
        return args
    try:
        return _dispatch(process, args)
    except SpmiDbgError as e:
        return CommandResult("", f"spmi {args.verb}: {e}")


def _diagnosed(
    process: Process, record_to: str | None, *, full: bool = True, redact: bool = False
) -> tuple[Diagnosis, str | None]:
    """The diagnosis, and where its tape was written (`--record FILE`, `--redact`)."""
    if record_to is None:
        return diagnose(process, full=full), None
    out = check_output(record_to, what="tape")
    d, data = taperecord.record(process, full=full)
    if redact:
        data = Redactor.here().data(data)
    atomic_write_text(out, tape.dumps(data))
    return d, str(out)


def _dispatch(process: Process, args: argparse.Namespace) -> CommandResult:
    if args.verb == "why":
        d, recorded = _diagnosed(process, args.record, redact=args.redact)
        text = render_text(d)
        return CommandResult(text + (f"\ntape: {recorded}" if recorded else ""))
    if args.verb == "diagnose":
        d, recorded = _diagnosed(
            with_stop_signal(process, args.signal),
            args.record,
            full=not args.quick,
            redact=args.redact,
        )
        return CommandResult(
            json.dumps(d.to_json(), indent=None if args.json else 2, sort_keys=True)
            if args.json
            else render_text(d) + (f"\ntape: {recorded}" if recorded else "")
        )
    if args.verb == "context":
        d = diagnose(process)
        mc = d.method_context
        if mc is None:
            return CommandResult(
                "", "spmi context: no method context found in the stack: " + "; ".join(d.notes)
            )
        return CommandResult(
            "\n".join(
                [
                    f"method context {mc.number}  [{mc.source}]",
                    f"name     {mc.name or '(no name recorded)'}",
                    f"IL size  {mc.il_size if mc.il_size is not None else '(unknown)'}",
                    f"input    {mc.input or '(unknown)'}",
                ]
            )
        )
    if args.verb == "jit":
        # the method context and its record: what the JIT's info is checked against
        d = diagnose(process)
        if d.jit is None:
            thread = process.selected_thread()
            notes = jit_state(process, thread.frames() if thread is not None else [])[1]
            return CommandResult("", "spmi jit: " + "; ".join(notes))
        return CommandResult(render_jit(d.jit))
    if args.verb == "repro":
        return _repro(process, args.out)
    if args.verb in ("il", "callees"):
        return _method(process, args)
    if args.verb == "maps":
        nm = diagnose(process).null_map  # the map the fault read, marked
        faulted = (nm.owner_type, nm.member, nm.role) if nm is not None else None
        return maps(process, args.expr, faulted=faulted, show_all=args.all)
    if args.verb == "disasm":
        return disasm(process, args.cr)
    if args.verb == "report":
        d = diagnose(process)
        out = Path(args.dir or f"spmi-report-{d.bucket}")
        files = write_bundle(d, out)
        return CommandResult(f"wrote {out}: " + ", ".join(f.name for f in files))
    return CommandResult(HELP)


def _method(process: Process, args: argparse.Namespace) -> CommandResult:
    """`spmi il` / `spmi callees`: the method context the stack names, read from its collection."""
    d = diagnose(process)
    mc = d.method_context
    if mc is None:
        return CommandResult("", f"spmi {args.verb}: no method context found in the stack")
    if not mc.input:
        return CommandResult(
            "", f"spmi {args.verb}: the input collection is not known (no command line)"
        )
    if args.verb == "callees":
        seen = read_method(mc.input, mc.number, callee_il=args.il)
        return CommandResult(callees_text(mc.number, seen.callees).rstrip("\n"))
    part = MethodPart.of(read_method(mc.input, mc.number), d.jit)
    if args.json:
        return CommandResult(json.dumps(part.to_json(), indent=2))
    return CommandResult(method_text(part))


def _repro(process: Process, out: str | None) -> CommandResult:
    d = diagnose(process)
    mc = d.method_context
    if mc is None:
        return CommandResult("", "spmi repro: no method context found in the stack")
    if not mc.input:
        return CommandResult("", "spmi repro: the input collection is not known (no command line)")
    number = mc.number
    dest = Path(out or f"repro-{number}.mch")
    with Collection.open(mc.input) as col:
        toc = col.extract([number], dest)
    return CommandResult(f"wrote method context {number} of {mc.input} to {dest} (index {toc})")
