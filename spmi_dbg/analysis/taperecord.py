"""Recording a tape (analysis/tape.py is the format and its replay): `RecordingProcess` wraps the
view and writes down every answer the process, its threads, frames and values give, under the
question that got it (a value by the path it was reached by: frame, variable, member, element);
`RecordingCollections` does the same for the collection the diagnosis opens."""

from __future__ import annotations

from typing import Any

from spmi_dbg import __version__
from spmi_dbg.analysis.diagnosis import Diagnosis, diagnose
from spmi_dbg.analysis.mcnumber import RecordIdentity
from spmi_dbg.analysis.records import CollectionRecords, Records
from spmi_dbg.analysis.tape import FORMAT, VERSION, Json, TapeFrame, TapeValue
from spmi_dbg.analysis.view import Module, Process, SignalInfo, Thread, Value


class _RecValue(TapeValue):
    """`value`, its answers written into `node` as they are given; it answers from the node, as
    the tape's replay (TapeValue) will."""

    def __init__(self, value: Value, node: Json) -> None:
        super().__init__(node)
        self._v = value
        node.setdefault("type", value.type_name)
        node.setdefault("optimized_out", bool(value.optimized_out))

    def as_int(self) -> int | None:
        got = self._v.as_int()
        self._node["int"] = got
        return got

    def field(self, name: str) -> _RecValue | None:
        return _recorded(self._node, "fields", name, self._v.field(name))

    def fields(self) -> list[tuple[str, _RecValue]]:
        got = list(self._v.fields())
        self._node["field_list"] = [name for name, _ in got]
        out: list[tuple[str, _RecValue]] = []
        for name, child in got:
            rec = _recorded(self._node, "fields", name, child)
            if rec is not None:
                out.append((name, rec))
        return out

    def element(self, index: int) -> _RecValue | None:
        return _recorded(self._node, "elements", str(index), self._v.element(index))

    def enumerator(self) -> str | None:
        got = self._v.enumerator()
        self._node["enumerator"] = got
        return got


def _recorded(node: Json, table: str, key: str, got: Value | None) -> _RecValue | None:
    """`got` (a field or element of a value, a variable of a frame, an expression's value)
    recorded in `node`'s `table` under `key`: None when there is none, else a new node, or the one
    an earlier question about it made."""
    values = node.setdefault(table, {})
    if got is None:
        values[key] = None
        return None
    child = values.get(key)
    if child is None:
        child = values[key] = {}
    return _RecValue(got, child)


class _RecFrame(TapeFrame):
    """`frame`, its answers written into `node` when it is first seen; it answers from the node,
    as the tape's replay (TapeFrame) will."""

    def __init__(self, frame: Any, node: Json) -> None:
        super().__init__(node)
        self._f = frame
        node.setdefault("function", frame.function)
        node.setdefault("pc", frame.pc)
        node.setdefault("file", frame.file)
        node.setdefault("line", frame.line)
        node.setdefault("module", frame.module)
        node.setdefault("inlined", bool(frame.inlined))
        # the debugger's own frame number and whether it shows the frame (frames.frame_ref)
        node.setdefault("number", getattr(frame, "number", None))
        node.setdefault("hidden", bool(getattr(frame, "hidden", False)))

    def variable(self, name: str) -> _RecValue | None:
        return _recorded(self._node, "variables", name, self._f.variable(name))

    def global_variable(self, name: str) -> _RecValue | None:
        return _recorded(self._node, "globals", name, self._f.global_variable(name))


class _RecThread:
    def __init__(self, thread: Thread, node: Json) -> None:
        self._t = thread
        self._node = node
        node.setdefault("frames", [])
        node.setdefault("complete", False)

    @property
    def tid(self) -> int:
        return int(self._t.tid)

    def frames(self, limit: int | None = None) -> list[_RecFrame]:
        got = list(self._t.frames(limit))
        nodes: list[Json] = self._node["frames"]
        while len(nodes) < len(got):
            nodes.append({})
        if limit is None or len(got) < limit:
            self._node["complete"] = True
        return [_RecFrame(f, nodes[i]) for i, f in enumerate(got)]


def _signal_json(sig: SignalInfo | None) -> Json | None:
    if sig is None:
        return None
    return {
        "signo": sig.signo,
        "name": sig.name,
        "code": sig.code,
        "address": sig.address,
        "source": sig.source,
    }


