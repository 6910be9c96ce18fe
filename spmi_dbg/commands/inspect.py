"""`spmi maps` and `spmi disasm`: a MethodContext's or CompileResult's maps with their item counts
(null ones marked), and a compile result's code disassembled for the architecture the JIT generated
it for."""

from __future__ import annotations

from spmi_dbg.analysis.disasm import DisasmError, code_of
from spmi_dbg.analysis.frames import frame_ref, short_name
from spmi_dbg.analysis.mcnumber import find_method_context
from spmi_dbg.analysis.values import member_int
from spmi_dbg.analysis.view import Process, Value
from spmi_dbg.commands.result import CommandResult
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch.collection import Collection
from spmi_dbg.superpmi_argv import parse_command

STACK_LOOKUP_FRAMES = 200  # how deep a plain name is looked for


def _is_map(type_name: str) -> bool:
    return "LightWeightMap<" in type_name and type_name.rstrip().endswith("*")


def describe_maps(
    owner: Value,
    label: str,
    where: str = "",
    *,
    faulted: tuple[str, str, str] | None = None,
    show_all: bool = False,
) -> list[str]:
    """The map members of a MethodContext/CompileResult: the one the fault read first, marked
    (`faulted`: the diagnosis' null map, its owner type, member and role, e.g. "base compile result
    (cr1)": the mark says whether this owner is that one), then those recorded with their item
    counts; the never-recorded (null) ones folded into one count line (`show_all`: listed).
    `where`: the frame it was found in, when not the selected one."""
    if owner.as_int() == 0:
        return [f"{label}: null pointer" + (f" ({where})" if where else "")]
    owner_type = owner.type_name.rstrip(" *").split("::")[-1].strip()
    out = [f"{label} ({owner.type_name.rstrip(' *')}" + (f", {where}" if where else "") + "):"]
    first: list[str] = []
    rows: list[str] = []
    null: list[str] = []
    for name, v in owner.fields():
        if not _is_map(v.type_name):
            continue
        ptr = v.as_int()
        hit = faulted is not None and (owner_type, name) == faulted[:2]
        if ptr is None:
            line = f"  {name:<40} (not readable)"
        elif ptr == 0:
            if not hit and not show_all:
                null.append(name)
                continue
            line = f"  {name:<40} null (never recorded)"
        else:
            n = member_int(v, "numItems")
            buf = member_int(v, "bufferLength")
            line = (
                f"  {name:<40} {n if n is not None else '?'} item(s), "
                f"{buf if buf is not None else '?'} buffer bytes"
            )
        if hit and faulted is not None:
            first.append(line + _mark(label, faulted[2]))
        else:
            rows.append(line)
    out += first + rows
    if null:
        out.append(f"  {len(null)} more map(s) null (never recorded): spmi maps --all lists them")
    return out


def _mark(label: str, role: str) -> str:
    """The faulting map's mark: this owner is the one the fault read (its role names it: `(cr1)`,
    `(mc->cr)`, the method context), or another of its type whose map of that name is null too."""
    if f"({label})" in role or (label in ("mc", "this") and role == "method context"):
        return "   <- the map the fault read"
    return f"   <- null too; the fault read this map of the {role}"


