"""The null map: a LightWeightMap/DenseLightWeightMap method running with `this == 0`
(docs/mch-format.md 9: every MethodContext and CompileResult map is optional; a null pointer means
"never recorded").

Finds the owner (MethodContext or CompileResult), the member that is null and has the map's type,
the packet that member is recorded from, and the owner's role (method context, base compile result
`cr1`, diff compile result `cr2`, stored compile result)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from spmi_dbg.analysis.frames import LWM_FUNCTION, class_of, find, is_lwm, short_name
from spmi_dbg.analysis.values import frame_int, member_int
from spmi_dbg.analysis.view import Frame, Process, Value
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.mch import packets as P

OWNERS = ("CompileResult", "MethodContext")


@dataclass(frozen=True)
class NullMap(JsonFact):
    owner_type: str  # "CompileResult"
    member: str  # "CompileMethod"
    map_type: str  # "LightWeightMap<unsigned int, Agnostic_CompileMethodResults>"
    packet_id: int | None
    packet_name: str | None
    role: str  # "base compile result (cr1)", ...
    explanation: str
    source: str  # how each part was found


def packet_for_member(owner_type: str, member: str) -> int | None:
    """CompileResult::X is recorded from PacketCR_X; MethodContext::X from packet X (lwmlist.h
    names): today's, or 3.1's for an id that names another packet today (the member says which)."""
    want = f"PacketCR_{member}" if owner_type == "CompileResult" else member
    for pid, (name, _) in P.PACKETS.items():
        if name == want:
            return pid
    return next((pid for pid, (old, _) in P.REUSED_SINCE_31.items() if old.name == want), None)


def _norm_type(t: str) -> str:
    t = re.sub(r"\s+", " ", t.replace("class ", "").replace("struct ", "")).strip()
    return t.rstrip(" *").replace(" >", ">")


def find_null_map(
    process: Process, frames: Sequence[Frame], fault_address: int | None
) -> NullMap | None:
    lwm_index = next((i for i, f in enumerate(frames[:6]) if is_lwm(f)), None)
    if lwm_index is None:
        return None
    lwm_frame = frames[lwm_index]
    m = LWM_FUNCTION.match(short_name(lwm_frame.function))
    assert m is not None
    map_type = short_name(lwm_frame.function).rsplit("::", 1)[0]
    null_this = _null_this(lwm_frame, fault_address)
    if null_this is None:
        return None
    evidence = [null_this]
    caller_index = _owner_frame(frames, lwm_index)
    if caller_index is None:
        return None
    caller = frames[caller_index]
    owner_type = class_of(caller.function)
    if owner_type not in OWNERS:
        return NullMap(
            "?",
            "?",
            map_type,
            None,
            None,
            "unknown",
            f"a null {map_type} was used by {short_name(caller.function)}, which is not a "
            "MethodContext/CompileResult method",
            "; ".join(evidence),
        )
    method = short_name(caller.function).rsplit("::", 1)[1]
    owner = caller.variable("this")
    owner_ptr = owner.as_int() if owner is not None and not owner.optimized_out else None

    member, how = _member(process, owner_type, owner, map_type, method)
    evidence.append(how)
    role, role_how = _role(frames, caller_index, owner_type, owner_ptr, member)
    evidence.append(role_how)
    pid = packet_for_member(owner_type, member) if member != "?" else None
    # the member's own packet (a re-used id's other era does not name it)
    own = f"PacketCR_{member}" if owner_type == "CompileResult" else member
    pname = own if pid is not None else None
    return NullMap(
        owner_type,
        member,
        map_type,
        pid,
        pname,
        role,
        _explain(owner_type, member, role, pid, pname),
        "; ".join(e for e in evidence if e),
    )


def _null_this(lwm_frame: Frame, fault_address: int | None) -> str | None:
    """How the map's accessor is known to run on a null map (None: it is not)."""
    this = frame_int(lwm_frame, "this")
    if this == 0:
        return f"this == 0 in {short_name(lwm_frame.function)}"
    if this is None and fault_address is not None and fault_address < 0x1000:
        return (
            f"near-null fault address 0x{fault_address:x} inside {short_name(lwm_frame.function)} "
            "(`this` not available)"
        )
    return None


def _owner_frame(frames: Sequence[Frame], lwm_index: int) -> int | None:
    """The owner's frame: the first after the accessors and the lookup helpers (superpmi's
    LookupByKeyOrMiss, a lambda inlined into the rep* function: gdb names it `operator()`, lldb
    `...::$_0::operator()`), whose class is a MethodContext/CompileResult."""
    return next(
        (
            i
            for i in range(lwm_index + 1, len(frames))
            if not is_lwm(frames[i]) and not _lookup_helper(frames[i].function)
        ),
        None,
    )


