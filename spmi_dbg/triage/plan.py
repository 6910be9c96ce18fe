"""Triage, the plan: which collections (`--mch` files, a directory standing for all its `*.mch` as superpmi.py's
-mch_files takes them), each collection's command, and the partitions: a collection and a `-c` range, sized by
bytes from the collection's record table (its .mct index when there is one), or by `--partition-methods N`.
The plan is written beside the partitions' journals (plan.json), so that `--resume` replays the same partitions."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spmi_dbg.errors import InputError, SpmiDbgError, UsageError, printable
from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.mclist import MCList
from spmi_dbg.repro.command import ReproCommand

PARTITION_BYTES = 256 << 20  # the largest partition by default: about a minute of a real superpmi replay
PARTITIONS_PER_WORKER = 2  # at least this many per worker: a worker that finishes early takes another


@dataclass(frozen=True)
class TriagePartition:
    """One task: method contexts `numbers` of `collection`, replayed with `-c <spec>`."""

    index: int  # 1-based over the whole plan
    collection: str  # absolute path
    numbers: MCList
    bytes: int

    @property
    def spec(self) -> str:
        return self.numbers.spec()

    @property
    def methods(self) -> int:
        return self.numbers.count()

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "collection": self.collection, "compile": self.spec, "methods": self.methods,
                "bytes": self.bytes}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TriagePartition:
        from spmi_dbg.mch.mclist import parse_mclist

        return cls(int(data["index"]), str(data["collection"]), parse_mclist(str(data["compile"])),
                   int(data["bytes"]))


def collections_of(items: list[str]) -> list[str]:
    """`--mch` arguments -> collection paths, in order, each once: a file as given, a directory as all its
    `*.mch` files sorted by name (not recursive)."""
    out: list[str] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            found = sorted(str(f) for f in p.glob("*.mch") if f.is_file())
            if not found:
                raise InputError(printable(item), "--mch: the directory holds no .mch files")
            out += found
        elif p.exists() and not p.is_file():
            raise InputError(printable(item), "--mch: not a regular file or a directory")
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
    """`cmd` on another collection: its count checked, no -c selection (a selection names one collection's
    numbers)."""
    src = Path(collection)
    if not src.exists():
        raise InputError(printable(collection), "collection not found")
    if not src.is_file():
        raise InputError(printable(collection), "the collection is not a regular file")
    try:
        with Collection.open(src) as col:
            count = len(col)
    except OSError as e:
        raise InputError(printable(collection), f"cannot read the collection: {e.strerror}") from None
    if count == 0:
        raise InputError(printable(collection), "the collection holds no method contexts")
    return dataclasses.replace(cmd, input=str(src.resolve()), count=count, selection=None)


def member_names(collections: list[str]) -> dict[str, str]:
    """What members are called in the bucket table, `<name>:<number>`: the file name, or the whole path where
    two collections share a file name."""
    names = [Path(c).name for c in collections]
    return {c: (n if names.count(n) == 1 else c) for c, n in zip(collections, names, strict=True)}


def record_sizes(collection: str) -> list[int]:
    """Each method context's record size in bytes (from the .mct's offsets when there is one, else a scan of
    the record headers)."""
    with Collection.open(collection) as col:
        end = col.size
        if col.toc is not None:
            offsets = col.toc.offsets_and_numbers()[0]
        else:
            offsets = col.record_offsets()
    return [b - a for a, b in zip(offsets, [*offsets[1:], end], strict=True)]


def plan_partitions(commands: list[ReproCommand], workers: int, partition_methods: int | None = None) \
        -> list[TriagePartition]:
    """Contiguous partitions, never across collections. By bytes: a target of total / (workers x
    PARTITIONS_PER_WORKER) bytes, at most PARTITION_BYTES, and each collection cut into as many near-equal pieces
    as it needs to stay within it; with `partition_methods`, pieces of that many method contexts."""
    selected: list[tuple[ReproCommand, list[int] | None, list[int]]] = []  # (command, numbers or all, sizes)
    for c in commands:
        try:
            record = record_sizes(c.input)
        except (SpmiDbgError, OSError) as e:
            raise InputError(printable(c.input), f"cannot read the collection's record table: {e}") from None
        if c.selection is None:
            selected.append((c, None, record))
        else:
            chosen = list(c.selection)
            selected.append((c, chosen, [record[n - 1] for n in chosen]))
    total = sum(sum(sizes) for _, _, sizes in selected)
    target = max(1, min(PARTITION_BYTES, math.ceil(total / max(1, workers * PARTITIONS_PER_WORKER))))
    out: list[TriagePartition] = []
    for c, numbers, sizes in selected:
        prefix = list(itertools.accumulate(sizes))
        if not prefix:
            continue
        if partition_methods:
            ends = [*range(partition_methods, len(prefix), partition_methods), len(prefix)]
        else:
            pieces = max(1, math.ceil(prefix[-1] / target))
            ends = sorted({min(len(prefix), max(1, bisect.bisect_left(prefix, prefix[-1] * k / pieces) + 1))
                           for k in range(1, pieces)} | {len(prefix)})
        begin = 0
        for end in ends:
            piece = MCList(((begin + 1, end),)) if numbers is None else MCList.of(numbers[begin:end])
            out.append(TriagePartition(len(out) + 1, c.input, piece, prefix[end - 1] - (prefix[begin - 1]
                                                                                          if begin else 0)))
            begin = end
    if not out:
        raise UsageError("nothing to replay: the selection is empty")
    return out


def plan_json(commands: list[ReproCommand], partitions: list[TriagePartition]) -> dict[str, Any]:
    return {"schema": 1, "commands": [{"argv": c.argv(), "count": c.count,
                                       "selection": c.selection.spec() if c.selection is not None else None}
                                      for c in commands],
            "partitions": [p.to_json() for p in partitions]}


def check_resumable(saved: dict[str, Any], commands: list[ReproCommand], where: str) -> list[TriagePartition]:
    """The saved plan's partitions, when it is the plan of this same triage (same commands, same collections)."""
    now = plan_json(commands, [])["commands"]
    if saved.get("schema") != 1 or saved.get("commands") != now:
        before = [" ".join(c.get("argv") or []) for c in saved.get("commands") or []]
        raise UsageError(f"--resume: {where} holds a triage of another command ({'; '.join(before)[:300]}): give the "
                         "same command and collections, or leave out --resume to start afresh")
    return [TriagePartition.from_json(p) for p in saved.get("partitions") or []]
