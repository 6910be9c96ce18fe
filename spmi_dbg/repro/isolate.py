"""Isolate: copy the method context(s) byte-exact to `repro.mch` and write its index `repro.mch.mct`
(docs/architecture.md: a record copied byte-for-byte is a valid `.mc`; packets are never
re-encoded)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spmi_dbg.mch.collection import Collection

REPRO_NAME = "repro.mch"


@dataclass(frozen=True)
class Isolated:
    mch: Path
    mct: Path
    # method context numbers in the input, in repro order (repro's are 1..n)
    numbers: tuple[int, ...]
    sizes: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.mch.name,
            "index": self.mct.name,
            "records": len(self.numbers),
            "method_contexts": list(self.numbers),
            "bytes": sum(self.sizes),
        }


def isolate(collection: str, numbers: list[int], out_dir: Path) -> Isolated:
    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / REPRO_NAME
    with Collection.open(collection) as col:
        sizes = tuple(col.locate(n).size for n in numbers)
        mct = col.extract(numbers, dest)
    return Isolated(dest, mct, tuple(numbers), sizes)
