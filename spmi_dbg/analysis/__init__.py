"""Debugger-neutral crash diagnosis: a read-only view of a stopped process (`view`) -> `Diagnosis`.
Imports no debugger module; `spmi_dbg.ext.gdb` and `spmi_dbg.ext.lldb` adapt their debugger to the
view."""

import importlib

from spmi_dbg.analysis import knownbugs
from spmi_dbg.analysis.diagnosis import Diagnosis, diagnose

__all__ = ["Diagnosis", "diagnose", "preload"]


def preload() -> None:
    """Import what a full diagnosis needs (capstone, the collection reader) when the extension
    loads, so that the first `spmi why` at a crash does not pay for it (~30 ms)."""
    # (the spmi commands are the adapters' to load: gdb/ and lldb/ import them, the analysis may
    # not)
    for name in (
        "capstone",
        "capstone.x86",
        "capstone.arm64",
        "spmi_dbg.mch.collection",
        "spmi_dbg.analysis.disasm",
    ):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    knownbugs.table()  # parsed once, not at the first crash
    try:  # capstone sets up each architecture's tables at its first disassembly
        # here, not at module level (start-up): the CLI imports analysis, capstone costs ~70 ms
        import capstone

        for arch, mode, nop in (
            (capstone.CS_ARCH_X86, capstone.CS_MODE_64, b"\x90"),
            (capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM, b"\x1f\x20\x03\xd5"),
        ):
            md = capstone.Cs(arch, mode)
            md.detail = True
            list(md.disasm(nop, 0))
    except ImportError:
        pass
