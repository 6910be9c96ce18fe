"""One phase of `spmi-dbg repro` (spmi_dbg.repro.pipeline, failure_pipeline): timed, recorded in the
result, and its failure (ours, the system's, or a bug) turned into PhaseFailed with the reason the
report gives."""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Iterator

from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.repro.result import PhaseName, PhaseRecord, ReproProgress, ReproResult

# docs/superpmi-conventions.md 1.2
REPLAY_INPUT_FAILURES = {255: "GeneralFailure", 254: "JitFailedToInit"}


class PhaseFailed(Exception):
    """A phase could not do its work: the run stops there, and the report says why."""


@contextlib.contextmanager
def phase(
    result: ReproResult, name: PhaseName, progress: ReproProgress | None
) -> Iterator[PhaseRecord]:
    """A phase the run cannot go on without: its failure is the run's (report.json's
    `failed_phase` and `failure`), and stops it (PhaseFailed)."""
    try:
        with _recorded(result, name, progress) as record:
            yield record
    except PhaseFailed as e:
        result.error_phase, result.error = name, str(e)
        raise


@contextlib.contextmanager
def experiment(
    result: ReproResult, name: PhaseName, progress: ReproProgress | None
) -> Iterator[PhaseRecord]:
    """An experiment on a verified repro (its JIT settings, which JIT fails alone, what the failure
    needs): its failure is its own, said in its record; the repro stands and the run goes on (the
    body's value is lost: code after the `with` gives the fallback)."""
    with contextlib.suppress(PhaseFailed), _recorded(result, name, progress) as record:
        yield record


@contextlib.contextmanager
def _recorded(
    result: ReproResult, name: PhaseName, progress: ReproProgress | None
) -> Iterator[PhaseRecord]:
    """The phase timed and recorded in the result; its failure (ours, the system's, or a bug: then
    with the traceback in report.json) a PhaseFailed with the reason the report gives."""
    record = PhaseRecord(name)
    result.phases.append(record)
    if progress is not None:
        progress.phase_started(name)
    start = time.monotonic()
    try:
        yield record
        record.status = "ok"
    except PhaseFailed as e:
        record.status, record.detail = "failed", str(e)
        raise
    except (SpmiDbgError, OSError) as e:
        record.status, record.detail = "failed", str(e)
        raise PhaseFailed(str(e)) from None
    except Exception as e:  # a bug of ours: still a report, with the traceback in report.json
        record.status, record.detail = "failed", f"internal error: {type(e).__name__}: {e}"
        result.error_traceback = traceback.format_exc()
        raise PhaseFailed(record.detail) from None
    finally:
        record.seconds = time.monotonic() - start
        if progress is not None:
            progress.phase_finished(record)
