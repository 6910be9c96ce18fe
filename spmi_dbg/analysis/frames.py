"""Frame names: normalisation, folding (docs/architecture.md "Decisions"), and lookups by SuperPMI
symbol."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spmi_dbg.analysis.view import Frame, Module, Value
from spmi_dbg.elf import nearest_dynamic_symbol

# Frames that are never the culprit: libc, the dynamic loader, signal trampolines.
_IGNORED_MODULES = re.compile(r"/(libc|libpthread|ld-linux[^/]*|libstdc\+\+|libgcc_s)[.-][^/]*$")
_IGNORED_FUNCTIONS = re.compile(
    r"^(__restore_rt|__GI_raise|raise|__GI_abort|abort|__pthread_kill\w*|pthread_kill\w*|__libc_\w+|"
    r"_start|__libc_start_main\w*|__libc_start_call_main|<signal handler "
    r"called>|__kernel_rt_sigreturn|"
    r"malloc_printerr|_int_free\w*|__libc_free|free|__libc_message\w*)$"
)
# LightWeightMap accessors are folded into their caller: the null map is reported separately.
LWM_FUNCTION = re.compile(r"^(?:Dense)?LightWeightMap(?:Base)?<(?P<args>.*)>::(?P<method>\w+)$")


def frame_ref(frame: object, index: int) -> str:
    """`frame N` as the debugger itself numbers frame `index` of the analysis' stack (gdb's `bt`
    #N, lldb's frame #N): a view frame or a FrameInfo that carries its debugger's `number` says it;
    an inline frame gdb hides at the stop pc (its block starts there) is part of gdb's frame 0."""
    if getattr(frame, "hidden", False):
        return "inlined in frame 0"
    number = getattr(frame, "number", None)
    return f"frame {index if number is None else number}"


@functools.lru_cache(maxsize=8192)  # the same few hundred names at every stop
def short_name(function: str | None) -> str:
    """`CompileResult::repCompileMethod(unsigned int*, ...) const` ->
    `CompileResult::repCompileMethod`; template arguments of the class are kept, parameter lists and
    return types dropped."""
    if not function:
        return "??"
    name = function.strip()
    # lldb 16 names a static (internal linkage) function "::InvokeNearDiffer(...)"
    if name.startswith("::"):
        name = name[2:]
    depth = 0
    for i, ch in enumerate(name):  # cut the parameter list: the first '(' outside template brackets
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0 and not name.startswith("("):
            name = name[:i]
            break
    # drop a leading return type ("int main" from lldb's display names never happens, but be safe)
    if " " in name and "<" not in name.split(" ", 1)[0]:
        head, rest = name.split(" ", 1)
        if "::" not in head and "::" in rest:
            name = rest
    return name.strip()


def is_ignored(frame: Frame) -> bool:
    name = short_name(frame.function)
    if _IGNORED_FUNCTIONS.match(name):
        return True
    return bool(
        frame.module and _IGNORED_MODULES.search(frame.module) and not LWM_FUNCTION.match(name)
    )


def is_lwm(frame: Frame) -> bool:
    return bool(LWM_FUNCTION.match(short_name(frame.function)))


@dataclass(frozen=True)
class FoldedFrame:
    index: int  # position in the full list
    name: str
    inlined: bool


def fold(frames: Sequence[Frame]) -> list[FoldedFrame]:
    """The frames that identify a crash: ignored frames dropped, LightWeightMap accessors folded
    into their caller, consecutive duplicates (inline chains of the same function) merged."""
    out: list[FoldedFrame] = []
    for i, f in enumerate(frames):
        if is_ignored(f) or is_lwm(f):
            continue
        name = short_name(f.function)
        if out and out[-1].name == name:
            continue
        out.append(FoldedFrame(i, name, f.inlined))
    return out


def up_to_main(names: list[str]) -> list[str]:
    """The frames up to and including `main`: what lies beyond it is the C runtime's start-up, which
    debuggers unwind differently (lldb 16 over qemu's stub shows an unnamed frame there), so it
    never identifies a crash."""
    return names[: names.index("main") + 1] if "main" in names else names


def first_folded(frames: Sequence[Frame]) -> str | None:
    """The first frame `fold` would keep (the per-stop note of where a passed signal happened)."""
    for f in frames:
        if not is_ignored(f) and not is_lwm(f):
            return short_name(f.function)
    return None


def find(frames: Sequence[Frame], prefix: str) -> tuple[int, Frame] | None:
    """First frame whose short name is `prefix` or starts with `prefix` followed by '(' / '<'."""
    for i, f in enumerate(frames):
        name = short_name(f.function)
        if name == prefix or name.startswith(prefix + "<"):
            return i, f
    return None


def class_of(function: str | None) -> str | None:
    """`CompileResult::repCompileMethod` -> `CompileResult`."""
    name = short_name(function)
    depth = 0
    cut = -1
    for i in range(len(name) - 1):
        ch = name[i]
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == ":" and name[i + 1] == ":" and depth == 0:
            cut = i
    return name[:cut] if cut > 0 else None


@dataclass(frozen=True)
class NamedFrame:
    """A frame that has no symbol, named `module+0xoffset` (and the nearest `.dynsym` function,
    where the module has one): stable across runs and load addresses, so signatures and buckets can
    use it."""

    frame: Frame
    name: str

    @property
    def function(self) -> str:
        return self.name

    @property
    def pc(self) -> int:
        return self.frame.pc

    @property
    def file(self) -> str | None:
        return self.frame.file

    @property
    def line(self) -> int | None:
        return self.frame.line

    @property
    def module(self) -> str | None:
        return self.frame.module

    @property
    def inlined(self) -> bool:
        return self.frame.inlined

    def variable(self, name: str) -> Value | None:
        return self.frame.variable(name)

    def global_variable(self, name: str) -> Value | None:
        return self.frame.global_variable(name)


def unnamed(frame: Frame) -> bool:
    """No symbol: gdb says "??" (or nothing); lldb 16 makes one up per run
    ("___lldb_unnamed_symbol96")."""
    name = short_name(frame.function)
    return name == "??" or name.startswith("___lldb_unnamed_symbol")


def name_unnamed(frames: Sequence[Frame], modules: Callable[[], list[Module]]) -> list[Frame]:
    """`frames` with every frame that has no symbol named by its module and offset (`modules` is
    called once, and only when some frame needs it)."""
    if not any(unnamed(f) for f in frames):
        return list(frames)
    mods = modules()
    out: list[Frame] = []
    for f in frames:
        mod = next((m for m in mods if m.contains(f.pc)), None) if unnamed(f) else None
        if mod is None or mod.base is None:
            out.append(f)
            continue
        offset = f.pc - mod.base
        near = nearest_dynamic_symbol(mod.path, offset)
        name = f"{os.path.basename(mod.path)}+{offset:#x}" + (
            f" ({near[0]}+{near[1]:#x})" if near else ""
        )
        out.append(NamedFrame(f, name))
    return out
