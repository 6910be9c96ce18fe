"""superpmi's own failure lines (docs/superpmi-conventions.md 1.1), parsed into Failures:

- assert: `ISSUE: <ASSERT> #N file (line) - Assertion failed 'expr' in 'method' during 'phase' (...)` (stdout);
- error: `ERROR: [main ]method N of size S failed to load and compile correctly[ by JIT1|2] (...)` with the
  `ERROR: Exception thrown: <message>` / `ERROR: Unexpected exception <code> was thrown.` line printed next to
  it (stderr; before it for a JIT's failure, after it for the near differ's);
- missing: `MISSING: Method context N failed to replay: <message>` (stdout).

A compile that failed because its JIT asserted is an `assert`, not also an `error`: the assert is what the
engineer debugs (its exception is superpmi's DebugBreakorAV that follows every assert)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

FailureKind = Literal["assert", "error", "missing"]
FAILURE_KINDS: tuple[FailureKind, ...] = ("assert", "error", "missing")

_ASSERT = re.compile(r"^ISSUE: <ASSERT> #(?P<mc>\d+) (?P<file>.*?) \((?P<line>\d+)\) - Assertion failed "
                     r"'(?P<expr>.*)' in '(?P<method>.*?)' during '(?P<phase>.*?)'")
_FAILED = re.compile(r"^ERROR: (?P<main>main )?[Mm]ethod (?P<mc>\d+) of size \d+ failed to load and compile "
                     r"correctly(?: by (?P<jit>JIT[12]))?")
_EXCEPTION = re.compile(r"^ERROR: (?:Exception thrown: (?P<message>.*)|Unexpected exception (?P<code>\S+) was "
                        r"thrown\.)$")
_MISSING = re.compile(r"^MISSING: Method context (?P<mc>\d+) failed to replay: (?P<message>.*)$")
_FAILURE_PREFIXES = ("ISSUE: <ASSERT> ", "MISSING: ", "ERROR: ")
_NUMBERS = re.compile(r"\b(?:0x)?[0-9a-fA-F]{6,}\b")


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    method_context: int
    line: str  # the line that names it, as superpmi printed it
    message: str  # assert: the expression; error: the exception message; missing: superpmi's message
    file: str | None = None  # assert only
    source_line: int | None = None  # assert only
    method: str | None = None  # assert only: the method being compiled
    phase: str | None = None  # assert only
    jit: str | None = None  # error only: JIT1, JIT2 or the near differ ("main")

    @property
    def key(self) -> str:
        """What makes two failures the same one: an assert's expression and place, an exception's message (its
        code kept: c0000005 is not another code), a missing answer's message (keys and tokens normalised)."""
        if self.kind == "assert":
            return f"assert: {self.message} ({self.file}:{self.source_line})"
        if self.kind == "error":
            return f"error: {self.message}"
        return f"missing: {_NUMBERS.sub('N', self.message)}"

    def describe(self) -> str:
        if self.kind == "assert":
            return (f"assert '{self.message}' at {self.file} ({self.source_line}) in method context "
                    f"{self.method_context}")
        if self.kind == "error":
            return f"failed compile ({self.message}) of method context {self.method_context}"
        return f"missing data ({self.message}) in method context {self.method_context}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "method_context": self.method_context, "key": self.key,
                               "message": self.message, "line": self.line}
        if self.kind == "assert":
            out |= {"file": self.file, "source_line": self.source_line, "method": self.method,
                    "phase": self.phase}
        if self.jit is not None:
            out["jit"] = self.jit
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Failure:
        kind = data["kind"]
        if kind not in ("assert", "error", "missing"):
            raise ValueError(f"unknown failure kind {kind!r}")
        line = data.get("source_line")
        return cls(kind, int(data["method_context"]), str(data.get("line") or ""), str(data.get("message") or ""),
                   data.get("file"), None if line is None else int(line), data.get("method"), data.get("phase"),
                   data.get("jit"))


@dataclass(frozen=True)
class ReplayOutput:
    """What one replay's output says of its failures."""

    failures: list[Failure]  # parse_failures: in method context order, an assert's failed compile not repeated
    failed_compiles: list[Failure]  # every failed-compile line (an assert's too, each JIT's), in output order


def parse_output(stdout: Iterable[str], stderr: Iterable[str]) -> ReplayOutput:
    asserts: list[Failure] = []
    missing: list[Failure] = []
    for raw in stdout:
        line = raw.rstrip("\r\n")
        m = _ASSERT.match(line)
        if m:
            asserts.append(Failure("assert", int(m["mc"]), line, m["expr"], m["file"], int(m["line"]), m["method"],
                                   m["phase"]))
            continue
        m = _MISSING.match(line)
        if m:
            missing.append(Failure("missing", int(m["mc"]), line, m["message"]))
    asserted = {f.method_context for f in asserts}
    failed = _errors(stderr)
    errors = [f for f in failed if f.method_context not in asserted]
    order = {"assert": 0, "error": 1, "missing": 2}
    return ReplayOutput(sorted([*asserts, *errors, *missing], key=lambda f: (f.method_context, order[f.kind])),
                        failed)


def parse_failures(stdout: Iterable[str], stderr: Iterable[str]) -> list[Failure]:
    """Every failure in the output, in method context order (a method's assert before its other failures)."""
    return parse_output(stdout, stderr).failures


def read_output(stdout: Path, stderr: Path) -> ReplayOutput:
    """parse_output of a replay's output files (a missing or unreadable file is no output)."""
    return parse_output(read_lines(stdout), read_lines(stderr))


def read_lines(path: Path) -> list[str]:
    try:
        return path.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def is_failure_line(line: str) -> bool:
    """A line parse_output may use (the rest of a replay's output can be dropped before parsing)."""
    return line.startswith(_FAILURE_PREFIXES)


def _errors(stderr: Iterable[str]) -> list[Failure]:
    """Exception lines pair with failed-compile lines in order: with -a both JITs' exception lines come before both
    JITs' failure lines; the near differ's (`main method`) exception line comes after its failure line."""
    out: list[Failure] = []
    pending: list[str] = []  # exception lines not yet given to a failed compile, oldest first
    waiting: int | None = None  # index in out of a near-differ failure whose exception line follows it
    for raw in stderr:
        line = raw.rstrip("\r\n")
        e = _EXCEPTION.match(line)
        if e:
            message = e["message"] if e["message"] is not None else f"Unexpected exception {e['code']}"
            if waiting is not None:
                f = out[waiting]
                out[waiting] = Failure("error", f.method_context, f.line, message, jit=f.jit)
                waiting = None
            else:
                pending.append(message)
            continue
        m = _FAILED.match(line)
        if not m:
            continue
        main = bool(m["main"])
        waiting = None
        if pending:
            out.append(Failure("error", int(m["mc"]), line, pending.pop(0), jit="main" if main else m["jit"]))
            continue
        out.append(Failure("error", int(m["mc"]), line, "(no exception line)", jit="main" if main else m["jit"]))
        if main:
            waiting = len(out) - 1
    return out
