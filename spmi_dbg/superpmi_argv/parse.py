"""A superpmi command line read exactly as one era's superpmi reads it (grammar.py): each argument
in order, a switch by the first name it matches, a positional argument by the text after its last
dot; the first error ends the reading, as superpmi's `return false` does, with superpmi's own words.

The result keeps every argument as typed, grouped into items (a switch with its values, or one
positional argument), so that a command the tool changes is the user's command with the fewest
changes, in the user's own spelling (edit.py)."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from spmi_dbg.superpmi_argv.grammar import (
    INPUT,
    JIT,
    PARALLEL,
    SETTING,
    Grammar,
    Switch,
    ascii_lower,
)

# superpmi's usage error status: main returns -1
REFUSED_STATUS = 255
MAXIMUM_WAIT_OBJECTS = 64
# an item of tokens a grammar could not read (read_options)
UNREAD = "unread"


@dataclass(frozen=True)
class Item:
    """One switch with the values it took, or one positional argument (`switch` None: a JIT or the
    input by its suffix)."""

    tokens: tuple[str, ...]
    switch: Switch | None = None
    positional: str = ""  # JIT or INPUT, for a positional argument

    @property
    def name(self) -> str:
        return self.switch.name if self.switch is not None else self.positional

    @property
    def role(self) -> str:
        return self.switch.role if self.switch is not None else self.positional

    @property
    def values(self) -> tuple[str, ...]:
        return self.tokens[1:] if self.switch is not None else self.tokens

    @property
    def value(self) -> str | None:
        return self.values[-1] if self.values else None


@dataclass(frozen=True)
class Setting:
    """A `-jitoption`/`-jit2option` item read: which JIT, forced or not, key and value."""

    jit2: bool
    force: bool
    key: str
    value: str
    separator: str


@dataclass(frozen=True)
class Refusal:
    """superpmi would not replay this command: what it says (its ERROR line without `ERROR: `;
    None when it prints only its usage) and its exit status. `by_children`: the -parallel parent
    starts, and each of its workers refuses."""

    message: str | None
    status: int = REFUSED_STATUS
    usage: bool = True
    by_children: bool = False

    def said(self) -> str:
        words = f"ERROR: {self.message}" if self.message else "its usage text, no error line"
        who = "its -parallel workers refuse it" if self.by_children else "it refuses it"
        return f"{who}: {words} (exit status {self.status})"


@dataclass(frozen=True)
class Command:
    grammar: Grammar
    program: str
    items: tuple[Item, ...]
    refusal: Refusal | None = None
    # today's superpmi with no JIT named: the JIT it loads from beside itself (`Using default JIT`)
    default_jit: str | None = None

    @property
    def jits(self) -> tuple[str, ...]:
        """JIT1 (base) then JIT2 (diff), as superpmi takes them: by `-jit` or by suffix; 3.1 keeps
        the last of further ones as JIT2. A default JIT is JIT1."""
        named = [i.value for i in self.items if i.role == JIT and i.value is not None]
        if self.default_jit is not None and not named:
            return (self.default_jit,)
        if len(named) > 2:
            named = [named[0], named[-1]]
        return tuple(named)

    @property
    def input(self) -> str | None:
        """The collection: the last `-load` or `.mc`/`.mch`/`.mct` argument (each replaces the one
        before)."""
        found = [i.value for i in self.items if i.role == INPUT]
        return found[-1] if found else None

    def uses(self, name: str) -> list[Item]:
        return [i for i in self.items if i.switch is not None and i.switch.name == name]

    def value(self, name: str) -> str | None:
        """The switch's value as superpmi keeps it: the last occurrence's."""
        found = self.uses(name)
        return found[-1].value if found else None

    def given(self, name: str) -> bool:
        return bool(self.uses(name))

    @property
    def parallel(self) -> bool:
        return any(i.role == PARALLEL for i in self.items)

    @property
    def options(self) -> tuple[Item, ...]:
        """The switches other than those naming the JITs and the input."""
        return tuple(i for i in self.items if i.role not in (JIT, INPUT))

    def settings(self) -> list[Setting]:
        return [s for i in self.items if (s := setting_of(i, self.grammar)) is not None]


def setting_of(item: Item, grammar: Grammar) -> Setting | None:
    """The setting a -jitoption/-jit2option item holds (None for other items)."""
    if item.role != SETTING or len(item.tokens) < 2:
        return None
    force = len(item.tokens) == 3
    kv = item.tokens[-1]
    at = _separator_at(kv, grammar)
    if at is None:
        return None
    return Setting(item.name == "jit2option", force, kv[:at], kv[at + 1 :], kv[at])


def _separator_at(kv: str, grammar: Grammar) -> int | None:
    # ParseJitOption: the key ends at the first separator, within 1023 characters
    for i, c in enumerate(kv[:1024]):
        if c in grammar.setting_separators:
            return i if i <= 1023 else None
    return None


def is_force(token: str) -> bool:
    """AddJitOption's test: the token is a prefix of `force`, without case (the empty string
    too)."""
    return "force".startswith(ascii_lower(token))


def atoi(text: str) -> int:
    """C's atoi: leading blanks, a sign, digits; 0 when there are none."""
    s = text.lstrip(" \t\n\v\f\r")
    sign = -1 if s[:1] == "-" else 1
    if s[:1] in "+-" and s:
        s = s[1:]
    digits = ""
    for c in s:
        if c not in "0123456789":
            break
        digits += c
    return sign * int(digits) if digits else 0


