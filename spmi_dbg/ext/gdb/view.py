"""The analysis view (spmi_dbg.analysis.view) over gdb's Python API. Runs inside gdb only."""

from __future__ import annotations

import re
import shlex
from typing import Any

import gdb

from spmi_dbg import elf
from spmi_dbg.analysis import procfs
from spmi_dbg.analysis.view import Module, SignalInfo, resolve_path, signal_name


class GdbValue:
    def __init__(self, value: Any) -> None:
        self._v = value
        self._type_name: str | None = None
        self._deref: Any = None

    @property
    def type_name(self) -> str:
        if self._type_name is None:  # asked at every step of a member path
            try:
                self._type_name = str(self._v.type.strip_typedefs())
            except gdb.error:
                self._type_name = "?"
        return self._type_name

    @property
    def optimized_out(self) -> bool:
        return bool(self._v.is_optimized_out)

    def as_int(self) -> int | None:
        if self._v.is_optimized_out:
            return None
        try:
            return int(self._v)
        except (gdb.error, gdb.MemoryError, TypeError, ValueError):
            return None

    def _struct(self) -> Any:
        if self._deref is None:  # a member path reads several fields of one value
            v = self._v
            pointer = v.type.strip_typedefs().code == gdb.TYPE_CODE_PTR
            self._deref = v.dereference() if pointer else v
        return self._deref

    def field(self, name: str) -> GdbValue | None:
        try:
            return GdbValue(self._struct()[name])
        except (gdb.error, gdb.MemoryError, KeyError, TypeError):
            return None

    def fields(self) -> list[tuple[str, GdbValue]]:
        try:
            s = self._struct()
            return [
                (f.name, GdbValue(s[f.name]))
                for f in s.type.strip_typedefs().fields()
                if f.name and not f.is_base_class
            ]
        except (gdb.error, gdb.MemoryError):
            return []

    def element(self, index: int) -> GdbValue | None:
        try:
            return GdbValue(self._v[index])
        except (gdb.error, gdb.MemoryError, TypeError):
            return None

    def enumerator(self) -> str | None:
        try:
            t = self._v.type.strip_typedefs()
            if t.code != gdb.TYPE_CODE_ENUM or self._v.is_optimized_out:
                return None
            n = int(self._v)
            return next((str(f.name) for f in t.fields() if f.enumval == n), None)
        except (gdb.error, gdb.MemoryError, TypeError, ValueError):
            return None


class GdbFrame:
    """A gdb frame, or an inline frame gdb hides at the stop pc (`block`, read through the real
    frame)."""

    def __init__(self, frame: Any, block: Any | None = None) -> None:
        self._f = frame
        self._block = block
        self._function: tuple[str | None] | None = None

    @property
    def function(self) -> str | None:
        if self._function is None:  # asked several times per frame by the analysis
            self._function = (self._read_function(),)
        return self._function[0]

    def _read_function(self) -> str | None:
        if self._block is not None:
            return str(self._block.function.print_name)
        try:
            fn = self._f.function()
            return str(fn.print_name) if fn is not None else self._f.name()
        except gdb.error:
            return None

    @property
    def pc(self) -> int:
        return int(self._f.pc())

    @property
    def file(self) -> str | None:
        sal = self._f.find_sal()
        return sal.symtab.filename if sal.symtab is not None else None

    @property
    def line(self) -> int | None:
        sal = self._f.find_sal()
        return int(sal.line) if sal.line else None

    @property
    def module(self) -> str | None:
        name = gdb.solib_name(self.pc)
        if name:
            return resolve_path(str(name))
        filename = gdb.current_progspace().filename
        return resolve_path(filename) if filename else None

    @property
    def inlined(self) -> bool:
        return self._block is not None or self._f.type() == gdb.INLINE_FRAME

    @property
    def hidden(self) -> bool:
        """An inline frame gdb does not show (its block starts at the stop pc): part of frame 0."""
        return self._block is not None

    @property
    def number(self) -> int | None:
        """gdb's own number for it (bt's #N); None for a hidden one."""
        if self._block is not None:
            return None
        try:
            return int(self._f.level())
        except (gdb.error, AttributeError):  # gdb before 11 has no Frame.level()
            return None

    def global_variable(self, name: str) -> GdbValue | None:
        try:
            block = self._block if self._block is not None else self._f.block()
            # the frame's own compilation unit and objfile first
            sym = gdb.lookup_symbol(name, block)[0]
            if sym is None or not sym.is_variable:
                return None
            return GdbValue(sym.value(self._f))
        except (gdb.error, RuntimeError, ValueError):
            return None

    def variable(self, name: str) -> GdbValue | None:
        """An argument or local of this frame: its blocks are searched up to the function's, never
        the globals (Frame.read_var(name) looks a name the frame does not have up in every module's
        symbols: seconds per name in a Checked JIT's debug information; lldb's FindVariable does not
        either)."""
        try:
            block = self._block if self._block is not None else self._f.block()
            while block is not None and not (block.is_global or block.is_static):
                sym = next(
                    (s for s in block if s.name == name and (s.is_argument or s.is_variable)), None
                )
                if sym is not None:
                    return GdbValue(self._f.read_var(sym, block))
                if block.function is not None:
                    return None
                block = block.superblock
            return None
        except (gdb.error, ValueError, RuntimeError):
            return None


