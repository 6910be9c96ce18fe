"""The facts a diagnosis is made of, typed, each with its JSON form (to_json / from_json, one
conversion for all from the fields' type hints: spmi_dbg.jsonfacts). Every fact says how it
was obtained (`source`). The JSON keys are report.json's `diagnosis` object
(spmi_dbg/report/schema/report-5.json) and what `spmi diagnose
--json` prints; the drivers read a diagnosis back with Diagnosis.from_json."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from spmi_dbg.analysis.asserts import AssertInfo
from spmi_dbg.analysis.instruction import Instruction
from spmi_dbg.analysis.nullmap import NullMap
from spmi_dbg.jsonfacts import JsonFact, to_json

__all__ = [
    "AssertInfo",
    "Cause",
    "Diagnosis",
    "FrameInfo",
    "Handling",
    "HandlingKind",
    "Instruction",
    "JitFact",
    "KnownBugInfo",
    "KnownBugMatch",
    "MethodContextFact",
    "ModuleFact",
    "ModuleRole",
    "NearKnownBug",
    "NullMap",
    "SignalFact",
    "to_json",
]


class HandlingKind(StrEnum):
    """Would superpmi survive the stop if its signal were passed on?"""

    # a fault while the JIT runs: superpmi turns it into a failed compile
    FIRST_CHANCE = "first-chance"
    FATAL = "fatal"
    # a DEBUG_BREAK (-boa/-boe, a JIT assert) asking the attached debugger to stop
    DEBUG_BREAK = "debug-break"
    UNKNOWN = "unknown"


class ModuleRole(StrEnum):
    """Whose code faulted, by the binaries on superpmi's command line."""

    BASE_JIT = "base JIT (JIT1)"
    DIFF_JIT = "diff JIT (JIT2)"
    JIT = "JIT (JIT1)"  # the command's only JIT: no base or diff
    SUPERPMI = "superpmi (replay host)"
    SYSTEM = "system library"
    OTHER_JIT = "JIT (not on the command line)"
    OTHER = "other"
    UNKNOWN = "unknown"

    @property
    def is_jit(self) -> bool:
        return self in (
            ModuleRole.BASE_JIT,
            ModuleRole.DIFF_JIT,
            ModuleRole.JIT,
            ModuleRole.OTHER_JIT,
        )


@dataclass
class SignalFact(JsonFact):
    name: str  # SIGSEGV
    signo: int
    code: int | None
    address: int | None  # the fault address, where the signal has one
    near_null: bool
    source: str


@dataclass
class Handling(JsonFact):
    kind: HandlingKind
    reason: str
    # which rule decided: "symbols: in the JIT's protected call", "second chance", ...
    rule: str = ""


@dataclass
class ModuleFact(JsonFact):
    path: str | None
    role: ModuleRole
    source: str


@dataclass
class MethodContextFact(JsonFact):
    number: int  # 1-based, as superpmi counts
    source: str
    name: str | None = None  # from the collection record
    il_size: int | None = None
    input: str | None = None  # the collection superpmi was replaying
    # what the number was checked against, and passed
    checks: list[str] = field(default_factory=list)
    # candidates that failed a check, with why (mcnumber.py)
    rejected: list[str] = field(default_factory=list)
    # why the record has no method name (superpmi's placeholder: the recording JIT never asked)
    name_note: str | None = None


@dataclass
class Cause(JsonFact):
    """A stop that is the setup, not a JIT bug (spmi_dbg.analysis.causes): stated only with all of
    its evidence."""

    kind: str  # e.g. "checked-jit-on-release-collection"
    evidence: list[str]
    advice: str


@dataclass
class FrameInfo(JsonFact):
    index: int  # in the analysis' stack (every frame, inline ones included)
    function: str
    file: str | None
    line: int | None
    module: str | None
    inlined: bool
    # the debugger's own number for it (gdb's bt #N; None: the same as `index`), and whether the
    # debugger shows it at all (gdb hides an inline frame whose block starts at the stop pc)
    number: int | None = None
    hidden: bool = False


