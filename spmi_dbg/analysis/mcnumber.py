"""Which method context was being replayed, and how we know (docs/superpmi-conventions.md section 2,
"Debugger anchors" and "The method context number across versions").

Every place that may hold the number is a candidate, in this order: JitInstance::CompileMethod's
`mcIndex`, `mc->index` (3.1's superpmi stores there the count of method contexts this process has
loaded, not the number: under `-c` or `-stride` it is another number), the reader's `curMCIndex`,
the JIT's `compMethodSuperPMIIndex`. A value read from an optimized frame may be a stale register,
so no candidate is believed on its own: it must lie in what this process replays (its `-c` list or
`-stride`, from its command line, and within the collection), and where the record can be looked up,
the record's identity must agree with what the stopped process shows (the IL size of the method
being compiled, read from the compile request superpmi built from the record). A candidate that
fails is named in `rejected` with why; then the next one; with none left the caller bisects
natively."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from spmi_dbg.analysis.frames import class_of, frame_ref, short_name
from spmi_dbg.analysis.jitstate import superpmi_index
from spmi_dbg.analysis.values import frame_int, member_int
from spmi_dbg.analysis.view import Frame, Value
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch.mclist import MCList, parse_mclist
from spmi_dbg.superpmi_argv import parse_command

COMPILE_METHOD = "JitInstance::CompileMethod"


@dataclass(frozen=True)
class MethodContextNumber:
    number: int
    source: str  # e.g. "mcIndex argument of JitInstance::CompileMethod (frame 7)"
    checks: tuple[str, ...] = ()  # what the number was checked against, and passed
    rejected: tuple[str, ...] = ()  # the candidates before it that failed a check, with why


class MethodContextSearch(NamedTuple):
    """What find_method_context found: the number that passed its checks (None when none did), the
    places tried that held no value, and the values that failed a check, with why (the report's
    rejected list)."""

    found: MethodContextNumber | None
    # "mcIndex argument of JitInstance::CompileMethod (frame 5): not available"
    tried: tuple[str, ...]
    # "reader->curMCIndex in main (frame 6) = 16909060: rejected, past ..."
    rejected: tuple[str, ...]

    @property
    def attempts(self) -> list[str]:
        """Every place tried and every value rejected, in the order the note names them."""
        return [*self.tried, *self.rejected]


@dataclass(frozen=True)
class RecordIdentity:
    """What the collection says of one record."""

    il_size: int | None
    # None when the record holds no name (superpmi's placeholder is no name)
    name: str | None = None
    name_note: str | None = None  # why there is no name


@dataclass(frozen=True)
class Evidence:
    """What a candidate number is checked against: the process's selection, and the collection's
    records."""

    selection: Selection
    count: int | None = None  # the collection's method contexts, when known
    # a record's identity, when the collection is at hand
    record: Callable[[int], RecordIdentity | None] | None = None
    # IL sizes of the method being compiled, each with where it was read
    il_sizes: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class Selection:
    """The method contexts a superpmi process replays, from its command line: `-c LIST` (or
    `-compile`), or the `-stride OFFSET INCREMENT` of a `-p` worker; neither: all of them."""

    mclist: MCList | None = None
    spec: str | None = None
    stride: tuple[int, int] | None = None
    # a -c argument that could not be read (a missing .mcl): nothing is checked by it
    problem: str | None = None

    def refuses(self, n: int) -> str | None:
        """Why `n` cannot be a method context this process replays; None when it can."""
        if n <= 0:
            return "not a method context number (they start at 1)"
        if self.mclist is not None and n not in self.mclist:
            return f"not in the -c list {self.spec} this process replays"
        if self.stride is not None:
            offset, increment = self.stride
            if n < offset or (n - offset) % increment:
                return f"not replayed by this -stride {offset} {increment} worker"
        return None

    def describe(self) -> str:
        if self.mclist is not None:
            return f"in the -c list {self.spec}"
        if self.stride is not None:
            return f"in -stride {self.stride[0]} {self.stride[1]}"
        return "no -c list: every method context is replayed"


@functools.lru_cache(maxsize=64)  # the adapters diagnose the same command line at every stop
def _selection(argv: tuple[str, ...]) -> Selection:
    opts = parse_command(argv).options
    for i, o in enumerate(opts):
        low = o.lower()
        if low in ("-c", "-compile") and i + 1 < len(opts):
            spec = opts[i + 1]
            try:
                return Selection(parse_mclist(spec), spec)
            except (SpmiDbgError, OSError, ValueError) as e:
                return Selection(spec=spec, problem=f"its -c {spec} could not be read: {e}")
        if low == "-stride" and i + 2 < len(opts):
            try:
                offset, increment = int(opts[i + 1]), int(opts[i + 2])
            except ValueError:
                continue
            if offset > 0 and increment > 0:
                return Selection(stride=(offset, increment))
    return Selection()


def selection_of(argv: Sequence[str] | None) -> Selection:
    return _selection(tuple(argv)) if argv else Selection()


@dataclass
class _Search:
    evidence: Evidence
    tried: list[str] = field(default_factory=list)  # places with no value
    rejected: list[str] = field(default_factory=list)  # values that failed a check

    def result(self, found: MethodContextNumber | None) -> MethodContextSearch:
        return MethodContextSearch(found, tuple(self.tried), tuple(self.rejected))

    def check(self, n: int | None, source: str) -> MethodContextNumber | None:
        if n is None:
            self.tried.append(f"{source}: not available")
            return None
        why = self.evidence.selection.refuses(n)
        if why is None and self.evidence.count is not None and n > self.evidence.count:
            why = f"past the collection's end ({self.evidence.count:,} method contexts)"
        if why is None:
            why = self._identity(n)
        if why is not None:
            self.rejected.append(f"{source} = {n}: rejected, {why}")
            return None
        return MethodContextNumber(n, source, tuple(self._passed(n)), tuple(self.rejected))

    def _identity(self, n: int) -> str | None:
        ev = self.evidence
        if ev.record is None or not ev.il_sizes:
            return None
        ident = ev.record(n)
        if ident is None or ident.il_size is None:
            return None
        if any(size == ident.il_size for size, _ in ev.il_sizes):
            return None  # one read agrees: an optimized frame's other reads may be stale registers
        seen = "; ".join(f"{size} ({where})" for size, where in ev.il_sizes)
        return f"record {n} has IL size {ident.il_size}, but the method being compiled has {seen}"

    def _passed(self, n: int) -> list[str]:
        ev = self.evidence
        out = [ev.selection.describe() if ev.selection.problem is None else ev.selection.problem]
        if ev.count is not None:
            out.append(f"within the collection ({ev.count:,} method contexts)")
        ident = ev.record(n) if ev.record is not None and ev.il_sizes else None
        if ident is not None and ident.il_size is not None:
            out += [
                f"record {n}'s IL size {ident.il_size} = {where}"
                if size == ident.il_size
                else f"{where} = {size} disagrees (not believed: a value read from an optimized "
                "frame)"
                for size, where in ev.il_sizes
            ]
        elif ev.record is not None and ev.il_sizes:
            out.append(f"the record's identity not checked: record {n}'s IL size is not decoded")
        elif ev.record is None:
            out.append("the record's identity not checked: the collection is not at hand")
        elif not ev.il_sizes:
            out.append(
                "the record's identity not checked: no IL size of the method being compiled is "
                "readable"
            )
        return out


def compiled_il_sizes(frames: Sequence[Frame]) -> tuple[tuple[int, str], ...]:
    """Reads of the IL size of the method being compiled, each with where it was read: the compile
    request superpmi built out of the record (the JIT's `methodInfo->ILCodeSize` argument in
    CILJit::compileMethod or jitNativeCode), the MethodContext's `methodSize` (set from the record
    by repCompileMethod), the JIT's `info.compILCodeSize` (not filled in early in a compile: 3.1's
    Checked JIT has 0xdddddddd there). Any of them may be a stale register of an optimized frame: a
    number is believed when one of them agrees with its record."""
    out: list[tuple[int, str]] = []
    seen: set[str] = set()

    def add(n: int | None, where: str, key: str) -> None:
        if n is not None and 0 < n < 1 << 31 and key not in seen:
            seen.add(key)
            out.append((n, where))

    for i, f in enumerate(frames):
        name = short_name(f.function)
        if name in ("CILJit::compileMethod", "jitNativeCode"):
            add(
                member_int(f.variable("methodInfo"), "ILCodeSize"),
                f"methodInfo->ILCodeSize in {name} ({frame_ref(f, i)})",
                "methodInfo",
            )
        for var, v in _method_contexts(f):
            add(
                member_int(v, "methodSize"),
                f"{var}->methodSize in {name} ({frame_ref(f, i)})",
                f"mc {v.as_int()}",
            )
        if class_of(f.function) == "Compiler":
            add(
                member_int(f.variable("this"), "info", "compILCodeSize"),
                f"Compiler::info.compILCodeSize in {name} ({frame_ref(f, i)})",
                "compiler",
            )
    return tuple(out)


def _method_contexts(f: Frame) -> list[tuple[str, Value]]:
    found: list[tuple[str, Value]] = []
    for var in ("mc", "MethodToCompile"):
        v = f.variable(var)
        if v is not None and "MethodContext" in v.type_name:
            found.append((var, v))
    if class_of(f.function) == "MethodContext":
        v = f.variable("this")
        if v is not None:
            found.append(("this", v))
    return found


def find_method_context(
    frames: Sequence[Frame], evidence: Evidence | None = None
) -> MethodContextSearch:
    """The number that passed its checks, with its evidence (else None), the places tried and the
    values rejected."""
    s = _Search(evidence or Evidence(Selection()))
    for n, where in _number_places(frames):
        found = s.check(n, where)
        if found is not None:
            return s.result(found)
    if not s.tried and not s.rejected:
        s.tried.append("no frame of the stack holds a method context number")
    return s.result(None)


def _number_places(frames: Sequence[Frame]) -> Iterator[tuple[int | None, str]]:
    """Each place of the stack that may hold the method context number, with its value (None: not
    readable), in the order they are believed: superpmi's compile loop's `mcIndex` argument, a
    MethodContext's `index`, the reader's `curMCIndex`, the JIT's own copy. Read lazily: the search
    reads no further than the first number that passes."""
    for i, f in enumerate(frames):
        if short_name(f.function) == COMPILE_METHOD and f.variable("mcIndex") is not None:
            yield (
                frame_int(f, "mcIndex"),
                f"mcIndex argument of {COMPILE_METHOD} ({frame_ref(f, i)})",
            )
    for i, f in enumerate(frames):
        for var, v in _method_contexts(f):
            yield (
                member_int(v, "index"),
                f"{var}->index in {short_name(f.function)} ({frame_ref(f, i)})",
            )
    for i, f in enumerate(frames):
        reader = f.variable("reader")
        if reader is not None and "MethodContextReader" in reader.type_name:
            yield (
                member_int(reader, "curMCIndex"),
                f"reader->curMCIndex in {short_name(f.function)} ({frame_ref(f, i)})",
            )
    for i, f in enumerate(frames):
        comp = f.variable("this") if class_of(f.function) == "Compiler" else None
        if comp is None:
            comp = f.variable("comp") or f.variable("compiler")
        if comp is not None and "Compiler" not in comp.type_name:
            comp = None
        if comp is None:
            continue
        n, member = superpmi_index(comp)  # today's info.compMethodSuperPMIIndex; 3.1's JIT has none
        if member is not None:
            yield n, f"{member} in {short_name(f.function)} ({frame_ref(f, i)})"
