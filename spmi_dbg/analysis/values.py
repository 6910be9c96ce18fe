"""Reading typed values through the view without ever raising: every read says how it was
obtained."""

from __future__ import annotations

from spmi_dbg.analysis.view import Frame, Process, Value


def frame_int(frame: Frame, name: str) -> int | None:
    v = frame.variable(name)
    if v is None or v.optimized_out:
        return None
    return v.as_int()


def member_int(value: Value | None, *path: str) -> int | None:
    """value->a->b ... as an int; None when any step is unavailable or a pointer on the way is
    null."""
    cur = value
    for name in path:
        if cur is None or cur.optimized_out:
            return None
        if "*" in cur.type_name and cur.as_int() == 0:
            return None
        cur = cur.field(name)
    if cur is None or cur.optimized_out:
        return None
    return cur.as_int()


def read_c_string(process: Process, address: int | None, limit: int = 4096) -> str | None:
    if not address:
        return None
    out = bytearray()
    while len(out) < limit:
        chunk = process.read_memory(address + len(out), 256)
        if not chunk:
            break
        end = chunk.find(b"\0")
        if end >= 0:
            out += chunk[:end]
            return out.decode("utf-8", "replace")
        out += chunk
    return out.decode("utf-8", "replace") if out else None
