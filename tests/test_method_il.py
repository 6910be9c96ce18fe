"""The method as the JIT saw it (issue 41 item 1): ECMA-335's opcode table, the IL decoder, what mcs
-ildump prints for each instruction (its misprints as facts about mcs), and `spmi-dbg mch il` on a
sample collection whose IL and callees the assembler knows. The real collections: tests/real/
test_il_real.py."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from spmi_dbg.method.decode import decode
from spmi_dbg.method.mcs_ildump import compare, mcs_text, parse_ildump
from spmi_dbg.method.opcodes import BY_NAME, OPCODES, Operand, encoding
from spmi_dbg.sample import il as sample_il

from .support.common import run_cli


def _il(*parts: str | bytes | tuple[str, str, int]) -> bytes:
    """IL from opcode names, raw bytes, and (name, struct format, operand) triples."""
    out = b""
    for p in parts:
        if isinstance(p, bytes):
            out += p
        elif isinstance(p, str):
            out += encoding(BY_NAME[p])
        else:
            name, fmt, value = p
            out += encoding(BY_NAME[name]) + struct.pack(fmt, value)
    return out


@pytest.mark.unit
def test_the_table_is_ecma_335s() -> None:
    """Spot checks across the table, the two-byte opcodes, and the codes ECMA leaves unused."""
    assert len(OPCODES) == 219
    codes = (BY_NAME["bge.s"].code, BY_NAME["bgt"].code, BY_NAME["ldind.i"].code)
    assert codes == (0x2F, 0x3D, 0x4D)
    assert BY_NAME["ldelem"].code == 0xA3 and BY_NAME["ldelem"].operand is Operand.TOKEN
    assert BY_NAME["readonly."].code == 0xFE1E and BY_NAME["readonly."].is_prefix
    assert BY_NAME["switch"].operand is Operand.SWITCH
    assert not {0x24, 0x77, 0x78, 0xA6, 0xBB, 0xC4, 0xE1, 0xFE08, 0xFE10} & OPCODES.keys()


@pytest.mark.unit
def test_the_sample_jits_subset_is_drawn_from_the_table() -> None:
    """The sample JIT's opcodes (spmi_dbg/sample/il.py) carry ECMA's bytes: written once."""
    for op in sample_il.BY_NAME.values():
        assert op.code == encoding(BY_NAME[op.name]), op.name


@pytest.mark.unit
def test_decode_gives_offsets_operands_and_targets() -> None:
    il = _il(
        ("ldc.i4.s", "<b", -3),
        ("br.s", "<b", -4),  # back to itself: IL_0002 + 2 - 4 = 0
        ("ldc.r8", "<d", 1.5),
        ("switch", "<I", 2),
        struct.pack("<ii", 0, -20),
        ("call", "<I", 0x0A000001),
        "ret",
    )
    got = decode(il)
    assert [(i.offset, i.name) for i in got] == [
        (0, "ldc.i4.s"), (2, "br.s"), (4, "ldc.r8"), (13, "switch"), (26, "call"), (31, "ret")
    ]  # fmt: skip
    assert got[0].value == -3 and got[1].targets == (0,) and got[2].value == 1.5
    assert got[3].targets == (26, 6) and got[4].value == 0x0A000001


@pytest.mark.unit
def test_bad_il_is_decoded_without_an_error() -> None:
    """An unused opcode is one byte of its own; an operand cut short by the end says so."""
    got = decode(b"\x24\x00\x28\x01\x02")
    assert [(i.offset, i.name, i.truncated) for i in got] == [
        (0, "<unknown opcode 0x24>", False), (1, "nop", False), (2, "call", True)
    ]  # fmt: skip


@pytest.mark.unit
def test_mcs_text_is_what_mcs_prints_misprints_included() -> None:
    """verbildump.cpp (3.1 and today): bge.s as `bgt.s`, a short branch's offset read unsigned,
    `leave` raw, ldind.i as `ldind.u8`, ldelem as `stelem`, readonly. unknown (an empty text)."""
    il = _il(
        ("bge.s", "<b", -2),
        ("leave.s", "<b", 14),
        "ldind.i",
        ("ldelem", "<I", 0x01000002),
        "readonly.",
        ("ldc.i4", "<i", 1000000),
        ("ldc.r4", "<f", 1.0),
        ("stloc", "<H", 0x104),
    )
    assert [mcs_text(i) for i in decode(il)] == [
        "bgt.s IL_0100",  # 0 + 2 + 0xfe: -2 read as 254
        "leave 0x0e",
        "ldind.u8",
        "stelem <0x01000002>",
        "",
        "ldc.i4 0x000f4240",
        "ldc.r4 float32(0x3f800000)",
        "stloc 0x0104",
    ]


@pytest.mark.unit
def test_the_comparison_names_each_difference_and_stops_at_no() -> None:
    ours = decode(_il("ldarg.0", ("ldc.i4.s", "<b", 3), "ret"))
    assert compare(ours, [(0, "ldarg.0"), (1, "ldc.i4.s 0x03"), (3, "ret")]) == []
    assert compare(ours, [(0, "ldarg.0"), (1, "ldc.i4.s 0x04")]) == [
        "IL_0001: ours 'ldc.i4.s 0x03', mcs 'ldc.i4.s 0x04'",
        "IL_0003: ours 'ret', mcs printed no instruction",
    ]
    no = decode(_il(("no.", "<B", 1), "ret"))
    assert compare(no, [(0, "no."), (2, "<?>")]) == [
        "IL_0000: no.: mcs walks the IL differently from here on (not compared further)"
    ]


@pytest.mark.unit
def test_parse_ildump_splits_the_one_line_stream() -> None:
    """mcs prints a method's instructions with no line break between them; a branch target
    (`IL_0011`) is not an instruction's start (`IL_0011: `)."""
    text = (
        "// ProcessName - 'x'\n.assembly extern mscorlib{}\n.assembly A{}\n.class A\n{\n"
        "   .method static void M()\n   {\n      .maxstack  1\n      .locals ()\n"
        "IL_0000: ldc.i4.0IL_0001: brfalse.s IL_0004IL_0003: IL_0004: ret   }\n}\n// Dumped 1\n"
    )
    (m,) = parse_ildump(text)
    assert m.instructions == [
        (0, "ldc.i4.0"), (1, "brfalse.s IL_0004"), (3, ""), (4, "ret")
    ]  # fmt: skip
    assert "   .method static void M()" in m.header


