"""Every fact a Diagnosis is made of goes to JSON and back unchanged through the one conversion
(spmi_dbg/jsonfacts.py): the facts are found by walking Diagnosis's field types, so a new
one is tested without being listed here; each is filled in every field (no default, no None) from
its type hints, so a new field is too. A field added to a dataclass is carried with no from_json to
touch, and JSON that is not a fact's form is an error naming the fact and the field."""

from __future__ import annotations

import dataclasses
import enum
import itertools
import json
import types
import typing
from dataclasses import field, make_dataclass
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg import jsonfacts
from spmi_dbg.analysis.facts import Diagnosis, FrameInfo, Handling, HandlingKind, SignalFact
from spmi_dbg.analysis.policy import PassedStop
from spmi_dbg.analysis.stacks import ThreadStack
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.jsonfacts import FactJsonError, JsonFact, from_json, to_json

pytestmark = pytest.mark.unit  # none of these tests starts a process


def _arms(hint: Any) -> tuple[Any, ...]:
    """The types a hint is made of: a union's arms, a generic's arguments."""
    return typing.get_args(hint)


def fact_types(root: type) -> list[type]:
    """The dataclasses reachable from `root`'s field types (root first), through unions, lists and
    dicts."""
    found: list[type] = []

    def walk(hint: Any) -> None:
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            if hint not in found:
                found.append(hint)
                for h in typing.get_type_hints(hint).values():
                    walk(h)
        for arg in _arms(hint):
            walk(arg)

    walk(root)
    return found


FACTS = fact_types(Diagnosis) + fact_types(ThreadStack)  # and a hang's (ReplayOutcome.threads)
_numbers = itertools.count(7)


def _filled(hint: Any, where: str, default: Any = dataclasses.MISSING) -> Any:
    """A value of this type that is neither None nor `default`."""
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return populated(hint)
    if origin in (typing.Union, types.UnionType):
        return _filled(next(a for a in _arms(hint) if a is not type(None)), where, default)
    if origin is typing.Literal:
        return next(a for a in reversed(_arms(hint)) if a != default)
    if origin is list:
        return [_filled(_arms(hint)[0], f"{where}[{i}]") for i in range(2)]
    if origin is tuple:
        return tuple(_filled(_arms(hint)[0], f"{where}[{i}]") for i in range(2))
    if origin is dict:
        key, item = _arms(hint)
        assert key is str, f"{where}: a dict's keys are JSON strings"
        return {f"{where}-{i}": _filled(item, f"{where}[{i}]") for i in range(2)}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return next(m for m in reversed(list(hint)) if m != default)
    if hint is bool:
        return default is not True
    if hint is int:
        return next(_numbers)
    if hint is float:
        return next(_numbers) + 0.5
    if hint is str:
        return f"{where} text"
    if hint is Any:
        return {"any": [where, 1]}
    raise AssertionError(f"{where}: no value for {hint!r}")


def populated(cls: type) -> Any:
    """An instance of the dataclass with every field set, none to its default or None."""
    hints = typing.get_type_hints(cls)
    values = {
        f.name: _filled(hints[f.name], f"{cls.__name__}.{f.name}", f.default)
        for f in dataclasses.fields(cls)
        if f.init
    }
    return cls(**values)


def _defaults(cls: type) -> dict[str, Any]:
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def through_json(x: Any) -> Any:
    """to_json, then as text and back: what crosses from the debugger to the driver."""
    return json.loads(json.dumps(to_json(x)))


def test_the_walk_finds_the_facts() -> None:
    names = {t.__name__ for t in FACTS}
    assert FACTS[0] is Diagnosis
    assert {
        "SignalFact",
        "Handling",
        "ModuleFact",
        "MethodContextFact",
        "NullMap",
        "Instruction",
        "AssertInfo",
        "FrameInfo",
        "KnownBugMatch",
        "NearKnownBug",
        "JitFact",
    } <= names
    assert all(t.__module__.startswith("spmi_dbg.analysis.") for t in FACTS)


@pytest.mark.parametrize("cls", FACTS, ids=lambda c: c.__name__)
def test_every_fact_round_trips(cls: type) -> None:
    x = populated(cls)
    defaults = _defaults(cls)
    # fully populated: a field lost on the way could not hide behind a default
    for f in dataclasses.fields(cls):
        value = getattr(x, f.name)
        assert value is not None and value != defaults.get(f.name, object()), (
            f"{cls.__name__}.{f.name}"
        )
    assert issubclass(cls, JsonFact)  # to_json / from_json as methods, through the one conversion
    back = cls.from_json(through_json(x))
    assert back == x and type(back) is cls
    assert through_json(back) == to_json(x)


