"""The real superpmi reference's layout (a module, not a script), in its two halves:

- the reference as data (`Reference`): what scripts/unpack-real-superpmi.sh unpacks from
  ../shared/real-superpmi/ into .real-superpmi/<version>/: the collections recorded from .NET Core
  3.1.23 (collections/) and what the real superpmi and mcs printed (transcripts/). Always there in
  CI: the data half of the conformance suite runs on it.
- a real build (`Real`): superpmi, mcs and JITs in the same layout (bin/, collections/), wherever
  SPMI_DBG_REAL_SUPERPMI points. Only the live half of the suite (marker `live`) and
  bench/real_superpmi.py need it; nothing in the repository builds or holds one.

Named once here for the conformance suite (tests/support/real.py) and the benches; the tool itself
never reads it. Standard library only."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = "SPMI_DBG_REAL_SUPERPMI"
DATA = ROOT / ".real-superpmi" / "3.1.23"


class _Collections:
    """The reference's collections under `root/collections/`."""

    root: Path

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

    def collection_files(self) -> list[Path]:
        return [self.api, self.api_index, self.api_reljit, self.api_reljit_index, self.api_map]


@dataclass(frozen=True)
class Transcript:
    """One recorded run of the real superpmi or mcs (transcripts/NN-name/): its argv with the
    placeholders `{bin}`, `{collections}`, `{tmp}`, the variables set, stdout and stderr captured
    apart through pipes (and, where recorded, the same run under `stdbuf -o0 -e0`), the exit status
    as a shell reports it (128+N for signal N) and the notes (the ground truth, in words)."""

    dir: Path

    @property
    def name(self) -> str:
        return self.dir.name

    def _text(self, name: str) -> str | None:
        p = self.dir / name
        return p.read_text(encoding="utf-8", errors="surrogateescape") if p.is_file() else None

    @property
    def argv(self) -> list[str]:
        value: list[str] = json.loads((self.dir / "argv.json").read_text())
        return value

    @property
    def env(self) -> dict[str, str]:
        value: dict[str, str] = json.loads((self.dir / "env.json").read_text())
        return value

    @property
    def stdout(self) -> str:
        return self._text("stdout") or ""

    @property
    def stderr(self) -> str:
        return self._text("stderr") or ""

    @property
    def stdout_unbuffered(self) -> str | None:
        return self._text("stdout.unbuffered")

    @property
    def stderr_unbuffered(self) -> str | None:
        return self._text("stderr.unbuffered")

    @property
    def rc(self) -> int:
        return int((self.dir / "rc").read_text().strip())

    @property
    def notes(self) -> str:
        return self._text("notes.md") or ""

    @property
    def program(self) -> str:
        """`superpmi`, `superpmi_O0`, `mcs` or `gdb`: the basename of argv[0]."""
        return self.argv[0].rsplit("/", 1)[-1]

    def options(self) -> list[str]:
        """argv without the program."""
        return self.argv[1:]


@dataclass(frozen=True)
class Reference(_Collections):
    """The reference as data: collections and transcripts (no binary)."""

    root: Path

    @property
    def api_reljit_map(self) -> Path:
        """`mcs -dumpMap api-reljit.mch`."""
        return self.root / "collections" / "api-reljit.map.csv"

    @property
    def transcripts(self) -> Path:
        return self.root / "transcripts"

    @property
    def official_jit(self) -> Path:
        """Microsoft's Release JIT of 3.1.23 (PyPI dotnetcore2==3.1.23's libclrjit.so, fetched by
        scripts/fetch-official-jit.sh beside the unpacked data): .symtab only, no DWARF."""
        return self.root.parent / "official-3.1.23" / "libclrjit.so"

    def required(self) -> list[Path]:
        return [*self.collection_files(), self.api_reljit_map, self.transcripts / "INDEX.md"]

    def missing(self) -> list[Path]:
        return [p for p in self.required() if not p.is_file()]

    def transcript(self, name: str) -> Transcript:
        """The scenario `name` (its full directory name, e.g. `06-assert-stressregs400-c543`)."""
        t = Transcript(self.transcripts / name)
        if not (t.dir / "argv.json").is_file():
            raise FileNotFoundError(f"{t.dir}: no such transcript (see transcripts/INDEX.md)")
        return t

    def all_transcripts(self) -> list[Transcript]:
        return [
            Transcript(d) for d in sorted(self.transcripts.iterdir()) if (d / "argv.json").is_file()
        ]


@dataclass(frozen=True)
class Real(_Collections):
    """A real build in the reference layout: bin/ and collections/."""

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

    def required(self) -> list[Path]:
        return [
            self.superpmi,
            self.superpmi_o0,
            self.mcs,
            self.jit_checked,
            self.jit_release,
            self.jit_official,
            *self.collection_files(),
        ]

    def missing(self) -> list[Path]:
        return [p for p in self.required() if not p.is_file()]

    def mcs_run(self, *args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.mcs), *map(str, args)], capture_output=True, text=True, timeout=timeout
        )

    def command(
        self, *options: str | Path, jit: Path | None = None, mch: Path | None = None
    ) -> list[str]:
        """superpmi OPTIONS JIT MCH, by default with the Checked JIT on api.mch."""
        chosen = (jit or self.jit_checked, mch or self.api)
        return [str(self.superpmi), *map(str, options), *map(str, chosen)]

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


def located_reference() -> Reference:
    """The reference as data, where scripts/unpack-real-superpmi.sh puts it (not checked: see
    Reference.missing)."""
    return Reference(DATA)


def located() -> Real | None:
    """The real build $SPMI_DBG_REAL_SUPERPMI names (not checked: see Real.missing), or None when
    the variable is not set: there is no build to run live."""
    where = os.environ.get(ENV)
    return Real(Path(where)) if where else None


def no_build_reason() -> str:
    """Why the live half does not run here, in one line."""
    return (
        f"{ENV} is not set: no real superpmi build on this machine (the repository holds none; "
        f"point {ENV} at one in the reference layout, tests/real/README.md)"
    )
