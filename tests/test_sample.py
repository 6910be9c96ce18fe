"""spmi_dbg.sample: the IL assembler, method-context records, the random generator, injection,
`sample build/asm`."""

from __future__ import annotations

import dataclasses
import random
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spmi_dbg.mch import Collection
from spmi_dbg.mch import packets as P
from spmi_dbg.mch.context import MethodContextInfo, decode_method_context
from spmi_dbg.mch.maps import SerializedMap, parse_map
from spmi_dbg.sample import il as IL
from spmi_dbg.sample.asm import AsmError, assemble_file, assemble_text
from spmi_dbg.sample.build import SampleSpec, build, collection_records
from spmi_dbg.sample.builder import CLR_EXCEPTION, Method, RecordBuilder
from spmi_dbg.sample.gen import Generator
from spmi_dbg.sample.inject import KINDS, injected, parse_inject

from .support.common import ALL_KINDS_AT, run_cli

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "examples" / "corpus"
BUG_KINDS = set(IL.BUG_KINDS)


def asm1(text: str) -> Method:
    return assemble_text(text, "t.il").methods[0]


def asm_error(text: str) -> str:
    with pytest.raises(AsmError) as e:
        assemble_text(text, "t.il")
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def maps_of(mc: MethodContextInfo) -> dict[int, SerializedMap]:
    return {p.id: parse_map(p.id, p.data) for p in mc.packets}


def call_tokens(il: bytes) -> list[int]:
    return [i.operand for i in IL.decode(il) if i.op.name == "call" and i.operand is not None]


# ------------------------------------------------------------------------------------------
# assembler


@pytest.mark.unit
def test_assembles_exact_bytes_with_forward_and_backward_branches() -> None:
    m = asm1("""
    .method A.B:Loop(1)   # comment
      .locals 1
      ldc.i4.0
      stloc.0
      br.s TEST
    BODY: ldloc.0
      ldarg.0
      add
      stloc.0
    TEST:
      ldloc.0
      ldc.i4.s 100
      blt.s BODY          // backward
      ldloc.0
      ldc.i8 0x123456789
      add
      ret
    .end
    """)
    assert m.il == bytes.fromhex(
        "16 0a 2b 04 06 02 58 0a 06 1f 64 32 f7 06 21 89 67 45 23 01 00 00 00 58 2a"
    )
    assert (m.name, m.nargs, m.nlocals, m.max_stack) == ("A.B:Loop", 1, 1, 2)
    assert m.class_name == "A.B" and m.method_name == "Loop"


@pytest.mark.unit
def test_long_branches_raw_displacements_and_repeat() -> None:
    m = asm1("""
    .method A.B:Far(1)
      ldarg.0
      brtrue FAR
      .repeat 200 nop
    FAR:
      br.s 0
      ldarg.0
      ret
    .end
    """)
    assert m.il[:6] == b"\x02\x3a" + struct.pack("<i", 200)  # brtrue FAR: 200 nops ahead
    assert m.il[206:208] == b"\x2b\x00" and len(m.il) == 210
    ins = list(IL.decode(m.il))
    assert ins[1].target == 206


@pytest.mark.unit
def test_calls_get_tokens_and_signatures() -> None:
    a = assemble_text(
        """
    .callee System.Math:Max(2) -> long
    .callee X.Y:Log(1) -> void
    .callee X.Y:Gone(0) -> int missing
    .callee X.Y:Bad(1) -> long throws
    .method A.B:C(2)
      ldarg.0
      ldarg.1
      call System.Math:Max
      dup
      call X.Y:Log
      call X.Y:Bad
      call X.Y:Gone
      add
      call A.B:D          # a method of this file, defined below
      call Z.Z:Inline(1) -> long throws 0xE0434F4D
      ret
    .end
    .method A.B:D(1) -> long
      ldarg.0
      ret
    .end
    """,
        "t.il",
    )
    m = a.methods[0]
    by_name = {c.name: c for c in m.callees}
    assert call_tokens(m.il) == [
        by_name[n].token
        for n in ("System.Math:Max", "X.Y:Log", "X.Y:Bad", "X.Y:Gone", "A.B:D", "Z.Z:Inline")
    ]
    assert by_name["System.Math:Max"].token == 0x0A000001
    assert not by_name["X.Y:Gone"].recorded and by_name["X.Y:Gone"].ret_type == IL.TYPE_INT
    assert by_name["X.Y:Bad"].exception_code == CLR_EXCEPTION
    assert by_name["Z.Z:Inline"].exception_code == 0xE0434F4D
    assert by_name["X.Y:Log"].effect == (1, 0)
    assert m.max_stack == 2


