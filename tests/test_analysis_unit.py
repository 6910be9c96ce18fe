"""The analysis on recorded stops (real-debugger tests are separate): the seed crash at -O0 and -O2
shapes, a first-chance JIT fault, signatures."""

from __future__ import annotations

import signal

import pytest

from spmi_dbg.analysis import diagnose
from spmi_dbg.analysis.frames import fold, short_name
from spmi_dbg.analysis.view import SignalInfo

from .support.recorded_view import RFrame, RProcess, RValue

pytestmark = pytest.mark.unit  # none of these tests starts a process

LWM_CM = "LightWeightMap<unsigned int, Agnostic_CompileMethodResults>"
LWM_AM = "LightWeightMap<unsigned int, Agnostic_AllocMemDetails>"
CR_FIELDS = [("AllocMem", f"{LWM_AM} *"), ("CompileMethod", f"{LWM_CM} *")]


def _cr(address: int, compile_method: int) -> RValue:
    return RValue(
        "CompileResult *",
        address,
        {
            "AllocMem": RValue(f"{LWM_AM} *", 0x9000),
            "CompileMethod": RValue(f"{LWM_CM} *", compile_method),
        },
    )


def seed_stop(optimized: bool) -> RProcess:
    mc = RValue("MethodContext *", 0x3000, {"index": RValue("int", 150000)})
    cr1, cr2 = _cr(0x5000, 0), _cr(0x7000, 0x7100)
    this_cr = RValue("CompileResult * const", None, optimized_out=True) if optimized else cr1
    stack = [
        RFrame(
            f"{LWM_CM}::GetIndex(unsigned int)",
            pc=0x402000,
            inlined=optimized,
            variables={"this": RValue(f"{LWM_CM} * const", 0)},
        ),
        RFrame(f"{LWM_CM}::Get(unsigned int)", pc=0x402000, inlined=optimized),
        RFrame(
            "CompileResult::repCompileMethod(unsigned char**, unsigned int*, CorJitResult*)",
            pc=0x402000,
            variables={"this": this_cr},
        ),
        RFrame(
            "NearDiffer::compare(MethodContext*, CompileResult*, CompileResult*)",
            variables={"mc": mc, "cr1": cr1, "cr2": cr2},
        ),
        RFrame(
            "InvokeNearDiffer(NearDiffer*, MethodContext**, CompileResult**, MethodContextReader**)"
        ),
        RFrame("main"),
        RFrame("__libc_start_call_main", module="/usr/lib/x86_64-linux-gnu/libc.so.6"),
    ]
    return RProcess(
        stack,
        SignalInfo(signal.SIGSEGV, "SIGSEGV", 1, 0x8, "$_siginfo"),
        memory={0x402000: bytes.fromhex("8b17") + b"\x90" * 14},
        regs={"rdi": 0, "rip": 0x402000},
        command=[
            "/opt/spmi/superpmi",
            "-a",
            "-target",
            "arm64",
            "base/libclrjit.so",
            "diff/libclrjit.so",
            "/nonexistent/libraries.mch",
        ],
        types={"CompileResult": CR_FIELDS},
    )


def test_seed_crash_debug_build() -> None:
    d = diagnose(seed_stop(optimized=False))
    assert d.signal is not None and d.signal.near_null
    assert d.handling.kind == "fatal"
    assert d.method_context is not None and d.method_context.number == 150000
    assert "mc->index in NearDiffer::compare" in d.method_context.source
    nm = d.null_map
    assert nm is not None
    assert (nm.owner_type, nm.member, nm.packet_id, nm.packet_name) == (
        "CompileResult",
        "CompileMethod",
        118,
        "PacketCR_CompileMethod",
    )
    assert nm.role == "base compile result (cr1)" and "this == cr1" in nm.source
    assert "base JIT's compile result has no CompileMethod map" in nm.explanation
    assert d.instruction is not None and d.instruction.text == "mov edx, dword ptr [rdi]"
    assert d.instruction.registers == {"rdi": 0} and d.instruction.null_base == "rdi"
    assert d.folded[:3] == [
        "CompileResult::repCompileMethod",
        "NearDiffer::compare",
        "InvokeNearDiffer",
    ]


