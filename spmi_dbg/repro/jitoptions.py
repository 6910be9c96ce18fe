"""Option minimization: which of a command's `-jitoption` / `-jit2option` settings a failure needs.

Delta debugging (minimize.ddmin) first over the settings (each `-jit[2]option [force] key=value` is
one item; every other superpmi option stays), then over the elements of each list-valued setting
that survived (`JitStressModeNames=A B C`, `JitStressModeNamesAllow=...`: space-separated, as the
JIT reads them), always keeping the same failure. Stress-only asserts are narrowed by hand today,
"one by one (or binary search)" (dotnet/runtime#100123): this does it with a replay per test."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.environment import EnvVar
from spmi_dbg.repro.minimize import ddmin
from spmi_dbg.superpmi_argv.grammar import ERA_TODAY, Grammar, ascii_lower
from spmi_dbg.superpmi_argv.parse import read_options, setting_of

# a recorded environment variable (repro/environment.py), minimized as the options are
ENV = "env"
# Settings whose value is a space-separated list the JIT reads element by element.
LIST_VALUED = ("JitStressModeNames", "JitStressModeNamesAllow")


@dataclass(frozen=True)
class JitSetting:
    flag: str  # -jitoption or -jit2option, as given (any spelling superpmi takes: -JITOPTION)
    force: bool
    key: str
    value: str
    # as the user typed them: `f` for force, `#` for `=` (today's superpmi)
    force_token: str = field(default="force", compare=False)
    separator: str = field(default="=", compare=False)

    @property
    def from_environment(self) -> bool:
        return self.flag == ENV

    @property
    def argv(self) -> list[str]:
        if self.from_environment:
            return []
        force = [self.force_token] if self.force else []
        return [self.flag, *force, f"{self.key}{self.separator}{self.value}"]

    @property
    def text(self) -> str:
        """As a reader writes it: `JitStress=2`, `JitStressModeNames=A B` (JIT2: / force: noted),
        `COMPlus_JitStress=1 from the environment`."""
        if self.from_environment:
            return f"{self.key}={self.value} from the environment"
        where = "JIT2 " if ascii_lower(self.flag).startswith("-jit2") else ""
        return f"{where}{'force ' if self.force else ''}{self.key}={self.value}"

    @property
    def config_key(self) -> str:
        """The JIT's name: `JitStress` for `-jitoption JitStress=1` and for `DOTNET_JitStress`."""
        low = self.key.lower()
        for prefix in ("dotnet_", "complus_"):
            if self.from_environment and low.startswith(prefix):
                return self.key[len(prefix) :]
        return self.key

    def elements(self) -> list[str]:
        return self.value.split() if self.config_key in LIST_VALUED else [self.value]

    def with_elements(self, elements: Sequence[str]) -> JitSetting:
        return dataclasses.replace(self, value=" ".join(elements))


@dataclass(frozen=True)
class SplitOptions:
    """superpmi options apart from their JIT settings, which keep their order."""

    fixed: tuple[str, ...]
    settings: tuple[JitSetting, ...]

    def options(self, settings: Sequence[JitSetting]) -> tuple[str, ...]:
        return (*self.fixed, *(a for s in settings for a in s.argv))


def split_options(options: Sequence[str], grammar: Grammar = ERA_TODAY) -> SplitOptions:
    """`options` as ReproCommand.options holds them, read by `grammar` (the command's era): each
    `-jitoption`/`-jit2option` in any spelling superpmi takes (`-JITOPTION f k=v`)."""
    fixed: list[str] = []
    settings: list[JitSetting] = []
    for item in read_options(grammar, options):
        s = setting_of(item, grammar)
        if s is None:
            fixed.extend(item.tokens)
            continue
        force_token = item.tokens[1] if s.force else "force"
        settings.append(
            JitSetting(item.tokens[0], s.force, s.key, s.value, force_token, s.separator)
        )
    return SplitOptions(tuple(fixed), tuple(settings))


