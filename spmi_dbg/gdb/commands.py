"""The `spmi` command for gdb: parses nothing itself, runs spmi_dbg.commands.spmi over GdbProcess."""

from __future__ import annotations

import gdb

from spmi_dbg.commands.spmi import HELP, run
from spmi_dbg.gdb.view import GdbProcess


class SpmiCommand(gdb.Command):  # type: ignore[misc]
    __doc__ = HELP

    def __init__(self) -> None:
        super().__init__("spmi", gdb.COMMAND_USER)

    def invoke(self, argument: str, from_tty: bool) -> None:
        if gdb.selected_inferior().pid == 0:  # as the lldb adapter: no stop to diagnose, not an empty one
            raise gdb.GdbError("spmi: no process (run the program first)")
        try:
            result = run(GdbProcess(), argument)
        except gdb.error as e:  # the debugger itself refused something: one line, no traceback
            raise gdb.GdbError(f"spmi: {e}") from None
        except Exception as e:  # a bug of ours: still one line (the JSON/driver path reports it too)
            raise gdb.GdbError(f"spmi: internal error: {type(e).__name__}: {e}") from None
        if result.text:
            gdb.write(result.text + "\n")
        if result.error:
            raise gdb.GdbError(result.error)


_registered = False


def register() -> None:
    global _registered
    if not _registered:
        from spmi_dbg.gdb import passing, printers

        SpmiCommand()
        printers.register()
        passing.register()
        _registered = True
