"""`spmi-dbg gdb [gdb options] -- <command>`: gdb itself on the command, with the extension loaded
(the command line is checked by spmi_dbg.driver.launch)."""

from __future__ import annotations

import argparse
import os
import shutil

from spmi_dbg.debugfiles import check_debug_dirs, debugger_dirs
from spmi_dbg.driver.loader import gdbinit_line
from spmi_dbg.errors import UsageError

EXECUTABLES = ("gdb",)  # looked for on PATH
BATCH = "-batch -ex run -ex 'spmi why'"  # the launcher's example of a batch run


def extension_lines() -> list[str]:
    """What ~/.gdbinit gets to have the spmi commands in gdb."""
    return [gdbinit_line()]


def find_gdb() -> str:
    path = shutil.which(EXECUTABLES[0])
    if path is None:
        raise UsageError("gdb is not installed (Debian: apt-get install gdb)")
    return path


def run(args: argparse.Namespace, cmd: list[str]) -> int:
    """exec gdb on `cmd` (`args`: the launcher's --debug-dir and gdb's own options)."""
    gdb = find_gdb()
    dirs = debugger_dirs(check_debug_dirs(args.debug_dir))
    first = ["-iex", "set debug-file-directory " + ":".join(dirs)] if dirs else []
    os.execv(
        gdb,
        [
            gdb,
            "-q",
            "-iex",
            "set auto-load off",
            *first,
            "-ex",
            gdbinit_line(),
            *args.debugger_options,
            "--args",
            *cmd,
        ],
    )
