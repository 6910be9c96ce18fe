"""report.json and triage.json as the renderers take them: the data as written, with its facts (a
diagnosis, known bugs, causes) read once, where the data comes in, by the one conversion
(spmi_dbg.jsonfacts). The pipelines' own parts (locate, verification, the issue section, ...) stay
data."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from spmi_dbg.analysis.facts import (
    Cause,
    Diagnosis,
    Handling,
    HandlingKind,
    JitFact,
    KnownBugMatch,
    ModuleFact,
    NullMap,
)
from spmi_dbg.jsonfacts import FactJsonError, from_json
from spmi_dbg.report.model import ReportDoc
from spmi_dbg.report.triage_model import CrashBucket, TriageDoc

Data = dict[str, Any]
T = TypeVar("T")


@dataclass(frozen=True)
class ReportJson:
    """report.json: its data, its diagnosis (None: the run has none), and its known bugs and causes
    (the diagnosis' and those only the pipeline saw)."""

    data: Data
    diagnosis: Diagnosis | None
    known_bugs: list[KnownBugMatch]
    causes: list[Cause]

    @cached_property
    def doc(self) -> ReportDoc:
        """The envelope and its parts, typed (spmi_dbg.report.model): what the renderers read."""
        return _read(ReportDoc, self.data, "report.json")

    @classmethod
    def read(cls, data: Data) -> ReportJson:
        """A FactJsonError names the part that is not the form spmi-dbg writes."""
        d = data.get("diagnosis")
        report = cls(
            data,
            None if d is None else _read(Diagnosis, d, "diagnosis"),
            _read_list(KnownBugMatch, data.get("known_bugs"), "known_bugs"),
            _read_list(Cause, data.get("causes"), "causes"),
        )
        if report.doc.issue is None:  # read now: a FactJsonError here, not in a renderer
            raise FactJsonError("report.json.issue: missing (the words every renderer needs)")
        return report


@dataclass(frozen=True)
class BucketJson:
    """A bucket of triage.json: its data (typed: `part`), its smallest member's diagnosis, its known
    bugs."""

    data: Data
    diagnosis: Diagnosis
    known_bugs: list[KnownBugMatch]

    @cached_property
    def part(self) -> CrashBucket:
        return _read(CrashBucket, self.data, f"bucket {self.data.get('bucket')}")


@dataclass(frozen=True)
class TriageJson:
    """triage.json: its data and its buckets, each with its facts."""

    data: Data
    buckets: list[BucketJson]

    @cached_property
    def doc(self) -> TriageDoc:
        """The envelope and its parts, typed (spmi_dbg.report.triage_model)."""
        return _read(TriageDoc, self.data, "triage.json")

    @classmethod
    def read(cls, data: Data) -> TriageJson:
        """Each bucket's facts; a FactJsonError names the bucket and the field."""
        buckets = data.get("buckets")
        found = enumerate(buckets if isinstance(buckets, list) else [])
        triage = cls(data, [_bucket(b, f"buckets[{i}]") for i, b in found if isinstance(b, dict)])
        triage.doc  # noqa: B018 -- read now: a FactJsonError here, not in a renderer
        for b in triage.buckets:
            b.part  # noqa: B018
        return triage


def facts_alone(
    null_map: NullMap | None = None,
    jit: JitFact | None = None,
    faulting_module: ModuleFact | None = None,
) -> Diagnosis:
    """A diagnosis of these facts only, nothing else known (no signal, no stack): what a stop
    without its diagnosis says."""
    return Diagnosis(
        schema=0,
        debugger="",
        arch="",
        signal=None,
        handling=Handling(HandlingKind.UNKNOWN, ""),
        faulting_module=faulting_module,
        null_map=null_map,
        jit=jit,
    )


def _bucket(b: Data, where: str) -> BucketJson:
    """The bucket's diagnosis; a triage.json of before buckets had one: the bucket's own facts."""
    d = b.get("diagnosis")
    if d:
        diagnosis = _read(Diagnosis, d, f"{where}.diagnosis")
    else:
        diagnosis = facts_alone(
            _read_optional(NullMap, b.get("null_map"), f"{where}.null_map"),
            _read_optional(JitFact, b.get("jit"), f"{where}.jit"),
            _read_optional(ModuleFact, b.get("faulting_module"), f"{where}.faulting_module"),
        )
    return BucketJson(
        b, diagnosis, _read_list(KnownBugMatch, b.get("known_bugs"), f"{where}.known_bugs")
    )


def _read(cls: type[T], data: Any, where: str) -> T:
    try:
        return from_json(cls, data)
    except FactJsonError as e:
        raise FactJsonError(f"{where}: {e}") from None


def _read_optional(cls: type[T], data: Any, where: str) -> T | None:
    return None if not data else _read(cls, data, where)


def _read_list(cls: type[T], data: Any, where: str) -> list[T]:
    if data is None:
        return []
    if not isinstance(data, list):
        raise FactJsonError(f"{where}: expected a JSON array, got {type(data).__name__}")
    return [_read(cls, item, f"{where}[{i}]") for i, item in enumerate(data)]
