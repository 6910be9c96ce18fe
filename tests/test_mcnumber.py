"""The method context number is believed only with evidence (spmi_dbg/analysis/mcnumber.py): every
candidate of the stack is checked against the -c list or -stride of the process, the collection's
size and the record's IL size; rejected candidates are named with why. Stops recorded in the shapes
real superpmi builds show (3.1 and today)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from spmi_dbg.analysis import diagnose
from spmi_dbg.analysis.mcnumber import (
    Evidence,
    RecordIdentity,
    Selection,
    compiled_il_sizes,
    find_method_context,
    selection_of,
)
from spmi_dbg.analysis.view import SignalInfo
from spmi_dbg.mch.collection import Collection

from .support.common import build_collection
from .support.recorded_view import RFrame, RProcess, RValue

pytestmark = pytest.mark.unit  # none of these tests starts a process

LWM = "LightWeightMap<DLDL, Agnostic_CORINFO_SIG_INFO>"


def stack(
    *,
    mc_index: int | None,
    mc_field: int | None = None,
    cur: int | None = None,
    il_size: int = 66,
    method_size: int | None = None,
) -> list[RFrame]:
    """The null-map crash of 3.1's superpmi: MethodContext::repGetMethodSig from the JIT,
    JitInstance::CompileMethod and its lambda (whose short name is the same), main with the
    reader."""
    mc = RValue(
        "MethodContext *",
        0x3000,
        {"index": RValue("int", mc_field)} if mc_field is not None else {},
    )
    if method_size is not None:
        mc.members["methodSize"] = RValue("int", method_size)
    info = RValue("CORINFO_METHOD_INFO *", 0x7000, {"ILCodeSize": RValue("unsigned int", il_size)})
    reader = RValue(
        "MethodContextReader *",
        0x5000,
        {"curMCIndex": RValue("int", cur)} if cur is not None else {},
    )
    index = (
        RValue("int", mc_index) if mc_index is not None else RValue("int", None, optimized_out=True)
    )
    return [
        RFrame(f"{LWM}::Get(DLDL)", variables={"this": RValue(f"{LWM} * const", 0)}),
        RFrame(
            "MethodContext::repGetMethodSig(CORINFO_METHOD_STRUCT_*, CORINFO_SIG_INFO*, "
            "CORINFO_CLASS_STRUCT_*)",
            variables={"this": mc},
        ),
        RFrame(
            "Compiler::eeGetMethodSig(CORINFO_METHOD_STRUCT_*, CORINFO_SIG_INFO*, "
            "CORINFO_CLASS_STRUCT_*)",
            module="/opt/spmi/libclrjit.so",
        ),
        RFrame(
            "CILJit::compileMethod(ICorJitInfo*, CORINFO_METHOD_INFO*, unsigned int, unsigned "
            "char**, unsigned "
            "int*)",
            module="/opt/spmi/libclrjit.so",
            variables={"methodInfo": info},
        ),
        RFrame(
            "JitInstance::CompileMethod(MethodContext*, int, "
            "bool)::$_0::operator()(JitInstance::CompileMethod("
            "MethodContext*, int, bool)::Param*) const",
            inlined=True,
        ),
        RFrame(
            "JitInstance::CompileMethod(MethodContext*, int, bool)", variables={"mcIndex": index}
        ),
        RFrame("main", variables={"reader": reader}),
    ]


def records(sizes: dict[int, int]) -> Evidence:
    return Evidence(Selection(), count=5514, record=lambda n: RecordIdentity(sizes.get(n), None))


def test_lambda_frame_does_not_hide_mc_index() -> None:
    found = find_method_context(stack(mc_index=2000)).found
    assert found is not None and found.number == 2000
    assert found.source == "mcIndex argument of JitInstance::CompileMethod (frame 5)"


def test_31_loaded_count_rejected_by_the_c_list() -> None:
    """3.1's mc->index is the count this process loaded: under -c 2000-5514, method context 2000 has
    index 1."""
    ev = Evidence(selection_of(["superpmi", "-c", "2000-5514", "jit.so", "a.mch"]))
    found, tried, _ = find_method_context(stack(mc_index=None, mc_field=1, cur=2000), ev)
    assert (
        found is not None
        and found.number == 2000
        and found.source.startswith("reader->curMCIndex in main")
    )
    assert found.rejected == (
        "this->index in MethodContext::repGetMethodSig (frame 1) = 1: rejected, not in the "
        "-c list 2000-5514 this process replays",
    )
    assert "in the -c list 2000-5514" in found.checks
    assert "mcIndex argument of JitInstance::CompileMethod (frame 5): not available" in tried


def test_garbage_register_rejected_past_the_collection_end() -> None:
    """-O2 superpmi: main's reader read from a clobbered register (0x01020304) is past the
    collection's end."""
    found, tried, rejected = find_method_context(stack(mc_index=None, cur=16909060), records({}))
    assert found is None
    assert any(
        "reader->curMCIndex in main (frame 6) = 16909060: rejected, past the collection's end" in t
        for t in rejected
    )
    assert tried and not any("rejected" in t for t in tried)


