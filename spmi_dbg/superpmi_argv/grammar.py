"""superpmi's command-line grammar as data, one table per era (docs/superpmi-conventions.md 1).

Each era's `CommandLine::Parse` tries a switch against its names in a fixed order and takes the
first that matches; the table below is that order. How a switch matches is one of three kinds:

- `prefix`: what was typed (without the `-`) is a case-insensitive prefix of the name
  (`_strnicmp(typed, name, strlen(typed))`: `-co` is `-compile`, `-f` is `-failingMCList`);
- `fixed`: the first N characters compare, so the whole name must be typed and anything may follow
  (`_strnicmp(typed, "target", 6)`: `-targetX` is `-target`, `-tar` is no switch);
- `exact`: the whole name, any case (`_stricmp`: `-skipCleanup`).

Case is folded the C library's way, ASCII only. The facts come from the eras' sources, named in
SOURCES; the 3.1 table is checked against the real 3.1.23 binary's transcripts 16a-16o."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

Match = Literal["prefix", "fixed", "exact"]
# what follows a switch: nothing; one value; two values (-stride); an optional all-digit worker
# count (-parallel); an optional `force` prefix and a key=value (-jitoption)
Args = Literal["none", "one", "two", "count", "setting"]


@dataclass(frozen=True)
class Switch:
    name: str  # the full name as superpmi's source spells it, without the `-`
    match: Match = "prefix"
    args: Args = "none"
    fixed: int = 0  # `fixed`: how many characters compare
    # what the switch is to the tool: a file superpmi writes (truncated on open), the JIT, ...
    role: str = ""

    def matches(self, typed: str) -> bool:
        """Whether `typed` (the argument without its leading `-`, never empty) selects this
        switch."""
        t, n = ascii_lower(typed), ascii_lower(self.name)
        if self.match == "exact":
            return t == n
        if self.match == "fixed":
            return len(t) >= self.fixed and t[: self.fixed] == n[: self.fixed]
        return n.startswith(t)


def ascii_lower(s: str) -> str:
    """tolower() of the C locale: ASCII letters only."""
    return s.translate(_LOWER)


_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}

# Roles the tool acts on (superpmi_argv.edit): the user's output files, the JIT and the input, and
# the switches the tool replaces with its own.
OUTPUT_FILE = "output-file"  # a file superpmi opens for writing (truncated)
OUTPUT_PREFIX = "output-prefix"  # -reproName: superpmi writes <prefix>-<N>.mc
JIT = "jit"
INPUT = "input"
COMPILE = "compile"
PARALLEL = "parallel"
STRIDE = "stride"
VERBOSITY = "verbosity"
HELP = "help"
STATS = "stats"  # -emitMethodStats: superpmi writes <input>.stats beside the collection
SETTING = "setting"


@dataclass(frozen=True)
class Grammar:
    era: str  # "3.1" or "today"
    title: str  # as said to the user
    switches: tuple[Switch, ...]
    # file suffixes of positional arguments (compared without case on the text after the last dot)
    jit_suffix: str = ".so"
    input_suffixes: tuple[str, ...] = (".mc", ".mch", ".mct")
    # a third JIT: 3.1 takes it as JIT2 (the last wins), today's refuses ("Too many JITs
    # specified.")
    third_jit_refused: bool = False
    # `-jitoption key#value` as well as key=value
    setting_separators: str = "="
    # -target values accepted (compared without case); the refusal's words
    targets: tuple[str, ...] = ()
    target_refusal: str = ""
    # 3.1: the values accepted depend on the host (None: every host takes `targets`)
    targets_by_host: dict[str, tuple[str, ...]] | None = None
    # no JIT named: today's looks beside superpmi for libclrjit.so (when argv[0] has a directory)
    default_jit: bool = False
    # -parallel's children receive the user's -verbosity after their own `-v ewmin` (so it wins)
    children_get_verbosity: bool = False

    def lookup(self, typed: str) -> Switch | None:
        """The switch superpmi takes `typed` for: the first in order that matches."""
        if not typed:
            return None
        return next((s for s in self.switches if s.matches(typed)), None)

    def extended(self, extra: tuple[Switch, ...]) -> Grammar:
        """This grammar with a build's own switches, tried after the era's."""
        return dataclasses.replace(self, switches=(*self.switches, *extra)) if extra else self


def _s(
    name: str, args: Args = "none", role: str = "", match: Match = "prefix", fixed: int = 0
) -> Switch:
    return Switch(name, match, args, fixed, role)


# The first and the last switches, the same in both eras.
_FIRST = (
    _s("help", role=HELP),  # also `-?`: see parse.py
    _s("load", "one", INPUT),
    _s("jit", "one", JIT),
    _s("reproName", "one", OUTPUT_PREFIX),
    _s("failingMCList", "one", OUTPUT_FILE),
)
_LAST = (
    _s("stride", "two", STRIDE),
    _s("jitoption", "setting", SETTING),
    _s("jit2option", "setting", SETTING),
)
# Two runs of switches between them, the same and in the same order in both eras (today's has
# -details between the two).
_LOGS = (
    _s("verbosity", "one", VERBOSITY),
    _s("writeLogFile", "one", OUTPUT_FILE),
    _s("emitMethodStats", "one", STATS),
)
_DIFFS = (
    _s("applyDiff"),
    _s("compile", "one", COMPILE),
    _s("coredistools"),
    _s("matchHash", "one"),
)

# dotnet/coreclr v3.1.23 (0dee78f90fc80c0fa4390ac1ba519c679bd503a4),
# src/ToolBox/superpmi/superpmi/commandline.cpp, CommandLine::Parse, in its order (transcripts
# 16a-16o of the real binary).
ERA_31 = Grammar(
    era="3.1",
    title="superpmi 3.1",
    switches=(
        *_FIRST,
        _s("diffMCList", "one", OUTPUT_FILE, "fixed", 10),
        _s("target", "one", "", "fixed", 6),
        _s("boe", match="fixed", fixed=3),
        _s("boa", match="fixed", fixed=3),
        *_LOGS,
        *_DIFFS,
        _s("parallel", "count", PARALLEL),
        _s("skipCleanup", match="exact"),
        *_LAST,
    ),
    # by the host superpmi was built for: x64 takes arm64 only, x86 arm only, others none
    targets_by_host={"x64": ("arm64",), "x86": ("arm",)},
    target_refusal="Illegal target architecture specified with -target (only {target} is supported "
    "on {host} host).",
)

# dotnet/runtime main, src/coreclr/tools/superpmi/superpmi/commandline.cpp, CommandLine::Parse,
# in its order (read at filipnavara/runtime@c659a8bb48140ce161dd3890fd2aa4d06f2fbfac, a mirror of
# main with -details, -streaming, -repeatCount and the default JIT; no -diffsInfo or
# -metricsSummary, removed in dotnet/runtime#92824).
ERA_TODAY = Grammar(
    era="today",
    title="today's superpmi",
    switches=(
        *_FIRST,
        _s("target", "one", "", "fixed", 6),
        _s("boe", match="fixed", fixed=3),
        _s("boa", match="fixed", fixed=3),
        _s("box", match="fixed", fixed=3),
        _s("ignoreStoredConfig", match="fixed", fixed=18),
        *_LOGS,
        _s("details", "one", OUTPUT_FILE),
        *_DIFFS,
        _s("streaming", "one"),
        _s("parallel", "count", PARALLEL),
        _s("failureLimit", "one"),
        _s("skipCleanup", match="exact"),
        _s("repeatCount", "one", match="exact"),
        *_LAST,
    ),
    third_jit_refused=True,
    setting_separators="=#",
    targets=(
        "amd64",
        "x64",
        "x86",
        "arm64",
        "arm",
        "arm32",
        "loongarch64",
        "riscv64",
        "wasm",
        "wasm32",
    ),
    target_refusal="Illegal target architecture specified with -target.",
    default_jit=True,
    children_get_verbosity=True,
)

ERAS: tuple[Grammar, ...] = (ERA_31, ERA_TODAY)

SOURCES = {
    "3.1": "dotnet/coreclr v3.1.23 (0dee78f9) src/ToolBox/superpmi/superpmi/commandline.cpp",
    "today": "dotnet/runtime main src/coreclr/tools/superpmi/superpmi/commandline.cpp "
    "(filipnavara/runtime@c659a8bb48140ce161dd3890fd2aa4d06f2fbfac)",
}


def era(name: str) -> Grammar:
    for g in ERAS:
        if g.era == name:
            return g
    raise KeyError(name)
