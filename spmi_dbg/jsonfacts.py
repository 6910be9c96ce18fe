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
import types
import typing
from pathlib import PurePath
from typing import Any, TypeVar

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


def _plain(value: Any) -> Any:
    """A value as JSON types: a nested fact by its to_json, an enum as its value, a path as its
    text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
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
    return typing.cast(T, _fact(cls, data, cls.__name__))


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


def _fact(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise FactJsonError(f"{where}: expected a JSON object ({cls.__name__}), got {_shown(data)}")
    values: dict[str, Any] = {}
    for f in _fields(cls):
        here = f"{where}.{f.key}"
        if f.key in data:
            values[f.name] = _value(f.hint, data[f.key], here)
        elif f.factory is not _MISSING:
            values[f.name] = f.factory()
        elif f.default is not _MISSING:
            values[f.name] = f.default
        elif _admits_none(f.hint):
            values[f.name] = None
        else:
            raise FactJsonError(f"{here}: missing")
    return cls(**values)


def _admits_none(hint: Any) -> bool:
    return (
        hint is Any
        or hint is type(None)
        or (_is_union(hint) and type(None) in typing.get_args(hint))
    )


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _value(hint: Any, value: Any, where: str) -> Any:
    if hint is Any:
        return value
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _fact(hint, value, where)
    if _is_union(hint):
        return _union(hint, value, where)
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        if value in typing.get_args(hint) and not isinstance(value, bool | dict | list):
            return value
        raise FactJsonError(
            f"{where}: expected one of {', '.join(map(repr, typing.get_args(hint)))}, "
            f"got {_shown(value)}"
        )
    if origin in (list, tuple, frozenset, set):
        return _array(hint, origin, value, where)
    if origin is dict:
        if not isinstance(value, dict):
            raise FactJsonError(f"{where}: expected a JSON object, got {_shown(value)}")
        key, item = typing.get_args(hint) or (Any, Any)
        return {
            _value(key, k, f"{where} key {k!r}"): _value(item, v, f"{where}[{k!r}]")
            for k, v in value.items()
        }
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            allowed = ", ".join(repr(m.value) for m in hint)
            raise FactJsonError(
                f"{where}: expected one of {allowed}, got {_shown(value)}"
            ) from None
    return _scalar(hint, value, where)


def _array(hint: Any, origin: Any, value: Any, where: str) -> Any:
    """A list, set or tuple (of fixed length, or `tuple[X, ...]`) from a JSON array."""
    if not isinstance(value, list):
        raise FactJsonError(f"{where}: expected a JSON array, got {_shown(value)}")
    args = typing.get_args(hint)
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        if len(args) != len(value):
            raise FactJsonError(f"{where}: expected {len(args)} items, got {len(value)}")
        return tuple(
            _value(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    item = args[0] if args else Any
    items = [_value(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    return items if origin is list else origin(items)


def _scalar(hint: Any, value: Any, where: str) -> Any:
    """int, float (a JSON integer too), str, bool, a path (its text) or None."""
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint in (str, bool):
        if isinstance(value, hint):
            return value
    elif isinstance(hint, type) and issubclass(hint, PurePath):
        if isinstance(value, str):
            return hint(value)
    elif hint is type(None):
        if value is None:
            return None
    else:
        raise FactJsonError(
            f"{where}: a field of type {hint!r} has no JSON form here (jsonfacts.py)"
        )
    raise FactJsonError(f"{where}: expected {_name(hint)}, got {_shown(value)}")


def _union(hint: Any, value: Any, where: str) -> Any:
    arms = typing.get_args(hint)
    if value is None and type(None) in arms:
        return None
    errors = []
    for arm in arms:
        if arm is type(None):
            continue
        try:
            return _value(arm, value, where)
        except FactJsonError as e:
            errors.append(e)
    if len(errors) == 1 and not _simple(arms):
        raise errors[0]  # Optional[fact]: the fact's own error says which of its fields
    raise FactJsonError(
        f"{where}: expected {' or '.join(_name(a) for a in arms)}, got {_shown(value)}"
    )


def _simple(arms: tuple[Any, ...]) -> bool:
    return all(a in (int, float, str, bool, type(None)) for a in arms)


def _name(hint: Any) -> str:
    if hint is type(None):
        return "None"
    return hint.__name__ if isinstance(hint, type) else str(hint)


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"
