"""How superpmi-compatible command lines look (docs/superpmi-conventions.md section 1): which
arguments are the JITs and the input, classified as superpmi classifies them (by extension)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

JIT_SUFFIXES = (".so", ".dylib", ".dll")
INPUT_SUFFIXES = (".mc", ".mch", ".mct")

# Options followed by values (docs/superpmi-conventions.md section 1); `-jitoption [force] k=v`
# handled apart.
_VALUE_OPTIONS = {
    "-c",
    "-compile",
    "-m",
    "-matchhash",
    "-e",
    "-emitmethodstats",
    "-v",
    "-verbosity",
    "-w",
    "-writelogfile",
    "-r",
    "-reproname",
    "-f",
    "-failingmclist",
    "-details",
    "-failurelimit",
    "-repeatcount",
    "-streaming",
    "-target",
    "-basemetricssummary",
    "-diffmetricssummary",
    "-metricssummary",
    "-diffsinfo",
    "-diffmclist",
    "-j",
    "-jit",
    "-l",
    "-load",
    "-bug",
}


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
        return any(o.lower() in ("-p", "-parallel") for o in self.options)


def option_value(args: Sequence[str], name: str) -> str | None:
    """The value after option `name` (superpmi reads options in any case: `-Target`), its first
    occurrence; None when it is not there or ends the line."""
    low = [a.lower() for a in args]
    if name in low and low.index(name) + 1 < len(low):
        return args[low.index(name) + 1]
    return None


def parse_command(argv: Sequence[str]) -> ReplayCommand:
    """Split a superpmi/spmi-replay argv into program, JIT paths (JIT1 = base, JIT2 = diff), input,
    options."""
    return _parse(tuple(argv))


@functools.lru_cache(maxsize=64)  # the debugger adapters parse the same command line at every stop
def _parse(argv: tuple[str, ...]) -> ReplayCommand:
    if not argv:
        return ReplayCommand("", [], None, [])
    jits: list[str] = []
    inp: str | None = None
    options: list[str] = []
    i = 1
    while i < len(argv):
        a = argv[i]
        low = a.lower()
        if low.startswith("-") and len(a) > 1:
            options.append(a)
            if low in ("-jitoption", "-jit2option"):
                if i + 1 < len(argv) and argv[i + 1].lower() == "force":
                    options.append(argv[i + 1])
                    i += 1
                if i + 1 < len(argv):
                    options.append(argv[i + 1])
                    i += 1
            elif low == "-stride":
                options.extend(argv[i + 1 : i + 3])
                i += 2
            elif low in ("-p", "-parallel"):
                if i + 1 < len(argv) and argv[i + 1].isdigit():
                    options.append(argv[i + 1])
                    i += 1
            elif low in _VALUE_OPTIONS and i + 1 < len(argv):
                options.append(argv[i + 1])
                i += 1
        elif low.endswith(JIT_SUFFIXES):
            jits.append(a)
        elif low.endswith(INPUT_SUFFIXES):
            inp = a
        i += 1
    return ReplayCommand(argv[0], jits, inp, options)
