"""superpmi command lines as superpmi reads them (docs/superpmi-conventions.md 1): its grammar per
era as data (grammar.py), the reading of a command by it (parse.py), the era of a binary from its
own usage text (era.py) and the tool's changes to a command on its parsed form (edit.py).

`parse_command` is the quick view the in-debugger analysis and the drivers use on a process's
argv (which JIT is base or diff, the input, the options): the era is not probed there, so the
command is read by both eras' grammar, and by today's where they differ."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from spmi_dbg.superpmi_argv.era import reading
from spmi_dbg.superpmi_argv.grammar import ERA_31, ERA_TODAY, PARALLEL, STRIDE, ascii_lower
from spmi_dbg.superpmi_argv.parse import read_options

JIT_SUFFIXES = (".so",)
INPUT_SUFFIXES = (".mc", ".mch", ".mct")


@dataclass(frozen=True)
class ReplayCommand:
    program: str
    jits: list[str]
    input: str | None
    options: list[str]

    @property
    def base_jit(self) -> str | None:
        return self.jits[0] if self.jits else None

    @property
    def diff_jit(self) -> str | None:
        return self.jits[1] if len(self.jits) > 1 else None

    @property
    def target(self) -> str | None:
        """`-target ARCH`, as written."""
        return option_value(self.options, "-target")

    @property
    def parallel(self) -> bool:
        """`-p`/`-parallel [N]`: a parent that runs workers (whose deaths 3.1 does not report)."""
        return any(
            i.role == PARALLEL for g in (ERA_TODAY, ERA_31) for i in read_options(g, self.options)
        )

    @property
    def worker(self) -> bool:
        """A -parallel worker (`-stride i N` on its command line) or its parent."""
        return self.parallel or any(
            i.role == STRIDE for g in (ERA_TODAY, ERA_31) for i in read_options(g, self.options)
        )


def option_value(args: Sequence[str], name: str) -> str | None:
    """The value superpmi keeps for switch `name` (`-target`, its full name) among `args` (options
    in any spelling superpmi accepts: `-TARGET`, `-co`): the last occurrence's; None when it is not
    there."""
    wanted = ascii_lower(name.lstrip("-"))
    if args and not args[0].startswith("-"):  # a whole command line: its program first
        args = args[1:]
    for g in (ERA_TODAY, ERA_31):
        items = read_options(g, args)
        found = [i.value for i in items if i.switch and ascii_lower(i.switch.name) == wanted]
        if found:
            return found[-1]
    return None


def parse_command(argv: Sequence[str]) -> ReplayCommand:
    """Split a superpmi/spmi-replay argv into program, JIT paths (JIT1 = base, JIT2 = diff), input,
    options (the tokens of the switches other than -jit/-load, as typed)."""
    return _parse(tuple(argv))


@functools.lru_cache(maxsize=64)  # the debugger adapters parse the same command line at every stop
def _parse(argv: tuple[str, ...]) -> ReplayCommand:
    if not argv:
        return ReplayCommand("", [], None, [])
    cmd = reading(argv, lenient=True).command
    options = [t for i in cmd.options for t in i.tokens]
    return ReplayCommand(argv[0], list(cmd.jits), cmd.input, options)
