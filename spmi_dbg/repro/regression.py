"""Regression?, answered by experiment: when the command has a base and a diff JIT, the repro is
replayed natively with each JIT alone (a plain replay: `-a` dropped; the JIT's own settings, the
diff JIT's `-jit2option`s given as `-jitoption`s since it is then JIT1), and the report states which
of them crash and with which settings. When the two JITs' settings differ, each JIT is also replayed
with the other's, so each comparison changes one thing: the JIT, under the same settings.
docs/superpmi-conventions.md 1: `-jitoption` configures JIT1, `-jit2option` JIT2;
`-a` (applyDiff) needs two JITs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.expect import Expectation
from spmi_dbg.repro.jitoptions import JitSetting, split_options
from spmi_dbg.repro.native import NativeRun, run_native
from spmi_dbg.superpmi_argv.grammar import ascii_lower
from spmi_dbg.superpmi_argv.parse import read_options


def _for_jit2(setting: JitSetting) -> bool:
    return ascii_lower(setting.flag).startswith("-jit2")


def _as_jit1(settings: list[JitSetting]) -> list[JitSetting]:
    """A JIT's settings given to it as JIT1 of a plain replay (`-jitoption`, `force` kept)."""
    return [JitSetting("-jitoption", x.force, x.key, x.value) for x in settings]


def _settings_text(settings: list[str]) -> str:
    return ", ".join(settings) if settings else "no JIT settings"


@dataclass
class JitAlone:
    role: str  # "base JIT" | "diff JIT"
    path: str
    # the -jitoption settings it ran with: its own, or the other JIT's (`settings_of`)
    given: list[JitSetting] = field(default_factory=list)
    settings_of: str = ""  # "its own" | "the diff JIT's" | "the base JIT's"
    runs: list[NativeRun] = field(default_factory=list)
    # its command line on the repro where it lives for the reader: the bundle's
    argv: list[str] = field(default_factory=list)

    @property
    def settings(self) -> list[str]:
        """As a reader writes them: `JITMinOpts=1`, `force JitStress=2`."""
        return [x.text for x in self.given]

    def crashes(self, expected: Expectation) -> bool:
        return any(r.matches(expected) for r in self.runs)

    def describe(self) -> str:
        """`the base JIT with the diff JIT's settings (JITMinOpts=1)`."""
        return f"the {self.role} with {self.settings_of} settings ({_settings_text(self.settings)})"

    def to_json(self, expected: Expectation) -> dict[str, Any]:
        return {
            "role": self.role,
            "path": self.path,
            "settings": self.settings,
            "settings_of": self.settings_of,
            "argv": self.argv if self.runs else None,
            "runs": [r.describe() for r in self.runs],
            "crashes": self.crashes(expected),
        }


@dataclass
class Regression:
    """Each JIT alone with its own settings; when the two JITs' settings differ, each also with the
    other's, so that every comparison changes one thing only: the JIT (same settings) or the
    settings (same JIT)."""

    expected: Expectation
    base: JitAlone
    diff: JitAlone
    # only when the settings differ: the base JIT with the diff JIT's, the diff JIT with the base's
    base_as_diff: JitAlone | None = None
    diff_as_base: JitAlone | None = None

    def _compare(self, b: JitAlone, d: JitAlone) -> str:
        crashed_b, crashed_d = b.crashes(self.expected), d.crashes(self.expected)
        what = self.expected.describe()
        if crashed_d and not crashed_b:
            return (
                f"the diff JIT crashes ({what}), the base JIT does not: a regression in the diff "
                "JIT"
            )
        if crashed_b and not crashed_d:
            return (
                f"the base JIT crashes ({what}), the diff JIT does not: fixed (or moved) in the "
                "diff JIT"
            )
        if crashed_b and crashed_d:
            return f"both JITs crash on their own ({what}): not a difference between them"
        return (
            f"neither JIT crashes on its own: {what} needs both (asm diffs: superpmi comparing "
            "their compile results)"
        )

    @property
    def conclusion(self) -> str:
        if self.base_as_diff is None or self.diff_as_base is None:
            same = self.base.settings
            said = f" (both with {_settings_text(same)})" if same else ""
            return f"{self._compare(self.base, self.diff)}{said}"
        own = self._compare(self.base_as_diff, self.diff)
        other = self._compare(self.base, self.diff_as_base)
        return (
            f"with the diff JIT's settings ({_settings_text(self.diff.settings)}): {own}; with "
            f"the base JIT's ({_settings_text(self.base.settings)}): {other}"
        )

    def runs(self) -> list[JitAlone]:
        return [r for r in (self.base, self.diff, self.base_as_diff, self.diff_as_base) if r]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "base_jit": self.base.to_json(self.expected),
            "diff_jit": self.diff.to_json(self.expected),
            "conclusion": self.conclusion,
        }
        if self.base_as_diff is not None and self.diff_as_base is not None:
            out["base_jit_with_diff_settings"] = self.base_as_diff.to_json(self.expected)
            out["diff_jit_with_base_settings"] = self.diff_as_base.to_json(self.expected)
        return out


def regression(
    cmd: ReproCommand,
    repro: Path,
    expected: Expectation,
    *,
    runs: int,
    timeout: float,
    workdir: Path,
    shown: Path | None = None,
) -> Regression | None:
    """None when the command has one JIT only (nothing to compare). `shown`: where the repro will
    live (the bundle's repro.mch): each JIT's command line is said on it."""
    if len(cmd.jits) < 2:
        return None
    split = split_options(cmd.options, cmd.grammar)
    base_settings = _as_jit1([x for x in split.settings if not _for_jit2(x)])
    diff_settings = _as_jit1([x for x in split.settings if _for_jit2(x)])
    out = Regression(
        expected,
        JitAlone("base JIT", cmd.jits[0], base_settings, "its own"),
        JitAlone("diff JIT", cmd.jits[1], diff_settings, "its own"),
    )
    if base_settings != diff_settings:
        out.base_as_diff = JitAlone("base JIT", cmd.jits[0], diff_settings, "the diff JIT's")
        out.diff_as_base = JitAlone("diff JIT", cmd.jits[1], base_settings, "the base JIT's")
    # -a dropped (in any spelling superpmi takes: -a, -ap, ... -applyDiff): a plain replay
    others = [
        t for i in read_options(cmd.grammar, split.fixed) if i.name != "applyDiff" for t in i.tokens
    ]
    for alone in out.runs():
        # the command's own way to run natively (repro.sh's environment, the emulator)
        alone_cmd = dataclasses.replace(
            cmd,
            options=(*others, *(a for x in alone.given for a in x.argv)),
            jits=(alone.path,),
        )
        argv = alone_cmd.native_argv(None, repro)
        alone.argv = alone_cmd.native_argv(None, shown or repro)
        for _ in range(max(1, runs)):
            alone.runs.append(
                run_native(
                    argv,
                    timeout=timeout,
                    stdout=workdir / "regression.stdout",
                    stderr=workdir / "regression.stderr",
                )
            )
    return out
