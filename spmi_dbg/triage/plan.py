"""Triage, the plan: which collections (`--mch` files, a directory standing for all its `*.mch` as
superpmi.py's
-mch_files takes them), each collection's command, and the partitions: a collection and a `-c`
range, sized by bytes from the collection's record table (its .mct index when there is one), or by
`--partition-methods N`. The plan is written beside the partitions' journals (plan.json), so that
`--resume` replays the same partitions."""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spmi_dbg.errors import InputError, SpmiDbgError, UsageError, printable
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.mch.collection import record_sizes
from spmi_dbg.mch.mclist import MCList, parse_mclist
from spmi_dbg.repro.command import ReproCommand, checked_collection

# the largest partition by default: about a minute of a real superpmi replay
PARTITION_BYTES = 256 << 20
# at least this many per worker: a worker that finishes early takes another
PARTITIONS_PER_WORKER = 2


@dataclass(frozen=True)
class TriagePartition(JsonFact):
    """One task: method contexts `numbers` of `collection`, replayed with `-c <compile>`."""

    index: int  # 1-based over the whole plan
    collection: str  # absolute path
    compile: str  # its numbers as a -c list
    methods: int  # how many
    bytes: int

    def __post_init__(self) -> None:
        if self.numbers.count() != self.methods:
            raise ValueError(
                f"-c {self.compile} holds {self.numbers.count()} method contexts, not "
                f"{self.methods}"
            )

    @classmethod
    def of(cls, index: int, collection: str, numbers: MCList, size: int) -> TriagePartition:
        return cls(index, collection, numbers.spec(), numbers.count(), size)

    @functools.cached_property
    def numbers(self) -> MCList:
        return parse_mclist(self.compile)

    @property
    def spec(self) -> str:
        return self.compile


def collections_of(items: list[str]) -> list[str]:
    """`--mch` arguments -> collection paths, in order, each once: a file as given, a directory as
    all its `*.mch` files sorted by name (not recursive)."""
    out: list[str] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            found = sorted(str(f) for f in p.glob("*.mch") if f.is_file())
            if not found:
                raise InputError(item, "--mch: the directory holds no .mch files")
            out += found
        elif p.exists() and not p.is_file():
            raise InputError(item, "--mch: not a regular file or a directory")
        else:
            out.append(item)
    seen: set[str] = set()
    unique = []
    for c in out:
        key = str(Path(c).resolve()) if Path(c).exists() else c
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique


def command_for(cmd: ReproCommand, collection: str) -> ReproCommand:
    """`cmd` on another collection: its count checked, no -c selection (a selection names one
    collection's numbers)."""
    path, count = checked_collection(collection)
    return dataclasses.replace(cmd, input=path, count=count, selection=None)


def member_names(collections: list[str]) -> dict[str, str]:
    """What members are called in the bucket table, `<name>:<number>`: the file name, or the whole
    path where two collections share a file name."""
    names = [Path(c).name for c in collections]
    return {c: (n if names.count(n) == 1 else c) for c, n in zip(collections, names, strict=True)}


def plan_partitions(
    commands: list[ReproCommand], workers: int, partition_methods: int | None = None
) -> list[TriagePartition]:
    """Contiguous partitions, never across collections. By bytes: a target of total / (workers x
    PARTITIONS_PER_WORKER) bytes, at most PARTITION_BYTES; each collection cut into as many
    near-equal pieces as it needs to stay within it, a record larger than the target a piece of its
    own, and the largest pieces halved until there are workers x PARTITIONS_PER_WORKER (when the
    records allow). With `partition_methods`, pieces of that many method contexts."""
    # (command, numbers or all, prefix)
    selected: list[tuple[ReproCommand, list[int] | None, list[int]]] = []
    for c in commands:
        try:
            record = record_sizes(c.input)
        except (SpmiDbgError, OSError) as e:
            raise InputError(c.input, f"cannot read the collection's record table: {e}") from None
        chosen = None if c.selection is None else list(c.selection)
        sizes = record if chosen is None else [record[n - 1] for n in chosen]
        selected.append((c, chosen, list(itertools.accumulate(sizes))))
    total = sum(prefix[-1] for _, _, prefix in selected if prefix)
    target = max(
        1, min(PARTITION_BYTES, math.ceil(total / max(1, workers * PARTITIONS_PER_WORKER)))
    )
    # (collection, first record index, end index), in plan order
    pieces: list[tuple[int, int, int]] = []
    for i, (_, _, prefix) in enumerate(selected):
        if not prefix:
            continue
        if partition_methods:
            ends = [*range(partition_methods, len(prefix), partition_methods), len(prefix)]
        else:
            n = max(1, math.ceil(prefix[-1] / target))
            ends = sorted(
                {
                    min(len(prefix), max(1, bisect.bisect_left(prefix, prefix[-1] * k / n) + 1))
                    for k in range(1, n)
                }
                | {len(prefix)}
            )
        pieces += [(i, first, end) for first, end in zip([0, *ends[:-1]], ends, strict=True)]
    if not partition_methods:
        pieces = _balanced(
            pieces, [prefix for _, _, prefix in selected], target, workers * PARTITIONS_PER_WORKER
        )
    out: list[TriagePartition] = []
    for i, first, end in pieces:
        c, numbers, prefix = selected[i]
        piece = MCList(((first + 1, end),)) if numbers is None else MCList.of(numbers[first:end])
        out.append(TriagePartition.of(len(out) + 1, c.input, piece, _bytes(prefix, first, end)))
    if not out:
        raise UsageError("nothing to replay: the selection is empty")
    return out


