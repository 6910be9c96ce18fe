"""The answers one method context recorded, looked up as the JIT asked for them: the root's
METHOD_INFO and IL, what a token resolved to, the names of methods, classes and fields, argument
and local types, exception clauses, attributes. Every look-up returns None when the collection
holds no answer (the recording JIT never asked, or a Release JIT recorded no name): the caller
says so, never guesses."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cached_property

from spmi_dbg.mch import packets as P
from spmi_dbg.mch.context import Packet, method_full_name
from spmi_dbg.mch.layouts import decode_compile_method, decode_string_blob
from spmi_dbg.mch.maps import MapError, SerializedMap, parse_map
from spmi_dbg.method.sig import (
    SIG_SIZES,
    MethodInfo,
    SigInfo,
    decode_method_info,
    decode_sig,
    method_info_sizes,
)

METHOD_BEING_COMPILED_CONTEXT = 1  # the JIT's context for the root method's own tokens


@dataclass(frozen=True)
class Resolved:
    """resolveToken's answer: the handles a token stands for (0: none of that kind)."""

    context: int
    hclass: int
    hmethod: int
    hfield: int
    exception: int  # non-zero: resolving it threw


@dataclass(frozen=True)
class EHClause:
    flags: int  # CORINFO_EH_CLAUSE_FLAGS: 0 catch, 1 filter, 2 finally, 4 fault
    try_offset: int
    try_length: int
    handler_offset: int
    handler_length: int
    class_token: int  # a catch's class token; a filter's filter offset

    @property
    def kind(self) -> str:
        return {0: "catch", 1: "filter", 2: "finally", 4: "fault"}.get(
            self.flags & 7, f"flags 0x{self.flags:x}"
        )


@dataclass(frozen=True)
class MethodInfoAnswer:
    """getMethodInfo's answer for a method the JIT looked at (an inline candidate's body)."""

    ftn: int
    info: MethodInfo | None  # None: the answer was false (no body to give) or not readable
    il: bytes | None
    result: bool
    exception: int  # non-zero: the call threw


# CorInfoInline (corinfo.h; 3.1 has the first and the last two, today all)
INLINE_RESULTS = {
    0: "allowed",
    1: "allowed (prejit check)",
    2: "allowed (the JIT's own check)",
    3: "refused by the runtime",
    -1: "refused for this call site",
    -2: "refused: never inline",
}
# CorInfoInlineRestrictions (3.1's canInline hands them back; today's has no such out-parameter)
INLINE_RESTRICTIONS = [
    (0x1, "only if the callee makes no calls"),
    (0x2, "only if the callee's strings stay unseen by its module"),
    (0x4, "only on the caller's own `this`"),
]


@dataclass(frozen=True)
class InlineAnswer:
    """canInline's answer: what the JIT was told about inlining `callee` into `caller`."""

    caller: int
    callee: int
    result: int  # CorInfoInline
    restrictions: int | None  # 3.1's out-parameter; None in today's record
    exception: int

    def words(self) -> str:
        if self.exception:
            return f"canInline threw 0x{self.exception:08x}"
        out = INLINE_RESULTS.get(self.result, f"CorInfoInline {self.result}")
        limits = [w for bit, w in INLINE_RESTRICTIONS if (self.restrictions or 0) & bit]
        return f"{out}, {'; '.join(limits)}" if limits and self.result >= 0 else out