CALLS = """\
.callee System.Math:Max(2) -> long
.callee Foo.Bar:Gone(1) -> long missing
.method Sample.Loops:SumTo(1)
  .locals 2
  ldc.i4.0
  stloc.0
  ldarg.0
  stloc.1
  br.s TEST
BODY: ldloc.0
  ldloc.1
  add
  stloc.0
  ldloc.1
  ldc.i4.1
  sub
  stloc.1
TEST: ldloc.1
  ldc.i4.0
  bgt.s BODY
  ldloc.0
  ldloc.1
  call System.Math:Max(2)
  call Foo.Bar:Gone(1)
  ret
.end
"""


def test_mch_il_on_a_sample_collection(tmp_path: Path) -> None:
    """Every instruction where the assembler put it; a callee whose token was resolved but whose
    name the sample collection does not record (the sample JIT never asks for it) raw with that
    why, the unresolved one raw with its own; branch targets as IL offsets."""
    source = tmp_path / "calls.il"
    source.write_text(CALLS)
    mch = tmp_path / "calls.mch"
    assert run_cli("sample", "asm", str(source), "--out", str(mch)).returncode == 0
    r = run_cli("mch", "il", str(mch), "1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "// method context 1: Sample.Loops:SumTo (IL size 31)" in lines
    body = [ln for ln in lines if ln.startswith("IL_")]
    il = _assembled(source)
    expected = list(sample_il.decode(il))
    assert [int(ln[3:7], 16) for ln in body] == [i.offset for i in expected]
    assert [ln.split()[1] for ln in body] == [i.op.name for i in expected]
    assert "IL_0004:  br.s" in r.stdout and "IL_0010:  bgt.s" in r.stdout
    assert "<0x0a000001: method name not recorded>" in r.stdout
    assert "<0x0a000002: not recorded>" in r.stdout
    assert ".method int64 Sample.Loops:SumTo(<1 arguments: types not recorded>)" in r.stdout
    data = json.loads(run_cli("mch", "il", "--json", str(mch), "1").stdout)
    calls = [ln for ln in data["lines"] if ln["opcode"] == "call"]
    assert [c["named"] for c in calls] == [None, None]
    assert [c["raw_why"] for c in calls] == ["method name not recorded", "not recorded"]
    assert [c["token"] for c in calls] == [0x0A000001, 0x0A000002] and len(il) == data["il_size"]


def _assembled(source: Path) -> bytes:
    from spmi_dbg.sample.asm import assemble_file

    (method,) = assemble_file(source).methods
    return method.il


def test_mch_il_refuses_a_method_context_past_the_end(tmp_path: Path) -> None:
    source = tmp_path / "one.il"
    source.write_text(".method A.B:C(0)\n  ldc.i4.0\n  ret\n.end\n")
    mch = tmp_path / "one.mch"
    assert run_cli("sample", "asm", str(source), "--out", str(mch)).returncode == 0
    r = run_cli("mch", "il", str(mch), "2")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "method context 2" in r.stderr
