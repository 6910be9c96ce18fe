"""Causes in the setup that the pipeline establishes by what superpmi did or by experiment (the
stop's own are spmi_dbg.analysis.causes'), each stated only with all of its evidence:

- `jit-ee-version-mismatch`: superpmi refused the JIT (`ERROR: Jit Compiler has wrong version
  identifier`, exit status 254: JitFailedToInit): the JIT was built for another JIT-EE interface
  version than this superpmi (dotnet/runtime#104327, #112820).
- `option-needs-unrecorded-data`: the crash needs a JIT setting (the settings minimization kept it),
  it is a map the collection never recorded, and the record replays clean without the settings.
- `diff-needs-compile-results`: `-a` with one JIT compares its compile results with those stored in
  the collection, and superpmi said it could not (`method N is missing a compileResult, cannot do
  diffing`): the collection holds no compile results."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from spmi_dbg.analysis.facts import Cause, Diagnosis
from spmi_dbg.repro.jitoptions import OptionMinimization
from spmi_dbg.repro.native import NativeRun

WRONG_VERSION = "Jit Compiler has wrong version identifier"


def version_mismatch(
    status: int | None, stderr: Iterable[str], jits: Iterable[str]
) -> Cause | None:
    said = next((line for line in stderr if WRONG_VERSION in line), None)
    if status != 254 or said is None:
        return None
    return Cause(
        "jit-ee-version-mismatch",
        [
            f"superpmi said: {said.strip()}",
            "the replay exited with status 254 (JitFailedToInit): superpmi refused the JIT at "
            "start-up",
            f"the JIT(s): {', '.join(jits)}",
        ],
        "the JIT was built for another JIT-EE interface version than this superpmi: replay it "
        "with the superpmi and the collections of its own JIT-EE version (superpmi.py takes the "
        "collections of the JIT's JIT-EE GUID)",
    )


def needs_unrecorded_data(
    d: Diagnosis | None, m: OptionMinimization | None, without: NativeRun | None
) -> Cause | None:
    """`without`: the repro replayed with none of the given settings."""
    if d is None or m is None or not m.needed or without is None:
        return None
    nm = d.null_map
    if nm is None or nm.owner_type != "MethodContext" or without.returncode != 0:
        return None
    needed = ", ".join(s.text for s in m.needed)
    return Cause(
        "option-needs-unrecorded-data",
        [
            f"the crash needs {needed} (the settings minimization kept it: without it the repro "
            "does not crash)",
            f"with it the JIT asks for {nm.member}, which the collection never recorded (null "
            f"map {nm.owner_type}::{nm.member})",
            f"without the settings the record replays clean ({without.describe()})",
        ],
        f"{needed} makes the JIT ask for data this collection never recorded: replay without it, "
        "or recollect with it set",
    )


_NO_COMPILE_RESULT = re.compile(r"method (\d+) is missing a compileResult, cannot do diffing")


def diff_needs_compile_results(
    options: Sequence[str], jits: Sequence[str], stderr: Iterable[str], replayed: int
) -> Cause | None:
    """`stderr`: every partition's; `replayed`: the method contexts the replays covered."""
    apply_diff = any(len(o) >= 2 and "-applydiff".startswith(o.lower()) for o in options)
    if not apply_diff or len(jits) != 1:
        return None
    missing = [m.group(1) for line in stderr for m in [_NO_COMPILE_RESULT.search(line)] if m]
    if not missing:
        return None
    return Cause(
        "diff-needs-compile-results",
        [
            "-a with one JIT compares its compile results with those stored in the collection",
            f"superpmi said 'method N is missing a compileResult, cannot do diffing' for "
            f"{len(missing)} of {replayed} method contexts (first: {missing[0]})",
        ],
        "this collection holds no compile results: give the base and the diff JIT (superpmi -a "
        "base.so diff.so ...), or use a collection recorded with compile results",
    )
