"""superpmi's own failure lines (docs/superpmi-conventions.md 1.1), parsed into Failures:

- assert: `ISSUE: <ASSERT> [#N ]file (line) - Assertion failed 'expr' in 'method'[ during 'phase']
  (IL size n...)` (stdout). Today's superpmi names the method context (`#N`) and the JIT the phase;
  3.1's names neither: its assert is paired with its failed compile on stderr by what the lines say
  (below);
- error: `ERROR: [JIT2 ][main ]method N of size S failed to load and compile correctly[ by JIT1|2]
  (...)` with the `ERROR: Exception thrown: <message>` / `ERROR: Unexpected exception <code> was
  thrown.` line printed next to it (stderr; before it for a JIT's failure, after it for the near
  differ's);
- missing: `MISSING: Method context N failed to replay: <message>` (stdout).

stdout and stderr are read apart: each stream's own order is reliable, their interleaving is not
(piped, stdout is block-buffered and stderr is not, so an assert's ERROR lines arrive long before
its ISSUE line). A 3.1 assert (no `#N`) takes the method context of the failed compile whose
exception is the assert's (`DebugBreak or AV Exception 123`, MyICJI::doAssert's
DebugBreakorAV(0x7b)) and whose size is the assert's IL size: the k-th assert of a size with the
k-th such failed compile (the record's method name decides, where the caller can name records). A
compile that failed because its JIT asserted is an `assert`, not also an `error`: the assert is what
the engineer debugs. Such a failed compile whose ISSUE line has not been read (yet) is `awaiting`:
still an error in `failures` (its stdout may be lost), but a reader of a running replay must not
take it for one."""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

FailureKind = Literal["assert", "error", "missing"]

_ASSERT = re.compile(
    r"^ISSUE: <ASSERT> (?:#(?P<mc>\d+) )?(?P<file>.*?) \((?P<line>\d+)\) - Assertion failed "
    r"'(?P<expr>.*)' in '(?P<method>.*?)'(?: during '(?P<phase>.*?)')?(?: \(IL size "
    r"(?P<il>\d+)|\s*$)"
)
_FAILED = re.compile(
    r"^ERROR: (?P<jit2>JIT2 )?(?P<main>main )?[Mm]ethod (?P<mc>\d+) of size (?P<size>\d+) failed "
    r"to "
    r"load and compile correctly(?: by (?P<jit>JIT[12]))?"
)
_EXCEPTION = re.compile(
    r"^ERROR: (?:Exception thrown: (?P<message>.*)|Unexpected exception (?P<code>\S+) was "
    r"thrown\.)$"
)
_MISSING = re.compile(r"^MISSING: Method context (?P<mc>\d+) failed to replay: (?P<message>.*)$")
_FAILURE_PREFIXES = ("ISSUE: <ASSERT> ", "MISSING: ", "ERROR: ")
_NUMBERS = re.compile(r"\b(?:0x)?[0-9a-fA-F]{6,}\b")
# The exception MyICJI::doAssert raises after logging the assert (DebugBreakorAV(0x7b)), 3.1 and
# today alike.
ASSERT_EXCEPTION = "DebugBreak or AV Exception 123"
NO_EXCEPTION = "(no exception line)"


def source_tail(path: str | None) -> str:
    """A JIT or superpmi source path without the machine's part: from its last `jit/` (or
    `superpmi/`) directory on, else its name. `/_/src/src/jit/importer.cpp`,
    `/__w/1/s/src/coreclr/jit/importer.cpp` and `/home/me/runtime/src/coreclr/jit/importer.cpp`
    are all `jit/importer.cpp`."""
    p = "/" + (path or "").replace("\\", "/").lstrip("/")  # a tail already cut stays as it is
    for root in ("/jit/", "/superpmi/"):
        at = p.rfind(root)
        if at >= 0:
            return p[at + 1 :]
    return p.rsplit("/", 1)[-1]


_KEY_PLACE = re.compile(r"^(assert: .*) \((?P<file>.*):(?P<line>\d+)\)$")


def same_key(a: str | None, b: str | None) -> bool:
    """Two failures' keys name the same failure: a key written before keys were machine-free (an
    assert's full path) matches today's."""
    if a is None or b is None:
        return a == b
    return bucket_key_form(a) == bucket_key_form(b)


def bucket_key_form(key: str) -> str:
    """`key` with an assert's source path cut to its repository tail."""
    m = _KEY_PLACE.match(key)
    if m is None:
        return key
    return f"{m.group(1)} ({source_tail(m.group('file'))}:{m.group('line')})"


