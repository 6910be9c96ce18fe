"""What the driver asks the extension inside gdb over MI, at a stop: the full diagnosis (`spmi
diagnose --json`) and every thread's stack, each one console command answered by a JSON line."""

from __future__ import annotations

import json
from typing import Any

from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.analysis.stacks import ThreadStack
from spmi_dbg.driver.gdb.mi import MiChannel
from spmi_dbg.errors import ToolFailure

DIAGNOSE_TIMEOUT = 120.0  # the full diagnosis reads the collection and disassembles
# a hang's stacks, from the view in gdb's Python (the extension is loaded: spmi_dbg is importable)
STACKS_COMMAND = (
    "python from spmi_dbg.analysis.stacks import stacks_line; "
    "from spmi_dbg.ext.gdb.view import GdbProcess; print(stacks_line(GdbProcess()))"
)


def diagnosis(channel: MiChannel, signal: str | int | None = None) -> Diagnosis:
    """The extension's full diagnosis of the stop (`signal`: the stop's, when gdb's own $_siginfo
    cannot tell it)."""
    command = "spmi diagnose --json" + (f" --signal {signal}" if signal else "")
    reply = channel.console(command, max(DIAGNOSE_TIMEOUT, channel.request_timeout))
    if reply.error is not None:
        raise ToolFailure(f"`{command}` failed in gdb: {reply.error}")
    data = _json_line(reply.console)
    if data is None:
        raise ToolFailure(f"`{command}` gave no JSON: {reply.console[-300:]!r}")
    try:
        return Diagnosis.from_json(data)
    except ValueError as e:  # jsonfacts.FactJsonError: names the fact and the field
        raise ToolFailure(f"`{command}` printed a diagnosis that could not be read: {e}") from None


def stacks(channel: MiChannel) -> list[ThreadStack]:
    """Every thread's stack, read in gdb's Python from the view by the lldb worker's function
    (spmi_dbg.analysis.stacks), one round trip."""
    reply = channel.console(STACKS_COMMAND, max(DIAGNOSE_TIMEOUT, channel.request_timeout))
    if reply.error is not None:
        raise ToolFailure(f"gdb could not read the threads' stacks: {reply.error}")
    data = _json_line(reply.console)
    if data is None:
        raise ToolFailure(
            f"reading the threads' stacks in gdb gave no JSON: {reply.console[-300:]!r}"
        )
    try:
        return [ThreadStack.from_json(t) for t in data.get("threads") or []]
    except ValueError as e:  # jsonfacts.FactJsonError: names the fact and the field
        raise ToolFailure(f"gdb printed threads' stacks that could not be read: {e}") from None


def _json_line(console: str) -> dict[str, Any] | None:
    """The last line of a console reply that is a JSON object (what the extension printed)."""
    for line in reversed(console.splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                return None
            return data if isinstance(data, dict) else None
    return None
