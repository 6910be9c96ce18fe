"""`spmi-dbg lldb [lldb options] -- <command>`: lldb itself on the command, with the extension
loaded (the command line is checked by spmi_dbg.driver.launch)."""

from __future__ import annotations

import argparse
import os
import shutil

from spmi_dbg import shell
from spmi_dbg.debugfiles import check_debug_dirs, debugger_dirs
from spmi_dbg.driver.lldb.sbapi import EXECUTABLES, PACKAGES_HINT, ensure_server
from spmi_dbg.driver.loader import lldbinit_lines
from spmi_dbg.errors import UsageError

BATCH = "-b -o run -o 'spmi why'"  # the launcher's example of a batch run


def extension_lines() -> list[str]:
    """What ~/.lldbinit gets to have the spmi commands in lldb."""
    return lldbinit_lines()


def find_lldb() -> str:
    for name in EXECUTABLES:
        path = shutil.which(name)
        if path is not None:
            return path
    raise UsageError(f"lldb is not installed ({PACKAGES_HINT})")


def run(args: argparse.Namespace, cmd: list[str]) -> int:
    """exec lldb on `cmd` (`args`: the launcher's --debug-dir and lldb's own options)."""
    lldb = find_lldb()
    ensure_server()
    argv = [lldb]
    dirs = debugger_dirs(check_debug_dirs(args.debug_dir))
    if dirs:
        argv += [
            "-O",
            "settings set target.debug-file-search-paths " + " ".join(shell.quote(d) for d in dirs),
        ]
    for line in lldbinit_lines():
        argv += ["-O", line]
    os.execv(lldb, [*argv, *args.debugger_options, "--", *cmd])
