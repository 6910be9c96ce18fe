"""SuperPMI collections: records, packets, .mct indexes and -c lists (see docs/mch-format.md)."""

from spmi_dbg.mch.collection import Collection, RecordRef
from spmi_dbg.mch.context import MethodContextInfo, Packet
from spmi_dbg.mch.mclist import MCList, parse_mclist
from spmi_dbg.mch.mct import Toc, TocEntry

__all__ = ["Collection", "MCList", "MethodContextInfo", "Packet", "RecordRef", "Toc", "TocEntry", "parse_mclist"]
