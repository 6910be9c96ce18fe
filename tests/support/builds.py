"""A history of JIT builds for the bisect tests: a git repository the test creates (one commit per
build, each touching src/coreclr/jit/, subjects ending in a PR number) and a store of their JITs in
superpmi.py's basejit layout or the rolling-build layout, the JIT files linked (a changed copy only
where a test patches one)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

FLAVOR = ("linux", "x64", "Checked")
FIRST_PR = 70000


@dataclass
class History:
    repo: Path
    store: Path
    hashes: list[str]  # oldest first

    def pr(self, index: int) -> int:
        return FIRST_PR + index


def _git(repo: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def history(
    root: Path,
    jits: list[Path | None],
    *,
    layout: str = "basejit",
    jit_file: str = "libclrjit.so",
    flavor: tuple[str, str, str] = FLAVOR,
    unrelated: tuple[int, ...] = (),
) -> History:
    """One commit per entry of `jits` (None: a commit without a build in the store); `unrelated`:
    indexes after which a commit that touches no JIT source is made (not in the bisect's order)."""
    repo, store = root / "runtime", root / "store"
    repo.mkdir(parents=True)
    store.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    hashes: list[str] = []
    for i, jit in enumerate(jits):
        src = repo / "src" / "coreclr" / "jit" / "importer.cpp"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(f"// build {i}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"JIT change {i} (#{FIRST_PR + i})")
        h = _git(repo, "rev-parse", "HEAD").strip()
        hashes.append(h)
        if jit is not None:
            os_, arch, build = flavor
            if layout == "basejit":
                d = store / f"{h}.{os_}.{arch}.{build}"
            else:
                d = store / h / os_.capitalize() / arch / build
            d.mkdir(parents=True)
            (d / jit_file).symlink_to(jit)
        if i in unrelated:
            (repo / "README.md").write_text(f"docs {i}\n")
            _git(repo, "add", "-A")
            _git(repo, "commit", "-q", "-m", f"Docs {i}")
    return History(repo, store, hashes)
