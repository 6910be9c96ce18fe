"""Types as the JIT was told them (CorInfoType and a class handle), in words: the ilasm-like
spelling `mcs -ildump` uses (`int32`, `class String`, `valueclass ParamsArray`), so that a header
reads the same in both tools."""

from __future__ import annotations

from collections.abc import Callable

CORINFO_TYPE_MASK = 0x3F
CORINFO_TYPE_MOD_PINNED = 0x40
CORINFO_TYPE_VALUECLASS = 0x13
CORINFO_TYPE_CLASS = 0x14

_PRIMITIVES = {
    0x00: "undef",
    0x01: "void",
    0x02: "bool",
    0x03: "char",
    0x04: "int8",
    0x05: "unsigned int8",
    0x06: "int16",
    0x07: "unsigned int16",
    0x08: "int32",
    0x09: "unsigned int32",
    0x0A: "int64",
    0x0B: "unsigned int64",
    0x0C: "native int",
    0x0D: "native unsigned int",
    0x0E: "float32",
    0x0F: "float64",
    0x10: "string",
    0x11: "ptr",
    0x12: "byref",
    0x15: "refany",
    0x16: "var",
}


def type_text(
    type_with_mod: int,
    cls: int,
    class_name: Callable[[int], str | None],
    recorded: Callable[[int], bool],
) -> str:
    """One type: `pinned ` when so modified, then the primitive's name or `class X` /
    `valueclass X` (X: the recorded class name, else the handle and why: recorded without a name,
    which mcs prints `(null)`, or not recorded)."""
    kind = type_with_mod & CORINFO_TYPE_MASK
    pinned = "pinned " if type_with_mod & CORINFO_TYPE_MOD_PINNED else ""
    if kind in (CORINFO_TYPE_CLASS, CORINFO_TYPE_VALUECLASS):
        word = "class" if kind == CORINFO_TYPE_CLASS else "valueclass"
        why = "recorded without a name" if recorded(cls) else "name not recorded"
        name = class_name(cls) or f"<class 0x{cls:x}: {why}>"
        return f"{pinned}{word} {name}"
    return pinned + _PRIMITIVES.get(kind, f"<CorInfoType 0x{kind:x}>")
