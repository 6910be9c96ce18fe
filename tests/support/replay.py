"""spmi-replay run natively, as a real process, and its summary line."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from .natives import REPLAY

LOADED = re.compile(
    r"^Loaded (\d+)  Jitted (\d+)  FailedCompile (\d+) Excluded (\d+) Missing (\d+)( Diffs "
    r"(\d+))?$",
    re.M,
)


def replay(
    *args: str, timeout: float = 120, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [REPLAY, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env if env is not None else os.environ.copy(),
    )


def summary(out: str) -> tuple[int, ...]:
    m = LOADED.findall(out)
    assert len(m) == 1, out
    return tuple(int(x) for x in m[0] if x and not x.startswith(" "))