def _lookup_helper(function: str | None) -> bool:
    """A lambda or lookup helper between a map's accessor and the rep* function that uses it."""
    name = short_name(function)
    return (
        name in ("operator", "operator()")
        or name.endswith("::operator()")
        or name.endswith("::operator")
        or "{lambda" in name
        or "<lambda" in name
        or "LookupByKeyOrMiss" in name
    )


def _member(
    process: Process, owner_type: str, owner: object, map_type: str, method: str
) -> tuple[str, str]:
    """Which member: the null field of the owner with the map's type; ties (and an unreadable owner)
    are broken by superpmi's naming (rep<Name>/rec<Name> use the map <Name>)."""
    want = _norm_type(map_type)
    by_name = re.sub(r"^(rep|rec|dmp)", "", method)
    if isinstance(owner, Value) and not owner.optimized_out and owner.as_int():
        fields = [(n, v) for n, v in owner.fields() if _norm_type(v.type_name) == want]
        null = [n for n, v in fields if v.as_int() == 0]
        if len(null) == 1:
            return null[0], f"the only null member of type {want} in {owner_type} `this`"
        if by_name in null:
            return by_name, f"null member {by_name} of this (matches {method})"
    declared = process.lookup_type_fields(owner_type) or []
    candidates = [n for n, t in declared if _norm_type(t) == want]
    if len(candidates) == 1:
        return candidates[0], f"the only {owner_type} member of type {want} (debug info)"
    if by_name in candidates or (not candidates and by_name):
        return by_name, f"{method} reads the map {by_name} (superpmi naming)"
    return "?", "member not determined"


def _role(
    frames: Sequence[Frame], caller_index: int, owner_type: str, owner_ptr: int | None, member: str
) -> tuple[str, str]:
    if owner_type == "MethodContext":
        return "method context", ""
    hit = find(frames[caller_index:], "NearDiffer::compare")
    if hit is not None:
        _, nd = hit
        cr1, cr2 = frame_int(nd, "cr1"), frame_int(nd, "cr2")
        if owner_ptr is not None and owner_ptr in (cr1, cr2):
            which = "cr1" if owner_ptr == cr1 else "cr2"
            return _cr_role(which), f"this == {which} of NearDiffer::compare"
        # The owner pointer is not readable: see which of cr1/cr2 has the null member.
        if member != "?":
            # None = not readable
            state = {w: member_int(nd.variable(w), member) for w in ("cr1", "cr2")}
            nulls = [w for w, v in state.items() if v == 0]
            if nulls == ["cr1", "cr2"]:
                return _cr_role(
                    "cr1"
                ), "both cr1 and cr2 lack the map; NearDiffer::compare uses cr1 first"
            if len(nulls) == 1:
                return _cr_role(nulls[0]), f"{nulls[0]}->{member} is null in NearDiffer::compare"
            known = [w for w, v in state.items() if v]
            if len(known) == 1:
                other = "cr2" if known[0] == "cr1" else "cr1"
                return _cr_role(other), (
                    f"{known[0]}->{member} is not null and {other} is optimized out in "
                    "NearDiffer::compare, so the null map is " + other + "'s"
                )
        return (
            "compile result (base or diff not determined)",
            "cr1/cr2 of NearDiffer::compare not readable",
        )
    hit = find(frames[caller_index:], "JitInstance::CompileMethod")
    if hit is not None:
        return (
            "compile result of the JIT being run (mc->cr)",
            "called during JitInstance::CompileMethod",
        )
    return "compile result", ""


def _cr_role(which: str) -> str:
    return "base compile result (cr1)" if which == "cr1" else "diff compile result (cr2)"


def _explain(owner_type: str, member: str, role: str, pid: int | None, pname: str | None) -> str:
    packet = f"packet {pid} {pname}" if pid is not None else "its packet"
    if owner_type == "CompileResult" and member == "CompileMethod":
        who = "base JIT's" if "cr1" in role else "diff JIT's" if "cr2" in role else "JIT's"
        return (
            f"the {who} compile result has no CompileMethod map ({packet} was never recorded): the "
            "compile "
            "was counted as a success without producing code (an EE exception replayed as "
            '"Successful Compile (EE API exception)"), and the caller assumed the map exists'
        )
    if owner_type == "CompileResult":
        return (
            f"the {role} has no {member} map ({packet} was never recorded) and the caller "
            "assumed it exists"
        )
    return (
        f"the method context has no {member} map ({packet} is absent from the collection record) "
        "and the caller assumed it exists"
    )