def _program_module() -> Module | None:
    """The executable itself (not in `info sharedlibrary`): its .text range and load bias from `info
    files` (the run-time entry point minus the ELF's), which also holds for a core file and a remote
    target."""
    path = gdb.current_progspace().filename
    if not path:
        return None
    try:
        text = gdb.execute("info files", to_string=True)
    except gdb.error:
        return None
    entry = re.search(r"Entry point: (0x[0-9a-f]+)", text)
    section = re.search(r"^\s*(0x[0-9a-f]+) - (0x[0-9a-f]+) is \.text$", text, re.M)
    if section is None:
        return None
    facts = elf.read(path)
    base = (
        int(entry.group(1), 16) - facts.entry if entry is not None and facts is not None else None
    )
    return Module(resolve_path(path), int(section.group(1), 16), int(section.group(2), 16), base)


def _hidden_inline_frames(frame: Any) -> list[GdbFrame]:
    """Inline frames gdb hides because their block starts exactly at the stop pc
    (docs/debugger-notes.md): the chain of inlined function blocks around the pc, innermost first,
    down to the function frame 0 shows."""
    try:
        block = gdb.block_for_pc(frame.pc())
    except RuntimeError:
        return []
    shown = frame.function()
    hidden: list[GdbFrame] = []
    while block is not None and block.function is None:
        block = block.superblock
    while block is not None:
        fn = block.function
        if fn is not None:
            if shown is not None and fn.print_name == shown.print_name:
                break
            hidden.append(GdbFrame(frame, block))
        block = block.superblock
        while block is not None and block.function is None:
            block = block.superblock
    return hidden if shown is not None and len(hidden) < 16 else []


class GdbThread:
    def __init__(self, thread: Any) -> None:
        self._t = thread

    @property
    def tid(self) -> int:
        return int(self._t.ptid[1] or self._t.num)

    def frames(self, limit: int | None = None) -> list[GdbFrame] | list[ReadFrame]:
        limit = limit or 100000
        prev = gdb.selected_thread()
        if prev is not None and prev.global_num == self._t.global_num:
            return _frames(limit)  # the stop's own thread: no switching (every stop passed on)
        self._t.switch()
        try:
            # read while this thread is the selected one
            return [ReadFrame(f) for f in _frames(limit)]
        finally:
            if prev is not None and prev.is_valid():
                prev.switch()


def _frames(limit: int) -> list[GdbFrame]:
    """The selected thread's frames, innermost first, at most `limit` (never unwinding past it)."""
    f = gdb.newest_frame()
    out = _hidden_inline_frames(f)[:limit]
    while f is not None and len(out) < limit:
        out.append(GdbFrame(f))
        if len(out) < limit:
            f = f.older()
    return out


class ReadFrame:
    """A frame of a thread that is not the selected one, read at once: gdb finds a gdb.Frame again
    only in the selected thread ("Frame is invalid" once another is). No variables (none are asked
    of another thread's frames: a hang's stacks, spmi_dbg.analysis.stacks)."""

    def __init__(self, frame: GdbFrame) -> None:
        self.function = frame.function
        self.pc = frame.pc
        self.file = frame.file
        self.line = frame.line
        self.module = frame.module
        self.inlined = frame.inlined
        self.hidden = frame.hidden
        self.number = frame.number

    def variable(self, name: str) -> None:
        return None

    def global_variable(self, name: str) -> None:
        return None


