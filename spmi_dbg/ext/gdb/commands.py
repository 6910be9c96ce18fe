"""The `spmi` command for gdb: parses nothing itself, runs spmi_dbg.commands.spmi over
GdbProcess."""

from __future__ import annotations

import gdb

from spmi_dbg.analysis.view import signal_name
from spmi_dbg.commands.spmi import HELP, run, without_process
from spmi_dbg.ext.gdb import passing, printers
from spmi_dbg.ext.gdb.view import GdbProcess

# How each inferior's last process ended (by inferior number): (exit code, exit signal), both None
# after `kill`. The exited event says it, where $_exitcode and $_exitsignal would not: gdb leaves
# both as they were at `kill`. An end without an exit code is a death by signal when the process was
# running, a `kill` when it was stopped.
_ENDED: dict[int, tuple[int | None, int | None]] = {}
_STOPPED: set[int] = set()


def _on_stop(event: object) -> None:
    _STOPPED.add(gdb.selected_inferior().num)


def _on_cont(event: object) -> None:
    _STOPPED.discard(gdb.selected_inferior().num)


def _on_exited(event: gdb.ExitedEvent) -> None:
    num = event.inferior.num
    code = getattr(event, "exit_code", None)
    sig = gdb.convenience_variable("_exitsignal") if code is None and num not in _STOPPED else None
    _ENDED[num] = (None if code is None else int(code), None if sig is None else int(sig))
    _STOPPED.discard(num)


def _program_argv() -> list[str] | None:
    """The program and the arguments gdb runs it with (`set args`, `--args`)."""
    try:
        program = gdb.current_progspace().filename
        # gdb 13's Python has no inferior arguments: `show args` quotes them
        shown = gdb.execute("show args", to_string=True)
        start, end = shown.find('"'), shown.rfind('"')
        args = gdb.string_to_argv(shown[start + 1 : end]) if 0 <= start < end else []
    except gdb.error:
        return None
    return [program, *args] if program else None


class SpmiCommand(gdb.Command):  # type: ignore[misc]
    __doc__ = HELP

    def __init__(self) -> None:
        super().__init__("spmi", gdb.COMMAND_USER)

    def invoke(self, argument: str, from_tty: bool) -> None:
        inferior = gdb.selected_inferior()
        try:
            if inferior.pid == 0:  # as the lldb adapter: no stop to diagnose, not an empty one
                ended = _ENDED.get(inferior.num)
                result = without_process(
                    argument,
                    ended=ended is not None,
                    status=ended[0] if ended else None,
                    signal=signal_name(ended[1]) if ended and ended[1] is not None else None,
                    argv=_program_argv(),
                )
            else:
                result = run(GdbProcess(), argument)
        except gdb.error as e:  # the debugger itself refused something: one line, no traceback
            raise gdb.GdbError(f"spmi: {e}") from None
        # a bug of ours: still one line (the JSON/driver path reports it too)
        except Exception as e:
            raise gdb.GdbError(f"spmi: internal error: {type(e).__name__}: {e}") from None
        if result.text:
            gdb.write(result.text + "\n")
        if result.error:
            raise gdb.GdbError(result.error)


_registered = False


def register() -> None:
    global _registered
    if not _registered:
        SpmiCommand()
        gdb.events.stop.connect(_on_stop)
        gdb.events.cont.connect(_on_cont)
        gdb.events.exited.connect(_on_exited)
        printers.register()
        passing.register()
        _registered = True