def _all_digits(text: str) -> bool:
    return all(c in "0123456789" for c in text)


class _Refused(Exception):
    def __init__(self, refusal: Refusal) -> None:
        self.refusal = refusal


# the three ways of selecting method contexts, each of which excludes the others, and superpmi's
# refusal of each pair
_Selecting = Literal["list", "hash", "parallel"]
_SELECTING: tuple[_Selecting, ...] = ("list", "hash", "parallel")
_EXCLUDED = {
    frozenset(("list", "hash")): "Cannot use both method context list and method context hash.",
    frozenset(("list", "parallel")): "Cannot use method context list in parallel mode.",
    frozenset(("hash", "parallel")): "Cannot use method context hash in parallel mode.",
}


def _refuse(message: str | None = None) -> _Refused:
    return _Refused(Refusal(message))


class _Reader:
    """CommandLine::Parse's loop over the arguments after the program."""

    def __init__(self, grammar: Grammar, args: Sequence[str], lenient: bool = False) -> None:
        self.g = grammar
        # lenient: an argument superpmi would refuse (an unknown switch, a file without a known
        # suffix) is kept as an unread item and the reading goes on (read_options)
        self.lenient = lenient
        self.args = list(args)
        self.i = 0
        self.items: list[Item] = []
        self.jit_count = 0
        self.selections: set[_Selecting] = set()  # the ways of selecting given so far

    def read(self) -> None:
        while self.i < len(self.args):
            a = self.args[self.i]
            start = self.i
            try:
                if a.startswith("-"):
                    self._switch(a)
                else:
                    self._positional(a)
            except _Refused:
                if not self.lenient or self.i != start:
                    raise
                self.items.append(Item((a,), None, UNREAD))
            self.i += 1

    def _take(self) -> str:
        """The next argument as a value (superpmi prints its usage when there is none)."""
        self.i += 1
        if self.i >= len(self.args):
            raise _refuse()
        return self.args[self.i]

    def _positional(self, a: str) -> None:
        dot = a.rfind(".")
        if dot < 0:
            raise _refuse()
        ext = ascii_lower(a[dot:])
        if ext == self.g.jit_suffix:
            self._jit(a)
            self.items.append(Item((a,), None, JIT))
        elif ext in self.g.input_suffixes:
            self.items.append(Item((a,), None, INPUT))
        else:
            raise _refuse(f"Unknown file type passed as argument, '{a}'.")

    def _jit(self, name: str) -> None:
        if name == "":
            raise _refuse(f"Arg '{name}' is invalid, name of jit missing.")
        self.jit_count += 1
        if self.jit_count > 2 and self.g.third_jit_refused:
            raise _refuse("Too many JITs specified.")

    def _switch(self, a: str) -> None:
        typed = a[1:]
        if not typed or typed == "?":
            raise _refuse()
        sw = self.g.lookup(typed)
        if sw is None:
            raise _refuse(f"Unknown switch '{a}' passed as argument.")
        start = self.i
        _ACTIONS[sw.name if sw.name in _ACTIONS else sw.args](self, sw)
        self.items.append(Item(tuple(self.args[start : self.i + 1]), sw))

    # the switches' own checks, in CommandLine::Parse's words
    def _help(self, sw: Switch) -> None:
        raise _refuse()

    def _none(self, sw: Switch) -> None:
        pass

    def _one(self, sw: Switch) -> None:
        self._take()

    def _load(self, sw: Switch) -> None:
        if self._take() == "":
            raise _refuse("Arg '' is invalid, name of file missing.")

    def _jit_switch(self, sw: Switch) -> None:
        self._jit(self._take())

    def _repro(self, sw: Switch) -> None:
        if self._take() == "":
            raise _refuse("Arg '' is invalid, name of prefix missing.")

    def _compile(self, sw: Switch) -> None:
        self._take()
        self._selecting("list")

    def _hash(self, sw: Switch) -> None:
        h = self._take()
        if len(os.fsencode(h)) != 32:
            raise _refuse(f"Arg '{h}' is invalid, needed a valid method context hash.")
        self._selecting("hash")

    def _streaming(self, sw: Switch) -> None:
        self.i += 1
        if self.i >= len(self.args):
            raise _refuse("'-streaming' must be followed by a file name or 'stdin'.")

    def _count(self, sw: Switch) -> None:
        nxt = self.args[self.i + 1] if self.i + 1 < len(self.args) else None
        if nxt is None or not _all_digits(nxt):
            return
        self.i += 1
        n = atoi(nxt)
        if n < 1:
            raise _refuse("Invalid workers count specified, workers count must be at least 1.")
        if n > MAXIMUM_WAIT_OBJECTS:
            raise _refuse(
                "Invalid workers count specified, workers count cannot be more than "
                f"{MAXIMUM_WAIT_OBJECTS}."
            )

    def _failure_limit(self, sw: Switch) -> None:
        if atoi(self._take()) < 1:
            raise _refuse("Incorrect limit specified for -failureLimit. Limit must be > 0.")

    def _repeat(self, sw: Switch) -> None:
        v = self._take()
        if not _all_digits(v) or atoi(v) < 1:
            raise _refuse(
                "Invalid repeat count specified. Repeat count must be between 1 and INT_MAX."
            )

    def _two(self, sw: Switch) -> None:
        offset, increment = atoi(self._take()), atoi(self._take())
        if offset < 1 or increment < 1:
            raise _refuse(
                "Incorrect offset/increment specified for -stride. Offset and increment both "
                "must be > 0."
            )
        self._selecting("parallel")

    def _selecting(self, way: _Selecting) -> None:
        """-compile (a list), -matchHash (a hash) or -stride (parallel mode): refused after either
        of the others, checked in superpmi's order (list, hash, parallel) and words."""
        for other in _SELECTING:
            if other != way and other in self.selections:
                raise _refuse(_EXCLUDED[frozenset((way, other))])
        self.selections.add(way)

    def _setting(self, sw: Switch) -> None:
        t = self._take()
        if is_force(t):
            t = self._take()
        if _separator_at(t, self.g) is None:
            raise _refuse()


