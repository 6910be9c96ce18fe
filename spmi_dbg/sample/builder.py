"""Method context records for the sample JIT: one assembled/generated method -> one real-format
record.

A record holds exactly what the replay core answers the sample JIT's queries from
(native/jit/corinfo.h):

- 143 CompileMethod: u32 0 -> Agnostic_CompileMethod (216 B): ftn, scope, IL (in the map buffer),
  ILCodeSize, maxStack, args.numArgs = arguments, args.retType, locals.numArgs = locals, flags 0, os
- 183 GetExpectedTargetArchitecture: u32 0 -> u32 0x8664 (x64) / 0xAA64 (arm64)
- 151 GetIntConfigValue (optional): Agnostic_ConfigIntInfo {name blob (UTF-16LE + NUL), default} ->
u32
- 154 GetJitFlags: u32 0 -> DD {blob offset, 16}; blob = CORJIT_FLAGS {u64 flags (bit 5 MinOpts),
u64 ISA}
- 71 GetMethodClass: u64 ftn -> u64 class handle
- 76 GetMethodSig: DLDL {callee hMethod, 0} -> Agnostic_CORINFO_SIG_INFO (numArgs, retType)
- 149 PrintClassName: u64 class handle -> Agnostic_PrintResult ("Namespace.Class")
- 6 PrintMethodName: u64 ftn -> Agnostic_PrintResult ("Method")
- 109 ResolveToken: RESOLVED_TOKENin {tokenContext 0, tokenScope = the method's scope, token,
tokenType 2}
  -> TOKENout {hClass, hMethod, 0, no spec blobs} + exceptionCode

Packets are written in map-name order (as superpmi writes lwmlist.h order: not sorted by id); every
keyed map is sorted bytewise. Per-collection constant packets, class name packets and callee entries
are encoded once and cached, so building a record is a handful of `struct.pack` calls.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from spmi_dbg.mch import encode as E
from spmi_dbg.mch import packets as P
from spmi_dbg.sample.il import TYPE_LONG, TYPE_VOID

ARCH_VALUES = {"x64": 0x8664, "arm64": 0xAA64}
CORJIT_FLAG_MIN_OPT = 1 << 5  # bit 5 in every era (corjitflags.h)
CORINFO_OS_UNIX = 1
CORINFO_OPT_INIT_LOCALS = 0x10
CLR_EXCEPTION = 0xE0434352  # the code a recorded managed (EE) exception carries
# Plausible ISA bit words per target (ignored by the sample JIT; part of the method identity in
# superpmi).
_ISA_FLAGS = {"x64": 0x0000_0000_0F3F_7FFF, "arm64": 0x0000_0000_0001_FFEF}

# Handle conventions (all distinct ranges; the replay core must treat them as opaque keys).
FTN_BASE = 0x0000_7FF9_1000_0000  # method being compiled: FTN_BASE + number * 0x20
CLASS_BASE = 0x0000_7FF8_2000_0000  # class handles: CLASS_BASE + index * 0x40
SCOPE_BASE = 0x0000_7FF8_0001_0000  # module (scope) handles: SCOPE_BASE + index * 0x1000
CALLEE_BASE = 0x0000_7FF9_8000_0000  # callee method handles: CALLEE_BASE + index * 0x20
CALLEE_CLASS_BASE = 0x0000_7FF8_6000_0000  # callee class handles: CALLEE_CLASS_BASE + index * 0x40
TOKEN_BASE = 0x0A00_0001  # call tokens (MemberRef): TOKEN_BASE + callee index


def ftn_for(number: int) -> int:
    return FTN_BASE + number * 0x20


def class_handle_for(index: int) -> int:
    return CLASS_BASE + index * 0x40


def scope_for(index: int) -> int:
    return SCOPE_BASE + index * 0x1000


@dataclass(frozen=True)
class Callee:
    """A method a call token resolves to. `recorded=False`: no ResolveToken record (-> MISSING);
    `exception_code != 0`: the ResolveToken record carries a recorded EE exception."""

    name: str  # Namespace.Class:Method
    nargs: int
    ret_type: int
    token: int
    handle: int
    class_handle: int
    exception_code: int = 0
    recorded: bool = True

    @property
    def effect(self) -> tuple[int, int]:
        """(values popped, values pushed) by a call to it."""
        return self.nargs, (0 if self.ret_type == TYPE_VOID else 1)


@dataclass(slots=True)
class Method:
    """One method to compile: name `Namespace.Class:Method`, int64 arguments and locals, IL and its
    callees."""

    name: str
    nargs: int
    nlocals: int
    il: bytes
    max_stack: int
    callees: tuple[Callee, ...] = ()
    ret_type: int = TYPE_LONG
    minopts: bool = False
    corrupt: bool = False  # write a damaged record (a bad packet canary; framing intact)
    # record no GetMethodSig map at all, as a Release JIT's collection lacks the signatures a
    # Checked JIT asks for (the null map a 3.1 superpmi dies of)
    no_sig_map: bool = False

    @property
    def class_name(self) -> str:
        return self.name.rpartition(":")[0] or "<Module>"

    @property
    def method_name(self) -> str:
        return self.name.rpartition(":")[2]


# PrintMethodName packet up to its name blob's length prefix
_PM_HEAD = struct.Struct("<BI4sIIQIIII")
_CM_HEAD = struct.Struct("<BI4sIII")  # CompileMethod packet: id, size, tag, count, buflen, key
_CM_INFO = struct.Struct("<QQIIIIII")  # Agnostic_CORINFO_METHOD_INFO up to the sigs
_U32 = struct.Struct("<I")
_METHOD_CLASS = struct.Struct("<BI4sIIQQB")
_CANARY = b"B"


def _packet(pid: int, body: bytes) -> bytes:
    return E.packet(pid, body)


_MAP_HEAD = struct.Struct("<BI4sII")


def _small_map(pid: int, items: list[tuple[bytes, bytes]], item_size: int) -> bytes:
    """A keyed map packet without a side buffer; keys are unique (one item per callee), sorted
    bytewise."""
    items.sort()
    n = len(items)
    return (
        _MAP_HEAD.pack(pid, 12 + n * item_size, b"LWM1", n, 0)
        + b"".join([k for k, _ in items])
        + b"".join([v for _, v in items])
        + b"B"
    )


class RecordBuilder:
    """Encodes records for one collection (one target architecture, one recorded config)."""

    def __init__(
        self,
        arch: str = "x64",
        *,
        config: Sequence[tuple[str, int, int]] = (),
        os_: int = CORINFO_OS_UNIX,
    ) -> None:
        if arch not in ARCH_VALUES:
            raise ValueError(
                f"unknown target architecture {arch!r}: expected one of {', '.join(ARCH_VALUES)}"
            )
        self.arch = arch
        self.os = os_
        self._arch_packet = _packet(
            P.GetExpectedTargetArchitecture, E.lwm([(E.u32(0), E.u32(ARCH_VALUES[arch]))])
        )
        self._flags_packets = {
            m: self._jit_flags(CORJIT_FLAG_MIN_OPT if m else 0) for m in (False, True)
        }
        self._config_packet = b""
        if config:
            buf = E.BlobBuffer()
            items = [
                (E.config_int_key(buf.add_wide_string(name), default), E.u32(value & 0xFFFFFFFF))
                for name, value, default in config
            ]
            self._config_packet = _packet(P.GetIntConfigValue, E.lwm(items, buf))
        self._class_packets: dict[tuple[int, str], bytes] = {}
        self._sigs: dict[tuple[int, int, int, int], bytes] = {}
        self._callee_items: dict[
            tuple[int, int, int, int], tuple[bytes, bytes, bytes | None, bytes | None]
        ] = {}

    def _jit_flags(self, flags: int) -> bytes:
        buf = E.BlobBuffer()
        off = buf.add(E.jit_flags_blob(flags, _ISA_FLAGS[self.arch]))
        return _packet(P.GetJitFlags, E.lwm([(E.u32(0), E.dd(off, 16))], buf))

    def _sig_pair(self, nargs: int, nlocals: int, ret_type: int, scope: int) -> bytes:
        key = (nargs, nlocals, ret_type, scope)
        sigs = self._sigs.get(key)
        if sigs is None:
            sigs = (
                E.sig_info(nargs, ret_type, scope=scope)
                + E.sig_info(nlocals, 0, scope=scope)
                + struct.pack("<II", 0, self.os)
            )
            self._sigs[key] = sigs
        return sigs

    def _class_packet(self, handle: int, name: str) -> bytes:
        pkt = self._class_packets.get((handle, name))
        if pkt is None:
            buf = E.BlobBuffer()
            off = buf.add_string(name)
            pkt = _packet(
                P.PrintClassName,
                E.lwm([(E.u64(handle), E.print_result_value(off, len(name) + 1))], buf),
            )
            self._class_packets[(handle, name)] = pkt
        return pkt

    def _callee(self, c: Callee, scope: int) -> tuple[bytes, bytes, bytes | None, bytes | None]:
        """(ResolveToken key, value, GetMethodSig key, value) for one callee in one scope."""
        ckey = (c.token, c.handle, c.exception_code, scope)
        item = self._callee_items.get(ckey)
        if item is None:
            rkey = E.resolve_token_key(c.token, scope)
            if c.exception_code:
                rval = E.resolve_token_value(0, 0, exception_code=c.exception_code)
                item = (rkey, rval, None, None)
            else:
                rval = E.resolve_token_value(c.class_handle, c.handle)
                item = (
                    rkey,
                    rval,
                    E.dldl(c.handle, 0),
                    E.sig_info(c.nargs, c.ret_type, scope=scope, token=c.token),
                )
            self._callee_items[ckey] = item
        return item

    def record(self, m: Method, *, ftn: int, class_handle: int, scope: int) -> bytes:
        """One record for method `m` compiled as handle `ftn` of class `class_handle` in module
        `scope`."""
        method_class = _METHOD_CLASS.pack(
            P.GetMethodClass, 4 + 4 + 4 + 16, b"LWM1", 1, 0, ftn, class_handle, 0x42
        )
        flags_packet = self._flags_packets[m.minopts]
        if m.corrupt:
            # the packet canary: "Didn't find trailing canary for map"
            flags_packet = flags_packet[:-1] + b"\0"
        sig_map, resolve_map = self._call_maps(m, scope)
        return E.record(
            [
                self._compile_method(m, ftn, scope),
                self._arch_packet,
                self._config_packet,
                flags_packet,
                method_class,
                sig_map,
                self._class_packet(class_handle, m.class_name),
                _print_method(m.method_name, ftn),
                resolve_map,
            ]
        )

    def _compile_method(self, m: Method, ftn: int, scope: int) -> bytes:
        """The CompileMethod packet: the request, with the IL in its buffer."""
        il = m.il
        n = len(il)
        options = CORINFO_OPT_INIT_LOCALS if m.nlocals else 0
        value = _CM_INFO.pack(ftn, scope, 4, n, m.max_stack, 0, options, 0) + self._sig_pair(
            m.nargs, m.nlocals, m.ret_type, scope
        )
        body_len = 4 + 4 + 4 + 4 + 216 + 4 + n
        return (
            _CM_HEAD.pack(P.CompileMethod, body_len, b"LWM1", 1, 4 + n, 0)
            + value
            + _U32.pack(n)
            + il
            + _CANARY
        )

    def _call_maps(self, m: Method, scope: int) -> tuple[bytes, bytes]:
        """The GetMethodSig and ResolveToken packets of `m`'s recorded callees (b"" for none)."""
        rt: list[tuple[bytes, bytes]] = []
        sig: list[tuple[bytes, bytes]] = []
        for c in m.callees:
            if not c.recorded:
                continue
            rk, rv, sk, sv = self._callee(c, scope)
            rt.append((rk, rv))
            if sk is not None and sv is not None:
                sig.append((sk, sv))
        sig_map = _small_map(P.GetMethodSig, sig, 16 + 84) if sig and not m.no_sig_map else b""
        resolve_map = (
            _small_map(P.ResolveToken, rt, E.RESOLVED_TOKEN_IN_SIZE + E.RESOLVE_TOKEN_VALUE_SIZE)
            if rt
            else b""
        )
        return sig_map, resolve_map


def _print_method(name: str, ftn: int) -> bytes:
    """The PrintMethodName packet: `ftn` -> its name (8-bit, NUL-terminated)."""
    data = name.encode()
    nlen = len(data) + 1
    return (
        _PM_HEAD.pack(
            P.PrintMethodName,
            4 + 4 + 4 + 8 + 12 + 4 + nlen,
            b"LWM1",
            1,
            4 + nlen,
            ftn,
            nlen,
            4,
            nlen,
            nlen,
        )
        + data
        + b"\0B"
    )