def maps(
    process: Process,
    expr: str | None,
    *,
    faulted: tuple[str, str, str] | None = None,
    show_all: bool = False,
) -> CommandResult:
    """`spmi maps [EXPR] [--all]`: `faulted` is the stop's null map (owner type, member)."""
    if expr:
        v, where = find_value(process, expr)
        if v is None:
            return CommandResult("", f"spmi maps: {_not_found(expr)}")
        if not any(t in v.type_name for t in ("MethodContext", "CompileResult")):
            return CommandResult(
                "",
                f"spmi maps: '{expr}' is a {v.type_name}"
                + (f" ({where})" if where else "")
                + ", expected a MethodContext* or CompileResult*",
            )
        return CommandResult(
            "\n".join(describe_maps(v, expr, where, faulted=faulted, show_all=show_all))
        )
    thread = process.selected_thread()
    unreadable: list[str] = []  # MethodContext pointers the frames have but cannot give
    for i, f in enumerate(thread.frames() if thread is not None else []):
        for var in ("mc", "MethodToCompile", "this"):
            v = f.variable(var)
            if v is None or v.type_name.replace(" ", "") != "MethodContext*":
                continue
            if v.optimized_out or not v.as_int():
                why = "optimized out" if v.optimized_out else "null"
                unreadable.append(f"{var} in {short_name(f.function)} ({frame_ref(f, i)}) is {why}")
                continue
            lines = describe_maps(v, var, faulted=faulted, show_all=show_all)
            for sub in ("cr", "originalCR"):
                crv = v.field(sub)
                if crv is not None and crv.as_int() is not None:
                    lines += describe_maps(crv, f"{var}->{sub}", faulted=faulted, show_all=show_all)
            return CommandResult("\n".join(lines))
    if unreadable:
        return CommandResult(
            "",
            "spmi maps: the stack has a MethodContext but not its value ("
            + "; ".join(unreadable)
            + "); give an expression",
        )
    return CommandResult("", "spmi maps: no MethodContext in the stack; give an expression")


def find_value(process: Process, expr: str) -> tuple[Value | None, str]:
    """`expr` in the selected frame; a plain name that frame does not have (or has optimized out) is
    looked up in the frames of the stack, innermost first (cr1/cr2 are NearDiffer::compare's
    arguments, a few frames up from a fault in CompileResult::repCompileMethod). Returns (value,
    "found in frame N: function") for a value found up the stack, (value, "") for the selected
    frame's, (None, "") when neither has it. N is the debugger's own frame number (gdb's bt #N,
    `analysis.frames.frame_ref`), as in `spmi why`'s "(frame N)"."""
    v = process.evaluate(expr)
    if v is not None and not v.optimized_out:
        return v, ""
    if expr.isidentifier():
        thread = process.selected_thread()
        for i, f in enumerate(thread.frames(STACK_LOOKUP_FRAMES) if thread is not None else []):
            found = f.variable(expr)
            if found is not None and not found.optimized_out:
                return found, f"found in {frame_ref(f, i)}: {short_name(f.function)}"
    return v, ""


def _not_found(expr: str) -> str:
    if expr.isidentifier():
        return (
            f"cannot evaluate '{expr}': not in the selected frame, and no frame of the stack has a "
            f"readable variable '{expr}'"
        )
    return f"cannot evaluate '{expr}'"


def target_arch(process: Process) -> str:
    """The architecture the JIT generated code for: superpmi's -target, else the recorded
    GetExpectedTargetArchitecture of the current method context, else the process's own."""
    cmd = parse_command(process.argv() or [])
    if cmd.target is not None:
        return "aarch64" if cmd.target.lower() in ("arm64", "aarch64") else "x86_64"
    thread = process.selected_thread()
    found = find_method_context(thread.frames() if thread is not None else []).found
    if found is not None and cmd.input:
        try:
            with Collection.open(cmd.input) as col:
                arch = col.method_context(found.number).target_arch_name
            if arch in ("arm64", "x64"):
                return "aarch64" if arch == "arm64" else "x86_64"
        except SpmiDbgError:
            pass
    return process.arch


def disasm(process: Process, expr: str) -> CommandResult:
    v, where = find_value(process, expr)
    if v is None:
        return CommandResult("", f"spmi disasm: {_not_found(expr)}")
    if "CompileResult" not in v.type_name:
        return CommandResult(
            "", f"spmi disasm: '{expr}' is a {v.type_name}, expected a CompileResult*"
        )
    if v.as_int() == 0:
        return CommandResult("", f"spmi disasm: '{expr}' is a null pointer")
    arch = target_arch(process)
    try:
        listing = code_of(process, v, arch)
    except DisasmError as e:
        return CommandResult("", f"spmi disasm: {expr}: {e}")
    native = (
        "unknown (no CompileMethod map)"
        if listing.native_size is None
        else str(listing.native_size)
    )
    head = (
        f"{expr}"
        + (f" ({where})" if where else "")
        + f": {arch} code, hotCodeSize {listing.hot_code_size}, "
        f"nativeSizeOfCode {native}"
    )
    return CommandResult("\n".join([head, *listing.lines]))
