"""Causes: when a stop is not a JIT bug but the setup (issue 27), each cause a fact with the
evidence that establishes it and advice; a cause whose evidence is not all there is not stated.

- `checked-jit-on-release-collection`: a Checked (DEBUG) JIT replaying a collection recorded with a
  Release JIT asks the host for answers the Release JIT never asked for, so superpmi recorded none:
  the record's method name is superpmi's placeholder (a Release JIT does not ask for names), the
  failing query comes from a name query a DEBUG JIT makes for every method (3.1's
  `Compiler::eeGetMethodFullName`), and superpmi has no map for it (a null or missing map).
- `asm-diffs-without-compile-method`: superpmi's near differ read a compile result that has no
  CompileMethod map (a compile that ended in a recorded EE exception has none): the seed bug's case,
  a superpmi bug (dotnet/runtime#91257), not the JITs'.
"""

from __future__ import annotations

from spmi_dbg.analysis.facts import Cause, Diagnosis
from spmi_dbg.analysis.frames import frame_ref, short_name

# The JIT's name queries that only a DEBUG JIT makes for every method it compiles (its dumps, its
# asserts' text, JitStdOutFile); a Release JIT makes them only on request.
DEBUG_NAME_QUERIES = (
    "Compiler::eeGetMethodFullName",
    "Compiler::eeGetClassName",
    "Compiler::eeGetMethodName",
)


def causes_of(d: Diagnosis) -> list[Cause]:
    """The causes `d` establishes, each with its evidence (none when any piece is missing)."""
    out = [c for c in (_checked_on_release(d), _asm_diffs_without_compile_method(d)) if c]
    return out


def _checked_on_release(d: Diagnosis) -> Cause | None:
    nm = d.null_map
    mc = d.method_context
    if nm is None or nm.owner_type != "MethodContext" or mc is None or not mc.name_note:
        return None
    query = next(
        (f for f in d.frames if short_name(f.function) in DEBUG_NAME_QUERIES),
        None,
    )
    if query is None:
        return None
    return Cause(
        "checked-jit-on-release-collection",
        [
            f"{mc.name_note}: the JIT that recorded the collection never asked for names, as a "
            "Release JIT does not",
            f"the failing query comes from {short_name(query.function)} "
            f"({frame_ref(query, query.index)}), which a Checked "
            "(DEBUG) JIT makes for every method it compiles",
            f"superpmi has no {nm.member} map for it: the collection recorded no answer to it",
        ],
        "the collection was recorded with a Release JIT: replay it with a Release JIT, or "
        "recollect it with a Checked JIT",
    )


def _asm_diffs_without_compile_method(d: Diagnosis) -> Cause | None:
    nm = d.null_map
    if nm is None or nm.owner_type != "CompileResult" or nm.member != "CompileMethod":
        return None
    differ = next((f for f in d.frames if short_name(f.function) == "NearDiffer::compare"), None)
    if differ is None:
        return None
    return Cause(
        "asm-diffs-without-compile-method",
        [
            f"the null map is the {nm.role}'s CompileMethod: that compile recorded no compile "
            "result (a compile that ended in a recorded EE exception has none)",
            f"superpmi's near differ reads it (NearDiffer::compare, "
            f"{frame_ref(differ, differ.index)})",
        ],
        "a superpmi bug, not the JITs': take superpmi with the near differ's check "
        "(dotnet/runtime#91783), or replay without -a",
    )
