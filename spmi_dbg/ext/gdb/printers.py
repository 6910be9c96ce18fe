"""gdb pretty printers for LightWeightMap<K,V>, DenseLightWeightMap<V>, MethodContext and
CompileResult. Registered per objfile; null-safe (an unreadable map prints as such, never
raises)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gdb
import gdb.printing

MAX_CHILDREN = 32


def _is_map_ptr(t: Any) -> bool:
    t = t.strip_typedefs()
    return t.code == gdb.TYPE_CODE_PTR and "LightWeightMap<" in str(t.target())


class LightWeightMapPrinter:
    def __init__(self, val: Any) -> None:
        self.val = val
        self.dense = str(val.type.strip_typedefs()).startswith("DenseLightWeightMap")

    def _count(self) -> int:
        return int(self.val["numItems"])

    def to_string(self) -> str:
        try:
            return (
                f"{self.val.type.strip_typedefs()} with {self._count()} item(s), "
                f"{int(self.val['bufferLength'])} buffer bytes"
            )
        except (gdb.error, gdb.MemoryError):
            return f"{self.val.type} <unreadable>"

    def display_hint(self) -> str:
        return "array" if self.dense else "map"

    def children(self) -> Iterator[tuple[str, Any]]:
        try:
            n = min(self._count(), MAX_CHILDREN)
            items = self.val["pItems"]
            keys = None if self.dense else self.val["pKeys"]
            for i in range(n):
                if keys is None:
                    yield f"[{i}]", items[i]
                else:
                    yield f"key{i}", keys[i]
                    yield f"val{i}", items[i]
        except (gdb.error, gdb.MemoryError):
            return


class MapOwnerPrinter:
    """MethodContext / CompileResult: the recorded maps with their item counts; null = never
    recorded."""

    def __init__(self, val: Any) -> None:
        self.val = val

    def to_string(self) -> str:
        name = str(self.val.type.strip_typedefs())
        try:
            if "MethodContext" in name:
                return f"MethodContext #{int(self.val['index'])}"
        except (gdb.error, gdb.MemoryError):
            pass
        return name

    def children(self) -> Iterator[tuple[str, Any]]:
        try:
            for f in self.val.type.strip_typedefs().fields():
                if not f.name or not _is_map_ptr(f.type):
                    continue
                ptr = self.val[f.name]
                if int(ptr) == 0:
                    yield f.name, "null (never recorded)"
                else:
                    try:
                        yield f.name, f"{int(ptr.dereference()['numItems'])} item(s)"
                    except (gdb.error, gdb.MemoryError):
                        yield f.name, "<unreadable>"
        except (gdb.error, gdb.MemoryError):
            return


def build() -> Any:
    pp = gdb.printing.RegexpCollectionPrettyPrinter("spmi-dbg")
    pp.add_printer("LightWeightMap", r"^LightWeightMap<.*>$", LightWeightMapPrinter)
    pp.add_printer("DenseLightWeightMap", r"^DenseLightWeightMap<.*>$", LightWeightMapPrinter)
    pp.add_printer("MethodContext", r"^MethodContext$", MapOwnerPrinter)
    pp.add_printer("CompileResult", r"^CompileResult$", MapOwnerPrinter)
    return pp


def register() -> None:
    printer = build()

    def on_new_objfile(event: Any) -> None:
        gdb.printing.register_pretty_printer(event.new_objfile, printer, replace=True)

    for objfile in gdb.objfiles():
        gdb.printing.register_pretty_printer(objfile, printer, replace=True)
    gdb.events.new_objfile.connect(on_new_objfile)
