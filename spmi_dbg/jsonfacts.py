"""A fact's JSON form and the way back, for every fact dataclass at once: `to_json` (the fields as
JSON types, an enum as its value, a path as its text) and `from_json` (the dataclass rebuilt from
its fields' type hints: nested facts, lists and tuples of them, Optional and other unions, enums,
Literal, int/float/str/bool, Path, dict[str, X], Any). A key the dataclass does not have is ignored;
a missing key takes the field's default (None for an Optional field without one); anything else is a
FactJsonError naming the fact and the field (`Diagnosis.frames[2].line: expected int or None, got
str '12'`). A field added to a dataclass is carried both ways with no code here to change.

A field may name its key (`field(metadata=key("turns_off"))`; `key("from")` for a Python keyword)
and, a float, the digits it is written with (`metadata=digits(3)`). A nested dataclass with a
to_json of its own is written by it (in a form from_json reads back: extra keys, a key left out for
its default)."""

from __future__ import annotations

import dataclasses
import enum
import functools
import itertools
import types
import typing
from collections.abc import Callable, Iterable
from pathlib import PurePath
from typing import Any, Final, TypeVar

T = TypeVar("T")

_MISSING = object()


class FactJsonError(ValueError):
    """JSON that is not the form of the fact it is read as (a ValueError: the drivers' readers catch
    those)."""


class JsonFact:
    """A dataclass with to_json / from_json through this module (a mixin: no fields, no state)."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = to_json(self)
        return data

    @classmethod
    def from_json(cls: type[T], data: Any) -> T:
        return from_json(cls, data)


def key(name: str) -> dict[str, Any]:
    """A field's metadata: its key in JSON is `name`."""
    return {"json_key": name}


def digits(n: int) -> dict[str, Any]:
    """A float field's metadata: written rounded to `n` digits."""
    return {"json_digits": n}


def to_json(fact: Any) -> Any:
    """A fact dataclass (or None) as JSON-ready data: its fields in order."""
    if fact is None:
        return None
    cls: type = type(fact)
    out = {}
    for name, json_key, places in _keys(cls):
        value = getattr(fact, name)
        rounded = places is not None and value is not None
        out[json_key] = round(value, places) if rounded else _plain(value)
    return out


@functools.cache
def _keys(cls: type) -> tuple[tuple[str, str, int | None], ...]:
    """Each field's name, its key in JSON and the digits it is rounded to (None: as it is)."""
    return tuple((f.name, _key(f), f.metadata.get("json_digits")) for f in dataclasses.fields(cls))


def _key(f: dataclasses.Field[Any]) -> str:
    named: str = f.metadata.get("json_key", f.name)
    return named


