"""SuperPMI collections: records, packets, .mct indexes and -c lists (see docs/mch-format.md).

The names below are imported on first use, so that a command importing one module of the package
(e.g. `spmi-dbg mch verify`, timed against `mcs -integ`) does not pay for the others."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spmi_dbg.mch.collection import Collection, RecordRef
    from spmi_dbg.mch.context import MethodContextInfo, Packet
    from spmi_dbg.mch.mclist import MCList, parse_mclist
    from spmi_dbg.mch.mct import Toc, TocEntry

_WHERE = {
    "Collection": "collection",
    "RecordRef": "collection",
    "MethodContextInfo": "context",
    "Packet": "context",
    "MCList": "mclist",
    "parse_mclist": "mclist",
    "Toc": "mct",
    "TocEntry": "mct",
}

__all__ = [
    "Collection",
    "MCList",
    "MethodContextInfo",
    "Packet",
    "RecordRef",
    "Toc",
    "TocEntry",
    "parse_mclist",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"spmi_dbg.mch.{where}"), name)
