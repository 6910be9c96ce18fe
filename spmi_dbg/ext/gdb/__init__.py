"""Runs INSIDE gdb: `source` this package (or `python import spmi_dbg.ext.gdb`) to get the `spmi`
command.

`spmi-dbg gdbinit` prints the line to add to ~/.gdbinit; `spmi-dbg gdb -- <superpmi command>` starts
gdb with it loaded. The logic lives in spmi_dbg.analysis; this package only adapts gdb to its
view."""

from spmi_dbg.analysis import preload
from spmi_dbg.ext.gdb.commands import register

register()
preload()
