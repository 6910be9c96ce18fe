"""`spmi-dbg repro [options] -- <superpmi argv>`: arguments and exit statuses (0 verified, 1 crash found but
not verified, 2 no crash, 3 usage or input error, 4 the debugger itself failed)."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from spmi_dbg.errors import InputError, SpmiDbgError, ToolFailure, UsageError
from spmi_dbg.repro.exits import EXIT_INPUT, EXIT_TOOL

EPILOG = """exit status: 0 repro found and verified, 1 crash found but not verified, 2 no crash, 3 usage or input
error, 4 the debugger failed (it died or stopped answering, twice).

examples:
  spmi-dbg repro --from-log superpmi.4.log
  spmi-dbg repro --core core.12345 -- superpmi -a -target arm64 base/libclrjit.so diff/libclrjit.so libraries.mch
  spmi-dbg repro -- superpmi -a -target arm64 base/libclrjit.so diff/libclrjit.so libraries.mch
  spmi-dbg repro --mch libraries.mch --base-jit base/libclrjit.so --jit diff/libclrjit.so -- -a -target arm64
  spmi-dbg repro --qemu aarch64 -- arm64/superpmi -a arm64/base/libclrjit.so arm64/diff/libclrjit.so libraries.mch"""


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("repro", help="find the method context superpmi crashes on and write a verified repro bundle",
                       usage="spmi-dbg repro [options] -- SUPERPMI_ARGV...  |  spmi-dbg repro --mch X --jit J "
                             "[options] [-- SUPERPMI_OPTIONS...]  |  spmi-dbg repro --from-log LOG [options]  |  "
                             "spmi-dbg repro --core CORE [options] [-- SUPERPMI_ARGV...]",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_replay_arguments(p)
    p.add_argument("--core", metavar="CORE", type=Path,
                   help="post-mortem: diagnose this core file of the crashed superpmi, then isolate and verify "
                        "live (the command after --, or the one the core names when it is complete)")
    p.add_argument("--out", metavar="DIR", type=Path, help="bundle directory (default: spmi-repro-<bucket>)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the superpmi (or spmi-replay) command line")
    p.set_defaults(func=run)
    use_exit_3(p, "repro")


def add_replay_arguments(p: argparse.ArgumentParser) -> None:
    """The inputs and debugger options `spmi-dbg repro` and `spmi-dbg triage` share."""
    p.add_argument("--mch", metavar="FILE", help="the collection (instead of a full command after --)")
    p.add_argument("--jit", metavar="SO", help="the JIT (the diff JIT when --base-jit is given)")
    p.add_argument("--base-jit", metavar="SO", help="the base JIT (JIT1) for asm diffs")
    p.add_argument("--superpmi", metavar="PROG", help="superpmi to run (default: the bundled spmi-replay)")
    p.add_argument("--target", metavar="ARCH", help="superpmi -target")
    p.add_argument("--jitoption", metavar="K=V", action="append", default=[],
                   help="superpmi -jitoption (both JITs in asm diffs); repeatable")
    p.add_argument("--from-log", metavar="LOG", type=Path,
                   help="take the failing superpmi command from a superpmi.py log (superpmi.N.log)")
    p.add_argument("--debugger", choices=("gdb", "lldb"), default="gdb", help="debugger to replay under (gdb)")
    p.add_argument("--gdb", metavar="PATH", help="the gdb executable (default: gdb on PATH; gdb-multiarch with --qemu)")
    p.add_argument("--qemu", choices=("aarch64",), metavar="ARCH",
                   help="the superpmi command is an ARCH Linux program: run it under qemu-ARCH (qemu-user) and debug "
                        "it with gdb-multiarch through qemu's gdbstub")
    p.add_argument("--sysroot", metavar="DIR", help="the guest's libraries for --qemu (default /usr/aarch64-linux-gnu, "
                                                    "Debian's cross libraries)")
    p.add_argument("--workers", type=_positive_int, default=os.cpu_count() or 1, metavar="N",
                   help="partitions replayed in parallel, one debugger each (default: CPU count)")
    p.add_argument("--timeout", type=_positive_float, default=1800.0, metavar="S",
                   help="seconds a partition may take before it is a hang (default 1800; a verification run "
                        "of the repro gets at most 60)")
    p.add_argument("--verify-runs", type=_non_negative_int, default=3, metavar="K",
                   help="native replays of the repro to verify it (default 3; plus one under the debugger)")
    p.add_argument("--redact", action="store_true",
                   help="replace the home directory, user name and host name in the written files")


def use_exit_3(p: argparse.ArgumentParser, name: str) -> None:
    def error(message: str) -> NoReturn:  # usage errors are exit 3 here: 2 means "no crash"
        p.print_usage(sys.stderr)
        sys.stderr.write(f"spmi-dbg {name}: error: {message}\n")
        raise SystemExit(EXIT_INPUT)

    p.error = error  # type: ignore[method-assign]


def _positive_int(text: str) -> int:
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return v


def _non_negative_int(text: str) -> int:
    v = int(text)
    if v < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return v


def _positive_float(text: str) -> float:
    v = float(text)
    if v <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return v


def one_line_errors(name: str, body: Callable[[], int]) -> int:
    """`body`, with our errors as one line on stderr: 4 for the debugger failing, 3 for usage and input."""
    try:
        return body()
    except ToolFailure as e:
        print(f"spmi-dbg {name}: error: {e}", file=sys.stderr)
        return EXIT_TOOL
    except SpmiDbgError as e:
        print(f"spmi-dbg {name}: error: {e}", file=sys.stderr)
        return EXIT_INPUT


def run(args: argparse.Namespace) -> int:
    return one_line_errors("repro", lambda: int(execute(options(args)).exit_code))


def execute(opts: Any, *, extra_rows: Any = None) -> Any:
    """Run the pipeline with progress on a terminal, then print the summary (a panel on a terminal, plain
    `key: value` lines when piped). `extra_rows(result)` adds rows of context after the pipeline's own."""
    from rich.console import Console

    from spmi_dbg.repro.display import TerminalProgress, print_summary
    from spmi_dbg.repro.pipeline import run_repro

    interactive = sys.stderr.isatty()
    progress = TerminalProgress(Console(stderr=True), opts.debugger_name) if interactive else None
    try:
        result = run_repro(opts, progress)
    finally:
        if progress is not None:
            progress.close()
    print_summary(result, Console(soft_wrap=True) if interactive else Console(soft_wrap=True, no_color=True,
                  highlight=False), rich_panel=interactive and sys.stdout.isatty(),
                  extra=extra_rows(result) if extra_rows is not None else None)
    return result


