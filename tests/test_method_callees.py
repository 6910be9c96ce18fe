"""The callees and JIT flags of a method context in today's layouts (issue 41 items 2 and 3): the
maps built as today's superpmi writes them (GetMethodInfo keyed {handle, context} with a 208-byte
METHOD_INFO; CanInline's value without 3.1's restrictions; a CORJIT_FLAGS of more than one word,
with getOSRInfo's and getPgoInstrumentationResults' answers beside it). 3.1's layouts are tested
on the real collections (tests/real/test_callees_real.py)."""

from __future__ import annotations

import struct

import pytest

from spmi_dbg.mch import encode as E
from spmi_dbg.mch import packets as P
from spmi_dbg.mch.maps import SerializedMap, parse_map
from spmi_dbg.method.callees import callees
from spmi_dbg.method.flags import TODAY, jit_flags
from spmi_dbg.method.recorded import Answers

pytestmark = pytest.mark.unit

ROOT, CALLEE, NESTED, SCOPE = 0x1000, 0x2000, 0x3000, 0x7000
TOKEN = 0x0A000001
# the root: ldarg.0; call TOKEN; ret -- the callee: ldc.i4.1; ret
ROOT_IL = bytes([0x02, 0x28]) + struct.pack("<I", TOKEN) + bytes([0x2A])
CALLEE_IL = bytes([0x17, 0x2A])
BIT = {name: bit for bit, name in TODAY.items()}


def _map(
    packet_id: int, items: list[tuple[bytes, bytes]], buf: E.BlobBuffer | None = None
) -> SerializedMap:
    return parse_map(packet_id, E.lwm(items, buf))


def _method_info(ftn: int, il_offset: int, il_size: int) -> bytes:
    """Today's METHOD_INFO (208 bytes): CompileMethod's value without its flags and os."""
    return E.compile_method_value(ftn, il_offset, il_size, scope=SCOPE)[:208]


def _answers(flags: int, *, osr: int | None = None, pgo: int | None = None) -> Answers:
    maps: dict[int, SerializedMap] = {}
    buf = E.BlobBuffer()
    maps[P.CompileMethod] = _map(
        P.CompileMethod,
        [(E.u32(0), E.compile_method_value(ROOT, buf.add(ROOT_IL), len(ROOT_IL), scope=SCOPE))],
        buf,
    )
    maps[P.ResolveToken] = _map(
        P.ResolveToken,
        [(E.resolve_token_key(TOKEN, SCOPE, context=1), E.resolve_token_value(0x9000, CALLEE))],
    )
    infos = E.BlobBuffer()
    body = _method_info(CALLEE, infos.add(CALLEE_IL), len(CALLEE_IL))
    maps[P.GetMethodInfo] = _map(
        P.GetMethodInfo,
        [
            (E.dldl(CALLEE, 0), body + b"\x01" + E.u32(0)),
            (E.dldl(NESTED, 0), bytes(208) + b"\x00" + E.u32(0)),  # getMethodInfo said false
        ],
        infos,
    )
    maps[P.CanInline] = _map(
        P.CanInline,
        [
            (E.dldl(ROOT, CALLEE), struct.pack("<iI", 0, 0)),
            (E.dldl(ROOT, NESTED), struct.pack("<iI", -2, 0)),
        ],
    )
    flag_buf = E.BlobBuffer()
    blob = struct.pack("<QQQ", flags, 0xFFFF, 0)  # the word, then instruction-set words
    maps[P.GetJitFlags] = _map(
        P.GetJitFlags, [(E.u32(0), E.dd(flag_buf.add(blob), len(blob)))], flag_buf
    )
    if osr is not None:
        maps[P.GetOSRInfo] = _map(P.GetOSRInfo, [(E.u32(0), struct.pack("<II", 0, osr))])
    if pgo is not None:
        maps[P.GetPgoInstrumentationResults] = _map(
            P.GetPgoInstrumentationResults,
            [(E.u64(ROOT), struct.pack("<IIIIiI", pgo, 0, 0, 8, 0, 2))],
        )
    return Answers(maps)


def test_todays_getmethodinfo_and_caninline_name_the_callees() -> None:
    (called, nested) = callees(1, _answers(0), with_il=True)
    assert (called.handle, called.call_sites, called.il_size) == (CALLEE, [1], len(CALLEE_IL))
    assert called.inline is not None and called.inline.restrictions is None
    assert called.inline_words() == "inline allowed"
    assert called.il is not None and [ln.opcode for ln in called.il.lines] == ["ldc.i4.1", "ret"]
    assert nested.where() == "met inside another callee"
    assert nested.body_words() == "no body given (getMethodInfo answered false)"
    assert nested.inline_words() == "inline refused: never inline" and nested.il is None


def test_todays_flags_are_named_by_todays_numbers() -> None:
    f = jit_flags(_answers(1 << BIT["TIER1"] | 1 << BIT["OSR"], osr=0x42, pgo=3))
    assert f is not None and (f.era, f.size) == ("today", 24)
    assert f.names == ["OSR", "TIER1"]
    assert f.summary == ["Tier1", "OSR at IL_0042", "has PGO data (3 schema items)"]
    assert f.rejected == []


def test_a_flag_its_evidence_contradicts_is_not_believed() -> None:
    f = jit_flags(
        _answers(1 << BIT["OSR"] | 1 << BIT["BBOPT"] | 1 << BIT["TIER0"] | 1 << BIT["TIER1"])
    )
    assert f is not None and "OSR at" not in " ".join(f.summary)
    assert [r.split(",")[0] for r in f.rejected] == [
        "TIER0 and TIER1 both set: no tier said",
        "OSR set",
        "BBOPT set",
    ]
    assert "not believed: OSR set, but no getOSRInfo answer recorded" in f.text()


def test_no_getjitflags_answer_is_no_flags() -> None:
    a = _answers(0)
    del a.maps[P.GetJitFlags]
    assert jit_flags(a) is None


def test_31s_instruction_set_bits_are_named_by_the_recorded_target() -> None:
    """An 8-byte CORJIT_FLAGS is 3.1's: bits 43+ are x64's SSE3... when the target is recorded
    (3.1's collections record none: tests/real/test_callees_real.py)."""
    a = _answers(0)
    buf = E.BlobBuffer()
    word = struct.pack("<Q", 1 << 5 | 1 << 43 | 1 << 53)
    a.maps[P.GetJitFlags] = _map(P.GetJitFlags, [(E.u32(0), E.dd(buf.add(word), 8))], buf)
    a.maps[P.GetExpectedTargetArchitecture] = _map(
        P.GetExpectedTargetArchitecture, [(E.u32(0), E.u32(0x8664))]
    )
    f = jit_flags(a)
    assert f is not None and (f.era, f.names, f.summary) == (
        "3.1",
        ["MIN_OPT", "USE_SSE3", "USE_POPCNT"],
        ["MinOpts"],
    )