def bucket_name(kind: str, key: str) -> str:
    """A failure bucket's name: <kind>-<10 hex digits of its key> (triage's failure buckets, the
    repro's and recheck's SARIF rule: one name for one failure everywhere)."""
    return f"{kind}-{hashlib.sha1(bucket_key_form(key).encode()).hexdigest()[:10]}"


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    method_context: int
    line: str  # the line that names it, as superpmi printed it
    # assert: the expression; error: the exception message; missing: superpmi's message
    message: str
    file: str | None = None  # assert only
    source_line: int | None = None  # assert only
    method: str | None = None  # assert only: the method being compiled
    phase: str | None = None  # assert only
    jit: str | None = None  # error only: JIT1, JIT2 or the near differ ("main")
    il_size: int | None = None  # assert: the IL size its line names; error: the size its line names

    @property
    def key(self) -> str:
        """What makes two failures the same one: an assert's expression and place, an exception's
        message (its code kept: c0000005 is not another code), a missing answer's message (keys and
        tokens normalised). An assert's file is its repository tail (`source_tail`): the same bug
        has the same key on every machine, whatever the build's checkout path."""
        if self.kind == "assert":
            return f"assert: {self.message} ({source_tail(self.file)}:{self.source_line})"
        if self.kind == "error":
            return f"error: {self.message}"
        return f"missing: {_NUMBERS.sub('N', self.message)}"

    def describe(self) -> str:
        if self.kind == "assert":
            return (
                f"assert '{self.message}' at {self.file} ({self.source_line}) in method context "
                f"{self.method_context}"
            )
        if self.kind == "error":
            return f"failed compile ({self.message}) of method context {self.method_context}"
        return f"missing data ({self.message}) in method context {self.method_context}"

    def to_json(self) -> dict[str, Any]:
        """Its JSON form, with its key; spmi_dbg.jsonfacts reads it back (the key ignored, a field
        left out None)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "method_context": self.method_context,
            "key": self.key,
            "message": self.message,
            "line": self.line,
        }
        if self.kind == "assert":
            out |= {
                "file": self.file,
                "source_line": self.source_line,
                "method": self.method,
                "phase": self.phase,
            }
        if self.jit is not None:
            out["jit"] = self.jit
        if self.il_size is not None:
            out["il_size"] = self.il_size
        return out


@dataclass(frozen=True)
class ReplayOutput:
    """What one replay's output says of its failures."""

    # parse_failures: in method context order, an assert's failed compile not repeated
    failures: list[Failure]
    # every failed-compile line (an assert's too, each JIT's), in output order
    failed_compiles: list[Failure]
    # failures (errors) that an assert's ISSUE line not read yet would claim: a running replay's
    # reader waits
    awaiting: list[Failure] = field(default_factory=list)
    # assert lines without `#N` that no failed compile matched
    unpaired: list[str] = field(default_factory=list)

    def settled(self, failure: Failure) -> bool:
        """No failure up to this one's method context awaits its ISSUE line: while the replay runs,
        what comes later in its output cannot change what this one is, nor put another before it."""
        return not any(a.method_context <= failure.method_context for a in self.awaiting)


# a method context's method name, where the collection is at hand
NameOf = Callable[[int], "str | None"]


def parse_output(
    stdout: Iterable[str], stderr: Iterable[str], *, name_of: NameOf | None = None
) -> ReplayOutput:
    numbered: list[Failure] = []
    unnumbered: list[tuple[str, re.Match[str]]] = []
    missing: list[Failure] = []
    for raw in stdout:
        line = raw.rstrip("\r\n")
        m = _ASSERT.match(line)
        if m:
            if m["mc"] is not None:
                numbered.append(_assert(line, m, int(m["mc"])))
            else:
                unnumbered.append((line, m))
            continue
        m = _MISSING.match(line)
        if m:
            missing.append(Failure("missing", int(m["mc"]), line, m["message"]))
    failed = _errors(stderr)
    paired, unpaired = _pair(unnumbered, failed, {f.method_context for f in numbered}, name_of)
    asserts = numbered + paired
    asserted = {f.method_context for f in asserts}
    errors = [f for f in failed if f.method_context not in asserted]
    awaiting = [f for f in errors if f.message == ASSERT_EXCEPTION]
    order = {"assert": 0, "error": 1, "missing": 2}
    return ReplayOutput(
        sorted([*asserts, *errors, *missing], key=lambda f: (f.method_context, order[f.kind])),
        failed,
        awaiting,
        unpaired,
    )


