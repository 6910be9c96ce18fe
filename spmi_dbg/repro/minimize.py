"""Minimize: when the crashing record alone does not fail, the state an earlier record left behind
is part of the bug. Delta debugging (Zeller's ddmin) over the earlier records of the same partition,
the crashing record always kept (and last), each test a native replay of `-c <subset + crash>` on
the original collection."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spmi_dbg import jsonfacts
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.mch.mclist import compress_ranges
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.expect import Expectation
from spmi_dbg.repro.native import run_native


def ddmin(items: Sequence[int], fails: Callable[[list[int]], bool]) -> list[int]:
    """A 1-minimal subset of `items` (order kept) for which `fails` holds; `fails(items)` must
    hold."""
    current = list(items)
    if fails([]):
        return []
    n = 2
    while len(current) >= 2:
        chunks = _split(current, n)
        for chunk in chunks:
            if fails(chunk):
                current, n = chunk, 2
                break
        else:
            for chunk in chunks:
                drop = set(chunk)
                complement = [x for x in current if x not in drop]
                if fails(complement):
                    current, n = complement, max(n - 1, 2)
                    break
            else:
                if n >= len(current):
                    break
                n = min(len(current), 2 * n)
    return current


def _split(items: list[int], n: int) -> list[list[int]]:
    size, extra = divmod(len(items), n)
    out, pos = [], 0
    for i in range(n):
        take = size + (1 if i < extra else 0)
        out.append(items[pos : pos + take])
        pos += take
    return [c for c in out if c]


@dataclass
class Minimization(JsonFact):
    crash: int = field(metadata=jsonfacts.key("crashing_method_context"))
    candidates: int  # earlier records of the partition
    # the minimal set, crash last; empty when it failed
    numbers: list[int] = field(default_factory=list, metadata=jsonfacts.key("method_contexts"))
    tests: int = 0
    seconds: float = field(default=0.0, metadata=jsonfacts.digits(3))
    notes: list[str] = field(default_factory=list)

    @property
    def succeeded(self) -> bool:
        return bool(self.numbers)


def minimize(
    cmd: ReproCommand,
    partition: Partition,
    crash: int,
    expected: Expectation,
    *,
    timeout: float,
    workdir: Path,
) -> Minimization:
    start = time.monotonic()
    earlier = [n for n in partition.numbers if n < crash]
    result = Minimization(crash, len(earlier))
    cache: dict[tuple[int, ...], bool] = {}

    def fails(subset: list[int]) -> bool:
        key = tuple(subset)
        if key not in cache:
            result.tests += 1
            run = run_native(
                cmd.native_argv(compress_ranges([*subset, crash])),
                timeout=timeout,
                stdout=workdir / "minimize.stdout",
                stderr=workdir / "minimize.stderr",
            )
            cache[key] = run.matches(expected)
        return cache[key]

    if not earlier:
        result.notes.append(
            f"method context {crash} is the first of its partition: nothing earlier to add"
        )
    elif not fails(earlier):
        result.notes.append(
            f"replaying method contexts {partition.first}-{crash} natively does not show "
            f"{expected.describe()}: the failure does not come from earlier records alone"
        )
    else:
        kept = ddmin(earlier, fails)
        result.numbers = [*kept, crash]
        result.notes.append(
            f"ddmin kept {len(kept)} of {len(earlier)} earlier record(s) in {result.tests} native "
            "replays"
        )
    result.seconds = time.monotonic() - start
    return result
