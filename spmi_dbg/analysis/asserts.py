"""JIT assert text at a stop: `MyICJI::doAssert(szFile, iLine, szExpr)` arguments
(docs/superpmi-conventions.md 1.1). superpmi's `ISSUE: <ASSERT>` lines in its output are read by
spmi_dbg.failures.output."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from spmi_dbg.analysis.frames import find, frame_ref
from spmi_dbg.analysis.values import frame_int, read_c_string
from spmi_dbg.analysis.view import Frame, Process
from spmi_dbg.jsonfacts import JsonFact

# Today's JIT: "Assertion failed '<expr>' in '<method>' during '<phase>' (IL size <n>; hash ...)";
# 3.1's has no phase: "Assertion failed '<expr>' in '<method>' (IL size <n>)" (dotnet/coreclr
# v3.1.23 src/jit/error.cpp assertAbort).
JIT_MESSAGE = re.compile(
    r"Assertion failed '(?P<expr>.*)' in '(?P<method>.*?)'(?: during '(?P<phase>.*?)')? "
    r"\(IL size"
)


@dataclass(frozen=True)
class AssertInfo(JsonFact):
    expr: str
    file: str | None
    line: int | None
    method: str | None = None
    phase: str | None = None
    source: str = ""


def from_frames(process: Process, frames: Sequence[Frame]) -> AssertInfo | None:
    hit = find(frames, "MyICJI::doAssert")
    if hit is None:
        return None
    i, f = hit
    expr_ptr = frame_int(f, "szExpr")
    expr = read_c_string(process, expr_ptr)
    if expr is None:
        return AssertInfo(
            "(assert text not available)",
            None,
            None,
            source=f"MyICJI::doAssert ({frame_ref(f, i)})",
        )
    file = read_c_string(process, frame_int(f, "szFile"))
    line = frame_int(f, "iLine")
    source = f"arguments of MyICJI::doAssert ({frame_ref(f, i)})"
    m = JIT_MESSAGE.match(expr)  # the real JIT passes its formatted message as the expression
    if m:
        return AssertInfo(m["expr"], file, line, m["method"], m["phase"], source)
    return AssertInfo(expr, file, line, source=source)
