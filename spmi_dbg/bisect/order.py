"""Bisect, the order of the builds (issue 28 item 1): from a dotnet/runtime (or dotnet/coreclr) git
checkout, the first-parent history from --good to --bad of the commits that touch the JIT's sources
or the JIT-EE version (the only commits that can change what a JIT build does with a collection);
without a checkout, --order FILE (one hash a line, oldest first). A commit's subject and PR number
(`(#NNNNN)` at its end, as GitHub's squash merges write it) come from the checkout."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.errors import InputError, UsageError

# what can change a JIT build's behaviour, in both layouts (dotnet/runtime; dotnet/coreclr of 3.1)
JIT_PATHS = (
    "src/coreclr/jit",
    "src/coreclr/inc/jiteeversionguid.h",
    "src/coreclr/inc/corinfo.h",
    "src/jit",
    "src/inc/corinfo.h",
)
_PR = re.compile(r"\(#(\d+)\)\s*$")


@dataclass(frozen=True)
class Commit:
    hash: str
    subject: str = ""

    @property
    def pr(self) -> int | None:
        m = _PR.search(self.subject)
        return int(m.group(1)) if m else None

    def to_json(self) -> dict[str, object]:
        return {"commit": self.hash, "subject": self.subject, "pr": self.pr}


def _git(repo: Path, *args: str) -> str:
    try:
        r = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InputError(str(repo), f"(--repo) git failed: {e}") from None
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        raise InputError(str(repo), f"(--repo) git {' '.join(args[:2])} failed: {last}")
    return r.stdout


def resolve(repo: Path, rev: str, option: str) -> str:
    """A revision's full hash (`--good`/`--bad` may be a short hash, a tag, a branch)."""
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    except InputError:
        raise UsageError(f"{option} {rev!r}: not a commit of {repo}") from None


def from_repo(repo: Path, good: str, bad: str) -> list[Commit]:
    """good, then the first-parent commits after it up to bad that touch JIT_PATHS, then bad (its
    build is the known bad one, whatever it touched), oldest first."""
    g, b = resolve(repo, good, "--good"), resolve(repo, bad, "--bad")
    if g == b:
        raise UsageError("--good and --bad are the same commit")
    if not is_ancestor(repo, g, b):
        raise UsageError(f"--good {good} is not an ancestor of --bad {bad} in {repo}")
    out = _git(
        repo,
        "log",
        "--first-parent",
        "--reverse",
        "--format=%H%x00%s",
        f"{g}..{b}",
        "--",
        *JIT_PATHS,
    )
    commits = [Commit(*line.split("\0", 1)) for line in out.splitlines() if "\0" in line]
    between = [c for c in commits if c.hash != b]
    return [Commit(g, subject(repo, g)), *between, Commit(b, subject(repo, b))]


def is_ancestor(repo: Path, good: str, bad: str) -> bool:
    r = subprocess.run(
        ["git", "-C", str(repo), "merge-base", "--is-ancestor", good, bad],
        capture_output=True,
        timeout=120,
    )
    return r.returncode == 0


def subject(repo: Path, commit: str) -> str:
    return _git(repo, "log", "-1", "--format=%s", commit).strip()


def between(repo: Path, older: str, newer: str) -> list[Commit]:
    """Every first-parent commit after `older` up to `newer` (the range a regression is in), with
    its subject, oldest first."""
    out = _git(repo, "log", "--first-parent", "--reverse", "--format=%H%x00%s", f"{older}..{newer}")
    return [Commit(*line.split("\0", 1)) for line in out.splitlines() if "\0" in line]


def from_file(path: Path, good: str | None, bad: str | None) -> list[Commit]:
    """--order FILE: one hash a line, oldest first (blank lines and # comments skipped), cut to
    --good..--bad when they are given."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(path), f"(--order) cannot be read ({e})") from None
    commits: list[Commit] = []
    for n, line in enumerate(text.splitlines(), 1):
        word = line.split("#", 1)[0].strip()
        if not word:
            continue
        if not re.fullmatch(r"[0-9a-fA-F]{4,40}", word.split()[0]):
            raise InputError(str(path), f"(--order) line {n}: expected a commit hash, got {word!r}")
        parts = word.split(None, 1)
        commits.append(Commit(parts[0], parts[1] if len(parts) > 1 else ""))
    return cut(commits, good, bad, f"--order {path}")


def cut(commits: list[Commit], good: str | None, bad: str | None, where: str) -> list[Commit]:
    """The part of `commits` from good to bad (default: the first and the last)."""

    def index(rev: str, option: str) -> int:
        hits = [i for i, c in enumerate(commits) if _prefix(rev, c.hash)]
        if len(hits) != 1:
            what = "not in" if not hits else "more than once in"
            raise UsageError(f"{option} {rev}: {what} {where}")
        return hits[0]

    lo = index(good, "--good") if good else 0
    hi = index(bad, "--bad") if bad else len(commits) - 1
    if hi <= lo:
        raise UsageError(f"--good must come before --bad in {where}")
    return commits[lo : hi + 1]


def _prefix(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    return a.startswith(b) or b.startswith(a)
