"""What the failure needs (issue 27 item 3): the JIT's switches that turn single optimizations off
(`JitDoSsa=0`, `JitNoCSE=1`, ..., and MinOpts), each tried on the verified repro, one native replay
each, several at once. Each switch is "gone with" (the failure does not happen with it), "still
fails with", "cannot tell (missing data)" (the replay with it asks for data the collection never
recorded) or "fails otherwise". It says what the failure needs, never which change is the culprit.

Which switches a JIT has is read from the JIT itself: the configuration names it carries (3.1's
`W("JitDoSsa")`, UTF-16; today's JITs may carry them as plain strings). A Release JIT carries none
of the optimization switches (they are DEBUG-only): then only what it has is tried, and the report
says so."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from spmi_dbg import jsonfacts
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.repro.capability import carries
from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.jitoptions import settings_of

# (config name, value, what it turns off); the JIT's own names, tried only where the JIT has them
SWITCHES: tuple[tuple[str, str, str], ...] = (
    ("JITMinOpts", "1", "every optimization (MinOpts)"),
    ("JitDoSsa", "0", "SSA"),
    ("JitDoValueNumber", "0", "value numbering"),
    ("JitDoAssertionProp", "0", "assertion propagation"),
    ("JitDoCopyProp", "0", "copy propagation"),
    ("JitDoEarlyProp", "0", "early propagation"),
    ("JitDoLoopHoisting", "0", "loop hoisting"),
    ("JitDoRangeAnalysis", "0", "range check elimination"),
    ("JitNoCSE", "1", "CSE"),
    ("JitNoInline", "1", "inlining"),
    ("JitDoRedundantBranchOpts", "0", "redundant branch optimization"),
    ("JitDoOptimizeIVs", "0", "induction variable optimization"),
    ("JitDoIfConversion", "0", "if-conversion"),
    ("JitEnablePhysicalPromotion", "0", "physical promotion"),
)

Outcome = Literal["gone with", "still fails with", "cannot tell (missing data)", "fails otherwise"]


def switches_of(jit: str | Path) -> list[tuple[str, str, str]]:
    """The SWITCHES whose configuration name the JIT binary carries (capability.carries: UTF-16
    or plain, as a whole NUL-terminated string)."""
    found = carries(jit, [name for name, _, _ in SWITCHES]) or {}
    return [sw for sw in SWITCHES if found.get(sw[0])]


@dataclass
class SwitchTrial(JsonFact):
    option: str
    value: str
    what: str = field(metadata=jsonfacts.key("turns_off"))
    outcome: Outcome
    run: str  # what the replay did, said


@dataclass
class Needs:
    jit: str
    trials: list[SwitchTrial] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if not self.trials:
            return "; ".join(self.notes) or "no switch tried"
        parts = []
        for outcome in ("gone with", "still fails with", "cannot tell (missing data)"):
            names = [f"{t.option}={t.value}" for t in self.trials if t.outcome == outcome]
            if names:
                parts.append(f"{outcome} {', '.join(names)}")
        other = [f"{t.option}={t.value}" for t in self.trials if t.outcome == "fails otherwise"]
        if other:
            parts.append(f"fails otherwise with {', '.join(other)}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "jit": self.jit,
            "needs": [t.to_json() for t in self.trials],
            "summary": self.summary(),
            "notes": self.notes,
        }


# one replay of the repro with one more setting: (outcome, what the run did)
Trial = Callable[[str, str], tuple[Outcome, str]]


def with_option(cmd: ReproCommand, key: str, value: str) -> ReproCommand:
    """The repro's command with `-jitoption key=value` added."""
    return dataclasses.replace(cmd, options=(*cmd.options, "-jitoption", f"{key}={value}"))


def given_keys(cmd: ReproCommand) -> frozenset[str]:
    """The configuration names the command sets already (its options and its environment)."""
    _, settings = settings_of(cmd)
    return frozenset(s.config_key for s in settings)


def find_needs(
    jit: str, trial: Trial, *, workers: int, given: frozenset[str] = frozenset()
) -> Needs:
    """Every switch the JIT has, tried with `trial` (`workers` at a time); a switch the command
    already sets (`given`, config names) is left out and said."""
    out = Needs(jit)
    have = switches_of(jit)
    if not have:
        out.notes.append(
            f"{Path(jit).name} carries none of the optimization switches (a Release JIT: they are "
            "DEBUG-only): nothing to try"
        )
        return out
    tried = [s for s in have if s[0] not in given]
    skipped = [s[0] for s in have if s[0] in given]
    if skipped:
        out.notes.append(f"not tried, the command sets them already: {', '.join(skipped)}")
    if not any(s[0] != "JITMinOpts" for s in have):
        out.notes.append(
            f"{Path(jit).name} carries no single-optimization switch (a Release JIT): only MinOpts"
        )
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="spmi-needs") as pool:
        results = list(pool.map(lambda s: trial(s[0], s[1]), tried))
    for (name, value, what), (outcome, run) in zip(tried, results, strict=True):
        out.trials.append(SwitchTrial(name, value, what, outcome, run))
    return out