class GdbProcess:
    """One stop's view: made anew at each stop, so what it caches (architecture, SigCgt) is of that
    stop."""

    def __init__(self) -> None:
        self._inferior = gdb.selected_inferior()
        self._arch: str | None = None
        self._caught: tuple[int | None] | None = None

    @property
    def arch(self) -> str:
        if self._arch is None:
            try:
                name = self._inferior.architecture().name()
            except (gdb.error, AttributeError):  # Inferior.architecture is gdb 12+; no process yet
                try:
                    name = gdb.newest_frame().architecture().name()
                except gdb.error:
                    return "unknown"
            self._arch = "aarch64" if "aarch64" in name else "x86_64" if "x86-64" in name else name
        return self._arch

    @property
    def pid(self) -> int | None:
        """The process's pid on this machine, for /proc: None for a core file or a remote target
        (qemu's gdbstub calls its guest process 1)."""
        if not self._native():
            return None
        return int(self._inferior.pid) or None

    def _native(self) -> bool:
        connection = getattr(self._inferior, "connection", None)  # gdb 11+
        return connection is None or connection.type == "native"

    @property
    def debugger(self) -> str:
        return f"gdb {gdb.VERSION.split()[0]}"

    def signal(self) -> SignalInfo | None:
        try:
            si = gdb.parse_and_eval("$_siginfo")
            signo = int(si["si_signo"])
        except (gdb.error, RuntimeError):
            return None
        code = None
        addr = None
        try:
            code = int(si["si_code"])
            if signo in (4, 7, 8, 11):
                addr = int(si["_sifields"]["_sigfault"]["si_addr"])
        except (gdb.error, RuntimeError):
            pass
        return SignalInfo(signo, signal_name(signo), code, addr, "$_siginfo")

    def selected_thread(self) -> GdbThread | None:
        t = gdb.selected_thread()
        return GdbThread(t) if t is not None else None

    def threads(self) -> list[GdbThread]:
        return [GdbThread(t) for t in self._inferior.threads()]

    def modules(self) -> list[Module]:
        out: list[Module] = []
        program = _program_module()
        if program is not None:
            out.append(program)
        try:
            text = gdb.execute("info sharedlibrary", to_string=True)
        except gdb.error:
            return out
        for m in re.finditer(
            r"^(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+\S+\s+(?:\(\*\)\s+)?(/\S+)$", text, re.M
        ):
            path, start = m.group(3), int(m.group(1), 16)
            # gdb's From is where .text was loaded: the bias is that minus its ELF address
            facts = elf.read(path)
            base = (
                start - facts.text_address
                if facts is not None and facts.text_address is not None
                else None
            )
            out.append(Module(path, start, int(m.group(2), 16), base))
        return out

    def read_memory(self, address: int, size: int) -> bytes | None:
        try:
            return bytes(self._inferior.read_memory(address, size))
        except (gdb.error, gdb.MemoryError, ValueError):
            return None

    def registers(self) -> dict[str, int]:
        names = (
            [f"x{i}" for i in range(31)] + ["sp", "pc"]
            if self.arch == "aarch64"
            else [
                "rax",
                "rbx",
                "rcx",
                "rdx",
                "rsi",
                "rdi",
                "rbp",
                "rsp",
                "r8",
                "r9",
                "r10",
                "r11",
                "r12",
                "r13",
                "r14",
                "r15",
                "rip",
            ]
        )
        out: dict[str, int] = {}
        try:
            frame = gdb.newest_frame()
        except gdb.error:
            return out
        for n in names:
            try:
                out[n] = int(frame.read_register(n)) & 0xFFFFFFFFFFFFFFFF
            except (gdb.error, ValueError):
                pass
        return out

    def stack_pointer(self) -> int | None:
        try:
            return int(gdb.newest_frame().read_register("sp")) & 0xFFFFFFFFFFFFFFFF
        except (gdb.error, ValueError):
            return None

    def argv(self) -> list[str] | None:
        live = procfs.cmdline_cached(self.pid)
        if live:
            return live
        filename = gdb.current_progspace().filename
        args = gdb.parameter("args")
        if filename:
            return [filename, *shlex.split(str(args or ""))]
        return None

    def caught_signals(self) -> int | None:
        if self._caught is None:
            self._caught = (procfs.caught_signals(self.pid),)
        return self._caught[0]

    def evaluate(self, expression: str) -> GdbValue | None:
        try:
            return GdbValue(gdb.parse_and_eval(expression))
        except (gdb.error, RuntimeError):
            return None

    def lookup_type_fields(self, type_name: str) -> list[tuple[str, str]] | None:
        try:
            t = gdb.lookup_type(type_name)
        except gdb.error:
            return None
        return [
            (f.name, str(f.type.strip_typedefs()))
            for f in t.fields()
            if f.name and not f.is_base_class
        ]