@pytest.mark.unit
@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (".method A.B:C(1)\n  ldarg.0\n  starg.s 0\n  ret\n.end", 3, "unknown opcode 'starg.s'"),
        (".method A.B:C(1)\n  br.s NOWHERE\n.end", 2, "undefined label 'NOWHERE'"),
        (
            ".method A.B:C(1)\n  ldc.i4.s 200\n  ret\n.end",
            2,
            "200 is out of range: expected -128..127",
        ),
        (".method A.B:C(1)\n  ldc.i4.s x\n  ret\n.end", 2, "expected an integer"),
        (".method A.B:C(1)\n  add\n  ret\n.end", 2, "underflows the stack"),
        (".method A.B:C(1)\n  ldarg.0\n  ldarg.0\n  ret\n.end", 4, "ret with stack depth 2"),
        (".method A.B:C(1)\n  ldarg.1\n  ret\n.end", 2, "out of range: the method has 1 arguments"),
        (".method A.B:C(1)\n  ldarg.0\n  pop\n.end", 3, "falls off the end"),
        (".method A.B:C(1)\n  ldarg.0\n  ret\n", 1, "has no .end"),
        (".method A.B:C(1)\n  call X.Y:Z\n  ret\n.end", 2, "call to undeclared X.Y:Z"),
        (".method A.B:C(1)\nL: ldarg.0\nL: ret\n.end", 3, "label L is already defined at line 2"),
        (".method A.B:C(1)\n  ldarg.0 5\n  ret\n.end", 2, "takes no operand"),
        (
            ".method A.B:C(1)\n  .locals x\n  ldarg.0\n  ret\n.end",
            2,
            ".locals: expected an integer",
        ),
        ("  ldarg.0\n", 1, "outside a method"),
        (".method A.B:C\n", 1, "expected Namespace.Class:Method(ARGS)"),
        (".bogus 1\n", 1, "outside a method"),
        (".method A.B:C(1)\n  .bogus\n.end", 2, "unknown directive .bogus"),
        ("# nothing\n", 1, "no methods"),
        (".callee A.B:X(1) -> float\n", 1, "unknown return type 'float'"),
        (
            ".method A.B:C(1)\n  ldarg.0\n  brtrue.s L\n  .repeat 130 nop\nL: ldarg.0\n  ret\n.end",
            3,
            "displacement 130 does not fit a short branch (-128..127): use brtrue",
        ),
        (
            ".method A.B:C(1)\n  ldarg.0\n  ldarg.0\n  beq.s L\n  .repeat 130 nop\nL: ldarg.0\n  "
            "ret\n.end",
            4,
            "use ceq and brtrue/brfalse",
        ),
        (
            ".method A.B:C(1)\n  ldarg.0\n  brtrue.s L\n  ldarg.0\n  ldarg.0\nL: ldarg.0\n  "
            "ret\n.end",
            6,
            "stack depth 2 does not match 0 from a branch here",
        ),
        (
            ".method A.B:C(1)\n  ldarg.0\n  brtrue.s 1\n  ldc.i4.s 5\n  pop\n  ldarg.0\n  "
            "ret\n.end",
            3,
            "target 4 is not an instruction start",
        ),
    ],
)
def test_errors_are_one_line_with_file_and_line(text: str, line: int, needle: str) -> None:
    msg = asm_error(text)
    assert msg.startswith(f"t.il:{line}: "), msg
    assert needle in msg, msg


