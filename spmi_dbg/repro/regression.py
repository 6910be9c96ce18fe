"""Regression?, answered by experiment: when the command has a base and a diff JIT, the repro is
replayed natively with each JIT alone (a plain replay: `-a` dropped; the JIT's own options kept, the
diff JIT's `-jit2option`s given as `-jitoption`s since it is then JIT1), and the report states which
of them crash. docs/superpmi-conventions.md 1: `-jitoption` configures JIT1, `-jit2option` JIT2;
`-a` (applyDiff) needs two JITs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.expect import Expectation
from spmi_dbg.repro.native import NativeRun, run_native


def _is_apply_diff(option: str) -> bool:
    low = option.lower()
    # superpmi's prefix matching: -a, -ap, ... -applyDiff
    return len(low) >= 2 and "-applydiff".startswith(low)


def single_jit_options(options: tuple[str, ...], *, jit2: bool) -> list[str]:
    """The options for a plain replay with one of the two JITs as JIT1."""
    out: list[str] = []
    i = 0
    while i < len(options):
        o = options[i]
        low = o.lower()
        if low in ("-jitoption", "-jit2option"):
            n = 2 if i + 1 < len(options) and options[i + 1].lower() == "force" else 1
            value = list(options[i + 1 : i + 1 + n])
            if (low == "-jit2option") == jit2:
                out += ["-jitoption", *value]
            i += 1 + n
            continue
        if not _is_apply_diff(o):
            out.append(o)
        i += 1
    return out


@dataclass
class JitAlone:
    role: str  # "base JIT" | "diff JIT"
    path: str
    runs: list[NativeRun] = field(default_factory=list)

    def crashes(self, expected: Expectation) -> bool:
        return any(r.matches(expected) for r in self.runs)

    def to_json(self, expected: Expectation) -> dict[str, Any]:
        return {
            "role": self.role,
            "path": self.path,
            "argv": self.runs[0].argv if self.runs else None,
            "runs": [r.describe() for r in self.runs],
            "crashes": self.crashes(expected),
        }


@dataclass
class Regression:
    expected: Expectation
    base: JitAlone
    diff: JitAlone

    @property
    def conclusion(self) -> str:
        b, d = self.base.crashes(self.expected), self.diff.crashes(self.expected)
        what = self.expected.describe()
        if d and not b:
            return (
                f"the diff JIT crashes ({what}), the base JIT does not: a regression in the "
                "diff JIT"
            )
        if b and not d:
            return (
                f"the base JIT crashes ({what}), the diff JIT does not: fixed (or moved) in the "
                "diff JIT"
            )
        if b and d:
            return f"both JITs crash on their own ({what}): not a difference between them"
        return (
            f"neither JIT crashes on its own: {what} needs both (asm diffs: superpmi comparing "
            "their compile "
            "results)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "base_jit": self.base.to_json(self.expected),
            "diff_jit": self.diff.to_json(self.expected),
            "conclusion": self.conclusion,
        }


def regression(
    cmd: ReproCommand,
    repro: Path,
    expected: Expectation,
    *,
    runs: int,
    timeout: float,
    workdir: Path,
) -> Regression | None:
    """None when the command has one JIT only (nothing to compare)."""
    if len(cmd.jits) < 2:
        return None
    out = Regression(expected, JitAlone("base JIT", cmd.jits[0]), JitAlone("diff JIT", cmd.jits[1]))
    for alone, jit2 in ((out.base, False), (out.diff, True)):
        argv = [
            *cmd.emulator,
            cmd.program,
            *single_jit_options(cmd.options, jit2=jit2),
            alone.path,
            str(repro),
        ]
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