@dataclass
class JitFact(JsonFact):
    """What the JIT was doing (spmi_dbg.analysis.jitstate): each field is absent when the JIT does
    not have it, debug information cannot give it or its value is not believed (not filled in yet),
    and `tried` says why."""

    frame: int  # the frame whose Compiler was read
    function: str
    module: str | None
    source: str  # how the Compiler was found
    method: str | None = None  # the method being compiled
    method_source: str | None = None  # Compiler::info.compFullName | Compiler::info.compMethodName
    phase: str | None = None  # the enumerator, e.g. PHASE_MORPH_GLOBAL
    phase_value: int | None = None
    phase_name: str | None = None  # its display name from PhaseNames[], e.g. "Morph - Global"
    # Compiler::info.compMethodSuperPMIIndex (or a Compiler member of that name)
    method_context: int | None = None
    il_size: int | None = None
    opt_level: str | None = None
    tried: list[str] = field(default_factory=list)
    # "during" (mostRecentlyActivePhase) | "after" (previousCompletedPhase, 3.1)
    phase_when: str | None = None
    # Compiler::mostRecentlyActivePhase | Compiler::previousCompletedPhase
    phase_source: str | None = None
    # what the IL size was checked against (the record's, or plausibility only)
    info_check: str | None = None
    # the IL offset of the statement the importer was at (believed only while importing the
    # record's own method), and the member it was read from
    il_offset: int | None = None
    il_offset_source: str | None = None

    @property
    def phase_shown(self) -> str | None:
        """The phase as a person reads it: the display name, else the enumerator, else the
        number."""
        if self.phase_name:
            return self.phase_name
        if self.phase:
            return self.phase
        return None if self.phase_value is None else f"phase {self.phase_value}"


@dataclass(frozen=True)
class KnownBugInfo(JsonFact):
    """What known_bugs.toml says of an upstream bug: its issue, the fix and the cause."""

    id: str  # dotnet/runtime#91257
    title: str
    url: str
    fix: str
    fix_url: str
    cause: str
    # "crash": the bug is the crash; "reporting": how the crash was reported (known_bugs.toml)
    about: str = "crash"
    said: str = ""  # the short words for it in a summary ("-p hid the crash")


@dataclass(frozen=True)
class KnownBugMatch(KnownBugInfo):
    """An entry of known_bugs.toml whose every criterion this stop meets."""

    matched: list[str] = field(default_factory=list)


@dataclass
class NearKnownBug(JsonFact):
    """An entry missed by exactly one criterion: said, never claimed as the cause."""

    id: str
    title: str
    url: str
    differs_in: str


@dataclass
class Diagnosis(JsonFact):
    """Everything `spmi why` says about a stop, and what the pipeline reads (`spmi diagnose
    --json`)."""

    schema: int
    debugger: str
    arch: str
    signal: SignalFact | None
    handling: Handling
    faulting_module: ModuleFact | None
    # None until found (a quick diagnosis, a stop known by a few facts only): what from_json gives
    # an absent one too
    method_context: MethodContextFact | None = None
    null_map: NullMap | None = None
    instruction: Instruction | None = None
    assertion: AssertInfo | None = None
    frames: list[FrameInfo] = field(default_factory=list)
    folded: list[str] = field(default_factory=list)
    # folded, concrete (not inlined) frames
    signature_frames: list[str] = field(default_factory=list)
    signature: str = ""
    bucket: str = ""
    notes: list[str] = field(default_factory=list)
    pc: int | None = None  # of frame 0
    # known_bugs.toml entries this stop matches
    known_bugs: list[KnownBugMatch] = field(default_factory=list)
    # ... or misses by one criterion
    near_known_bugs: list[NearKnownBug] = field(default_factory=list)
    # the stop is our interrupt of a hang (spmi_dbg.analysis.signature.mark_hang)
    hang: bool = False
    jit: JitFact | None = None  # what the JIT was doing, at a stop inside a JIT
    # the stack's method context numbers that failed their checks when none passed (mcnumber.py);
    # when one passed, those before it are in method_context.rejected
    method_context_rejected: list[str] = field(default_factory=list)
    # a fault outside the JITs during a compile: the command's JIT whose call led to it (with -a,
    # the base or the diff JIT), from the innermost frame in one of them
    calling_jit: ModuleFact | None = None
    # what in the setup explains the stop, each with its evidence (analysis/causes.py)
    causes: list[Cause] = field(default_factory=list)
