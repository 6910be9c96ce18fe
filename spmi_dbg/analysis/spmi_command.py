"""The `spmi ...` command inside gdb and lldb: one argparse definition, one implementation over the view.
The debugger adapters only pass the argument string and print the result (or the one-line error)."""

from __future__ import annotations

import argparse
import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.analysis.diagnosis import diagnose
from spmi_dbg.analysis.facts import member_int
from spmi_dbg.analysis.render import render_text
from spmi_dbg.analysis.view import Process, Value, with_stop_signal
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
    d.add_argument("--signal", metavar="SIG", help="the stop's signal, for targets that give no siginfo (qemu's "
                                                   "gdbstub): used only when the debugger cannot read it")
    sub.add_parser("context", help="the method context being replayed: number, name, IL size, input file")
    m = sub.add_parser("maps", help="the maps of a MethodContext/CompileResult: item counts, null ones marked")
    m.add_argument("expr", nargs="?", help="a MethodContext* or CompileResult* expression (default: the current "
                                           "method context and its compile results)")
    da = sub.add_parser("disasm", help="disassemble a compile result's code (Arm64: literal pool split off)")
    da.add_argument("cr", help="cr1 | cr2 | a CompileResult* expression")
    rp = sub.add_parser("report", help="write a report bundle (diagnosis.json, why.txt, report.md, repro.mch)")
    rp.add_argument("dir", nargs="?", help="output directory (default: spmi-report-<bucket>)")
    r = sub.add_parser("repro", help="write the current method context, byte-exact, to OUT (+ its .mct)")
    r.add_argument("out", nargs="?", help="output .mch (default: repro-<N>.mch in the current directory)")
    return p


_PARSER = build_parser()  # built once: building it costs ~2.5 ms (argparse's gettext lookups), once per stop
HELP = _PARSER.format_help()


def run(process: Process, arguments: str) -> CommandResult:
    parser = _PARSER
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
        d = diagnose(with_stop_signal(process, args.signal), full=not args.quick)
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
    if args.verb == "maps":
        return _maps(process, args.expr)
    if args.verb == "disasm":
        return _disasm(process, args.cr)
    if args.verb == "report":
        from spmi_dbg.report.bundle import write_bundle

        d = diagnose(process)
        out = Path(args.dir or f"spmi-report-{d.bucket}")
        files = write_bundle(d, out)
        return CommandResult(f"wrote {out}: " + ", ".join(f.name for f in files))
    return CommandResult(HELP)


def _repro(process: Process, out: str | None) -> CommandResult:
    from spmi_dbg.mch.collection import Collection

    d = diagnose(process)
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


def _is_map(type_name: str) -> bool:
    return "LightWeightMap<" in type_name and type_name.rstrip().endswith("*")


def describe_maps(owner: Value, label: str) -> list[str]:
    """One line per map member of a MethodContext/CompileResult: name, item count, or null."""
    if owner.as_int() == 0:
        return [f"{label}: null pointer"]
    out = [f"{label} ({owner.type_name.rstrip(' *')}):"]
    for name, v in owner.fields():
        if not _is_map(v.type_name):
            continue
        ptr = v.as_int()
        if ptr is None:
            out.append(f"  {name:<40} (not readable)")
        elif ptr == 0:
            out.append(f"  {name:<40} null (never recorded)")
        else:
            n = member_int(v, "numItems")
            buf = member_int(v, "bufferLength")
            out.append(f"  {name:<40} {n if n is not None else '?'} item(s), {buf if buf is not None else '?'} "
                       "buffer bytes")
    return out


def _maps(process: Process, expr: str | None) -> CommandResult:
    if expr:
        v = process.evaluate(expr)
        if v is None:
            return CommandResult("", f"spmi maps: cannot evaluate '{expr}'")
        if not any(t in v.type_name for t in ("MethodContext", "CompileResult")):
            return CommandResult("", f"spmi maps: '{expr}' is a {v.type_name}, expected a MethodContext* or "
                                     "CompileResult*")
        return CommandResult("\n".join(describe_maps(v, expr)))
    thread = process.selected_thread()
    for f in thread.frames() if thread is not None else []:
        for var in ("mc", "MethodToCompile", "this"):
            v = f.variable(var)
            if v is not None and v.type_name.replace(" ", "") == "MethodContext*" and v.as_int():
                lines = describe_maps(v, var)
                for sub in ("cr", "originalCR"):
                    crv = v.field(sub)
                    if crv is not None and crv.as_int() is not None:
                        lines += describe_maps(crv, f"{var}->{sub}")
                return CommandResult("\n".join(lines))
    return CommandResult("", "spmi maps: no MethodContext in the stack; give an expression")


def _lookup(process: Process, expr: str) -> Value | None:
    """A plain name is looked up in the frames of the stack (cr1/cr2 live in NearDiffer::compare), else the
    expression is evaluated in the selected frame."""
    if expr.isidentifier():
        thread = process.selected_thread()
        for f in thread.frames(200) if thread is not None else []:
            v = f.variable(expr)
            if v is not None and not v.optimized_out:
                return v
    return process.evaluate(expr)


def target_arch(process: Process) -> str:
    """The architecture the JIT generated code for: superpmi's -target, else the recorded
    GetExpectedTargetArchitecture of the current method context, else the process's own."""
    from spmi_dbg.analysis.mcnumber import find_method_context
    from spmi_dbg.replay import parse_command

    cmd = parse_command(process.argv() or [])
    opts = [o.lower() for o in cmd.options]
    if "-target" in opts and opts.index("-target") + 1 < len(opts):
        t = opts[opts.index("-target") + 1]
        return "aarch64" if t in ("arm64", "aarch64") else "x86_64"
    thread = process.selected_thread()
    found, _ = find_method_context(thread.frames() if thread is not None else [])
    if found is not None and cmd.input:
        from spmi_dbg.mch.collection import Collection

        try:
            with Collection.open(cmd.input) as col:
                arch = col.method_context(found.number).target_arch_name
            if arch in ("arm64", "x64"):
                return "aarch64" if arch == "arm64" else "x86_64"
        except SpmiDbgError:
            pass
    return process.arch


def _disasm(process: Process, expr: str) -> CommandResult:
    from spmi_dbg.analysis.disasm import DisasmError, code_of

    v = _lookup(process, expr)
    if v is None:
        return CommandResult("", f"spmi disasm: cannot find or evaluate '{expr}'")
    if "CompileResult" not in v.type_name:
        return CommandResult("", f"spmi disasm: '{expr}' is a {v.type_name}, expected a CompileResult*")
    if v.as_int() == 0:
        return CommandResult("", f"spmi disasm: '{expr}' is a null pointer")
    arch = target_arch(process)
    try:
        listing = code_of(process, v, arch)
    except DisasmError as e:
        return CommandResult("", f"spmi disasm: {expr}: {e}")
    native = "unknown (no CompileMethod map)" if listing.native_size is None else str(listing.native_size)
    head = f"{expr}: {arch} code, hotCodeSize {listing.hot_code_size}, nativeSizeOfCode {native}"
    return CommandResult("\n".join([head, *listing.lines]))