class Answers:
    """One method context's maps, read for the method as the JIT saw it."""

    def __init__(self, maps: dict[int, SerializedMap], problems: list[str] | None = None) -> None:
        self.maps = maps
        self.problems = problems or []  # maps that did not parse, said once
        self._pairs: dict[int, dict[bytes, bytes]] = {}

    @classmethod
    def of_packets(cls, packets: list[Packet]) -> Answers:
        """From a record's packets (Collection.packets: framing checked); a map that does not
        parse is a problem said once, the rest still read."""
        maps: dict[int, SerializedMap] = {}
        problems: list[str] = []
        for pkt in packets:
            if pkt.id in maps:
                continue
            try:
                maps[pkt.id] = parse_map(pkt.id, pkt.data)
            except MapError as e:
                problems.append(f"packet {pkt.id} ({pkt.name}): {e}")
        return cls(maps, problems)

    def pairs(self, packet_id: int, key_size: int | None = None) -> dict[bytes, bytes]:
        """The map's items as {key: value} (the first of equal keys, as LightWeightMap finds it);
        `key_size` for a map whose key size depends on the era (value size fixed)."""
        got = self._pairs.get(packet_id)
        if got is None:
            m = self.maps.get(packet_id)
            got = {}
            if m is not None and m.count:
                k = key_size if key_size is not None else m.key_size
                if k is not None and 0 < k <= m.item_size:
                    keys = [m.items[i * k : (i + 1) * k] for i in range(m.count)]
                    n = m.item_size - k
                    base = m.count * k
                    for i, key in enumerate(keys):
                        got.setdefault(key, m.items[base + i * n : base + (i + 1) * n])
            self._pairs[packet_id] = got
        return got

    # --- the method -------------------------------------------------------------------------------

    @cached_property
    def root(self) -> tuple[MethodInfo, bytes, int] | None:
        """The compile request: (METHOD_INFO, IL, JIT flags word of the request). The layout is
        mch.layouts' (one table of the eras' CompileMethod sizes); the two SIG_INFOs it does not
        decode are read here."""
        m = self.maps.get(P.CompileMethod)
        if m is None or not m.count:
            return None
        try:
            request = decode_compile_method(m)
        except (MapError, struct.error):  # UnknownLayout is a MapError
            return None
        layout = request.layout
        value = m.items[4 : 4 + layout.value_size]  # the one item, after its 4-byte key
        info = decode_method_info(value, layout.value_size - (8 if layout.has_os else 4))
        return None if info is None else (info, request.il, request.flags)

    # --- tokens -----------------------------------------------------------------------------------

    @cached_property
    def _tokens(self) -> dict[tuple[int, int], list[tuple[int, int, bytes]]]:
        """(scope, token) -> [(context, tokenType, ResolveTokenValue)], in map order."""
        out: dict[tuple[int, int], list[tuple[int, int, bytes]]] = {}
        for key, value in self.pairs(P.ResolveToken).items():
            context, scope, token, kind = struct.unpack_from("<QQII", key)
            out.setdefault((scope, token), []).append((context, kind, value))
        return out

    def resolved(self, scope: int, token: int, kind: int | None = None) -> Resolved | None:
        """What (scope, token) resolved to: the answer asked with the method's own context and
        this token kind first, then any context (a token names one metadata row per module)."""
        answers = self._tokens.get((scope, token), [])
        if not answers:
            return None

        def rank(a: tuple[int, int, bytes]) -> tuple[bool, bool]:
            return (a[0] != METHOD_BEING_COMPILED_CONTEXT, kind is not None and a[1] != kind)

        context, _, value = min(answers, key=rank)
        if len(value) < 24:
            return None
        hclass, hmethod, hfield = struct.unpack_from("<QQQ", value)
        exception = struct.unpack_from("<I", value, len(value) - 4)[0] if len(value) >= 44 else 0
        return Resolved(context, hclass, hmethod, hfield, exception)

    def string_literal(self, scope: int, token: int) -> str | None:
        """An ldstr's text, where the collection recorded it (GetStringLiteral, today's); None
        otherwise (3.1 records only the literal's handle, ConstructStringLiteral)."""
        m = self.maps.get(P.GetStringLiteral)
        if m is None:
            return None
        for key, value in self.pairs(P.GetStringLiteral, 16).items():
            module, tok = struct.unpack_from("<QI", key)
            if module == scope and tok == token and len(value) >= 8:
                offset = struct.unpack_from("<I", value)[0]
                try:
                    raw = m.blob(offset)
                except MapError:
                    return None
                return raw.decode("utf-16-le", "replace") if raw is not None else None
        return None

    def has_string_handle(self, scope: int, token: int) -> bool:
        return struct.pack("<QI", scope, token) in self.pairs(P.ConstructStringLiteral)

    # --- names ------------------------------------------------------------------------------------

    def method_name(self, ftn: int) -> str | None:
        """`Class:method` as recorded; None when a part of it was not (superpmi's placeholder or a
        name recorded as null would stand in for it)."""
        try:
            name, placeholder = method_full_name(self.maps, ftn)
        except (MapError, struct.error):
            return None
        if name is None or placeholder is not None or name.startswith("(null)"):
            return None
        return name

    def class_recorded(self, cls: int) -> bool:
        """The collection holds an answer for the class's name (a null one included: what mcs
        prints as `(null)`)."""
        key = struct.pack("<Q", cls)
        return key in self.pairs(P.GetClassName, 8) or key in self.pairs(P.PrintClassName, 8)

    def class_name(self, cls: int) -> str | None:
        value = self.pairs(P.GetClassName, 8).get(struct.pack("<Q", cls))
        if value is not None and len(value) >= 4:
            return self._text(P.GetClassName, struct.unpack_from("<I", value)[0])
        value = self.pairs(P.PrintClassName, 8).get(struct.pack("<Q", cls))
        if value is not None and len(value) == 12:
            return self._text(P.PrintClassName, struct.unpack_from("<I", value, 4)[0])
        return None

    def field_name(self, field: int) -> str | None:
        value = self.pairs(P.GetFieldName).get(struct.pack("<Q", field))
        if value is not None and len(value) >= 8:  # 3.1: DD {name, module name}
            return self._text(P.GetFieldName, struct.unpack_from("<I", value)[0])
        m = self.maps.get(P.PrintFieldName)
        if m is not None and m.item_size == 8 + 12:  # today's PrintFieldName
            value = self.pairs(P.PrintFieldName, 8).get(struct.pack("<Q", field))
            if value is not None:
                return self._text(P.PrintFieldName, struct.unpack_from("<I", value, 4)[0])
        return None

    def _text(self, packet_id: int, offset: int) -> str | None:
        m = self.maps.get(packet_id)
        if m is None:
            return None
        try:
            return decode_string_blob(m.blob(offset))
        except MapError:
            return None

    # --- signatures -------------------------------------------------------------------------------

    def arg_type(self, sig: SigInfo, arg: int) -> tuple[int, int] | None:
        """getArgType's answer for one argument (or local) of `sig`: (CorInfoTypeWithMod, class
        handle), the class from getArgClass for a class argument as mcs takes it."""
        m = self.maps.get(P.GetArgType)
        if m is None or not m.count:
            return None
        want = struct.pack("<QQ", sig.scope, arg)
        for key, value in self.pairs(P.GetArgType, m.item_size - 16).items():
            if len(value) < 12:  # a value of no era's layout
                return None
            if key[-16:] == want and struct.unpack_from("<II", key) == (sig.flags, sig.num_args):
                vc, result = struct.unpack_from("<QI", value)
                if result & 0x3F == 0x14:  # CORINFO_TYPE_CLASS: getArgClass's answer
                    vc = self._arg_class(sig, arg) or vc
                return result, vc
        return None

    def _arg_class(self, sig: SigInfo, arg: int) -> int | None:
        m = self.maps.get(P.GetArgClass)
        if m is None or not m.count:
            return None
        want = struct.pack("<QQ", sig.scope, arg)
        for key, value in self.pairs(P.GetArgClass, m.item_size - 12).items():
            if key[-16:] == want and len(value) >= 8:
                return int(struct.unpack_from("<Q", value)[0])
        return None

    def arg_next(self, arg: int) -> int | None:
        value = self.pairs(P.GetArgNext).get(struct.pack("<Q", arg))
        return int(struct.unpack_from("<Q", value)[0]) if value is not None else None

    def method_sig(self, ftn: int) -> SigInfo | None:
        """getMethodSig's answer for a method (any memberParent)."""
        m = self.maps.get(P.GetMethodSig)
        if m is None or m.item_size - 16 not in SIG_SIZES:
            return None
        for key, value in self.pairs(P.GetMethodSig, 16).items():
            if struct.unpack_from("<Q", key)[0] == ftn:
                return decode_sig(value, 0, len(value))
        return None

    def attribs(self, ftn: int) -> int | None:
        value = self.pairs(P.GetMethodAttribs).get(struct.pack("<Q", ftn))
        return int(struct.unpack_from("<I", value)[0]) if value is not None else None

    # --- the callees -----------------------------------------------------------------------------

    @cached_property
    def method_infos(self) -> dict[int, MethodInfoAnswer]:
        """getMethodInfo's answers by method handle, in map order. The key is the handle (3.1) or
        {handle, context} (today's); the value METHOD_INFO + bool result + u32 exceptionCode, its
        METHOD_INFO of either era's size: the key's size is what the item leaves (8 or 16)."""
        m = self.maps.get(P.GetMethodInfo)
        if m is None or not m.count:
            return {}
        for sig in SIG_SIZES:
            for info_size in method_info_sizes(sig):
                key_size = m.item_size - info_size - 5
                if key_size in (8, 16):
                    return self._method_infos(m, key_size, info_size)
        return {}

    def _method_infos(
        self, m: SerializedMap, key_size: int, info_size: int
    ) -> dict[int, MethodInfoAnswer]:
        out: dict[int, MethodInfoAnswer] = {}
        for key, value in self.pairs(P.GetMethodInfo, key_size).items():
            ftn = int(struct.unpack_from("<Q", key)[0])
            if ftn in out:
                continue
            result = value[info_size] != 0
            exception = int(struct.unpack_from("<I", value, info_size + 1)[0])
            info = decode_method_info(value, info_size) if result else None
            il: bytes | None = None
            if info is not None and info.il_size:
                try:
                    blob = m.blob(info.il_offset)
                except MapError:
                    blob = None
                il = bytes(blob[: info.il_size]) if blob is not None else None
            out[ftn] = MethodInfoAnswer(ftn, info, il, result, exception)
        return out

    @cached_property
    def inline_answers(self) -> dict[int, InlineAnswer]:
        """canInline's answers by callee (the first asked), in map order: key {caller, callee};
        value {Restrictions, result, exceptionCode} (3.1) or {result, exceptionCode} (today's)."""
        m = self.maps.get(P.CanInline)
        if m is None or not m.count or m.item_size not in (16 + 12, 16 + 8):
            return {}
        out: dict[int, InlineAnswer] = {}
        for key, value in self.pairs(P.CanInline, 16).items():
            caller, callee = struct.unpack_from("<QQ", key)
            restrictions: int | None = None
            if len(value) == 12:
                restrictions, result, exception = struct.unpack_from("<IiI", value)
            else:
                result, exception = struct.unpack_from("<iI", value)
            out.setdefault(callee, InlineAnswer(caller, callee, result, restrictions, exception))
        return out

    def eh_clause(self, ftn: int, number: int) -> EHClause | None:
        value = self.pairs(P.GetEHinfo).get(struct.pack("<QI", ftn, number))
        if value is None or len(value) < 24:
            return None
        return EHClause(*struct.unpack_from("<IIIIII", value))
