"""The JIT flags a method context was compiled with (getJitFlags' recorded CORJIT_FLAGS), in
words, with the tier, OSR and PGO facts the collection records beside them.

The flag numbers differ by era (corjitflags.h): 3.1's CORJIT_FLAGS is one 64-bit word, its
instruction sets inside it (TIER0 = 39, BBOPT = 30); today's is that word followed by the
instruction-set words (TIER0 = 26, BBOPT = 20, OSR = 7). Which table names a record's flags is
decided by the recorded object's size, never by a version: 8 bytes is 3.1's layout, more is
today's. A flag whose meaning the collection can confirm is checked against that evidence before it
is said: OSR against getOSRInfo's answer (its IL offset), PGO against
getPgoInstrumentationResults'; Tier0 and Tier1 both set is no tier. A flag the evidence contradicts
is said as a raw bit, with why."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.mch import packets as P
from spmi_dbg.mch.layouts import decode_u32_value, target_arch_name
from spmi_dbg.mch.maps import MapError
from spmi_dbg.method.recorded import Answers

# bit -> name; the bits every era shares first
_COMMON = {
    0: "SPEED_OPT",
    1: "SIZE_OPT",
    2: "DEBUG_CODE",
    3: "DEBUG_EnC",
    4: "DEBUG_INFO",
    5: "MIN_OPT",
}
ERA_31 = _COMMON | {
    6: "GCPOLL_CALLS",
    7: "MCJIT_BACKGROUND",
    14: "USE_AVX",
    15: "USE_AVX2",
    16: "USE_AVX_512",
    17: "FEATURE_SIMD",
    18: "MAKEFINALCODE",
    19: "READYTORUN",
    20: "PROF_ENTERLEAVE",
    21: "PROF_REJIT_NOPS",
    22: "PROF_NO_PINVOKE_INLINE",
    23: "SKIP_VERIFICATION",
    24: "PREJIT",
    25: "RELOC",
    26: "IMPORT_ONLY",
    27: "IL_STUB",
    28: "PROCSPLIT",
    29: "BBINSTR",
    30: "BBOPT",
    31: "FRAMED",
    32: "ALIGN_LOOPS",
    33: "PUBLISH_SECRET_PARAM",
    34: "GCPOLL_INLINE",
    35: "SAMPLING_JIT_BACKGROUND",
    36: "USE_PINVOKE_HELPERS",
    37: "REVERSE_PINVOKE",
    38: "DESKTOP_QUIRKS",
    39: "TIER0",
    40: "TIER1",
    42: "NO_INLINING",
}
# 3.1's x64 instruction sets in the same word (arm64's HAS_ARM64_* share the numbers 43-63)
ERA_31_X64_ISA = {
    43: "USE_SSE3",
    44: "USE_SSSE3",
    45: "USE_SSE41",
    46: "USE_SSE42",
    47: "USE_AES",
    48: "USE_BMI1",
    49: "USE_BMI2",
    50: "USE_FMA",
    51: "USE_LZCNT",
    52: "USE_PCLMULQDQ",
    53: "USE_POPCNT",
}
ERA_31_ARM64_ISA = {
    43 + i: f"HAS_ARM64_{n}"
    for i, n in enumerate(
        "AES ATOMICS CRC32 DCPOP DP FCMA FP FP16 JSCVT LRCPC PMULL SHA1 SHA256 SHA512 SHA3 SIMD "
        "SIMD_V81 SIMD_FP16 SM3 SM4 SVE".split()
    )
}
ERA_31_ISA = {"x64": ERA_31_X64_ISA, "arm64": ERA_31_ARM64_ISA}  # by the recorded target
TODAY = _COMMON | {
    6: "ENABLE_CFG",
    7: "OSR",
    8: "ALT_JIT",
    9: "FROZEN_ALLOC_ALLOWED",
    10: "PORTABLE_ENTRY_POINTS",
    11: "AOT",
    12: "PROF_ENTERLEAVE",
    13: "PROF_NO_PINVOKE_INLINE",
    14: "ASYNC",
    15: "RELOC",
    16: "IL_STUB",
    17: "PROCSPLIT",
    18: "BBINSTR",
    19: "BBINSTR_IF_LOOPS",
    20: "BBOPT",
    21: "FRAMED",
    23: "USE_PINVOKE_HELPERS",
    24: "REVERSE_PINVOKE",
    25: "TRACK_TRANSITIONS",
    26: "TIER0",
    27: "TIER1",
    28: "NO_INLINING",
    31: "USE_DISPATCH_HELPERS",
}
ERA_31_SIZE = 8  # sizeof(CORJIT_FLAGS) in 3.1: the one word


@dataclass(frozen=True)
class JitFlags(JsonFact):
    """The compile's flags as recorded and what they establish."""

    raw: int  # the CORJIT_FLAGS word
    size: int  # the recorded object's size in bytes
    era: str  # "3.1" | "today": whose numbering names the bits
    names: list[str]  # the set flags by that era's names (an unnamed bit as `bit N`)
    summary: list[str]  # Tier0 / Tier1 / MinOpts / OSR at IL_xxxx / has PGO data ..., in words
    rejected: list[str] = field(default_factory=list)  # a flag the evidence contradicts, and why

    @property
    def word(self) -> str:
        return f"0x{self.raw:016x}"

    def text(self) -> str:
        out = [f"// JIT flags: {', '.join(self.summary)}"]
        out.append(
            f"//   {self.word} ({self.size}-byte CORJIT_FLAGS, {self.era} numbering): "
            + (" ".join(self.names) or "none set")
        )
        out += [f"//   not believed: {r}" for r in self.rejected]
        return "\n".join(out) + "\n"