_ACTIONS = {
    "help": _Reader._help,
    "load": _Reader._load,
    "jit": _Reader._jit_switch,
    "reproName": _Reader._repro,
    "compile": _Reader._compile,
    "matchHash": _Reader._hash,
    "streaming": _Reader._streaming,
    "failureLimit": _Reader._failure_limit,
    "repeatCount": _Reader._repeat,
    "none": _Reader._none,
    "one": _Reader._one,
    "two": _Reader._two,
    "count": _Reader._count,
    "setting": _Reader._setting,
}


def read_items(grammar: Grammar, args: Sequence[str]) -> tuple[tuple[Item, ...], Refusal | None]:
    """The arguments after the program as items, up to superpmi's first error (its refusal)."""
    r = _Reader(grammar, args)
    try:
        r.read()
    except _Refused as e:
        return tuple(r.items), e.refusal
    return tuple(r.items), None


def read_options(grammar: Grammar, args: Sequence[str]) -> list[Item]:
    """A list of options (a command's switches, as the tool keeps them) as items, losing none:
    an argument the grammar cannot read (another era's switch, a build's own) is an item of its own
    and the reading goes on; a switch whose value is missing ends it, the rest one item."""
    r = _Reader(grammar, args, lenient=True)
    try:
        r.read()
    except _Refused:
        return [*r.items, Item(tuple(args[_consumed(r.items) :]), None, UNREAD)]
    return list(r.items)


def _consumed(items: Sequence[Item]) -> int:
    return sum(len(i.tokens) for i in items)


