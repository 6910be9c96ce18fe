"""Packet ids that 3.1's superpmi used for other packets than today's (packets.py REUSED_SINCE_31):
named by 3.1's name only when the map's item size is 3.1's and not today's, else by both eras'
names; the null map names its packet by the stopped superpmi's member."""

from __future__ import annotations

import signal

import pytest

from spmi_dbg.analysis import diagnose
from spmi_dbg.analysis.nullmap import packet_for_member
from spmi_dbg.analysis.view import SignalInfo
from spmi_dbg.mch import packets as P
from spmi_dbg.mch.layouts import target_arch_name

from .support.recorded_view import RFrame, RProcess, RValue

pytestmark = pytest.mark.unit  # none of these tests starts a process


@pytest.mark.parametrize(
    "packet_id, item_size, label",
    [
        (149, 24, "AppendClassName (3.1's item size)"),
        (149, 20, "PrintClassName or 3.1's AppendClassName"),  # 2022's AppendClassName is 20 too
        (149, None, "PrintClassName or 3.1's AppendClassName"),
        (66, 16, "GetIntrinsicID (3.1's item size)"),
        (66, 12, "GetArrayIntrinsicID or 3.1's GetIntrinsicID"),
        (112, 12, "ShouldEnforceCallvirtRestriction (3.1's item size)"),
        (10, 12, "CanInlineTypeCheckWithObjectVTable (3.1's item size)"),
        (148, 12, "IsIntrinsicType or 3.1's IsInSIMDModule"),  # the same shape in both eras
        (143, 200, "CompileMethod"),
        (250, None, "Packet250"),
    ],
)
def test_a_reused_id_is_named_by_what_its_map_shows(
    packet_id: int, item_size: int | None, label: str
) -> None:
    assert P.packet_label(packet_id, item_size) == label


def test_the_reused_ids_are_todays_ids_of_other_packets() -> None:
    for pid, (old, new) in P.REUSED_SINCE_31.items():
        assert P.packet_name(pid) == new.name and old.name != new.name


def test_the_null_map_names_the_members_packet_of_either_era() -> None:
    assert packet_for_member("MethodContext", "AppendClassName") == 149  # a 3.1 superpmi's member
    assert packet_for_member("MethodContext", "PrintClassName") == 149
    assert packet_for_member("MethodContext", "GetIntrinsicID") == 66
    assert packet_for_member("CompileResult", "AllocMem") == P.CR_AllocMem
    assert packet_for_member("MethodContext", "NoSuchMap") is None


def test_a_31_null_map_is_named_by_the_superpmis_member() -> None:
    """3.1's superpmi at a null AppendClassName map: packet 149, named AppendClassName (today's
    PrintClassName is another packet under the same id)."""
    lwm = "LightWeightMap<Agnostic_AppendClassName, unsigned int>"
    mc = RValue("MethodContext *", 0x3000, {"AppendClassName": RValue(f"{lwm} *", 0)})
    frames = [
        RFrame(
            f"{lwm}::GetIndex(Agnostic_AppendClassName)",
            variables={"this": RValue(f"{lwm} * const", 0)},
        ),
        RFrame(
            "MethodContext::repAppendClassName(char16_t**, int*, CORINFO_CLASS_STRUCT_*, bool, "
            "bool, bool)",
            variables={"this": mc},
        ),
        RFrame("main"),
    ]
    proc = RProcess(
        frames,
        SignalInfo(signal.SIGSEGV, "SIGSEGV", 1, 0x8, "$_siginfo"),
        memory={},
        regs={},
        command=["/opt/spmi/superpmi", "jit.so", "/nonexistent/a.mch"],
        types={"MethodContext": [("AppendClassName", f"{lwm} *")]},
    )
    nm = diagnose(proc).null_map
    assert nm is not None
    assert (nm.owner_type, nm.member, nm.packet_id, nm.packet_name) == (
        "MethodContext",
        "AppendClassName",
        149,
        "AppendClassName",
    )


def test_target_architectures_of_either_numbering() -> None:
    """GetExpectedTargetArchitecture: IMAGE_FILE_MACHINE_* (2023) or CorInfoArch (2025+, corinfo.h's
    order: riscv64 and loongarch64 too); anything else raw."""
    assert [target_arch_name(v) for v in (0x8664, 0xAA64, 0x5064)] == ["x64", "arm64", "riscv64"]
    assert [target_arch_name(v) for v in range(7)] == [
        "x86",
        "x64",
        "arm",
        "arm64",
        "loongarch64",
        "riscv64",
        "wasm32",
    ]
    assert target_arch_name(7) == "unknown (0x7)"
