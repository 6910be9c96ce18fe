"""lldb summaries and synthetic children for LightWeightMap<K,V>, DenseLightWeightMap<V>,
MethodContext and CompileResult (the lldb side of spmi_dbg/ext/gdb/printers.py). Null-safe."""

from __future__ import annotations

from typing import Any

import lldb

MAX_CHILDREN = 32


def _u(v: Any, name: str) -> int | None:
    child = v.GetNonSyntheticValue().GetChildMemberWithName(name)
    if not child.IsValid():
        return None
    err = lldb.SBError()
    n = child.GetValueAsUnsigned(err)
    return int(n) if err.Success() else None


def lwm_summary(valobj: Any, internal_dict: dict[str, Any]) -> str:
    n, buf = _u(valobj, "numItems"), _u(valobj, "bufferLength")
    if n is None:
        return "<unreadable>"
    return f"{n} item(s), {buf if buf is not None else '?'} buffer bytes"


class LightWeightMapChildren:
    def __init__(self, valobj: Any, internal_dict: dict[str, Any]) -> None:
        self.valobj = valobj
        self.count = 0

    def update(self) -> bool:
        self.count = min(_u(self.valobj, "numItems") or 0, MAX_CHILDREN)
        return False

    def num_children(self) -> int:
        return self.count

    def get_child_index(self, name: str) -> int:
        try:
            return int(name.strip("[]"))
        except ValueError:
            return -1

    def get_child_at_index(self, index: int) -> Any:
        items = self.valobj.GetNonSyntheticValue().GetChildMemberWithName("pItems")
        t = items.GetType().GetPointeeType()
        return items.CreateChildAtOffset(f"[{index}]", index * t.GetByteSize(), t)


def owner_summary(valobj: Any, internal_dict: dict[str, Any]) -> str:
    v = valobj.GetNonSyntheticValue()
    t = v.GetType().GetCanonicalType()
    present: list[str] = []
    null: list[str] = []
    for i in range(t.GetNumberOfFields()):
        f = t.GetFieldAtIndex(i)
        if "LightWeightMap<" not in (f.GetType().GetCanonicalType().GetName() or ""):
            continue
        ptr = v.GetChildMemberWithName(f.GetName()).GetValueAsUnsigned(0)
        (present if ptr else null).append(f.GetName())
    head = (
        f"MethodContext #{_u(v, 'index')}" if t.GetName() == "MethodContext" else str(t.GetName())
    )
    return (
        f"{head}: maps {', '.join(present) or 'none'}; null (never recorded): "
        f"{', '.join(null) or 'none'}"
    )


def register(debugger: Any) -> None:
    cmds = [
        'type summary add -w spmi -x "^(Dense)?LightWeightMap<.+>$" -F '
        "spmi_dbg.ext.lldb.printers.lwm_summary",
        'type synthetic add -w spmi -x "^(Dense)?LightWeightMap<.+>$" -l '
        "spmi_dbg.ext.lldb.printers.LightWeightMapChildren",
        'type summary add -w spmi -p -x "^(MethodContext|CompileResult)$" -F '
        "spmi_dbg.ext.lldb.printers.owner_summary",
        "type category enable spmi",
    ]
    for c in cmds:
        debugger.HandleCommand(c)
