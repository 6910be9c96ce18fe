"""The real superpmi of the conformance suite (tests/real/), in its two halves
(scripts/real_superpmi_layout.py, shared with bench/real_superpmi.py):

- the reference as data (collections and transcripts), unpacked by scripts/unpack-real-superpmi.sh
  into .real-superpmi/3.1.23/: always there in CI, missing files fail the data half;
- a real build, where SPMI_DBG_REAL_SUPERPMI points: the live half (marker `live`) runs only then
  (tests/conftest.py deselects it otherwise and says so in one line); an incomplete build named
  there fails, never skips."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from scripts.real_superpmi_layout import (
    DATA,
    ENV,
    Real,
    Reference,
    Transcript,
    located,
    located_reference,
    no_build_reason,
)

__all__ = [
    "DATA",
    "ENV",
    "Real",
    "Reference",
    "Transcript",
    "copy_read_only",
    "live_build_present",
    "no_build_reason",
    "real_superpmi",
    "reference",
]


def live_build_present() -> bool:
    return located() is not None


def real_superpmi() -> Real:
    """The real build, checked: an AssertionError naming what is missing (a live test that runs
    fails, never skips)."""
    real = located()
    assert real is not None, no_build_reason()
    missing = [str(p) for p in real.missing()]
    assert not missing, (
        f"the real superpmi build {ENV} names ({real.root}) is incomplete: missing "
        f"{', '.join(missing)}"
    )
    return real


def reference() -> Reference:
    """The reference as data, checked: an AssertionError naming what is missing."""
    ref = located_reference()
    missing = [str(p) for p in ref.missing()]
    assert not missing, (
        f"the real superpmi reference data is not where tests/real/ looks ({ref.root}; run "
        f"scripts/unpack-real-superpmi.sh): missing {', '.join(missing)}"
    )
    return ref


def copy_read_only(src: Path, dest: Path) -> Path:
    """A copy a test may corrupt or strip (the reference's own files stay as they are)."""
    shutil.copyfile(src, dest)
    dest.chmod(0o755 if os.access(src, os.X_OK) else 0o644)
    return dest