_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """A value as JSON types: a nested fact by its to_json, an enum as its value, a path as its
    text."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if hasattr(kind, "__dataclass_fields__"):
        own = getattr(value, "to_json", None)
        return own() if callable(own) else to_json(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def from_json(cls: type[T], data: Any) -> T:
    """The fact dataclass `cls` read from its JSON form (FactJsonError when it is not that form)."""
    try:
        return typing.cast(T, _decoder(typing.cast(Any, cls))(data))
    except _Bad as e:
        raise FactJsonError(f"{cls.__name__}{''.join(reversed(e.path))}: {e.text}") from None


class _Bad(Exception):
    """A value that is not its hint's form: what was expected, and where, as the path's parts from
    the value up (each container adds its own on the way out: no path is built for good input)."""

    def __init__(self, text: str, *path: str) -> None:
        super().__init__(text)
        self.text = text
        self.path = list(path)


Decoder = Callable[[Any], Any]


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    key: str  # its key in JSON
    hint: Any  # the type hint, resolved
    default: Any  # _MISSING: none
    factory: Any  # _MISSING: none


@functools.cache
def _fields(cls: type) -> tuple[_Field, ...]:
    """The fields __init__ takes, with their resolved type hints (functools.cache: the hints are
    read once)."""
    hints = typing.get_type_hints(cls)
    return tuple(
        _Field(
            f.name,
            _key(f),
            hints[f.name],
            _MISSING if f.default is dataclasses.MISSING else f.default,
            _MISSING if f.default_factory is dataclasses.MISSING else f.default_factory,
        )
        for f in dataclasses.fields(cls)
        if f.init
    )


@functools.cache
def _decoder(hint: Any) -> Decoder:
    """The reader of a value of type `hint`, made once per hint (the hint's shape is looked at
    here, not at every value)."""
    if hint is Any:
        return _as_is
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _fact_decoder(hint)
    if _is_union(hint):
        return _union_decoder(hint)
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return _literal_decoder(hint)
    if origin in (list, tuple, frozenset, set):
        return _array_decoder(hint, origin)
    if origin is dict:
        return _dict_decoder(hint)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_decoder(hint)
    return _scalar_decoder(hint)


def _as_is(value: Any) -> Any:
    return value


def _fact_decoder(cls: type) -> Decoder:
    """A fact from a JSON object: its fields' readers found at the first value (a fact may name
    itself in its fields). The plan is made whole, then published by one assignment: a thread
    reading the same fact meanwhile (a triage's tasks and its progress watch) never sees half of
    it."""
    made: list[tuple[tuple[str, str, Decoder, Any, Any, bool], ...]] = []

    def decode(data: Any) -> Any:
        if not isinstance(data, dict):
            raise _Bad(f"expected a JSON object ({cls.__name__}), got {_shown(data)}")
        plan = made[0] if made else None
        if plan is None:
            plan = tuple(
                (f.name, f.key, _decoder(f.hint), f.default, f.factory, _admits_none(f.hint))
                for f in _fields(cls)
            )
            made[:] = [plan]
        values: dict[str, Any] = {}
        for name, json_key, read, default, factory, none_ok in plan:
            if json_key in data:
                try:
                    values[name] = read(data[json_key])
                except _Bad as e:
                    e.path.append("." + json_key)
                    raise
            elif factory is not _MISSING:
                values[name] = factory()
            elif default is not _MISSING:
                values[name] = default
            elif none_ok:
                values[name] = None
            else:
                raise _Bad("missing", "." + json_key)
        return cls(**values)

    return decode


def _admits_none(hint: Any) -> bool:
    return (
        hint is Any
        or hint is type(None)
        or (_is_union(hint) and type(None) in typing.get_args(hint))
    )


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _literal_decoder(hint: Any) -> Decoder:
    allowed = typing.get_args(hint)

    def decode(value: Any) -> Any:
        if value in allowed and not isinstance(value, bool | dict | list):
            return value
        raise _Bad(f"expected one of {', '.join(map(repr, allowed))}, got {_shown(value)}")

    return decode


def _enum_decoder(hint: type[enum.Enum]) -> Decoder:
    def decode(value: Any) -> Any:
        try:
            return hint(value)
        except ValueError:
            allowed = ", ".join(repr(m.value) for m in hint)
            raise _Bad(f"expected one of {allowed}, got {_shown(value)}") from None

    return decode


def _dict_decoder(hint: Any) -> Decoder:
    key_hint, item_hint = typing.get_args(hint) or (Any, Any)
    read_key, read_item = _decoder(key_hint), _decoder(item_hint)

    def decode(value: Any) -> Any:
        if not isinstance(value, dict):
            raise _Bad(f"expected a JSON object, got {_shown(value)}")
        out = {}
        for k, v in value.items():
            try:
                name = read_key(k)
            except _Bad as e:
                e.path.append(f" key {k!r}")
                raise
            try:
                out[name] = read_item(v)
            except _Bad as e:
                e.path.append(f"[{k!r}]")
                raise
        return out

    return decode


def _array_decoder(hint: Any, origin: Any) -> Decoder:
    """A list, set or tuple (of fixed length, or `tuple[X, ...]`) from a JSON array."""
    args = typing.get_args(hint)
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        readers = [_decoder(a) for a in args]

        def fixed(value: Any) -> Any:
            if not isinstance(value, list):
                raise _Bad(f"expected a JSON array, got {_shown(value)}")
            if len(readers) != len(value):
                raise _Bad(f"expected {len(readers)} items, got {len(value)}")
            return tuple(_items(readers, value))

        return fixed
    read = _decoder(args[0] if args else Any)

    def decode(value: Any) -> Any:
        if not isinstance(value, list):
            raise _Bad(f"expected a JSON array, got {_shown(value)}")
        items = _items(itertools.repeat(read), value)
        return items if origin is list else origin(items)

    return decode


def _items(readers: Iterable[Decoder], values: list[Any]) -> list[Any]:
    out = []
    for i, (read, v) in enumerate(zip(readers, values, strict=False)):
        try:
            out.append(read(v))
        except _Bad as e:
            e.path.append(f"[{i}]")
            raise
    return out


def _scalar_decoder(hint: Any) -> Decoder:
    """int, float (a JSON integer too), str, bool, a path (its text) or None."""
    if hint is float:
        return lambda v: float(v) if _is_number(v) else _wrong(hint, v)
    if hint is int:
        return lambda v: v if isinstance(v, int) and not isinstance(v, bool) else _wrong(hint, v)
    if hint in (str, bool):
        return lambda v: v if isinstance(v, hint) else _wrong(hint, v)
    if isinstance(hint, type) and issubclass(hint, PurePath):
        return lambda v: hint(v) if isinstance(v, str) else _wrong(hint, v)
    if hint is type(None):
        return lambda v: None if v is None else _wrong(hint, v)

    def no_form(value: Any) -> Any:
        raise _Bad(f"a field of type {hint!r} has no JSON form here (jsonfacts.py)")

    return no_form


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _wrong(hint: Any, value: Any) -> Any:
    raise _Bad(f"expected {_name(hint)}, got {_shown(value)}")


def _union_decoder(hint: Any) -> Decoder:
    arms = typing.get_args(hint)
    none_ok = type(None) in arms
    tried = [(arm, _decoder(arm)) for arm in arms if arm is not type(None)]
    simple = _simple(arms)

    def decode(value: Any) -> Any:
        if value is None and none_ok:
            return None
        errors = []
        for _arm, read in tried:
            try:
                return read(value)
            except _Bad as e:
                errors.append(e)
        if len(errors) == 1 and not simple:
            raise errors[0]  # Optional[fact]: the fact's own error says which of its fields
        raise _Bad(f"expected {' or '.join(_name(a) for a in arms)}, got {_shown(value)}")

    return decode


def _simple(arms: tuple[Any, ...]) -> bool:
    return all(a in (int, float, str, bool, type(None)) for a in arms)


def _name(hint: Any) -> str:
    if hint is type(None):
        return "None"
    return hint.__name__ if isinstance(hint, type) else str(hint)


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"
