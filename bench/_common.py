"""Shared by the bench/ scripts: the package on sys.path, the installed native binaries, and the environment
timed commands run with."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Commands run as in a user's shell: with Python's bytecode cache on (a shell that exports
# PYTHONDONTWRITEBYTECODE makes every start recompile the package, ~50 ms).
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def native(relative: str) -> str:
    """An installed native artifact (spmi_dbg.paths names), or exit with what to do."""
    from spmi_dbg import paths

    p = paths.native_file(relative)
    if p is None:
        raise SystemExit(f"{relative} is not built: run pip install -e . first")
    return str(p)
