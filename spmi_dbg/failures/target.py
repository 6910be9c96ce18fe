"""`--failure KIND[:TEXT]`: which failure a repro is for. KIND is crash (a process-killing crash or
hang, found under the debugger: the default), assert, error, missing or any; TEXT, when given, must
occur in the failure's line or message (case-sensitive, as superpmi printed it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from spmi_dbg.errors import UsageError
from spmi_dbg.failures.output import Failure

# The superpmi switch that makes each kind of failure stop under a debugger
# (docs/superpmi-conventions.md 1):
# -boa breaks in a JIT assert, -boe after a failed compile, -box at superpmi's own exceptions
# (missing data).
BREAK_SWITCH = {"assert": "-boa", "error": "-boe", "missing": "-box"}

TargetKind = Literal["crash", "assert", "error", "missing", "any"]
TARGET_KINDS: tuple[TargetKind, ...] = ("crash", "assert", "error", "missing", "any")


@dataclass(frozen=True)
class FailureTarget:
    kind: TargetKind = "crash"
    text: str | None = None

    @property
    def is_crash(self) -> bool:
        return self.kind == "crash"

    def noun(self) -> str:
        """What is sought without an article: `JIT assert`, for "no JIT assert", "the first JIT
        assert"."""
        what = {
            "crash": "crash",
            "assert": "JIT assert",
            "error": "failed compile",
            "missing": "missing data",
            "any": "failure",
        }[self.kind]
        return f"{what} containing {self.text!r}" if self.text else what

    def describe(self) -> str:
        """With its article: `a JIT assert`, `missing data`."""
        return self.noun() if self.kind == "missing" else f"a {self.noun()}"

    def matches(self, failure: Failure) -> bool:
        if self.kind not in ("any", failure.kind):
            return False
        return self.text is None or self.text in failure.line or self.text in failure.message


def parse_target(spec: str) -> FailureTarget:
    kind, sep, text = spec.partition(":")
    if kind not in TARGET_KINDS:
        raise UsageError(
            f"--failure {spec!r}: unknown kind {kind!r}; expected one of {', '.join(TARGET_KINDS)}"
            " (optionally followed by :TEXT)"
        )
    if sep and not text:
        raise UsageError(f"--failure {spec!r}: empty TEXT after ':'")
    if kind == "crash" and sep:
        raise UsageError(
            f"--failure {spec!r}: TEXT selects superpmi's own failure lines; a crash takes none"
        )
    return FailureTarget(kind, text if sep else None)


def first_match(failures: Sequence[Failure], target: FailureTarget) -> Failure | None:
    return next((f for f in failures if target.matches(f)), None)


def no_such_failure(target: FailureTarget, seen: Sequence[Failure], limit: int = 10) -> str:
    """The one line for a target that matched nothing, naming the failures that were seen."""
    if not seen:
        return f"no such failure: {target.describe()}; superpmi reported no failures"
    keys: dict[str, int] = {}
    for f in seen:
        keys.setdefault(f.key, f.method_context)
    shown = "; ".join(f"{k} (method context {n})" for k, n in list(keys.items())[:limit])
    more = f"; and {len(keys) - limit} more" if len(keys) > limit else ""
    return f"no such failure: {target.describe()}; seen: {shown}{more}"
