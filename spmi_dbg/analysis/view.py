"""The read-only view of a stopped process that diagnosis is written against.

`spmi_dbg/ext/gdb` and `spmi_dbg/ext/lldb` implement these protocols over gdb.Value/gdb.Frame and
SBValue/SBFrame; tests can implement them over recorded data. Nothing here imports a debugger.
Every accessor returns None for what the debugger cannot provide (optimized out, no debug info,
not available over a remote stub) instead of raising.
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@runtime_checkable
class Value(Protocol):
    @property
    # e.g. "LightWeightMap<unsigned int, Agnostic_CompileMethodResults> *"
    def type_name(self) -> str: ...

    @property
    def optimized_out(self) -> bool: ...

    def as_int(self) -> int | None: ...  # integer or pointer value; None when unavailable

    # member of a struct, or of the struct a pointer points to
    def field(self, name: str) -> Value | None: ...

    # all members (of the pointee for pointers)
    def fields(self) -> Sequence[tuple[str, Value]]: ...

    def element(self, index: int) -> Value | None: ...  # element of an array, or pointer[index]

    def enumerator(self) -> str | None: ...  # the enumerator's name, for a value of an enum type


class Frame(Protocol):
    @property
    def function(self) -> str | None: ...  # demangled, e.g. "CompileResult::repCompileMethod(...)"

    @property
    def pc(self) -> int: ...

    @property
    def file(self) -> str | None: ...

    @property
    def line(self) -> int | None: ...

    @property
    def module(self) -> str | None: ...  # path of the object file the pc is in

    @property
    def inlined(self) -> bool: ...

    def variable(self, name: str) -> Value | None: ...  # argument or local visible in this frame

    # a global as this frame's module sees it
    def global_variable(self, name: str) -> Value | None: ...


def signal_name(signo: int) -> str:
    """`SIGSEGV` for 11 (Linux numbering, as the debuggers report it)."""
    try:
        return signal.Signals(signo).name
    except ValueError:
        return f"SIG{signo}"


@functools.lru_cache(maxsize=256)
def resolve_path(path: str) -> str:
    """realpath, once per path: module paths repeat at every stop."""
    return os.path.realpath(path)


@dataclass(frozen=True)
class SignalInfo:
    signo: int
    name: str  # "SIGSEGV"
    code: int | None  # si_code
    address: int | None  # si_addr for faults
    source: str  # how it was obtained, e.g. "$_siginfo", "SBThread stop reason", "core file note"


@dataclass(frozen=True)
class Module:
    path: str
    start: int  # the loaded range the debugger reports for it (its text, or all its sections)
    end: int
    base: int | None = None  # the load bias: a run-time address minus the file's own (ELF) address

    def contains(self, address: int) -> bool:
        return self.start <= address < self.end


class Thread(Protocol):
    @property
    def tid(self) -> int: ...

    # innermost first, inlined included
    def frames(self, limit: int | None = None) -> Sequence[Frame]: ...


class Process(Protocol):
    @property
    def arch(self) -> str: ...  # "x86_64" or "aarch64"

    @property
    def pid(self) -> int | None: ...

    @property
    def debugger(self) -> str: ...  # "gdb 13.1", "lldb 16.0.6"

    def signal(self) -> SignalInfo | None: ...

    def selected_thread(self) -> Thread | None: ...

    def threads(self) -> Sequence[Thread]: ...

    def modules(self) -> list[Module]: ...

    def read_memory(self, address: int, size: int) -> bytes | None: ...

    def registers(self) -> dict[str, int]: ...  # of the selected thread's innermost frame

    def stack_pointer(self) -> int | None: ...  # of the selected thread's innermost frame (cheap)

    def argv(self) -> list[str] | None: ...  # the inferior's command line

    def caught_signals(self) -> int | None: ...  # SigCgt mask from /proc/PID/status, when readable

    # (member, type) from debug info
    def lookup_type_fields(self, type_name: str) -> list[tuple[str, str]] | None: ...

    # a C++ expression in the selected frame
    def evaluate(self, expression: str) -> Value | None: ...


class WithStopSignal:
    """A view whose stop has no readable siginfo (qemu's gdbstub gives none;
    docs/debugger-notes.md): the signal as the debugger reported the stop. Everything else is the
    wrapped view's."""

    def __init__(self, process: Process, signo: int) -> None:
        self._process = process
        self._signo = signo

    def __getattr__(self, name: str) -> object:
        return getattr(self._process, name)

    def signal(self) -> SignalInfo | None:
        found = self._process.signal()
        if found is not None:
            return found
        return SignalInfo(
            self._signo,
            signal_name(self._signo),
            None,
            None,
            "the debugger's stop reason (this target gives no siginfo)",
        )


def with_stop_signal(process: Process, signal_name_or_number: str | int | None) -> Process:
    """`process`, or a view of it that knows the stop's signal when the target cannot tell it."""
    if signal_name_or_number is None:
        return process
    text = str(signal_name_or_number)
    signo = (
        int(text)
        if text.isdigit()
        else int(getattr(signal, text.upper(), 0) or getattr(signal, "SIG" + text.upper(), 0))
    )
    if not signo:
        return process
    view: Process = WithStopSignal(process, signo)  # type: ignore[assignment]
    return view
