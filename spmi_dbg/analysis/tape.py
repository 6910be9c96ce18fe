"""Tapes: what a diagnosis read from a live stop, kept as JSON, so that `diagnose()` runs again on
it without a debugger, the binaries or the collection (docs/architecture.md, "Tapes").

Recording (analysis/taperecord.py) wraps the view (`RecordingProcess`): every answer the
process, its threads, frames and values give is written down under the question that got it (a
value by the path it was reached by: frame, variable, member, element), and so is every answer of
the collection the diagnosis opens (`RecordingCollections`). Replaying (`TapeProcess`,
`TapeCollections`, here) gives the same answers to the same questions, and None to any other, as a
debugger does for what it cannot read: since the diagnosis is one deterministic function of those
answers, a tape of a stop gives that stop's diagnosis. Only what the diagnosis asked for is
recorded, so a tape is small (kilobytes)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

from spmi_dbg.analysis.diagnosis import Diagnosis, diagnose
from spmi_dbg.analysis.mcnumber import RecordIdentity
from spmi_dbg.analysis.records import Records
from spmi_dbg.analysis.view import Module, SignalInfo
from spmi_dbg.errors import InputError, printable

FORMAT = "spmi-dbg tape"
VERSION = 1
MAX_TAPE_BYTES = 64 * 1024 * 1024

Json = dict[str, Any]
T = TypeVar("T")


def _answer(node: Json, key: str, kind: type[T]) -> T | None:
    """The answer recorded under `key`; None when none was, or it is not a `kind` (a tape written
    by hand)."""
    value = node.get(key)
    return value if isinstance(value, kind) else None


def _value_at(node: Json, table: str, key: str) -> TapeValue | None:
    """The value recorded in `node`'s `table` under `key`: a field or element of a value, a
    variable of a frame, an expression the process evaluated."""
    child = (node.get(table) or {}).get(key)
    return TapeValue(child) if isinstance(child, dict) else None


class _Recorded:
    """A part of the stop as the tape holds it: its recorded node, which it answers from."""

    def __init__(self, node: Json) -> None:
        self._node = node


class _Answer(Generic[T]):
    """A part's recorded answer as its attribute of the same name (the view's property): None
    when the tape holds none, or one not a `kind` (_answer)."""

    def __init__(self, kind: type[T]) -> None:
        self.kind = kind
        self.key = ""

    def __set_name__(self, owner: type[_Recorded], name: str) -> None:
        self.key = name

    @overload
    def __get__(self, part: None, owner: type[_Recorded]) -> _Answer[T]: ...
    @overload
    def __get__(self, part: _Recorded, owner: type[_Recorded]) -> T | None: ...
    def __get__(self, part: _Recorded | None, owner: type[_Recorded]) -> _Answer[T] | T | None:
        return self if part is None else _answer(part._node, self.key, self.kind)


class TapeValue(_Recorded):
    """A value as the tape recorded it (also what a recording answers: taperecord.py)."""

    @property
    def type_name(self) -> str:
        return str(self._node.get("type", ""))

    @property
    def optimized_out(self) -> bool:
        return bool(self._node.get("optimized_out", False))

    def as_int(self) -> int | None:
        return _answer(self._node, "int", int)

    def field(self, name: str) -> TapeValue | None:
        return _value_at(self._node, "fields", name)

    def fields(self) -> Sequence[tuple[str, TapeValue]]:
        out: list[tuple[str, TapeValue]] = []
        for name in self._node.get("field_list") or []:
            child = _value_at(self._node, "fields", name)
            if child is not None:
                out.append((name, child))
        return out

    def element(self, index: int) -> TapeValue | None:
        return _value_at(self._node, "elements", str(index))

    def enumerator(self) -> str | None:
        return _answer(self._node, "enumerator", str)


class TapeFrame(_Recorded):
    """A frame as the tape recorded it (also what a recording answers: taperecord.py)."""

    function = _Answer(str)
    file = _Answer(str)
    line = _Answer(int)
    module = _Answer(str)
    # the debugger's own number (a tape of before recorded none: the analysis' index)
    number = _Answer(int)

    @property
    def pc(self) -> int:
        return _answer(self._node, "pc", int) or 0

    @property
    def inlined(self) -> bool:
        return bool(self._node.get("inlined", False))

    @property
    def hidden(self) -> bool:
        return bool(self._node.get("hidden", False))

    def variable(self, name: str) -> TapeValue | None:
        return _value_at(self._node, "variables", name)

    def global_variable(self, name: str) -> TapeValue | None:
        return _value_at(self._node, "globals", name)


@dataclass
class _TapeThread:
    tid: int
    node: Json

    def frames(self, limit: int | None = None) -> list[TapeFrame]:
        nodes = [n for n in self.node.get("frames") or [] if isinstance(n, dict)]
        return [TapeFrame(n) for n in (nodes if limit is None else nodes[:limit])]


class TapeProcess(_Recorded):
    """A stop as a tape recorded it: the view's answers, without a debugger."""

    pid = _Answer(int)

    @property
    def arch(self) -> str:
        return str(self._node.get("arch", "x86_64"))

    @property
    def debugger(self) -> str:
        return f"tape of {self._node.get('debugger', '?')}"

    def signal(self) -> SignalInfo | None:
        s = self._node.get("signal")
        if not isinstance(s, dict):
            return None
        return SignalInfo(
            int(s["signo"]), str(s["name"]), s.get("code"), s.get("address"), str(s["source"])
        )

    def _thread(self, tid: int) -> _TapeThread | None:
        node = (self._node.get("threads") or {}).get(str(tid))
        return _TapeThread(tid, node) if isinstance(node, dict) else None

    def selected_thread(self) -> _TapeThread | None:
        tid = self._node.get("selected_thread")
        return self._thread(tid) if isinstance(tid, int) else None

    def threads(self) -> list[_TapeThread]:
        order = self._node.get("thread_order") or []
        return [t for t in (self._thread(tid) for tid in order) if t is not None]

    def modules(self) -> list[Module]:
        return [
            Module(str(m["path"]), int(m["start"]), int(m["end"]), m.get("base"))
            for m in self._node.get("modules") or []
        ]

    def read_memory(self, address: int, size: int) -> bytes | None:
        for a, n, data in self._node.get("memory") or []:
            if a == address and n == size:
                return None if data is None else bytes.fromhex(data)
        return None

    def registers(self) -> dict[str, int]:
        return dict(self._node.get("registers") or {})

    def stack_pointer(self) -> int | None:
        return _answer(self._node, "stack_pointer", int)

    def argv(self) -> list[str] | None:
        value = self._node.get("argv")
        return list(value) if isinstance(value, list) else None

    def caught_signals(self) -> int | None:
        return _answer(self._node, "caught_signals", int)

    def lookup_type_fields(self, type_name: str) -> list[tuple[str, str]] | None:
        value = (self._node.get("types") or {}).get(type_name)
        return None if value is None else [(str(a), str(b)) for a, b in value]

    def evaluate(self, expression: str) -> TapeValue | None:
        return _value_at(self._node, "evaluate", expression)


