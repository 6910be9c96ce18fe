"""A gdb session's shared-library symbols, read once (issue 29 item 2). On every `run` gdb drops the
objfiles of the shared libraries and reads them again: on the real 3.1.23 superpmi with its 38 MB
Checked JIT that is 0.095 s per run (with the index cache), and the first backtrace through the
JIT then expands its DWARF again, 0.11 s; the replay itself dies in 8 ms. Objfiles added with
`add-symbol-file` are the user's and survive a rerun, with their expanded symbols.

So after the first stopped replay of a session, where gdb loaded every library, their load
addresses are learnt (`-file-list-shared-libraries`); before the next run `auto-solib-add` is
turned off and each library is added once with `add-symbol-file FILE -o BIAS` (the bias: where its
.text was loaded minus the .text address in the file). gdb disables address randomization for the
replays it runs, so the libraries load where they did; at every later stop the list is checked
before the diagnosis, and a library that was not there before or moved is added at its own place
(one that moved is dropped first). Measured on that build: a rerun to the crash 0.011 s and its
20-frame backtrace 0.002 s, the same text as with gdb's own loading."""

from __future__ import annotations

from dataclasses import dataclass, field

from spmi_dbg.driver.gdb.mi import MiChannel
from spmi_dbg.elf import read
from spmi_dbg.errors import ToolFailure


def loaded(channel: MiChannel) -> dict[str, int]:
    """Each shared library of the stopped replay -> the address its .text starts at."""
    reply = channel.request("-file-list-shared-libraries")
    if reply.error is not None:
        raise ToolFailure(f"gdb could not list the shared libraries: {reply.error}")
    out: dict[str, int] = {}
    payload = reply.payload if isinstance(reply.payload, dict) else {}
    for lib in payload.get("shared-libraries") or []:
        path = str(lib.get("host-name") or lib.get("id") or "")
        ranges = lib.get("ranges") or []
        if path and ranges and ranges[0].get("from"):
            out[path] = int(str(ranges[0]["from"]), 16)
    return out


def _bias(path: str, text: int) -> int | None:
    facts = read(path)
    if facts is None or facts.text_address is None:
        return None
    return text - facts.text_address


@dataclass
class SymbolsOnce:
    """The session's libraries as user objfiles: `learn` after a stop gdb loaded them for,
    `apply` before a run, `check` at each stop after."""

    added: dict[str, int] = field(default_factory=dict)  # path -> .text address it was added at
    learnt: dict[str, int] = field(default_factory=dict)
    active: bool = False
    notes: list[str] = field(default_factory=list)

    def learn(self, channel: MiChannel) -> None:
        if not self.active and not self.learnt:
            found = loaded(channel)
            # a path a CLI command cannot carry (a line break): gdb keeps loading them itself
            if not any(c in path for path in found for c in "\n\r"):
                self.learnt = found

    def apply(self, channel: MiChannel) -> None:
        """Before a run: auto-solib-add off and every learnt library added (once)."""
        if self.active or not self.learnt:
            return
        for path, text in self.learnt.items():
            self._add(channel, path, text)
        channel.must_console("set auto-solib-add off")
        self.active = True

    def check(self, channel: MiChannel) -> None:
        """At a stop: the libraries as they are loaded now; any new or moved one added where it
        is."""
        if not self.active:
            return
        for path, text in loaded(channel).items():
            if self.added.get(path) == text:
                continue
            if path in self.added:
                channel.must_console(f"remove-symbol-file -a {self.added.pop(path):#x}")
                self.notes.append(f"{path} moved: its symbols were added again at {text:#x}")
            self._add(channel, path, text)

    def _add(self, channel: MiChannel, path: str, text: int) -> None:
        bias = _bias(path, text)
        if bias is None:
            return
        channel.must_console(f"add-symbol-file {_quote_path(path)} -o {bias:#x}")
        self.added[path] = text


def _quote_path(path: str) -> str:
    """gdb's own quoting of a file argument (a path with spaces or quotes)."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'
