"""Debugger-neutral crash diagnosis: a read-only view of a stopped process (`view`) -> `Diagnosis`.
Imports no debugger module; `spmi_dbg.gdb` and `spmi_dbg.lldb` adapt their debugger to the view."""

from spmi_dbg.analysis.diagnosis import Diagnosis, diagnose

__all__ = ["Diagnosis", "diagnose", "preload"]


def preload() -> None:
    """Import what a full diagnosis needs (capstone, the collection reader) when the extension loads, so
    that the first `spmi why` at a crash does not pay for it (~30 ms)."""
    import importlib

    for name in ("capstone", "capstone.x86", "capstone.arm64", "spmi_dbg.mch.collection", "spmi_dbg.analysis.disasm",
                 "spmi_dbg.analysis.spmi_command"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
