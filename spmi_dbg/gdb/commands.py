"""The `spmi` command for gdb: parses nothing itself, runs spmi_dbg.analysis.spmi_command over GdbProcess."""

from __future__ import annotations

import gdb

from spmi_dbg.analysis.spmi_command import HELP, run
from spmi_dbg.gdb.view import GdbProcess


class SpmiCommand(gdb.Command):  # type: ignore[misc]
    __doc__ = HELP

    def __init__(self) -> None:
        super().__init__("spmi", gdb.COMMAND_USER)

    def invoke(self, argument: str, from_tty: bool) -> None:
        try:
            result = run(GdbProcess(), argument)
        except gdb.error as e:  # the debugger itself refused something: one line, no traceback
            raise gdb.GdbError(f"spmi: {e}") from None
        if result.text:
            gdb.write(result.text + "\n")
        if result.error:
            raise gdb.GdbError(result.error)


_registered = False


def register() -> None:
    global _registered
    if not _registered:
        from spmi_dbg.gdb import printers

        SpmiCommand()
        printers.register()
        _registered = True
