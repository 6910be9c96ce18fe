"""`spmi-dbg gdb|lldb -- <command>` and `spmi-dbg gdbinit|lldbinit`: a debugger with the extension loaded."""

from __future__ import annotations

import argparse
import os
import shutil
from typing import Any

from spmi_dbg import shell
from spmi_dbg.debugfiles import check_debug_dirs, debugger_dirs
from spmi_dbg.driver.loader import gdbinit_line, lldbinit_lines
from spmi_dbg.errors import UsageError

LLDB_CANDIDATES = ("lldb-16", "lldb")
LLDB_SERVER = "/usr/lib/llvm-16/bin/lldb-server"


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("gdbinit", help="print the line to add to ~/.gdbinit to get the spmi commands in gdb")
    p.set_defaults(func=lambda a: _print(gdbinit_line()))
    p = sub.add_parser("lldbinit", help="print the lines to add to ~/.lldbinit to get the spmi commands in lldb")
    p.set_defaults(func=lambda a: _print("\n".join(lldbinit_lines())))
    for name in ("gdb", "lldb"):
        p = sub.add_parser(name, help=f"start {name} on a superpmi command with the spmi commands loaded",
                           usage=f"spmi-dbg {name} -- PROGRAM [ARGS...]")
        p.add_argument("--debug-dir", metavar="DIR", action="append", default=[],
                       help="where separate debug files are (.dbg by gnu_debuglink, a .build-id/ tree, or a flat "
                            "directory of .dbg files); repeatable")
        p.add_argument("command", nargs=argparse.REMAINDER, help="the superpmi (or spmi-replay) command line")
        p.set_defaults(func=run_gdb if name == "gdb" else run_lldb)


def _print(text: str) -> int:
    print(text)
    return 0


def _command(args: argparse.Namespace) -> list[str]:
    cmd = list(args.command)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("expected the command to debug after --, e.g. spmi-dbg gdb -- superpmi -c 5 jit.so x.mch")
    return cmd


def find_gdb() -> str:
    path = shutil.which("gdb")
    if path is None:
        raise UsageError("gdb is not installed (Debian: apt-get install gdb)")
    return path


def find_lldb() -> str:
    for name in LLDB_CANDIDATES:
        path = shutil.which(name)
        if path is not None:
            return path
    raise UsageError("lldb is not installed (Debian: apt-get install lldb-16 python3-lldb-16 liblldb-16-dev)")


def run_gdb(args: argparse.Namespace) -> int:
    cmd = _command(args)
    gdb = find_gdb()
    dirs = debugger_dirs(check_debug_dirs(args.debug_dir))
    first = ["-iex", "set debug-file-directory " + ":".join(dirs)] if dirs else []
    os.execv(gdb, [gdb, "-q", "-iex", "set auto-load off", *first, "-ex", gdbinit_line(), "--args", *cmd])


def run_lldb(args: argparse.Namespace) -> int:
    cmd = _command(args)
    lldb = find_lldb()
    if os.path.exists(LLDB_SERVER):
        os.environ.setdefault("LLDB_DEBUGSERVER_PATH", LLDB_SERVER)
    argv = [lldb]
    dirs = debugger_dirs(check_debug_dirs(args.debug_dir))
    if dirs:
        argv += ["-O", "settings set target.debug-file-search-paths " + " ".join(shell.quote(d) for d in dirs)]
    for line in lldbinit_lines():
        argv += ["-O", line]
    os.execv(lldb, [*argv, "--", *cmd])