def _command(args: argparse.Namespace) -> Any:
    from spmi_dbg.repro import command

    rest = list(args.command)
    if rest and rest[0] == "--":
        rest = rest[1:]
    core = getattr(args, "core", None)
    if args.from_log is not None:
        if core is not None:
            raise UsageError("--from-log and --core cannot be combined")
        if rest or args.mch or args.jit or args.base_jit or args.superpmi or args.target or args.jitoption:
            raise UsageError("--from-log takes the whole command from the log: no command after -- and no "
                             "--mch/--jit/--base-jit/--superpmi/--target/--jitoption")
        from spmi_dbg.repro.fromlog import command_from_log

        return command_from_log(args.from_log)
    if args.mch:
        return command.from_options(mch=args.mch, jit=args.jit, base_jit=args.base_jit, superpmi=args.superpmi,
                                    target=args.target, jitoptions=args.jitoption, extra=rest)
    if args.jit or args.base_jit or args.superpmi or args.target or args.jitoption:
        raise UsageError("--jit/--base-jit/--superpmi/--target/--jitoption go with --mch; without --mch give the "
                         "whole command after --")
    if not rest and core is not None:
        return _command_of_core(core, args.gdb or "gdb")
    return command.from_argv(rest)


def _command_of_core(core: Path, gdb_name: str) -> Any:
    """The command the core names ("Core was generated by `...`"), when the kernel kept all of it."""
    import tempfile

    from spmi_dbg.driver.gdbmi import diagnose_core
    from spmi_dbg.repro import command

    gdb = shutil.which(gdb_name)
    if gdb is None:
        raise UsageError(f"{gdb_name} not found: gdb is needed to read the core file (Debian: apt-get install gdb)")
    with tempfile.TemporaryDirectory(prefix="spmi-core-") as tmp:
        _, line = diagnose_core(core, None, transcript=Path(tmp) / "gdb.log", gdb=gdb, cwd=os.getcwd())
    hint = "give the superpmi command after --: spmi-dbg repro --core CORE -- superpmi ..."
    if not line:
        raise UsageError(f"{core}: the core file names no command; {hint}")
    try:
        return command.from_argv(line.split(" "))
    except SpmiDbgError as e:
        raise UsageError(f"{core}: the core names `{line}` (the kernel keeps 80 characters), which is not a "
                         f"complete command ({e}); {hint}") from None