def _bytes(prefix: list[int], begin: int, end: int) -> int:
    return prefix[end - 1] - (prefix[begin - 1] if begin else 0)


def _balanced(
    pieces: list[tuple[int, int, int]], prefixes: list[list[int]], target: int, wanted: int
) -> list[tuple[int, int, int]]:
    """A record larger than the target is a piece of its own (its neighbours go to pieces around
    it); then, while there are fewer than `wanted`, the largest piece of several records is halved
    by bytes."""
    out: list[tuple[int, int, int]] = []
    for i, b, e in pieces:
        prefix = prefixes[i]
        # (a piece within the target holds no such record)
        while e - b > 1 and _bytes(prefix, b, e) > target:
            big = max(range(b, e), key=lambda r: _bytes(prefix, r, r + 1))
            if _bytes(prefix, big, big + 1) <= target:
                break
            if big > b:
                out.append((i, b, big))
            out.append((i, big, big + 1))
            b = big + 1
        if e > b:
            out.append((i, b, e))
    while len(out) < wanted:
        splittable = [p for p in out if p[2] - p[1] > 1]
        if not splittable:
            break
        i, b, e = max(splittable, key=lambda p: _bytes(prefixes[p[0]], p[1], p[2]))
        prefix = prefixes[i]
        half = (prefix[b - 1] if b else 0) + _bytes(prefix, b, e) / 2
        cut = min(e - 1, max(b + 1, bisect.bisect_left(prefix, half, b, e) + 1))
        at = out.index((i, b, e))
        out[at : at + 1] = [(i, b, cut), (i, cut, e)]
    return out


def plan_json(commands: list[ReproCommand], partitions: list[TriagePartition]) -> dict[str, Any]:
    return {
        "schema": 1,
        "commands": [
            {
                "argv": c.argv(),
                "count": c.count,
                "selection": c.selection.spec() if c.selection is not None else None,
            }
            for c in commands
        ],
        "partitions": [p.to_json() for p in partitions],
    }


def check_resumable(
    saved: object, commands: list[ReproCommand], where: str
) -> list[TriagePartition]:
    """The saved plan's partitions, when it is the plan of this same triage (same commands, same
    collections) and whole: partitions numbered 1..N that cover each collection's selection exactly
    once. `where`: the plan file, as the messages name it."""
    now = plan_json(commands, [])["commands"]
    if (
        not isinstance(saved, dict)
        or saved.get("schema") != 1
        or not isinstance(saved.get("commands"), list)
    ):
        raise UsageError(
            f"--resume: {printable(where)} is not the plan of a triage of this spmi-dbg: leave out "
            "--resume to start afresh"
        )
    if saved["commands"] != now:
        before = [
            printable(" ".join(c.get("argv") or [])) if isinstance(c, dict) else "?"
            for c in saved["commands"]
        ]
        raise UsageError(
            f"--resume: {printable(where)} holds a triage of another command "
            f"({'; '.join(before)[:300]}): give the same command and collections, or leave out "
            "--resume to start afresh"
        )
    try:
        partitions = [TriagePartition.from_json(p) for p in saved.get("partitions") or []]
    except (KeyError, TypeError, ValueError, AttributeError, SpmiDbgError) as e:
        raise InputError(where, f"--resume: a partition of the plan is broken ({e})") from None
    if [p.index for p in partitions] != list(range(1, len(partitions) + 1)) or not partitions:
        raise InputError(where, "--resume: the plan's partitions are not numbered 1..N")
    for c in commands:
        wanted = c.selection if c.selection is not None else MCList(((1, c.count),))
        mine = sorted(r for p in partitions if p.collection == c.input for r in p.numbers.ranges)
        overlap = any(b[0] <= a[1] for a, b in itertools.pairwise(mine))
        outside = any(wanted.between(lo, hi).count() != hi - lo + 1 for lo, hi in mine)
        if overlap or outside or sum(hi - lo + 1 for lo, hi in mine) != wanted.count():
            raise InputError(
                where,
                f"--resume: the plan's partitions do not cover {printable(c.input)}'s method "
                "contexts exactly once",
            )
    known = {c.input for c in commands}
    stray = [p.collection for p in partitions if p.collection not in known]
    if stray:
        raise InputError(
            where,
            f"--resume: the plan names a collection not in the command: {printable(stray[0])}",
        )
    return partitions