def _recorded(answers: Answers) -> bytes | None:
    """The CORJIT_FLAGS object getJitFlags recorded (its key is always 0)."""
    m = answers.maps.get(P.GetJitFlags)
    value = answers.pairs(P.GetJitFlags).get(struct.pack("<I", 0))
    if m is None or value is None or len(value) < 8:
        return None
    offset, size = struct.unpack_from("<II", value)
    try:
        blob = m.blob(offset)
    except MapError:
        return None
    if blob is None or len(blob) < min(size, 8) or size < 8:
        return None
    return bytes(blob[:size])


def osr_offset(answers: Answers) -> int | None:
    """getOSRInfo's IL offset (today's collections: {index, ilOffset} under key 0)."""
    value = answers.pairs(P.GetOSRInfo).get(struct.pack("<I", 0))
    return (
        int(struct.unpack_from("<I", value, 4)[0])
        if value is not None and len(value) >= 8
        else None
    )


def pgo_data(answers: Answers, ftn: int) -> int | None:
    """The count of PGO schema items getPgoInstrumentationResults gave for `ftn` with S_OK; None
    when it gave none."""
    value = answers.pairs(P.GetPgoInstrumentationResults).get(struct.pack("<Q", ftn))
    if value is None or len(value) < 20:
        return None
    count, _schema, _data, _bytes, result = struct.unpack_from("<IIIIi", value)
    return count if result == 0 and count else None


def target(answers: Answers) -> str | None:
    """getExpectedTargetArchitecture's answer by name (either era's encoding: mch.layouts); 3.1
    records none."""
    m = answers.maps.get(P.GetExpectedTargetArchitecture)
    try:
        return target_arch_name(decode_u32_value(m)) if m is not None else None
    except MapError:
        return None


def jit_flags(answers: Answers) -> JitFlags | None:
    """The compile's flags; None when the collection holds no getJitFlags answer."""
    blob = _recorded(answers)
    if blob is None:
        return None
    raw = int(struct.unpack_from("<Q", blob)[0])
    era = "3.1" if len(blob) == ERA_31_SIZE else "today"
    table = TODAY
    if era == "3.1":
        # 3.1's instruction-set bits (43-63) are named by the target, where it is recorded
        table = ERA_31 | ERA_31_ISA.get(target(answers) or "", {})
    set_bits = [bit for bit in range(64) if raw >> bit & 1]
    names = [table.get(bit, f"bit {bit}") for bit in set_bits if bit in table or bit < 43]
    isa = [bit for bit in set_bits if bit not in table and bit >= 43]
    if isa and era == "3.1":
        names.append(f"bits {_spans(isa)} (instruction sets; the target is not recorded)")
    else:
        names += [f"bit {bit}" for bit in isa]
    return JitFlags(raw, len(blob), era, names, *_summary(answers, set(names), era))


def _spans(bits: list[int]) -> str:
    """`43-53` / `43-45, 50`: sorted bit numbers as ranges."""
    out: list[str] = []
    start = prev = bits[0]
    for b in [*bits[1:], -1]:
        if b != prev + 1:
            out.append(f"{start}-{prev}" if prev > start else f"{start}")
            start = b
        prev = b
    return ", ".join(out)


def _summary(answers: Answers, names: set[str], era: str) -> tuple[list[str], list[str]]:
    words: list[str] = []
    rejected: list[str] = []
    if not names & {"TIER0", "TIER1", "MIN_OPT", "DEBUG_CODE"}:
        words.append("full optimization (no tier flag)")
    tier0, tier1 = "TIER0" in names, "TIER1" in names
    if tier0 and tier1:
        rejected.append("TIER0 and TIER1 both set: no tier said")
    elif tier0:
        words.append("Tier0")
    elif tier1:
        words.append("Tier1")
    if "MIN_OPT" in names:
        words.append("MinOpts")
    if "DEBUG_CODE" in names:
        words.append("debuggable code")
    root = answers.root
    osr = osr_offset(answers)
    if "OSR" in names:
        if osr is not None:
            words.append(f"OSR at IL_{osr:04x}")
        else:
            rejected.append(
                "OSR set, but no getOSRInfo answer recorded (no IL offset to go on from)"
            )
    pgo = pgo_data(answers, root[0].ftn) if root is not None else None
    if pgo is not None:
        words.append(f"has PGO data ({pgo} schema items)")
    elif "BBOPT" in names and era == "today":
        # 3.1 records no PGO answers: its BBOPT stands on the flag alone
        rejected.append("BBOPT set, but no PGO data recorded for the method")
    elif "BBOPT" in names:
        words.append("optimized with profile data (BBOPT)")
    if "BBINSTR" in names:
        words.append("instrumented (BBINSTR)")
    if "IL_STUB" in names:
        words.append("an IL stub")
    if "NO_INLINING" in names:
        words.append("no inlining")
    return words, rejected