def settings_of(cmd: ReproCommand) -> tuple[SplitOptions, tuple[JitSetting, ...]]:
    """The command's options apart from its settings, and its settings: the `-jit[2]option`s, then
    each recorded environment variable (minimized alike: a variable the failure does not need is
    dropped and named)."""
    split = split_options(cmd.options, cmd.grammar)
    env = tuple(JitSetting(ENV, False, v.name, v.value) for v in cmd.env)
    return split, (*split.settings, *env)


def with_settings(
    cmd: ReproCommand, split: SplitOptions, settings: Sequence[JitSetting]
) -> ReproCommand:
    """`cmd` with exactly these settings: its options' and its environment's."""
    kinds = {v.name: v.kind for v in cmd.env}
    return dataclasses.replace(
        cmd,
        options=split.options([s for s in settings if not s.from_environment]),
        env=tuple(
            EnvVar(s.key, s.value, kinds.get(s.key, "named"))
            for s in settings
            if s.from_environment
        ),
    )


@dataclass
class OptionMinimization:
    given: list[JitSetting]
    needed: list[JitSetting] = field(default_factory=list)
    tests: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def dropped(self) -> list[str]:
        """What the failure does not need: whole settings, and list elements of the kept ones."""
        out: list[str] = []
        kept = {(s.flag, s.force, s.key): s for s in self.needed}
        # (a list element is named by the setting's own key)
        for s in self.given:
            k = kept.get((s.flag, s.force, s.key))
            if k is None:
                out.append(s.text)
            else:
                out += [f"{s.key} element {e}" for e in s.elements() if e not in k.elements()]
        return out

    def summary(self) -> str:
        if not self.given:
            return "no JIT settings given"
        needed = " ".join(s.text for s in self.needed) or "none of the given JIT settings"
        dropped = "; ".join(self.dropped)
        return f"fails with {needed}" + (f"; not needed: {dropped}" if dropped else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "given": [s.text for s in self.given],
            "needed": [s.text for s in self.needed],
            "dropped": self.dropped,
            "tests": self.tests,
            "seconds": round(self.seconds, 3),
            "summary": self.summary(),
            "notes": self.notes,
        }


def minimize_settings(
    settings: Sequence[JitSetting],
    fails: Callable[[list[JitSetting]], bool],
    *,
    known_to_fail: bool = False,
) -> OptionMinimization:
    """The settings (and list elements) the failure needs. `fails(settings)` runs the repro with
    exactly those settings; it must hold for all of them (checked first, unless the caller has just
    seen it hold: `known_to_fail`; when it does not, nothing is dropped)."""
    start = time.monotonic()
    result = OptionMinimization(list(settings))
    cache: dict[tuple[JitSetting, ...], bool] = {}

    def test(candidate: list[JitSetting]) -> bool:
        key = tuple(candidate)
        if key not in cache:
            result.tests += 1
            cache[key] = fails(candidate)
        return cache[key]

    given = list(settings)
    if known_to_fail:
        cache[tuple(given)] = True
    if not given:
        result.seconds = time.monotonic() - start
        return result
    if not test(given):
        result.needed = given
        result.notes.append(
            "the failure did not reproduce with all the given settings: none dropped"
        )
        result.seconds = time.monotonic() - start
        return result
    kept = [given[i] for i in ddmin(range(len(given)), lambda idx: test([given[i] for i in idx]))]
    for pos, s in enumerate(kept):
        elements = s.elements()
        if s.config_key not in LIST_VALUED or len(elements) < 2:
            continue

        def with_subset(
            idx: list[int], pos: int = pos, s: JitSetting = s, elements: list[str] = elements
        ) -> bool:
            # an empty list is not the same setting as none: ddmin of the settings decided that
            if not idx:
                return False
            trial = list(kept)
            trial[pos] = s.with_elements([elements[i] for i in idx])
            return test(trial)

        kept[pos] = s.with_elements([elements[i] for i in ddmin(range(len(elements)), with_subset)])
    result.needed = kept
    result.notes.append(
        f"kept {len(kept)} of {len(given)} JIT setting(s) in {result.tests} replays"
    )
    result.seconds = time.monotonic() - start
    return result