def test_seed_crash_optimized_build_same_answer_same_signature() -> None:
    a, b = diagnose(seed_stop(False)), diagnose(seed_stop(True))
    assert b.null_map is not None and b.null_map.member == "CompileMethod"
    assert b.null_map.role == "base compile result (cr1)"
    assert "cr1->CompileMethod is null" in b.null_map.source
    assert a.signature == b.signature and a.bucket == b.bucket
    assert a.signature.startswith(
        "SIGSEGV near-null | CompileResult::repCompileMethod <- NearDiffer::compare"
    )


def test_first_chance_fault_in_the_jit() -> None:
    jit = "/opt/jits/libclrjit.so"
    stack = [
        RFrame(
            "Compiler::fgFoldConstants(GenTree*)",
            module=jit,
            variables={
                "this": RValue("Compiler *", 0x8000, {"compMethodSuperPMIIndex": RValue("int", 42)})
            },
        ),
        RFrame(
            "CILJit::compileMethod(ICorJitInfo*, CORINFO_METHOD_INFO*, unsigned int, unsigned "
            "char**, "
            "unsigned int*)",
            module=jit,
        ),
        RFrame(
            "JitInstance::CompileMethod(MethodContext*, int, bool)",
            variables={"mcIndex": RValue("int", 0, optimized_out=True)},
        ),
        RFrame("main"),
    ]
    p = RProcess(
        stack,
        SignalInfo(signal.SIGSEGV, "SIGSEGV", 1, 0x10, "$_siginfo"),
        command=["/opt/spmi/superpmi", jit, "/x/c.mch"],
        sigcgt=1 << (signal.SIGSEGV - 1),
    )
    d = diagnose(p, full=False)
    assert d.handling.kind == "first-chance"
    assert d.faulting_module is not None and d.faulting_module.role == "JIT (JIT1)"
    assert d.method_context is not None and d.method_context.number == 42
    assert "compMethodSuperPMIIndex" in d.method_context.source
    assert d.null_map is None


def test_no_handler_means_fatal() -> None:
    p = seed_stop(False)
    p.stack = [
        RFrame("Compiler::x", module="/j/libclrjit.so"),
        RFrame("JitInstance::CompileMethod"),
    ]
    p.command = ["/opt/spmi/superpmi", "/j/libclrjit.so", "/x/c.mch"]
    p.sigcgt = 0
    assert diagnose(p, full=False).handling.kind == "fatal"


def test_names_and_folding() -> None:
    assert (
        short_name("LightWeightMap<unsigned int, Agnostic_X>::Get(unsigned int) const")
        == "LightWeightMap<unsigned int, Agnostic_X>::Get"
    )
    assert short_name("main") == "main"
    # lldb 16 names a static function with a leading "::" (gdb does not): the same frame for both
    assert short_name("::InvokeNearDiffer(NearDiffer *, MethodContext **)") == "InvokeNearDiffer"
    frames = seed_stop(False).stack
    assert [f.name for f in fold(frames)] == [
        "CompileResult::repCompileMethod",
        "NearDiffer::compare",
        "InvokeNearDiffer",
        "main",
    ]


def test_jit_assert_message_of_both_eras() -> None:
    """doAssert's message: today's names the phase, 3.1's does not (tests/real checks it at a real
    assert)."""
    from spmi_dbg.analysis.asserts import JIT_MESSAGE

    m = JIT_MESSAGE.match(
        "Assertion failed '!\"gtArgEntryByNode: node not found\"' in "
        "'StringBuilder:AppendFormatHelper(ref,ref,struct):ref:this' (IL size 844)\n"
    )
    assert m is not None and (m["expr"], m["phase"]) == (
        '!"gtArgEntryByNode: node not found"',
        None,
    )
    assert m["method"] == "StringBuilder:AppendFormatHelper(ref,ref,struct):ref:this"
    m = JIT_MESSAGE.match(
        "Assertion failed 'x' in 'A:B():int' during 'Morph - Global' (IL size 12; hash 0x1; Tier0)"
    )
    assert m is not None and (m["expr"], m["method"], m["phase"]) == (
        "x",
        "A:B():int",
        "Morph - Global",
    )
