"""A disk that fails writes with EIO or EDQUOT (`faultwrite.c`, built here with the system's C
compiler and preloaded into a run): the fault suite's way to a failing disk where no real one, nor
a quota, can be had without root."""

from __future__ import annotations

import errno
import subprocess
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).with_name("faultwrite.c")


def build_shim(into: Path) -> Path:
    lib = into / "libfaultwrite.so"
    flags = ["-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror"]
    subprocess.run(["cc", *flags, "-o", lib, SOURCE, "-ldl"], check=True, capture_output=True)
    return lib


@dataclass(frozen=True)
class FailingDisk:
    """Writes under `directory` fail with `code` from the `start`-th on, for `span` writes (0: for
    good). `counter` counts the writes seen, across every process of the run."""

    shim: Path
    directory: Path
    counter: Path
    code: int = errno.EIO
    start: int = -1  # -1: count only, never fail
    span: int = 0

    def env(self) -> dict[str, str]:
        """The variables that make a run's writes go through the failing disk (run_cli's env)."""
        return dict(
            LD_PRELOAD=str(self.shim),
            SPMI_TEST_FAULT_DIR=str(self.directory.resolve()),
            SPMI_TEST_FAULT_COUNTER=str(self.counter),
            SPMI_TEST_FAULT_FROM=str(self.start),
            SPMI_TEST_FAULT_FOR=str(self.span),
            SPMI_TEST_FAULT_ERRNO=str(self.code),
        )

    def writes(self) -> int:
        """The writes counted so far."""
        return self.counter.stat().st_size if self.counter.exists() else 0
