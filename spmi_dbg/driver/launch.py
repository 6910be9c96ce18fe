"""`spmi-dbg gdb|lldb [debugger options] -- <command>` and `spmi-dbg gdbinit|lldbinit`: a debugger
with the extension loaded. The debugger's own options (`-batch -ex run`, `-b -o run`) pass through;
a command with superpmi's `-p` is warned about (the workers are other processes, unseen) and shown
again without it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from spmi_dbg import shell
from spmi_dbg.driver.registry import DEBUGGERS
from spmi_dbg.errors import UsageError
from spmi_dbg.superpmi_argv import parse_command
from spmi_dbg.usage import this_program

LAUNCHER_EPILOG = """{name}'s own options go before --, the program and its arguments after it:
  spmi-dbg {name} -- superpmi -a base/libclrjit.so diff/libclrjit.so libraries.mch
  spmi-dbg {name} {batch} -- superpmi -c 5 clrjit.so libraries.mch

superpmi's -p runs the method contexts in worker processes: {name} debugs only the parent, and a
crash in a worker dies unseen (dotnet/runtime#56506). A command with -p gets a warning and the same
command without it.

exit status: {name}'s own, or 2 for a usage error before it starts."""


def add_parsers(sub: Any) -> None:
    for name, debugger in DEBUGGERS.items():
        lines = "line" if len(debugger.extension_lines()) == 1 else "lines"
        p = sub.add_parser(
            f"{name}init",
            help=f"print the {lines} to add to {debugger.init_file} to get the spmi "
            f"commands in {name}",
        )
        p.set_defaults(func=lambda a, d=debugger: _print("\n".join(d.extension_lines())))
    for name, debugger in DEBUGGERS.items():
        p = sub.add_parser(
            name,
            help=f"start {name} on a superpmi command with the spmi commands loaded",
            usage=f"spmi-dbg {name} [--debug-dir DIR] [{name.upper()}_OPTIONS...] -- PROGRAM "
            "[ARGS...]",
            description=f"Start {name} on PROGRAM with the spmi commands (spmi why, ...) loaded; "
            f"options spmi-dbg does not know are {name}'s own and are passed to it.",
            epilog=LAUNCHER_EPILOG.format(name=name, batch=debugger.batch),
            formatter_class=argparse.RawDescriptionHelpFormatter,
            passes_through="debugger_options",
        )
        p.add_argument(
            "--debug-dir",
            metavar="DIR",
            action="append",
            default=[],
            help="where separate debug files are (.dbg by gnu_debuglink, a .build-id/ tree, or a "
            "flat directory of .dbg files); repeatable",
        )
        p.set_defaults(func=run, launcher=name)


def _print(text: str) -> int:
    print(text)
    return 0


def _command(args: argparse.Namespace) -> list[str]:
    cmd = list(args.command)
    if not cmd:
        raise UsageError(
            f"expected the command to debug after --, e.g. spmi-dbg {args.launcher} -- superpmi -c "
            "5 "
            "jit.so x.mch"
        )
    if args.launcher == "gdb" and "--args" in args.debugger_options:
        raise UsageError("--args: spmi-dbg gdb gives gdb the command itself: put it after --")
    _warn_parallel(args, cmd)
    return cmd


def without_parallel(cmd: list[str]) -> list[str] | None:
    """The superpmi command without `-p`/`-parallel [N]`, or None when it has none (or is no
    superpmi command: it names no collection)."""
    if parse_command(cmd).input is None:
        return None
    out, i = cmd[:1], 1
    while i < len(cmd):
        if cmd[i].lower() in ("-p", "-parallel"):
            i += 2 if i + 1 < len(cmd) and cmd[i + 1].isdigit() else 1
            continue
        out.append(cmd[i])
        i += 1
    return out if len(out) < len(cmd) else None


def _warn_parallel(args: argparse.Namespace, cmd: list[str]) -> None:
    serial = without_parallel(cmd)
    if serial is None:
        return
    again = [
        *this_program(),
        args.launcher,
        *(w for d in args.debug_dir for w in ("--debug-dir", d)),
        *args.debugger_options,
        "--",
        *serial,
    ]
    print(
        f"spmi-dbg {args.launcher}: warning: the command has -p: {args.launcher} debugs only the "
        "parent superpmi, and a crash in a worker process dies unseen (dotnet/runtime#56506). The "
        f"same command without -p:\n  {shell.join(again)}",
        file=sys.stderr,
        flush=True,
    )


def run(args: argparse.Namespace) -> int:
    """`spmi-dbg NAME -- COMMAND`: the command checked, then NAME's launcher execs it."""
    return DEBUGGERS[args.launcher].launch(args, _command(args))
