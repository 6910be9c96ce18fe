"""Runs INSIDE lldb: `command script import spmi_dbg.ext.lldb` registers the `spmi` command.

`spmi-dbg lldbinit` prints the line to add to ~/.lldbinit. The logic lives in spmi_dbg.analysis;
this package only adapts the SB API to its view."""

from __future__ import annotations

from typing import Any

from spmi_dbg.analysis import preload
from spmi_dbg.ext.lldb import commands as commands  # the function `spmi` is bound to
from spmi_dbg.ext.lldb import printers
from spmi_dbg.ext.lldb.view import warm_up


def __lldb_init_module(debugger: Any, internal_dict: dict[str, Any]) -> None:
    preload()
    debugger.HandleCommand("command script add -o -f spmi_dbg.ext.lldb.commands.spmi_command spmi")
    printers.register(debugger)
    warm_up(debugger.GetSelectedTarget())  # `lldb -- superpmi ...`: the target exists already
