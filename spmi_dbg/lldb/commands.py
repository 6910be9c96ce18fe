"""The `spmi` command for lldb: runs spmi_dbg.commands.spmi over LldbProcess."""

from __future__ import annotations

from typing import Any

from spmi_dbg.commands.spmi import HELP, run
from spmi_dbg.lldb.view import LldbProcess


def spmi_command(debugger: Any, command: str, exe_ctx: Any, result: Any, internal_dict: dict[str, Any]) -> None:
    target = exe_ctx.GetTarget() if exe_ctx is not None and exe_ctx.GetTarget().IsValid() \
        else debugger.GetSelectedTarget()
    if not target.IsValid() or not target.GetProcess().IsValid():
        result.SetError("spmi: no process (run the program first)")
        return
    try:
        res = run(LldbProcess(target), command)
    except Exception as e:  # a bug of ours: one line, never a traceback in the user's session
        result.SetError(f"spmi: internal error: {type(e).__name__}: {e}")
        return
    if res.text:
        result.AppendMessage(res.text)
    if res.error:
        result.SetError(res.error)


spmi_command.__doc__ = HELP
