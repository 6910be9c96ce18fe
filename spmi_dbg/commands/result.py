"""What an `spmi ...` command gives its debugger adapter to print: the text, or a one-line error."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandResult:
    text: str
    error: str | None = None