def test_the_replay_outcome_round_trips() -> None:
    """What the lldb worker sends the driver: a Diagnosis and the stops passed, in
    ReplayOutcome.to_json's form."""
    for cls in (PassedStop, ReplayOutcome):
        x = populated(cls)
        assert cls.from_json(json.loads(json.dumps(x.to_json()))) == x


def test_a_new_field_is_carried_without_a_from_json() -> None:
    """A field added to a fact (here the faulting thread's name), and the fact nested in a new
    Diagnosis field."""
    plus = make_dataclass(
        "SignalFactPlus", [("thread_name", str, field(default=""))], bases=(SignalFact,)
    )
    extra = make_dataclass(
        "Extra",
        [("where", list[FrameInfo]), ("kind", HandlingKind | None, field(default=None))],
        bases=(JsonFact,),
    )
    diag = make_dataclass(
        "DiagnosisPlus",
        [("signal", plus | None), ("extra", extra | None, field(default=None))],
        bases=(Diagnosis,),
    )
    x = populated(diag)
    assert x.signal.thread_name and x.extra.where and x.extra.kind is not None
    back = diag.from_json(through_json(x))
    assert back == x and back.signal.thread_name == x.signal.thread_name and back.extra == x.extra
    assert through_json(x)["signal"]["thread_name"] == x.signal.thread_name
    # the older reader: the new keys ignored, the rest the same
    plain = Diagnosis.from_json(through_json(x))
    assert (
        type(plain.signal) is SignalFact
        and plain.signal.name == x.signal.name
        and plain.frames == x.frames
    )


def _diagnosis_json() -> dict[str, Any]:
    data: dict[str, Any] = through_json(populated(Diagnosis))
    return data


def test_unknown_keys_are_ignored_and_missing_optional_ones_take_the_default() -> None:
    data = _diagnosis_json() | {"from_a_newer_tool": {"x": 1}}
    data["signal"]["also_new"] = [1, 2]
    for key in ("jit", "known_bugs", "pc", "hang", "null_map", "method_context_rejected"):
        del data[key]
    del data["handling"]["rule"]
    d = Diagnosis.from_json(data)
    assert d.jit is None and d.known_bugs == [] and d.pc is None and d.hang is False
    assert d.null_map is None  # no default, but Optional: absent means not established
    assert d.method_context_rejected == [] and d.handling.rule == ""
    assert d.signal is not None and not hasattr(d.signal, "also_new")


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d["frames"][1].update(line="12"),
            "Diagnosis.frames[1].line: expected int or None, got str '12'",
        ),
        (
            lambda d: d["signal"].update(signo=True),
            "Diagnosis.signal.signo: expected int, got bool True",
        ),
        (
            lambda d: d["handling"].update(kind="fatalish"),
            "Diagnosis.handling.kind: expected one of 'first-chance', "
            "'fatal', 'debug-break', 'unknown', got str 'fatalish'",
        ),
        (lambda d: d["handling"].pop("kind"), "Diagnosis.handling.kind: missing"),
        (lambda d: d.update(schema=None), "Diagnosis.schema: expected int, got NoneType None"),
        (lambda d: d.update(frames={"0": {}}), "Diagnosis.frames: expected a JSON array, got dict"),
        (
            lambda d: d.update(instruction=[1]),
            "Diagnosis.instruction: expected a JSON object (Instruction), got list",
        ),
        (
            lambda d: d["instruction"]["registers"].update(rax="0x1"),
            "Diagnosis.instruction.registers['rax']: expected int, got str '0x1'",
        ),
        (
            lambda d: d["known_bugs"][0].update(matched=["frames", 3]),
            "Diagnosis.known_bugs[0].matched[1]: expected str",
        ),
    ],
)
def test_a_wrong_type_names_the_fact_and_the_field(change: Any, message: str) -> None:
    data = _diagnosis_json()
    change(data)
    with pytest.raises(FactJsonError) as e:
        Diagnosis.from_json(data)
    assert str(e.value).startswith(message)
    assert isinstance(e.value, ValueError)  # what the drivers catch and turn into a ToolFailure


