"""Causes in the setup that the pipeline establishes by what superpmi did or by experiment (the
stop's own are spmi_dbg.analysis.causes'), each stated only with all of its evidence:

- `jit-ee-version-mismatch`: superpmi refused the JIT (`ERROR: Jit Compiler has wrong version
  identifier`, exit status 254: JitFailedToInit): the JIT was built for another JIT-EE interface
  version than this superpmi (dotnet/runtime#104327, #112820).
- `option-needs-unrecorded-data`: the crash needs a JIT setting (the settings minimization kept it),
  it is a map the collection never recorded, and the record replays clean without the settings."""

from __future__ import annotations

from collections.abc import Iterable

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