def test_identity_rejects_a_number_whose_record_has_another_il_size() -> None:
    """-c 3,5,9 replaying 9: the loaded count 3 is in the list, but record 3 is another method."""
    ev = Evidence(
        selection_of(["superpmi", "-c", "3,5,9", "jit.so", "a.mch"]),
        count=20,
        record=lambda n: RecordIdentity({3: 12, 9: 66}.get(n)),
        il_sizes=((66, "methodInfo->ILCodeSize in CILJit::compileMethod (frame 3)"),),
    )
    found = find_method_context(stack(mc_index=None, mc_field=3, cur=9), ev).found
    assert found is not None and found.number == 9
    assert found.rejected == (
        "this->index in MethodContext::repGetMethodSig (frame 1) = 3: rejected, record 3 has "
        "IL size 12, but the method being compiled has 66 (methodInfo->ILCodeSize in "
        "CILJit::compileMethod (frame 3))",
    )
    assert (
        "record 9's IL size 66 = methodInfo->ILCodeSize in CILJit::compileMethod (frame 3)"
        in found.checks
    )


def test_stride_of_a_parallel_worker() -> None:
    sel = selection_of(["superpmi", "-stride", "2", "4", "-v", "ewmin", "jit.so", "a.mch"])
    assert sel.refuses(6) is None and sel.refuses(10) is None
    assert sel.refuses(7) == "not replayed by this -stride 2 4 worker"
    assert sel.refuses(0) is not None


def test_mcl_file_selection(tmp_path: Path) -> None:
    mcl = tmp_path / "a b.mcl"
    mcl.write_text("4\r\n8\r\n")
    sel = selection_of(["superpmi", "-c", str(mcl), "jit.so", "a.mch"])
    assert sel.refuses(8) is None and sel.refuses(5) is not None
    missing = selection_of(["superpmi", "-c", str(tmp_path / "gone.mcl"), "jit.so", "a.mch"])
    # unreadable: checks nothing, says so
    assert missing.problem is not None and missing.refuses(5) is None


def test_diagnosis_checks_against_the_collection(tmp_path: Path) -> None:
    """The whole diagnosis: the collection on the command line gives the count and the record's IL
    size."""
    col = tmp_path / "c.mch"
    build_collection(col, count=12)
    with Collection.open(col) as c:
        size7, size2 = c.method_context(7).il_size, c.method_context(2).il_size
    assert size7 is not None and size2 is not None and size7 != size2
    frames = stack(mc_index=None, mc_field=2, cur=7, il_size=size7)
    proc = RProcess(
        frames,
        SignalInfo(signal.SIGSEGV, "SIGSEGV", 1, 0x10, "$_siginfo"),
        memory={},
        regs={},
        command=["/opt/spmi/superpmi", "-c", "7-12", "jit.so", str(col)],
    )
    d = diagnose(proc)
    mc = d.method_context
    assert mc is not None and mc.number == 7 and mc.il_size == size7
    assert mc.rejected == [
        "this->index in MethodContext::repGetMethodSig (frame 1) = 2: rejected, not in the -c "
        "list 7-12 this process replays"
    ]
    assert (
        f"record 7's IL size {size7} = methodInfo->ILCodeSize in CILJit::compileMethod (frame 3)"
        in mc.checks
    )
    assert "within the collection (12 method contexts)" in mc.checks


def test_a_stale_il_size_read_does_not_reject_the_right_number() -> None:
    """-O2 main's `mc` is a clobbered register: its methodSize reads as garbage, while the JIT's
    methodInfo argument has the record's IL size. One agreeing read is enough; the other is named as
    not believed."""
    frames = stack(mc_index=543, il_size=844)
    frames[-1].variables["mc"] = RValue(
        "MethodContext *", 0x9999, {"methodSize": RValue("int", 1932484399)}
    )
    ev = Evidence(
        Selection(),
        count=5657,
        record=lambda n: RecordIdentity({543: 844}.get(n, 12)),
        il_sizes=compiled_il_sizes(frames),
    )
    found = find_method_context(frames, ev).found
    assert found is not None and found.number == 543
    assert (
        "record 543's IL size 844 = methodInfo->ILCodeSize in CILJit::compileMethod (frame 3)"
        in found.checks
    )
    assert (
        "mc->methodSize in main (frame 6) = 1932484399 disagrees (not believed: a value read from "
        "an optimized "
        "frame)" in found.checks
    )
    ev_all_wrong = Evidence(
        Selection(), count=5657, record=lambda n: RecordIdentity(12), il_sizes=ev.il_sizes
    )
    found, _, rejected = find_method_context(stack(mc_index=543, il_size=844), ev_all_wrong)
    assert found is None and any(
        "= 543: rejected, record 543 has IL size 12, but the method being compiled has 844" in t
        for t in rejected
    )


def test_tried_places_and_rejected_values_come_apart(tmp_path: Path) -> None:
    """No candidate passes: the search returns the places without a value and the values that failed
    a check apart, and the diagnosis reports exactly the rejected ones (not by the wording of its
    note's lines)."""
    col = tmp_path / "c.mch"
    build_collection(col, count=12)
    frames = stack(mc_index=None, mc_field=50)
    search = find_method_context(frames, Evidence(Selection(), count=12))
    assert search.found is None
    assert search.rejected == (
        "this->index in MethodContext::repGetMethodSig (frame 1) = 50: rejected, past the "
        "collection's end (12 method contexts)",
    )
    assert search.tried == (
        "mcIndex argument of JitInstance::CompileMethod (frame 5): not available",
        "reader->curMCIndex in main (frame 6): not available",
    )
    assert search.attempts == [*search.tried, *search.rejected]
    proc = RProcess(
        frames,
        SignalInfo(signal.SIGSEGV, "SIGSEGV", 1, 0x10, "$_siginfo"),
        memory={},
        regs={},
        command=["/opt/spmi/superpmi", "jit.so", str(col)],
    )
    d = diagnose(proc)
    assert d.method_context is None
    assert d.method_context_rejected == list(search.rejected)
    assert "method context not found in the stack: " + "; ".join(search.attempts) in d.notes