def test_a_replay_outcome_of_an_unknown_kind_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"ReplayOutcome.kind: expected one of 'fatal', .*got str 'odd'"
    ):
        ReplayOutcome.from_json({"kind": "odd"})
    assert ReplayOutcome.from_json({"kind": "exited", "exit_status": 0}) == ReplayOutcome(
        "exited", exit_status=0
    )


def test_a_float_field_takes_a_json_integer() -> None:
    stop = from_json(
        PassedStop,
        {
            "signal": "SIGSEGV",
            "kind": "first-chance",
            "frame": "f",
            "method_context": 3,
            "pc": None,
            "delivered": True,
            "seconds": 0,
        },
    )
    assert (
        stop.seconds == 0.0
        and isinstance(stop.seconds, float)
        and stop.kind is HandlingKind.FIRST_CHANCE
    )
    assert Handling.from_json({"kind": "fatal", "reason": "r"}) == Handling(HandlingKind.FATAL, "r")


def test_a_path_field_is_its_text_both_ways() -> None:
    @dataclasses.dataclass(frozen=True)
    class Where:
        out: Path
        log: Path | None = None

    where = Where(Path("/tmp/a dir/out $(x)"))
    assert to_json(where) == {"out": "/tmp/a dir/out $(x)", "log": None}
    assert from_json(Where, to_json(where)) == where
    with pytest.raises(ValueError, match=r"Where\.out: expected Path, got int 3"):
        from_json(Where, {"out": 3})


@dataclasses.dataclass(frozen=True)
class _Line:
    """A form of its own: a key left out when None, a key of its own added."""

    text: str
    tag: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "length": len(self.text)}
        if self.tag is not None:
            out["tag"] = self.tag
        return out


@dataclasses.dataclass(frozen=True)
class _Span(JsonFact):
    from_: int = field(metadata=jsonfacts.key("from"))
    to: int
    lines: list[_Line]
    last: _Line | None = None


def test_a_keyword_field_and_a_nested_fact_with_its_own_form() -> None:
    """A field keyed `from` (a Python keyword) by jsonfacts.key; a nested dataclass with a to_json
    of its own is written by it, and read back."""
    span = _Span(3, 4, [_Line("ab"), _Line("c", "t")], _Line("d"))
    data = span.to_json()
    assert json.dumps(data) == (
        '{"from": 3, "to": 4, "lines": [{"text": "ab", "length": 2}, '
        '{"text": "c", "length": 1, "tag": "t"}], "last": {"text": "d", "length": 1}}'
    )
    assert _Span.from_json(data) == span
    with pytest.raises(FactJsonError, match=r"^_Span\.from: missing"):
        _Span.from_json({"to": 4, "lines": []})
    # a PassedStop's own form (its seconds rounded) inside a ReplayOutcome
    outcome = populated(ReplayOutcome)
    assert outcome.to_json()["passed"] == [p.to_json() for p in outcome.passed]


def test_a_field_may_name_its_key_and_its_digits() -> None:
    @dataclasses.dataclass
    class Timed(JsonFact):
        crash: int = field(metadata=jsonfacts.key("crashing_method_context"))
        seconds: float = field(default=0.0, metadata=jsonfacts.digits(3))

    t = Timed(7, 1.23456)
    assert t.to_json() == {"crashing_method_context": 7, "seconds": 1.235}
    assert Timed.from_json(t.to_json()) == Timed(7, 1.235)
    with pytest.raises(ValueError, match=r"Timed\.crashing_method_context: missing"):
        Timed.from_json({"crash": 7})


@dataclasses.dataclass(frozen=True)
class _Pair:
    a: int
    b: str


def test_a_fact_read_while_its_reader_is_being_made_is_read_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fact's reader is published whole (jsonfacts._fact_decoder): a read that starts while
    another is still making it (a triage's tasks and its progress watch, in threads) makes its own
    rather than reading half of it. Here the second read starts, deterministically, from inside the
    first one's making of the reader of field `b`."""
    data = {"a": 1, "b": "x"}
    inner: list[Any] = []
    made = jsonfacts._decoder

    def decoder(hint: Any) -> Any:
        if hint is str and not inner:
            inner.append(None)
            inner[0] = from_json(_Pair, data)  # the other thread's read, in the middle
        return made(hint)

    monkeypatch.setattr(jsonfacts, "_decoder", decoder)
    outer = made(_Pair)(data)  # the one reader of _Pair, which the inner read shares
    assert outer == inner[0] == _Pair(1, "x")