def parse(
    argv: Sequence[str], grammar: Grammar, host: str = "x64", *, lenient: bool = False
) -> Command:
    """`argv` (program first) as `grammar`'s superpmi reads it, with its checks after the loop;
    `host` is the architecture superpmi runs on (for today's default JIT's name). `lenient`: a
    command known to have run (a stopped process's), read as far as the grammar can: an argument
    it cannot read is kept apart (read_options) and the reading goes on."""
    if not argv:
        return Command(grammar, "", (), Refusal(None))
    program = argv[0]
    if len(argv) == 1:
        return Command(grammar, program, (), Refusal(None))
    if lenient:
        return _validated(Command(grammar, program, tuple(read_options(grammar, argv[1:]))), host)
    items, refusal = read_items(grammar, argv[1:])
    cmd = Command(grammar, program, items, refusal)
    if refusal is not None:
        return cmd
    return _validated(cmd, host)


def _validated(cmd: Command, host: str) -> Command:
    g = cmd.grammar
    checks = _checks_31 if g.era == "3.1" else _checks_today
    try:
        default = checks(cmd, host)
    except _Refused as e:
        return Command(g, cmd.program, cmd.items, e.refusal)
    cmd = Command(g, cmd.program, cmd.items, None, default)
    if cmd.parallel and (cmd.given("compile") or cmd.given("matchHash")):
        # the parent passes -compile/-matchHash to workers started with -stride, which refuse
        what = "list" if cmd.given("compile") else "hash"
        return Command(
            g,
            cmd.program,
            cmd.items,
            Refusal(f"Cannot use method context {what} in parallel mode.", by_children=True),
            default,
        )
    return cmd


def _target_ok(cmd: Command, host: str) -> None:
    target = cmd.value("target")
    if target is None:
        return
    g = cmd.grammar
    if g.targets_by_host is None:
        if ascii_lower(target) not in g.targets:
            raise _refuse(g.target_refusal)
        return
    allowed = g.targets_by_host.get(host, ())
    if not allowed:
        raise _refuse("-target is unsupported on this platform.")
    if ascii_lower(target) not in allowed:
        raise _refuse(g.target_refusal.format(target=allowed[0], host=host))


def _checks_31(cmd: Command, host: str) -> str | None:
    if not any(i.role == JIT for i in cmd.items):
        raise _refuse("Missing name of a Jit.")
    if cmd.input is None:
        raise _refuse("Missing name of an input file.")
    if cmd.given("diffMCList") and not cmd.given("applyDiff"):
        raise _refuse("-diffMCList specified without -applyDiff.")
    _target_ok(cmd, host)
    if cmd.given("skipCleanup") and not cmd.parallel:
        raise _refuse("-skipCleanup requires -parallel.")
    return None


def _checks_today(cmd: Command, host: str) -> str | None:
    _target_ok(cmd, host)
    if cmd.given("streaming"):
        if cmd.parallel:
            raise _Refused(
                Refusal("streaming mode and parallel mode are incompatible.", usage=False)
            )
        if len([i for i in cmd.items if i.role == JIT]) > 1:
            raise _Refused(Refusal("streaming mode and diff mode are incompatible.", usage=False))
    if cmd.input is None:
        raise _refuse("Missing name of an input file.")
    default = None
    if not any(i.role == JIT for i in cmd.items):
        default = default_jit(cmd.program, cmd.value("target"), host)
        if default is None:
            raise _refuse("Missing name of a Jit.")
    if cmd.given("skipCleanup") and not cmd.parallel:
        raise _refuse("-skipCleanup requires -parallel.")
    return default


# SPMI_TARGET_ARCHITECTURE by -target's value, as today's superpmi names it in a JIT's file name
_TARGET_NAMES = {
    "amd64": "x64",
    "x64": "x64",
    "x86": "x86",
    "arm": "arm",
    "arm32": "arm",
    "arm64": "arm64",
    "loongarch64": "loongarch64",
    "riscv64": "riscv64",
}
_CROSS_OS = {"x64": "unix", "x86": "unix", "arm": "universal", "arm64": "universal"}


def default_jit(program: str, target: str | None, host: str) -> str | None:
    """Today's superpmi with no JIT: `<its directory>/libclrjit.so`, or for another -target
    `libclrjit_<os>_<target>_<host>.so` (`universal` for arm/arm64, else `unix`); None when
    superpmi would not look (argv[0] without a directory, or a target it has no name for)."""
    if "/" not in program:
        return None
    own = _TARGET_NAMES.get(host)
    tgt = _TARGET_NAMES.get(ascii_lower(target)) if target is not None else own
    if own is None or tgt is None:
        return None
    directory = posixpath.dirname(program) or "/"
    if tgt == own:
        return f"{directory.rstrip('/')}/libclrjit.so"
    return f"{directory.rstrip('/')}/libclrjit_{_CROSS_OS.get(tgt, 'unix')}_{tgt}_{host}.so"
