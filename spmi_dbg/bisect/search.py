"""Bisect, the search (issue 28 item 3) over builds in order, oldest first, given a probe (a build
-> its Verdict), as mozregression does it:

- both endpoints first: the first must be good and the last bad, else the search stops and says
  which one is wrong;
- then, while builds are left strictly between the last good and the first bad, `workers` of them
  evenly spaced are probed at once (k-ary: one probe at a time is binary search); a bad one moves
  the upper end down, a good one the lower end up; a skipped one (another JIT-EE version, a build
  that does not load, missing data, another failure, flaky, no build in the store) is left out and
  searched around, never guessed;
- it stops when nothing is left between them: the first bad build is exact when its predecessor in
  the order is the last good one, else the answer is the range of the skipped builds between.

A later good after an earlier bad (the order is not monotonic for this failure) is noted: the
search keeps the earliest bad and the latest good before it."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from spmi_dbg.bisect.store import Build
from spmi_dbg.bisect.verdict import Verdict


@dataclass
class Tried:
    index: int
    build: Build
    verdict: Verdict

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, **self.build.to_json(), **self.verdict.to_json()}


@dataclass
class Outcome:
    builds: list[Build]
    tried: list[Tried] = field(default_factory=list)
    last_good: int | None = None
    first_bad: int | None = None
    stopped: str | None = None  # why there is no answer (endpoints wrong)
    notes: list[str] = field(default_factory=list)
    # replays before the search: the bad build's, to find its failure (a command and -c N)
    discovery_replays: int = 0
    discovery_seconds: float = 0.0

    @property
    def exact(self) -> bool:
        return (
            self.stopped is None
            and self.first_bad is not None
            and self.last_good is not None
            and self.first_bad == self.last_good + 1
        )

    @property
    def between(self) -> list[Build]:
        """The builds strictly between the last good and the first bad (all skipped)."""
        if self.first_bad is None or self.last_good is None:
            return []
        return self.builds[self.last_good + 1 : self.first_bad]

    @property
    def replays(self) -> int:
        return self.discovery_replays + sum(t.verdict.replays for t in self.tried)

    def verdict_of(self, index: int) -> Verdict | None:
        return next((t.verdict for t in self.tried if t.index == index), None)


Probe = Callable[[Build], Verdict]
# runs a probe over builds at once, the verdicts in order (a dask cluster's tasks: --scheduler)
Mapper = Callable[[Probe, list[Build]], list[Verdict]]


def no_build(build: Build) -> Verdict:
    return Verdict("skip", "the store has no build of it", "no-build")


def search(
    builds: list[Build], probe: Probe, *, workers: int = 1, mapper: Mapper | None = None
) -> Outcome:
    out = Outcome(builds)
    if len(builds) < 2:
        out.stopped = "fewer than two builds to search between"
        return out

    def run(indexes: list[int]) -> list[Tried]:
        done = _probed(builds, indexes, probe, workers, mapper)
        out.tried += done
        return done

    first, last = run([0, len(builds) - 1])
    if first.verdict.kind != "good" or last.verdict.kind != "bad":
        out.stopped = "; ".join(
            f"the {role} build {t.build.name} is {t.verdict.kind}, not {want}: {t.verdict.evidence}"
            for role, want, t in (("good", "good", first), ("bad", "bad", last))
            if t.verdict.kind != want
        )
        return out
    lo, hi = 0, len(builds) - 1
    skipped: set[int] = set()
    while True:
        left = [i for i in range(lo + 1, hi) if i not in skipped]
        if not left:
            break
        k = min(max(1, workers), len(left))
        picks = sorted({left[(j + 1) * len(left) // (k + 1)] for j in range(k)})
        for t in run(picks):
            if t.verdict.kind == "skip":
                skipped.add(t.index)
        bad = [t.index for t in out.tried if t.verdict.kind == "bad" and lo < t.index < hi]
        if bad:
            hi = min(bad)
        good = [t.index for t in out.tried if t.verdict.kind == "good" and lo < t.index < hi]
        if good:
            lo = max(good)
        later_good = [t.index for t in out.tried if t.verdict.kind == "good" and t.index > hi]
        if later_good and not out.notes:
            out.notes.append(
                f"{builds[later_good[0]].name} is good after the bad {builds[hi].name}: the "
                "failure comes and goes in this order; the first bad build before it is given"
            )
    out.last_good, out.first_bad = lo, hi
    return out


def _probed(
    builds: list[Build], indexes: list[int], probe: Probe, workers: int, mapper: Mapper | None
) -> list[Tried]:
    """The builds at `indexes` probed at once (on the mapper, or `workers` threads); a commit with
    no build is skipped, never replayed."""

    def one(i: int) -> Tried:
        b = builds[i]
        return Tried(i, b, probe(b) if b.jit is not None else no_build(b))

    with_builds = [i for i in indexes if builds[i].jit is not None]
    if mapper is not None and with_builds:
        verdicts = dict(
            zip(with_builds, mapper(probe, [builds[i] for i in with_builds]), strict=True)
        )
        return [
            Tried(i, builds[i], verdicts[i] if i in verdicts else no_build(builds[i]))
            for i in indexes
        ]
    if len(indexes) == 1 or workers <= 1:
        return [one(i) for i in indexes]
    with ThreadPoolExecutor(max_workers=min(workers, len(indexes))) as pool:
        return list(pool.map(one, indexes))
