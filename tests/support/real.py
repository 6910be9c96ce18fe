"""The real superpmi of the conformance suite (tests/real/): superpmi, mcs, JITs and collections of .NET Core
3.1.23 (../shared/real-superpmi/README.md), unpacked by scripts/unpack-real-superpmi.sh into
.real-superpmi/3.1.23/, or wherever SPMI_DBG_REAL_SUPERPMI points (a directory of the same layout: bin/, collections/).
Missing files fail the tests that need them, never skip them."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .common import ROOT

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
    def api_reljit(self) -> Path:
        """5,514 method contexts recorded with the official Release JIT."""
        return self.root / "collections" / "api-reljit.mch"

    @property
    def api_map(self) -> Path:
        return self.root / "collections" / "api.map.csv"

    def required(self) -> list[Path]:
        return [self.superpmi, self.superpmi_o0, self.mcs, self.jit_checked, self.jit_release, self.jit_official,
                self.api, self.api_reljit, self.api_map]

    def mcs_run(self, *args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.mcs), *map(str, args)], capture_output=True, text=True, timeout=timeout)

    def replay(self, *args: str | Path, timeout: float = 300,
               cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """superpmi (-O2) run natively, stdout and stderr apart."""
        return subprocess.run([str(self.superpmi), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                              cwd=cwd)


def real_superpmi() -> Real:
    """The reference, checked: an AssertionError naming what is missing (CI fails, never skips)."""
    where = os.environ.get(ENV)
    real = Real(Path(where) if where else DEFAULT)
    missing = [str(p) for p in real.required() if not p.is_file()]
    assert not missing, (
        f"the real superpmi is not where tests/real/ looks ({real.root}; set {ENV} to an unpacked copy, or run "
        f"scripts/unpack-real-superpmi.sh): missing {', '.join(missing)}")
    return real


def copy_read_only(src: Path, dest: Path) -> Path:
    """A copy a test may corrupt or strip (the reference's own files stay as they are)."""
    shutil.copyfile(src, dest)
    dest.chmod(0o755 if os.access(src, os.X_OK) else 0o644)
    return dest
