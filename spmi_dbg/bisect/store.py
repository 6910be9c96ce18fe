"""Bisect, where the JIT builds come from (issue 28 item 1): a store of JIT builds on disk, in
either layout engineers have:

- superpmi.py's base-JIT cache: `<store>/<git hash>.<os>.<arch>.<Build>/<jit file>`
  (`artifacts/spmi/basejit/31234a86....linux.arm64.Checked/libclrjit.so`);
- jitrollingbuild.py's layout: `<store>/<git hash>/<OS>/<arch>/<Build>/<jit file>`.

The JIT file is the one the command names (its basename: `libclrjit.so`, a cross-targeting
`libclrjit_universal_arm64_x64.so`, 3.1's `libclrjit_unix_arm64_x64.so`). os, arch and build
default to the command's JIT's (Flavor). A hash finds its build by its full text or as a prefix of
at least 7 characters of the store's name (either way round: a store named by short hashes, an
order of full ones), never by a guess between two."""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.elf import read

MIN_PREFIX = 7  # git's shortest abbreviation


@dataclass(frozen=True)
class Flavor:
    os: str  # linux, windows, osx
    arch: str  # x64, arm64, arm, x86
    build: str  # Checked, Release, Debug

    def describe(self) -> str:
        return f"{self.os}.{self.arch}.{self.build}"


@dataclass(frozen=True)
class Build:
    """One build to replay: its name in the order (a commit hash, or a path from --jits) and its
    JIT file (None: the order names it, the store has none)."""

    name: str
    jit: Path | None
    layout: str = ""  # basejit | rolling | list

    def to_json(self) -> dict[str, object]:
        return {"build": self.name, "jit": None if self.jit is None else str(self.jit)}


_ARCHES = {"x86_64": "x64", "aarch64": "arm64", "arm": "arm", "x86": "x86"}  # elf.MACHINES'


def flavor_of(jit: str, *, checked: bool) -> Flavor:
    """The command's JIT's os/arch (its ELF header; a JIT that is not ELF: linux x64) and build
    (Checked when the JIT carries a Checked JIT's switches, else Release)."""
    facts = read(jit)
    arch = _ARCHES.get(facts.machine or "", "x64") if facts is not None else "x64"
    return Flavor("linux", arch, "Checked" if checked else "Release")


class Store:
    """`jit_file`: the JIT's name in a build; `named`: given by the user (--jit-name), else the
    repro's JIT's name, and a build without it that holds one .so has that one."""

    def __init__(self, root: Path, jit_file: str, flavor: Flavor, *, named: bool = False) -> None:
        self.root = root
        self.jit_file = jit_file
        self.flavor = flavor
        self.named = named
        self._names: list[str] | None = None
        self._by_hash: _Index | None = None

    def names(self) -> list[str]:
        if self._names is None:
            try:
                self._names = sorted(e.name for e in os.scandir(self.root))
            except OSError:
                self._names = []
        return self._names

    def _index(self) -> _Index:
        """The store's entries of this flavor by their hash, read once: a search finds each of its
        builds in it (a scan of every name per build made a 1,000-build store's look-ups
        quadratic)."""
        if self._by_hash is None:
            f, index = self.flavor, _Index({}, [], set())
            for name in self.names():
                head, _, tail = name.partition(".")
                parts = tail.split(".")
                if not tail:  # jitrollingbuild.py: <hash>/<OS>/<arch>/<Build>
                    index.add(name.lower(), name, "rolling")
                # superpmi.py: <hash>.<os>.<arch>.<Build>
                elif len(parts) == 3 and [x.lower() for x in parts] == [
                    f.os.lower(),
                    f.arch.lower(),
                    f.build.lower(),
                ]:
                    index.add(head.lower(), name, "basejit")
            index.heads.sort()
            self._by_hash = index
        return self._by_hash

    def _candidates(self, commit: str) -> list[tuple[Path, str]]:
        out = [
            (
                self._jit_in(self.root / name)
                if layout == "basejit"
                else self._rolling(self.root / name),
                layout,
            )
            for name, layout in self._index().matching(commit.lower())
        ]
        return [(p, layout) for p, layout in out if p.is_file()]

    def _jit_in(self, directory: Path) -> Path:
        """The build's JIT: the file named so, else (a name not given by the user) the
        directory's only .so (a store whose builds are `libclrjit.so` for a repro of a
        `libclrjit_fault.so`)."""
        named = directory / self.jit_file
        if self.named or named.is_file():
            return named
        try:
            found = [e.name for e in os.scandir(directory) if e.name.endswith(".so")]
        except OSError:
            return named
        return directory / found[0] if len(found) == 1 else named

    def _rolling(self, directory: Path) -> Path:
        """<OS>/<arch>/<Build>, each matched without regard to case (Linux, linux)."""
        f = self.flavor
        path = directory
        for want in (f.os, f.arch, f.build):
            try:
                match = next(
                    (e.name for e in os.scandir(path) if e.name.lower() == want.lower()), None
                )
            except OSError:
                match = None
            if match is None:
                return directory / f.os / f.arch / f.build / self.jit_file
            path = path / match
        return self._jit_in(path)

    def find_any_flavor(self, commit: str) -> Build:
        """find(commit), else the build of the one other flavor the store has of that commit (a
        sample or stripped JIT says nothing of whether its builds are Checked or Release)."""
        found = self.find(commit)
        if found.jit is not None:
            return found
        f = self.flavor
        others = [
            Store(self.root, self.jit_file, Flavor(f.os, f.arch, b), named=self.named).find(commit)
            for b in ("Checked", "Release", "Debug")
            if b != f.build
        ]
        builds = [b for b in others if b.jit is not None]
        return builds[0] if len(builds) == 1 else found

    def find(self, commit: str) -> Build:
        """The commit's build (jit None when the store has none, or more than one that could be
        it)."""
        found = self._candidates(commit)
        if len(found) != 1:
            return Build(commit, None)
        return Build(commit, *found[0])


@dataclass
class _Index:
    """A store's names by their lowercased hash: the same hash, or one a prefix of the other of at
    least MIN_PREFIX characters (either way round)."""

    by_head: dict[str, list[tuple[str, str]]]  # hash -> (name, layout)
    heads: list[str]  # sorted, for the names a shorter hash abbreviates
    lengths: set[int]

    def add(self, head: str, name: str, layout: str) -> None:
        if head not in self.by_head:
            self.by_head[head] = []
            self.heads.append(head)
            self.lengths.add(len(head))
        self.by_head[head].append((name, layout))

    def matching(self, commit: str) -> list[tuple[str, str]]:
        heads = {commit} if commit in self.by_head else set()
        heads |= {  # a store named by short hashes, an order of full ones
            commit[:n]
            for n in self.lengths
            if MIN_PREFIX <= n < len(commit) and commit[:n] in self.by_head
        }
        if len(commit) >= MIN_PREFIX:  # an order of short hashes, a store of full ones
            i = bisect.bisect_right(self.heads, commit)
            while i < len(self.heads) and self.heads[i].startswith(commit):
                heads.add(self.heads[i])
                i += 1
        return sorted(entry for h in heads for entry in self.by_head[h])


def read_jit_list(path: Path) -> list[Build]:
    """--jits FILE: one JIT path a line, oldest first (blank lines and # comments skipped)."""
    out: list[Build] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if text and not text.startswith("#"):
            p = Path(text)
            if not p.is_absolute():
                p = path.parent / p
            out.append(Build(text, p if p.is_file() else None, "list"))
    return out
