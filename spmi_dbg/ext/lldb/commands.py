"""The `spmi` command for lldb: runs spmi_dbg.commands.spmi over LldbProcess."""

from __future__ import annotations

from typing import Any

import lldb

from spmi_dbg.commands.spmi import HELP, run, without_process
from spmi_dbg.ext.lldb.view import LldbProcess


def spmi_command(
    debugger: Any, command: str, exe_ctx: Any, result: Any, internal_dict: dict[str, Any]
) -> None:
    target = (
        exe_ctx.GetTarget()
        if exe_ctx is not None and exe_ctx.GetTarget().IsValid()
        else debugger.GetSelectedTarget()
    )
    process = target.GetProcess() if target.IsValid() else None
    try:
        if process is None or not process.IsValid():
            res = without_process(command)
        # lldb gives a signal's death as its number, no name
        elif process.GetState() == lldb.eStateExited:
            info = target.GetLaunchInfo()
            res = without_process(
                command,
                ended=True,
                status=process.GetExitStatus(),
                detail=process.GetExitDescription() or None,
                argv=[
                    target.GetExecutable().fullpath or "",
                    *(info.GetArgumentAtIndex(i) for i in range(info.GetNumArguments())),
                ],
            )
        else:
            res = run(LldbProcess(target), command)
    except Exception as e:  # a bug of ours: one line, never a traceback in the user's session
        result.SetError(f"spmi: internal error: {type(e).__name__}: {e}")
        return
    if res.text:
        result.AppendMessage(res.text)
    if res.error:
        result.SetError(res.error)


spmi_command.__doc__ = HELP
