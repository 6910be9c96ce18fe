"""A method context's method as the JIT saw it, whole: its IL with names (view.py), the callees it
looked at (callees.py) and the flags it was compiled with (flags.py), read from one collection
record; what `mch il`, the reports and the debuggers' `spmi il` show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spmi_dbg.errors import InputError
from spmi_dbg.mch.collection import Collection
from spmi_dbg.method.callees import Callee, callees, callees_text
from spmi_dbg.method.flags import JitFlags, jit_flags
from spmi_dbg.method.recorded import Answers
from spmi_dbg.method.view import MethodView, method_view


@dataclass
class MethodSeen:
    view: MethodView
    callees: list[Callee]
    flags: JitFlags | None

    @property
    def number(self) -> int:
        return self.view.method_context

    def flags_text(self) -> str:
        return self.flags.text() if self.flags else "// JIT flags: not recorded\n"

    def text(self) -> str:
        return (
            self.view.text()
            + "\n"
            + self.flags_text()
            + "\n"
            + callees_text(self.number, self.callees)
        )

    def to_json(self) -> dict[str, Any]:
        return self.view.to_json() | {
            "jit_flags": self.flags.to_json() if self.flags else None,
            "callees": [c.to_json() for c in self.callees],
        }


def method_seen(number: int, answers: Answers, *, callee_il: bool = False) -> MethodSeen | None:
    """None when the record's compile request is not readable."""
    view = method_view(number, answers)
    if view is None:
        return None
    view.notes[:0] = answers.problems
    return MethodSeen(view, callees(number, answers, with_il=callee_il), jit_flags(answers))


def read_method(collection: str, number: int, *, callee_il: bool = False) -> MethodSeen:
    """Method context `number` of `collection`; InputError when its compile request cannot be
    read."""
    with Collection.open(collection) as col:
        answers = Answers.of_packets(col.packets(number))
    seen = method_seen(number, answers, callee_il=callee_il)
    if seen is None:
        raise InputError(
            collection,
            "its CompileMethod packet is missing or of a layout this tool does not know: "
            "expected the compile request's METHOD_INFO",
            record=number,
        )
    return seen
