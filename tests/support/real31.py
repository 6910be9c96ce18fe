"""What the real superpmi 3.1.23 prints for the cases both halves of the real suite check (the live
test on a build and its twin on the transcript of the same run): expected once, asserted once."""

from __future__ import annotations

import csv
from pathlib import Path

from spmi_dbg.failures.output import ASSERT_EXCEPTION, parse_output

# `-jitoption JitStressRegs=400 -c 543` on api.mch with the Checked JIT: the assert's place, its
# expression, the method and its IL size
GENTREE = (
    "/_/src/src/jit/gentree.cpp",
    6080,
    '!"gtArgEntryByNode: node not found"',
    "StringBuilder:AppendFormatHelper(ref,ref,struct):ref:this",
    844,
)


def method_names(api_map: Path) -> dict[int, str]:
    """`mcs -dumpMap`'s method names: what tells which record an assert's method is,
    independently."""
    with open(api_map, newline="") as f:
        return {int(row["index"]): row["method name"] for row in csv.DictReader(f)}


def assert_the_543_assert(stdout: str, stderr: str) -> None:
    """3.1's assert line has no `#N` and no phase: its number comes from its failed compile (paired
    by IL size), and while the replay runs (stderr unbuffered, stdout not yet written) it is an
    error that awaits its ISSUE line, which no reader may take as settled."""
    assert "#543" not in stdout and "during '" not in stdout  # what 3.1's line lacks
    out = parse_output(stdout.splitlines(), stderr.splitlines())
    assert [(f.kind, f.method_context) for f in out.failures] == [("assert", 543)]
    a = out.failures[0]
    assert (a.file, a.source_line, a.message, a.method, a.il_size) == GENTREE and a.phase is None
    assert [(f.method_context, f.message, f.il_size) for f in out.failed_compiles] == [
        (543, ASSERT_EXCEPTION, 844)
    ]
    assert out.awaiting == [] and out.unpaired == []
    early = parse_output([], stderr.splitlines())
    assert [(f.kind, f.method_context) for f in early.failures] == [("error", 543)]
    assert early.awaiting == early.failures and not early.settled(early.failures[0])