class _TapeRecords(_Recorded):
    count = _Answer(int)

    def __init__(self, path: str, node: Json | None) -> None:
        super().__init__(node or {})
        self.path = path
        self.problem: str | None = (
            self._node.get("problem")
            if node is not None
            else f"the collection {path} was not read when the tape was recorded"
        )

    def identity(self, n: int) -> RecordIdentity | None:
        got = (self._node.get("identities") or {}).get(str(n))
        if not isinstance(got, list) or len(got) != 3:
            return None
        return RecordIdentity(got[0], got[1], got[2])

    def close(self) -> None:
        pass


class TapeCollections:
    """The collection lookups a tape recorded."""

    def __init__(self, collections: Json) -> None:
        self._c = collections

    def __call__(self, path: str) -> Records:
        return _TapeRecords(path, self._c.get(path))


@dataclass(frozen=True)
class Tape:
    data: Json

    @property
    def full(self) -> bool:
        return bool(self.data.get("full", True))

    def process(self) -> TapeProcess:
        return TapeProcess(self.data["process"])

    def collections(self) -> TapeCollections:
        return TapeCollections(self.data.get("collections") or {})

    def diagnose(self) -> Diagnosis:
        """The diagnosis of the recorded stop, as `diagnose()` gives it on the live one."""
        return diagnose(self.process(), full=self.full, collections=self.collections())


def load(path: str | Path) -> Tape:
    """A tape file, checked: one InputError line naming the file and what was expected."""
    p = Path(path)
    where = str(p)
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):  # a FIFO or a device is never read
            raise InputError(where, "not a tape: not a regular file")
        with open(p, "rb") as f:
            raw = f.read(MAX_TAPE_BYTES + 1)
    except OSError as e:
        raise InputError(where, f"cannot read the tape: {e.strerror or e}") from None
    if len(raw) > MAX_TAPE_BYTES:
        raise InputError(where, f"not a tape: larger than {MAX_TAPE_BYTES // (1024 * 1024)} MiB")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(where, f"not a tape: not JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(where, f'not a tape: expected "format": "{FORMAT}"')
    if data.get("version") != VERSION:
        raise InputError(
            where,
            f"tape version {printable(str(data.get('version')))}: this spmi-dbg reads "
            f"version {VERSION}",
        )
    if not isinstance(data.get("process"), dict):
        raise InputError(where, 'not a tape: no "process" object')
    problem = _check(data["process"])
    if problem:
        raise InputError(where, f"bad tape: {problem}")
    return Tape(data)


def _check(process: Json) -> str | None:
    """The first part of a tape's process that is not of the recorded shape."""
    threads = process.get("threads")
    if not isinstance(threads, dict):
        return '"process.threads" is not an object'
    for tid, node in threads.items():
        if not tid.lstrip("-").isdigit() or not isinstance(node, dict):
            return f'"process.threads.{printable(tid)}" is not a thread'
        for i, f in enumerate(node.get("frames") or []):
            if not isinstance(f, dict) or not isinstance(f.get("pc", 0), int):
                return f'"process.threads.{printable(tid)}.frames[{i}]" is not a frame'
    sig = process.get("signal")
    if sig is not None and (
        not isinstance(sig, dict) or not isinstance(sig.get("signo"), int) or "name" not in sig
    ):
        return '"process.signal" is not a signal'
    for i, m in enumerate(process.get("modules") or []):
        if not isinstance(m, dict) or not all(isinstance(m.get(k), int) for k in ("start", "end")):
            return f'"process.modules[{i}]" is not a module'
    for i, r in enumerate(process.get("memory") or []):
        if not (isinstance(r, list) and len(r) == 3 and all(isinstance(x, int) for x in r[:2])):
            return f'"process.memory[{i}]" is not [address, size, hex]'
        if r[2] is not None:
            try:
                bytes.fromhex(r[2])
            except (TypeError, ValueError):
                return f'"process.memory[{i}]" bytes are not hex'
    return None


def dumps(tape: Json) -> str:
    return json.dumps(tape, indent=1, sort_keys=True) + "\n"
