"""The real superpmi of the conformance suite (tests/real/): its layout is
scripts/real_superpmi_layout.py's (shared with bench/real_superpmi.py), unpacked by
scripts/unpack-real-superpmi.sh into .real-superpmi/3.1.23/, or wherever SPMI_DBG_REAL_SUPERPMI
points. Missing files fail the tests that need them, never skip them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from scripts.real_superpmi_layout import DEFAULT, ENV, Real, located

__all__ = ["DEFAULT", "ENV", "Real", "copy_read_only", "real_superpmi"]


def real_superpmi() -> Real:
    """The reference, checked: an AssertionError naming what is missing (CI fails, never skips)."""
    real = located()
    missing = [str(p) for p in real.missing()]
    assert not missing, (
        f"the real superpmi is not where tests/real/ looks ({real.root}; set {ENV} to an unpacked "
        "copy, or "
        f"run scripts/unpack-real-superpmi.sh): missing {', '.join(missing)}"
    )
    return real


def copy_read_only(src: Path, dest: Path) -> Path:
    """A copy a test may corrupt or strip (the reference's own files stay as they are)."""
    shutil.copyfile(src, dest)
    dest.chmod(0o755 if os.access(src, os.X_OK) else 0o644)
    return dest