@pytest.mark.unit
def test_noverify_keeps_bad_il_and_reading_a_missing_file_is_one_line(tmp_path: Path) -> None:
    m = asm1(".method A.B:Bad(1)\n  .noverify\n  .maxstack 3\n  .bytes FE 09 2A\n.end")
    assert m.il == b"\xfe\x09\x2a" and m.max_stack == 3
    with pytest.raises(AsmError, match=r"nope\.il: cannot read"):
        assemble_file(tmp_path / "nope.il")


@pytest.mark.unit
def test_corpus_assembles_and_each_trigger_file_has_its_trigger() -> None:
    files = sorted(CORPUS.glob("*.il"))
    assert len(files) >= 15
    for f in files:
        a = assemble_file(f)
        for m in a.methods:
            found = (
                set(IL.find_triggers(m.il, nlocals=m.nlocals, max_stack=m.max_stack)) & BUG_KINDS
            )
            kind = f.stem.removeprefix("trigger-")
            if f.stem.startswith("trigger-") and kind in BUG_KINDS:
                assert found == {kind}, (f.name, found)
            else:
                assert not found, (f.name, found)
        if f.stem == "trigger-missing":
            assert any(not c.recorded for m in a.methods for c in m.callees)
        if f.stem in ("trigger-ee-exception", "trigger-seed-arm64"):
            assert any(c.exception_code == CLR_EXCEPTION for m in a.methods for c in m.callees)
        if f.stem == "trigger-corrupt":
            assert a.methods[0].corrupt
        if f.stem == "trigger-seed-arm64":
            assert a.arch == "arm64"
    assert "pow2-mul" in IL.find_triggers(assemble_file(CORPUS / "pow2mul.il").methods[0].il)


# ------------------------------------------------------------------------------------------ records


@dataclasses.dataclass(frozen=True)
class CallsCollection:
    """`sample asm` of calls.il and bigconst.il for Arm64 with JitMinOpts=1: the collection, its
    record count and index, calls.il's methods and the decoded records 1 (Sample.Calls:Clamp) and
    4 (Sample.Constants:Hash)."""

    path: Path
    records: int
    has_toc: bool
    src: list[Method]
    mc: MethodContextInfo
    mc4: MethodContextInfo

    @property
    def maps(self) -> dict[int, SerializedMap]:
        return maps_of(self.mc)


