"""Which method context was being replayed, and how we know (docs/superpmi-conventions.md section 2,
"Debugger anchors"): JitInstance::CompileMethod's `mcIndex`, `mc->index`, the reader's `curMCIndex`,
the JIT's `compMethodSuperPMIIndex`, in that order; optimized-out values are skipped."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spmi_dbg.analysis.frames import class_of, find, short_name
from spmi_dbg.analysis.values import frame_int, member_int
from spmi_dbg.analysis.view import Frame


@dataclass(frozen=True)
class MethodContextNumber:
    number: int
    source: str  # e.g. "mcIndex argument of JitInstance::CompileMethod (frame 7)"


def find_method_context(frames: Sequence[Frame]) -> tuple[MethodContextNumber | None, list[str]]:
    """The number and its evidence; also the list of places tried (for the report when none worked)."""
    tried: list[str] = []
    hit = find(frames, "JitInstance::CompileMethod")
    if hit is not None:
        i, f = hit
        n = frame_int(f, "mcIndex")
        if n is not None and n > 0:
            return MethodContextNumber(n, f"mcIndex argument of JitInstance::CompileMethod (frame {i})"), tried
        tried.append(f"mcIndex of JitInstance::CompileMethod (frame {i}): not available")
    for i, f in enumerate(frames):
        name = short_name(f.function)
        for var in ("mc", "MethodToCompile"):
            v = f.variable(var)
            if v is not None and "MethodContext" in v.type_name:
                n = member_int(v, "index")
                if n is not None and n > 0:
                    return MethodContextNumber(n, f"{var}->index in {name} (frame {i})"), tried
                tried.append(f"{var}->index in {name} (frame {i}): not available")
        if class_of(f.function) == "MethodContext":
            n = member_int(f.variable("this"), "index")
            if n is not None and n > 0:
                return MethodContextNumber(n, f"this->index in {name} (frame {i})"), tried
    for i, f in enumerate(frames):
        v = f.variable("reader")
        if v is not None and "MethodContextReader" in v.type_name:
            n = member_int(v, "curMCIndex")
            if n is not None and n > 0:
                return MethodContextNumber(n, f"reader->curMCIndex in {short_name(f.function)} (frame {i})"), tried
            tried.append(f"reader->curMCIndex in {short_name(f.function)} (frame {i}): not available")
    for i, f in enumerate(frames):
        if class_of(f.function) == "Compiler":
            n = member_int(f.variable("this"), "compMethodSuperPMIIndex")
        else:
            comp = f.variable("comp") or f.variable("compiler")
            n = member_int(comp, "compMethodSuperPMIIndex") if comp is not None and "Compiler" in comp.type_name \
                else None
        if n is not None and n > 0:
            return MethodContextNumber(n, f"Compiler::compMethodSuperPMIIndex in {short_name(f.function)} "
                                          f"(frame {i})"), tried
    if not tried:
        tried.append("no frame of the stack holds a method context number")
    return None, tried
