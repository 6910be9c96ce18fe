"""The debuggers spmi-dbg drives, named in this one place: each one's driver (`--debugger NAME`),
the executables it is looked for as, its launcher (`spmi-dbg NAME -- COMMAND`) and the lines that
load the extension into it (`spmi-dbg NAMEinit`). The arguments, the launchers, select.pick and the
run's identity read it; the first is the default."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from spmi_dbg.driver.gdb import launch as gdb_launch
from spmi_dbg.driver.gdb.driver import GdbDriver
from spmi_dbg.driver.lldb import launch as lldb_launch
from spmi_dbg.driver.lldb import sbapi
from spmi_dbg.driver.lldb.driver import LldbDriver


@dataclass(frozen=True)
class Debugger:
    name: str
    # its `picked` builds the Driver for `--debugger NAME`
    driver: type[GdbDriver] | type[LldbDriver]
    executables: tuple[str, ...]  # looked for on PATH in this order
    # exec it on a command, the extension loaded
    launch: Callable[[argparse.Namespace, list[str]], int]
    batch: str  # its own options for a batch run (the launcher's example)
    init_file: str  # where its extension lines go
    extension_lines: Callable[[], list[str]]


DEBUGGERS: dict[str, Debugger] = {
    d.name: d
    for d in (
        Debugger(
            "gdb",
            GdbDriver,
            gdb_launch.EXECUTABLES,
            gdb_launch.run,
            gdb_launch.BATCH,
            "~/.gdbinit",
            gdb_launch.extension_lines,
        ),
        Debugger(
            "lldb",
            LldbDriver,
            sbapi.EXECUTABLES,
            lldb_launch.run,
            lldb_launch.BATCH,
            "~/.lldbinit",
            lldb_launch.extension_lines,
        ),
    )
}
NAMES = tuple(DEBUGGERS)
DEFAULT = NAMES[0]