def _assert(line: str, m: re.Match[str], mc: int) -> Failure:
    return Failure(
        "assert",
        mc,
        line,
        m["expr"],
        m["file"],
        int(m["line"]),
        m["method"],
        m["phase"],
        il_size=None if m["il"] is None else int(m["il"]),
    )


def _pair(
    unnumbered: list[tuple[str, re.Match[str]]],
    failed: list[Failure],
    numbered: set[int],
    name_of: NameOf | None,
) -> tuple[list[Failure], list[str]]:
    """Each assert line without `#N` (in stdout order) with a failed compile of the assert's
    exception (in stderr order, after the one the assert before it took): the first whose size is
    the assert's IL size and, where records can be named, whose record is the assert's method; for
    an assert whose IL size no such failed compile has, the next one whose size no assert line
    names."""
    candidates = [
        f for f in failed if f.message == ASSERT_EXCEPTION and f.method_context not in numbered
    ]
    sizes = {int(m["il"]) for _, m in unnumbered if m["il"] is not None}
    by_size: dict[int | None, deque[int]] = {}
    for i, c in enumerate(candidates):
        by_size.setdefault(c.il_size if c.il_size in sizes else None, deque()).append(i)
    out: list[Failure] = []
    unpaired: list[str] = []
    pos = 0
    for line, m in unnumbered:
        il = None if m["il"] is None else int(m["il"])
        queue = by_size.get(il if il in by_size else None, deque())
        while queue and queue[0] < pos:  # before the failed compile the assert before this one took
            queue.popleft()
        if not queue:
            unpaired.append(line)
            continue
        pick = 0
        if name_of is not None and il is not None and len(queue) > 1:
            pick = next(
                (
                    k
                    for k, i in enumerate(queue)
                    if _same_method(name_of(candidates[i].method_context), m["method"])
                ),
                0,
            )
        i = queue[pick]
        del queue[pick]
        pos = i + 1
        out.append(_assert(line, m, candidates[i].method_context))
    return out, unpaired


def _same_method(record: str | None, method: str) -> bool:
    """The record's name (`Class:Method`, a signature perhaps) is the assert's
    `Class:Method(sig)...`."""
    if not record:
        return False
    return record.split("(", 1)[0].strip() == method.split("(", 1)[0].strip()


def parse_failures(stdout: Iterable[str], stderr: Iterable[str]) -> list[Failure]:
    """Every failure in the output, in method context order (a method's assert before its other
    failures)."""
    return parse_output(stdout, stderr).failures


def read_output(stdout: Path, stderr: Path, *, name_of: NameOf | None = None) -> ReplayOutput:
    """parse_output of a replay's output files (a missing or unreadable file is no output)."""
    return parse_output(read_lines(stdout), read_lines(stderr), name_of=name_of)


def read_lines(path: Path) -> list[str]:
    try:
        return path.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def is_failure_line(line: str) -> bool:
    """A line parse_output may use (the rest of a replay's output can be dropped before parsing)."""
    return line.startswith(_FAILURE_PREFIXES)


def _errors(stderr: Iterable[str]) -> list[Failure]:
    """Failed-compile lines with their exception lines. A JIT's exception line comes before its
    failure line: with -a both JITs' before both failure lines, JIT1's first (3.1 prints `JIT2 main
    method N` before JIT1's `main method N`: JIT2's line takes the later exception). The near
    differ's comes right after its `main method N` line, and is never the assert's exception. A
    `main method` line whose exception came before it is 3.1's JIT failure (jit None), one whose
    exception follows it the near differ's ("main")."""
    out: list[Failure] = []
    pending: list[str] = []  # exception lines not yet given to a failed compile, oldest first
    # index in out of the `main method` line just read, with no exception yet
    waiting: int | None = None
    for raw in stderr:
        line = raw.rstrip("\r\n")
        e = _EXCEPTION.match(line)
        if e:
            message = (
                e["message"] if e["message"] is not None else f"Unexpected exception {e['code']}"
            )
            if waiting is not None and message != ASSERT_EXCEPTION:
                f = out[waiting]
                out[waiting] = Failure(
                    "error", f.method_context, f.line, message, jit="main", il_size=f.il_size
                )
            else:
                pending.append(message)
            waiting = None
            continue
        m = _FAILED.match(line)
        if not m:
            continue
        waiting = None
        jit = "JIT2" if m["jit2"] else m["jit"]
        if pending:
            message = pending.pop() if m["jit2"] else pending.pop(0)
        else:
            message = NO_EXCEPTION
            if m["main"] and not m["jit2"]:
                waiting = len(out)
        out.append(Failure("error", int(m["mc"]), line, message, jit=jit, il_size=int(m["size"])))
    return out
