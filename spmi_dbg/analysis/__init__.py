"""Debugger-neutral crash diagnosis: a read-only view of a stopped process (`view`) -> `Diagnosis`.
Imports no debugger module; `spmi_dbg.gdb` and `spmi_dbg.lldb` adapt their debugger to the view."""

from spmi_dbg.analysis.diagnosis import Diagnosis, diagnose

__all__ = ["Diagnosis", "diagnose"]