def _module_json(m: Module) -> Json:
    return {"path": m.path, "start": m.start, "end": m.end, "base": m.base}


class RecordingProcess:
    """The view `process`, answering as it does and writing each answer into `self.tape`."""

    def __init__(self, process: Process) -> None:
        self._p = process
        self.tape: Json = {
            "arch": process.arch,
            "pid": process.pid,
            "debugger": process.debugger,
            "threads": {},
        }

    @property
    def arch(self) -> str:
        return str(self.tape["arch"])

    @property
    def pid(self) -> int | None:
        value: int | None = self.tape["pid"]
        return value

    @property
    def debugger(self) -> str:
        return str(self.tape["debugger"])

    def _thread(self, thread: Thread | None) -> _RecThread | None:
        if thread is None:
            return None
        node = self.tape["threads"].setdefault(str(thread.tid), {})
        return _RecThread(thread, node)

    def signal(self) -> SignalInfo | None:
        got = self._p.signal()
        self.tape["signal"] = _signal_json(got)
        return got

    def selected_thread(self) -> _RecThread | None:
        got = self._p.selected_thread()
        self.tape["selected_thread"] = None if got is None else got.tid
        return self._thread(got)

    def threads(self) -> list[_RecThread]:
        got = list(self._p.threads())
        self.tape["thread_order"] = [t.tid for t in got]
        return [t for t in (self._thread(t) for t in got) if t is not None]

    def modules(self) -> list[Module]:
        got = list(self._p.modules())
        self.tape["modules"] = [_module_json(m) for m in got]
        return got

    def read_memory(self, address: int, size: int) -> bytes | None:
        got = self._p.read_memory(address, size)
        reads = self.tape.setdefault("memory", [])
        reads.append([address, size, None if got is None else got.hex()])
        return got

    def registers(self) -> dict[str, int]:
        got = dict(self._p.registers())
        self.tape["registers"] = got
        return got

    def stack_pointer(self) -> int | None:
        got = self._p.stack_pointer()
        self.tape["stack_pointer"] = got
        return got

    def argv(self) -> list[str] | None:
        got = self._p.argv()
        self.tape["argv"] = None if got is None else list(got)
        return got

    def caught_signals(self) -> int | None:
        got = self._p.caught_signals()
        self.tape["caught_signals"] = got
        return got

    def lookup_type_fields(self, type_name: str) -> list[tuple[str, str]] | None:
        got = self._p.lookup_type_fields(type_name)
        types = self.tape.setdefault("types", {})
        types[type_name] = None if got is None else [list(pair) for pair in got]
        return got

    def evaluate(self, expression: str) -> _RecValue | None:
        return _recorded(self.tape, "evaluate", expression, self._p.evaluate(expression))


class _RecRecords:
    def __init__(self, path: str, node: Json) -> None:
        self._r = CollectionRecords(path)
        self._node = node
        self.path = path
        self.problem = self._r.problem
        node["count"] = self._r.count
        node.setdefault("identities", {})
        node["problem"] = self._r.problem

    @property
    def count(self) -> int | None:
        return self._r.count

    def identity(self, n: int) -> RecordIdentity | None:
        got = self._r.identity(n)
        self.problem = self._r.problem
        self._node["identities"][str(n)] = (
            None if got is None else [got.il_size, got.name, got.name_note]
        )
        self._node["problem"] = self._r.problem
        return got

    def close(self) -> None:
        self._r.close()


class RecordingCollections:
    """Opens the collection as the diagnosis does (records.py) and writes down what it answers."""

    def __init__(self) -> None:
        self.tape: Json = {}

    def __call__(self, path: str) -> Records:
        return _RecRecords(path, self.tape.setdefault(path, {}))


def record(process: Process, *, full: bool = True) -> tuple[Diagnosis, Json]:
    """The diagnosis of `process` and the tape of what it read (see `tape_json`)."""
    rec = RecordingProcess(process)
    collections = RecordingCollections()
    d = diagnose(rec, full=full, collections=collections)
    return d, tape_json(rec.tape, collections.tape, full=full)


def tape_json(process: Json, collections: Json, *, full: bool) -> Json:
    return {
        "format": FORMAT,
        "version": VERSION,
        "recorded_by": f"spmi-dbg {__version__}",
        "full": full,
        "process": process,
        "collections": collections,
    }
