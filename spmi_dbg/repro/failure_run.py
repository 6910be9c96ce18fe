"""A native replay read for superpmi's own failure lines (spmi_dbg.failures): what a compile-failure
target is located, verified and minimized with. No debugger: superpmi prints these failures
itself."""

from __future__ import annotations

from pathlib import Path

from spmi_dbg.failures.output import Failure, read_output
from spmi_dbg.repro.native import NativeRun, run_native


def run_for_failures(
    argv: list[str], *, timeout: float, workdir: Path, name: str
) -> tuple[NativeRun, list[Failure]]:
    """Run `argv` with its output in `workdir/<name>.stdout|stderr`; the failures it reported."""
    out, err = workdir / f"{name}.stdout", workdir / f"{name}.stderr"
    run = run_native(argv, timeout=timeout, stdout=out, stderr=err)
    return run, read_output(out, err).failures


def reproduces(failures: list[Failure], key: str, method_context: int) -> bool:
    """The same failure (Failure.key) reported for the same method context."""
    return any(f.key == key and f.method_context == method_context for f in failures)
