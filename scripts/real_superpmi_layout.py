"""The real superpmi reference's layout (a module, not a script): the files
scripts/unpack-real-superpmi.sh unpacks into .real-superpmi/<version>/ (superpmi, mcs, JITs and
collections of .NET Core 3.1.23, ../shared/real-superpmi/README.md), or wherever
SPMI_DBG_REAL_SUPERPMI points (a directory of the same layout: bin/, collections/). Named once here
for the conformance suite (tests/support/real.py) and the bench (bench/real_superpmi.py); the tool
itself never reads it. Standard library only."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = "SPMI_DBG_REAL_SUPERPMI"
DEFAULT = ROOT / ".real-superpmi" / "3.1.23"


@dataclass(frozen=True)
class Real:
    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def superpmi(self) -> Path:
        """The -O2 Checked superpmi: main's locals optimized out."""
        return self.bin / "superpmi"

    @property
    def superpmi_o0(self) -> Path:
        return self.bin / "superpmi_O0"

    @property
    def mcs(self) -> Path:
        return self.bin / "mcs"

    @property
    def jit_checked(self) -> Path:
        return self.bin / "libclrjit_checked.so"

    @property
    def jit_release(self) -> Path:
        return self.bin / "libclrjit_release.so"

    @property
    def jit_official(self) -> Path:
        """Microsoft's Release JIT: .symtab only, no DWARF."""
        return self.bin / "libclrjit_official_release.so"

    @property
    def api(self) -> Path:
        """5,657 method contexts recorded with the Checked JIT."""
        return self.root / "collections" / "api.mch"

    @property
    def api_index(self) -> Path:
        return self.root / "collections" / "api.mch.mct"

    @property
    def api_reljit(self) -> Path:
        """5,514 method contexts recorded with the official Release JIT."""
        return self.root / "collections" / "api-reljit.mch"

    @property
    def api_reljit_index(self) -> Path:
        return self.root / "collections" / "api-reljit.mch.mct"

    @property
    def api_map(self) -> Path:
        """`mcs -dumpMap api.mch`."""
        return self.root / "collections" / "api.map.csv"

    def required(self) -> list[Path]:
        return [
            self.superpmi,
            self.superpmi_o0,
            self.mcs,
            self.jit_checked,
            self.jit_release,
            self.jit_official,
            self.api,
            self.api_index,
            self.api_reljit,
            self.api_reljit_index,
            self.api_map,
        ]

    def missing(self) -> list[Path]:
        return [p for p in self.required() if not p.is_file()]

    def mcs_run(self, *args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.mcs), *map(str, args)], capture_output=True, text=True, timeout=timeout
        )

    def replay(
        self, *args: str | Path, timeout: float = 300, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """superpmi (-O2) run natively, stdout and stderr apart."""
        return subprocess.run(
            [str(self.superpmi), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
        )


def located() -> Real:
    """The reference where $SPMI_DBG_REAL_SUPERPMI says, else DEFAULT (not checked: see
    Real.missing)."""
    where = os.environ.get(ENV)
    return Real(Path(where) if where else DEFAULT)
