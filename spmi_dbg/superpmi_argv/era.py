"""Which era's grammar a superpmi binary reads its command line by, from what the binary itself
says it accepts (its usage text), never from a version string (docs/superpmi-conventions.md 1).

Evidence, each from the era's DumpHelp: today's usage line makes the JIT optional (`[options]
[jitname]`) and documents `-streaming`, `-details` and `-repeatCount`; 3.1's requires the JIT
(`[options] jitname`) and documents none of the switches added
since (`-box`, `-ignoreStoredConfig`, `-failureLimit`, ...). A usage text with some of those but
not the others is a build between the two (2021-2023), whose reading the tool does not claim to
know: `era_of_usage` then says None and why."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from spmi_dbg.superpmi_argv.grammar import ERA_31, ERA_TODAY, ERAS, Grammar, Switch
from spmi_dbg.superpmi_argv.parse import Command, parse

USAGE_FIRST_LINE = "SuperPMI is a JIT compiler testing tool."
_DOCUMENTED = re.compile(r"^ -([A-Za-z0-9?]+)(?:\[([A-Za-z0-9]+)\])?", re.M)
_TODAY_ONLY = {"streaming", "details", "repeatCount"}
_SINCE_31 = {"box", "ignoreStoredConfig", "failureLimit", *_TODAY_ONLY}


@dataclass(frozen=True)
class EraEvidence:
    grammar: Grammar | None
    evidence: str  # what decided, in words
    # switches the binary documents that its era's superpmi does not have (a build's own
    # additions, e.g. the bundled core's `-bug N`): read after the era's own, as documented
    extra: tuple[Switch, ...] = ()

    def grammars(self) -> tuple[Grammar, ...]:
        """The grammar(s) to read a command by: the era's, or both when it is not known; each with
        the binary's own additions."""
        base = (self.grammar,) if self.grammar is not None else ERAS
        return tuple(g.extended(self.extra) for g in base)


def documented_switches(usage: str) -> set[str]:
    """The switch names a usage text lists at the start of a line (` -c[ompile]` is compile)."""
    return {m[1] + (m[2] or "") for m in _DOCUMENTED.finditer(usage)}


def era_of_usage(usage: str) -> EraEvidence:
    """The era whose DumpHelp printed `usage` (None when it is no superpmi usage text, or a
    build between the eras)."""
    if USAGE_FIRST_LINE not in usage:
        return EraEvidence(None, "the program printed no superpmi usage text")
    names = documented_switches(usage)
    today = sorted(names & _TODAY_ONLY)
    later = sorted(names & _SINCE_31)
    if len(today) == len(_TODAY_ONLY) and "[jitname]" in usage:
        found = EraEvidence(ERA_TODAY, f"its usage lists -{', -'.join(today)} and an optional JIT")
    elif not later and "[options] jitname [jitname2]" in usage:
        found = EraEvidence(
            ERA_31, "its usage requires a JIT and lists none of the switches added after 3.1"
        )
    else:
        found = EraEvidence(
            None,
            "its usage is neither 3.1's nor today's"
            + (f" (it lists -{', -'.join(later)})" if later else ""),
        )
    return EraEvidence(found.grammar, found.evidence, _additions(usage, found.grammars()))


def _additions(usage: str, grammars: Sequence[Grammar]) -> tuple[Switch, ...]:
    """The switches `usage` documents that none of `grammars` reads (` -bug 91257`: a switch
    with one value; ` -name` alone: a switch without)."""
    out: dict[str, Switch] = {}
    for m in _DOCUMENTED.finditer(usage):
        name = m[1] + (m[2] or "")
        if name == "?" or any(g.lookup(name) is not None for g in grammars):
            continue
        line = usage[m.end() : usage.find("\n", m.end()) % (len(usage) + 1)]
        out.setdefault(name, Switch(name, "prefix", "one" if line.strip() else "none"))
    return tuple(out.values())


@dataclass(frozen=True)
class Reading:
    """A command as an era reads it, or as both read it when the era is not known."""

    command: Command
    era: EraEvidence
    # when the era is not known and the two eras read the command differently: how
    disagreement: str | None = None


def reading(
    argv: Sequence[str], era: EraEvidence | None = None, host: str = "x64", *, lenient: bool = False
) -> Reading:
    """`argv` by the era's grammar; with no era known, by both: their common reading when they
    agree, else today's and a sentence saying how 3.1's differs. `lenient`: see parse()."""
    if era is not None and era.grammar is not None:
        return Reading(parse(argv, era.grammars()[0], host, lenient=lenient), era)
    unknown = era or EraEvidence(None, "no evidence from the binary")
    both = {g.era: parse(argv, g, host, lenient=lenient) for g in unknown.grammars()}
    old, new = both[ERA_31.era], both[ERA_TODAY.era]
    diff = differences(old, new)
    return Reading(new, unknown, diff)


def _shape(cmd: Command) -> tuple[object, ...]:
    return (
        tuple((i.name, i.tokens) for i in cmd.items),
        cmd.jits,
        cmd.input,
        cmd.refusal.message if cmd.refusal else "",
        cmd.refusal is not None,
    )


def differences(old: Command, new: Command) -> str | None:
    """How 3.1 (`old`) and today's superpmi (`new`) read one command differently, in a sentence;
    None when they agree."""
    if _shape(old) == _shape(new):
        return None
    return f"superpmi 3.1 {_summary(old)}, today's superpmi {_summary(new)}"


def _summary(cmd: Command) -> str:
    if cmd.refusal is not None:
        return "refuses it" + (f" ({cmd.refusal.message})" if cmd.refusal.message else "")
    words = " ".join(f"{i.tokens[0]}={i.name}" for i in cmd.items if i.switch is not None)
    jits = ", ".join(cmd.jits) or "no JIT"
    return f"reads {words or 'no switch'} with {jits} on {cmd.input}"