def options(args: argparse.Namespace) -> Any:
    from spmi_dbg.repro.pipeline import ReproOptions

    qemu = _qemu(args)
    if args.debugger == "lldb":
        if qemu is not None and getattr(args, "core", None) is not None:
            raise UsageError("--qemu --core: guest core files are read with gdb-multiarch: use --debugger gdb")
        from spmi_dbg.driver import lldb_driver
        from spmi_dbg.driver.lldb_session import LldbUnavailable

        try:
            lldb_driver.check_available()
        except LldbUnavailable as e:
            raise UsageError(f"--debugger lldb: {e}") from None
        if getattr(args, "core", None) is not None and not args.command[1:] and not args.mch:
            raise UsageError("--debugger lldb --core: lldb does not tell the core's command line; give the superpmi "
                             "command after --: spmi-dbg repro --debugger lldb --core CORE -- superpmi ...")
        debugger: Any = functools.partial(lldb_driver.run_replay, cwd=os.getcwd(), qemu=qemu)
        read_core: Any = lldb_driver.diagnose_core
        tool: dict[str, Any] = {}
    else:
        name = args.gdb or ("gdb-multiarch" if qemu is not None else "gdb")
        gdb = shutil.which(name)
        if gdb is None:
            package = "gdb-multiarch" if qemu is not None else "gdb"
            raise UsageError(f"{name} not found: {package} is needed to replay under a debugger (Debian: apt-get "
                             f"install {package}), or name it with --gdb PATH")
        from spmi_dbg.driver import gdbmi

        debugger = functools.partial(gdbmi.run_replay, gdb=gdb, cwd=os.getcwd(), qemu=qemu)
        read_core = gdbmi.diagnose_core
        tool = {"gdb": gdb, "qemu": qemu}
    core_reader = None
    core = getattr(args, "core", None)
    if core is not None:
        if not core.is_file():
            raise InputError(str(core), "core file not found")
        core_reader = functools.partial(_read_core, reader=read_core, cwd=os.getcwd(), tool=tool)
    cmd = _command(args)
    _check_machine(cmd.program, qemu)
    if qemu is not None:
        cmd = dataclasses.replace(cmd, emulator=tuple(qemu.prefix()))
    return ReproOptions(command=cmd, debugger=debugger, out=getattr(args, "out", None),
                        debugger_name="gdb-multiarch" if qemu is not None and args.debugger == "gdb" else args.debugger,
                        workers=args.workers, timeout=args.timeout, verify_runs=args.verify_runs,
                        core=core.resolve() if core else None, core_reader=core_reader, redact=args.redact)


def _check_machine(program: str, qemu: Any) -> None:
    """The program must run here: this machine's architecture, or the one --qemu emulates."""
    import platform

    from spmi_dbg.elf import elf_build_id

    machine = elf_build_id(program)[1]
    host = platform.machine()
    if machine is None:
        return
    if qemu is not None and machine != qemu.arch:
        raise UsageError(f"--qemu {qemu.arch}: {program} is built for {machine}")
    if qemu is None and machine != host:
        hint = " (add --qemu aarch64)" if machine == "aarch64" else ""
        raise UsageError(f"{program} is built for {machine}, and this machine is {host}{hint}")


def _qemu(args: argparse.Namespace) -> Any:
    if not getattr(args, "qemu", None):
        if getattr(args, "sysroot", None):
            raise UsageError("--sysroot goes with --qemu")
        return None
    from spmi_dbg.driver.qemu import DEFAULT_SYSROOTS, QemuTarget

    target = QemuTarget(args.qemu, args.sysroot or DEFAULT_SYSROOTS[args.qemu])
    if shutil.which(target.emulator) is None:
        raise UsageError(f"{target.emulator} not found: --qemu needs qemu-user (Debian: apt-get install qemu-user)")
    if not Path(target.sysroot, "lib").is_dir():
        raise UsageError(f"--sysroot {target.sysroot}: no lib/ directory there (Debian's cross libraries: apt-get "
                         f"install libc6-{'arm64' if target.arch == 'aarch64' else target.arch}-cross)")
    return target


def _read_core(core: Path, program: str, *, transcript: Path, argv: list[str], reader: Any, cwd: str,
               tool: dict[str, Any]) -> Any:
    return reader(core, program, transcript=transcript, cwd=cwd, argv=argv, **tool)[0]