@pytest.fixture(scope="module")
def calls_collection(tmp_path_factory: pytest.TempPathFactory) -> CallsCollection:
    out = tmp_path_factory.mktemp("records") / "calls.mch"
    r = run_cli(
        "sample",
        "asm",
        str(CORPUS / "calls.il"),
        str(CORPUS / "bigconst.il"),
        "--arch",
        "arm64",
        "--config",
        "JitMinOpts=1",
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    with Collection.open(out) as col:
        return CallsCollection(
            out,
            len(col),
            col.toc is not None,
            assemble_file(CORPUS / "calls.il").methods,
            col.method_context(1),
            col.method_context(4),
        )


def resolved_tokens(rt: SerializedMap) -> list[tuple[int, ...]]:
    """ResolveToken's items: the key's {context, scope, token, kind} then the value's 8 fields."""
    return [
        struct.unpack("<QQII", k) + struct.unpack("<QQQIIIII", val)
        for k, val in zip(rt.keys(), rt.values(), strict=True)
    ]


def test_records_decode_with_the_collection_api(calls_collection: CallsCollection) -> None:
    c = calls_collection
    assert c.records == 5 and c.has_toc
    mc = c.mc
    assert not mc.problems
    assert mc.name == "Sample.Calls:Clamp" and mc.il_size == len(c.src[0].il)
    assert mc.target_arch_name == "arm64"
    assert mc.request is not None and mc.request.il == c.src[0].il
    ids = [p.id for p in mc.packets]
    assert set(ids) == {143, 183, 151, 154, 71, 76, 149, 6, 109}


def test_compile_method_record_carries_the_signature(calls_collection: CallsCollection) -> None:
    cm = calls_collection.maps[P.CompileMethod]
    assert cm.count == 1 and cm.item_size == 4 + 216
    v = cm.values()[0]
    assert struct.unpack_from("<I", v, 40 + 28)[0] == 3  # args.numArgs
    assert struct.unpack_from("<I", v, 40 + 20)[0] == IL.TYPE_LONG  # args.retType
    assert struct.unpack_from("<I", v, 40 + 84 + 28)[0] == 0  # locals.numArgs
    request = calls_collection.mc.request
    assert request is not None and request.max_stack == calls_collection.src[0].max_stack


def test_resolve_token_has_one_item_per_callee(calls_collection: CallsCollection) -> None:
    # ResolveToken: one item per callee, keyed {0, scope, token, 2}, values of 44 bytes, sorted
    # bytewise.
    mc = calls_collection.mc
    assert mc.request is not None
    rt = calls_collection.maps[P.ResolveToken]
    assert rt.item_size == 24 + 44 and rt.keys() == sorted(rt.keys())
    tokens = set()
    for ctx, scope, token, kind, hcls, hmeth, hfld, ts, cts, ms, cms, exc in resolved_tokens(rt):
        assert (ctx, scope, kind) == (0, mc.request.scope, 2)
        tokens.add(token)
        assert (
            hcls and hmeth and hfld == 0 and exc == 0 and ts == ms == 0xFFFFFFFF and cts == cms == 0
        )
    assert tokens == set(call_tokens(calls_collection.src[0].il))


def test_method_sigs_are_keyed_by_the_callees(calls_collection: CallsCollection) -> None:
    maps = calls_collection.maps
    sig_keys = [struct.pack("<QQ", row[5], 0) for row in resolved_tokens(maps[P.ResolveToken])]
    sig = maps[P.GetMethodSig]
    assert sig.item_size == 16 + 84 and sorted(sig.keys()) == sorted(sig_keys) == sig.keys()
    nargs = sorted(struct.unpack_from("<I", sv, 28)[0] for sv in sig.values())
    assert nargs == [1, 2]


def test_jit_flags_have_minopts_off(calls_collection: CallsCollection) -> None:
    # GetJitFlags: DD {offset, 16} -> the CORJIT_FLAGS blob; MinOpts off.
    jf = calls_collection.maps[P.GetJitFlags]
    off, size = struct.unpack("<II", jf.values()[0])
    blob = jf.blob(off)
    assert size == 16 and blob is not None and struct.unpack_from("<Q", blob)[0] == 0


def test_config_values_are_recorded(calls_collection: CallsCollection) -> None:
    # GetIntConfigValue: {name (UTF-16LE + NUL), default 0} -> 1
    cfg = calls_collection.maps[P.GetIntConfigValue]
    name_off, default = struct.unpack("<II", cfg.keys()[0])
    assert cfg.blob(name_off) == "JitMinOpts\0".encode("utf-16-le") and default == 0
    assert struct.unpack("<I", cfg.values()[0])[0] == 1


def test_distinct_methods_get_distinct_ftns_in_one_scope(calls_collection: CallsCollection) -> None:
    # Distinct methods get distinct ftns; all share the corpus scope.
    mc, mc4 = calls_collection.mc, calls_collection.mc4
    assert mc4.name == "Sample.Constants:Hash" and mc4.request is not None
    assert mc.request is not None
    assert mc4.request.ftn != mc.request.ftn and mc4.request.scope == mc.request.scope
    assert P.ResolveToken not in {p.id for p in mc4.packets}  # no calls: no call packets


def test_mch_verify_accepts_the_assembled_collection(calls_collection: CallsCollection) -> None:
    v = run_cli("mch", "verify", str(calls_collection.path))
    assert v.returncode == 0, v.stdout + v.stderr


@pytest.mark.unit
def test_minopts_and_corrupt_flags() -> None:
    b = RecordBuilder("x64")
    m = asm1(".method A.B:C(1)\n  .minopts\n  ldarg.0\n  ret\n.end")
    rec = b.record(m, ftn=0x1000, class_handle=0x2000, scope=0x3000)
    mc = decode_method_context(1, 0, rec)
    jf = maps_of(mc)[P.GetJitFlags]
    blob = jf.blob(struct.unpack("<II", jf.values()[0])[0])
    assert blob is not None and struct.unpack_from("<Q", blob)[0] == 1 << 5  # CORJIT_FLAG_MIN_OPT
    assert mc.name == "A.B:C" and mc.target_arch == 0x8664
    bad = b.record(
        dataclasses.replace(m, corrupt=True), ftn=0x1000, class_handle=0x2000, scope=0x3000
    )
    assert len(bad) == len(rec) and sum(x != y for x, y in zip(bad, rec, strict=True)) == 1
    with pytest.raises(ValueError, match="bad packet 154"):
        decode_method_context(1, 0, bad)


# ------------------------------------------------------------------------------------------
# generator


def check_method(m: Method) -> None:
    """What the sample JIT requires and what the generator promises."""
    effects = {c.token: c.effect for c in m.callees}
    depth = IL.check_stack(m.il, nargs=m.nargs, nlocals=m.nlocals, call_effect=lambda t: effects[t])
    assert depth == m.max_stack <= 8
    found = set(IL.find_triggers(m.il, nlocals=m.nlocals, max_stack=m.max_stack))
    assert not found & BUG_KINDS, (found, IL.disassemble(m.il))
    assert not IL.risky_patterns(m.il), IL.risky_patterns(m.il)
    assert 1 <= m.nargs <= 4 and 0 <= m.nlocals <= 4 and len(m.il) >= 10
    assert set(call_tokens(m.il)) == {c.token for c in m.callees}
    assert all(c.recorded and not c.exception_code for c in m.callees)
    for ins in IL.decode(m.il):
        assert ins.target is None or ins.target != ins.offset


@pytest.mark.unit
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_generator_never_emits_triggers(seed: int) -> None:
    gen = Generator(seed)
    for n in range(1, 120):
        check_method(gen.method(n).method)


@pytest.mark.unit
def test_generator_statistics() -> None:
    gen = Generator(7)
    methods = [gen.method(n).method for n in range(1, 2501)]
    for m in methods:
        check_method(m)
    sizes = sorted(len(m.il) for m in methods)
    assert (
        sizes[0] >= 10
        and 40 <= sizes[len(sizes) // 2] <= 150
        and sizes[int(len(sizes) * 0.9)] <= 320
    )
    assert sizes[-1] > 300  # a few larger methods
    pow2 = sum(1 for m in methods if "pow2-mul" in IL.find_triggers(m.il)) / len(methods)
    assert 0.10 <= pow2 <= 0.20
    kinds: dict[str, int] = {}
    for m in methods:
        for ins in IL.decode(m.il):
            t = ins.target
            if t is not None:
                kinds["back" if t < ins.offset else "fwd"] = (
                    kinds.get("back" if t < ins.offset else "fwd", 0) + 1
                )
                if ins.op.operand == IL.BR32:
                    kinds["long"] = kinds.get("long", 0) + 1
            if ins.op.name == "ldc.i8":
                kinds["i8"] = kinds.get("i8", 0) + 1
    assert kinds["back"] > 300 and kinds["fwd"] > 600 and kinds["long"] > 10 and kinds["i8"] > 60
    assert 0.5 < sum(1 for m in methods if m.callees) / len(methods) < 0.97
    assert len({m.il for m in methods}) > 0.99 * len(methods)


# ------------------------------------------------------------------------------------------
# injection


def records(path: Path) -> Iterator[bytes]:
    with Collection.open(path) as col:
        for n in range(1, len(col) + 1):
            yield col.record(n)


def test_injection_places_each_trigger_at_its_number_and_nowhere_else(
    injected_pair: tuple[Path, Path],
) -> None:
    plain, inj = injected_pair
    at = {n: k for k, n in ALL_KINDS_AT.items()}
    a, b = list(records(plain)), list(records(inj))
    assert len(a) == len(b) == 220
    for n, (ra, rb) in enumerate(zip(a, b, strict=True), 1):
        assert (ra != rb) == (n in at), n  # the rest of the collection is byte-identical
    with Collection.open(inj) as col:
        for n in range(1, 221):
            kind = at.get(n)
            if kind == "corrupt":
                with pytest.raises(Exception, match="bad canary after packet 154"):
                    col.method_context(n)
                continue
            mc = col.method_context(n)
            assert mc.request is not None and mc.name and mc.target_arch_name == "arm64"
            il = mc.request.il
            nlocals = struct.unpack_from(
                "<I", maps_of(mc)[P.CompileMethod].values()[0], 40 + 84 + 28
            )[0]
            found = (
                set(IL.find_triggers(il, nlocals=nlocals, max_stack=mc.request.max_stack))
                & BUG_KINDS
            )
            assert found == ({kind} if kind in BUG_KINDS else set()), (n, kind, found)
            maps = maps_of(mc)
            rt = maps.get(P.ResolveToken)
            recorded = {}
            if rt is not None:
                for k, v in zip(rt.keys(), rt.values(), strict=True):
                    recorded[struct.unpack_from("<I", k, 16)[0]] = struct.unpack_from("<I", v, 40)[
                        0
                    ]
            unrecorded = set(call_tokens(il)) - set(recorded)
            throwing = {t for t, code in recorded.items() if code}
            assert bool(unrecorded) == (kind == "missing"), (n, kind)
            assert throwing == (
                {t for t, c in recorded.items() if c == CLR_EXCEPTION}
                if kind in ("ee-exception", "seed-arm64")
                else set()
            )
            assert bool(throwing) == (kind in ("ee-exception", "seed-arm64")), (n, kind)
            if kind == "stack-overflow":
                assert 55_000 < len(il) < 65_000
            elif kind is not None:
                assert len(il) < 4000
    v = run_cli("mch", "verify", str(inj))
    assert v.returncode == 1
    lines = [ln for ln in v.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"record {ALL_KINDS_AT['corrupt']} at offset" in lines[0], v.stdout


@pytest.mark.unit
def test_injected_methods_compile_data_is_consistent() -> None:
    gen = Generator(11)
    for kind in KINDS:
        m = injected(gen, kind, 5).method
        effects = {c.token: c.effect for c in m.callees}
        if kind != "stack-overflow":
            depth = IL.check_stack(
                m.il, nargs=m.nargs, nlocals=m.nlocals, call_effect=lambda t, e=effects: e[t]
            )
            assert depth == m.max_stack, kind
        # deterministic, independent of the main RNG
        assert injected(gen, kind, 5).method.il == m.il


@pytest.mark.unit
def test_parse_inject() -> None:
    assert parse_inject("hang@3,40") == [("hang", 3), ("hang", 40)]
    for bad in ("hang", "hang@", "@3", "nope@3", "hang@0", "hang@x", "hang@3,,4"):
        with pytest.raises(Exception, match="--inject"):
            parse_inject(bad)


# ------------------------------------------------------------------------------------------ CLI


def test_build_is_deterministic_and_seeded(tmp_path: Path) -> None:
    outs = []
    for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        out = tmp_path / f"{name}.mch"
        r = run_cli(
            "sample",
            "build",
            "--methods",
            "400",
            "--seed",
            seed,
            "--inject",
            "hang@7,300",
            "--inject",
            "jit-null@9",
            "--corpus",
            str(CORPUS / "arith.il"),
            "--out",
            str(out),
        )
        assert r.returncode == 0, r.stderr
        assert "400 method contexts" in r.stdout and "hang@7" in r.stdout
        outs.append(out)
    a, b, c = outs
    assert a.read_bytes() == b.read_bytes() and a.read_bytes() != c.read_bytes()
    assert Path(f"{a}.mct").read_bytes() == Path(f"{b}.mct").read_bytes()
    with Collection.open(a) as col:
        assert col.method_context(1).name == "Sample.Arith:Poly"
        assert col.method_context(3).name == "Sample.Arith:DivMod"
        assert len(col) == 400
    assert run_cli("mch", "verify", str(a)).returncode == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--inject", "bogus@3"], "unknown kind 'bogus'"),
        (["--inject", "hang"], "expected KIND@N"),
        (["--inject", "hang@0"], "expected an integer >= 1"),
        (["--inject", "hang@51"], "the collection has 50 method contexts"),
        (["--inject", "hang@5", "--inject", "jit-null@5"], "already holds hang"),
        (["--corpus", "/nonexistent.il"], "no such file"),
        (["--config", "X"], "expected NAME=VALUE"),
    ],
)
def test_build_usage_errors_are_one_line(tmp_path: Path, args: list[str], needle: str) -> None:
    out = tmp_path / "x.mch"
    r = run_cli("sample", "build", "--methods", "50", *args, "--out", str(out))
    assert r.returncode == 2, r.stdout + r.stderr
    assert (
        needle in r.stderr
        and len(r.stderr.strip().splitlines()) == 1
        and "Traceback" not in r.stderr
    )
    assert not out.exists()


def test_asm_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.il"
    bad.write_text(".method A.B:C(1)\n  ldarg.0\n  frob\n  ret\n.end\n")
    r = run_cli("sample", "asm", str(bad), "--out", str(tmp_path / "x.mch"))
    assert r.returncode == 1 and f"{bad}:3: unknown opcode 'frob'" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_seed_arm64_in_an_x64_collection_is_accepted_with_a_note(tmp_path: Path) -> None:
    r = run_cli(
        "sample",
        "build",
        "--methods",
        "20",
        "--inject",
        "seed-arm64@4",
        "--out",
        str(tmp_path / "s.mch"),
    )
    assert r.returncode == 0 and "meant for an Arm64 collection" in r.stderr


@pytest.mark.unit
def test_collection_records_match_the_built_file(tmp_path: Path) -> None:
    out = tmp_path / "x.mch"
    build(out, SampleSpec(methods=60, seed=2, injections=[("poison", 30)]))
    assert (
        b"".join(collection_records(60, 2, RecordBuilder("x64"), injections=[("poison", 30)]))
        == out.read_bytes()
    )
    rng = random.Random(0)
    with Collection.open(out) as col:
        for n in rng.sample(range(1, 61), 10):
            assert col.method_context(n).request is not None


@pytest.mark.unit
def test_size_factor_scales_methods_and_one_changes_nothing(tmp_path: Path) -> None:
    from spmi_dbg.mch.collection import Collection
    from spmi_dbg.sample.build import SampleSpec, build

    base, same, big = tmp_path / "a.mch", tmp_path / "b.mch", tmp_path / "c.mch"
    build(base, SampleSpec(methods=200, seed=4))
    build(same, SampleSpec(methods=200, seed=4, size_factor=1.0))
    build(big, SampleSpec(methods=200, seed=4, size_factor=8.0))
    assert base.read_bytes() == same.read_bytes()
    with Collection.open(base) as a, Collection.open(big) as c:
        il_a = sum(a.method_context(n).il_size or 0 for n in range(1, 201))
        il_c = sum(c.method_context(n).il_size or 0 for n in range(1, 201))
    # statements are whole fragments, so the IL grows a little less than the target
    assert il_c > 3 * il_a
