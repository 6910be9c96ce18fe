"""The tool's changes to a user's superpmi command, made on its parsed items so that everything
else stays as the user typed it (docs/superpmi-conventions.md 1, "In this repository"):

- `-p`/`-parallel [N]` is dropped, and `-skipCleanup` with it (it means nothing without -p);
- the `-c` list is the tool's (each partition's, the repro's);
- the tool's own runs read what superpmi prints at the letters they need (`-v ewi` hides the
  MISSING lines, the progress and the summary): `tool_verbosity`;
- the files superpmi writes (`-f`, `-details`, `-w`, `-r`, `-diffMCList`) are the user's: the
  tool's runs write their own elsewhere (`redirect_outputs`); `-e`'s `<input>.stats` is written
  beside whatever collection the run reads."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

from spmi_dbg.superpmi_argv.grammar import (
    OUTPUT_FILE,
    OUTPUT_PREFIX,
    VERBOSITY,
    Grammar,
)
from spmi_dbg.superpmi_argv.parse import Item, read_options

# what the tool reads of superpmi's output: errors and warnings (failed compiles, exceptions),
# MISSING lines, ISSUE lines (asserts, diffs), the Loaded summary, the header and progress
TOOL_LETTERS = "ewminv"


def tool_letters(letters: str) -> str:
    """A `-v` value that shows what the tool reads: the user's letters, without `q` (which hides
    everything), and the letters of TOOL_LETTERS the user left out (letters are case-sensitive:
    `EWMI` enables nothing). `a` already enables every kind."""
    kept = letters.replace("q", "")
    if "a" in kept:
        return kept
    return kept + "".join(c for c in TOOL_LETTERS if c not in kept)


def hides(letters: str) -> str:
    """The letters of TOOL_LETTERS that a `-v letters` leaves out (empty: nothing hidden)."""
    if "q" in letters:
        return TOOL_LETTERS
    if "a" in letters:
        return ""
    return "".join(c for c in TOOL_LETTERS if c not in letters)


def tool_verbosity(items: Sequence[Item]) -> list[Item]:
    """`items` with each `-v` value made to show what the tool reads (tool_letters)."""
    out: list[Item] = []
    for i in items:
        if i.role == VERBOSITY and i.value is not None and hides(i.value):
            out.append(Item((i.tokens[0], tool_letters(i.value)), i.switch))
        else:
            out.append(i)
    return out


def outputs(items: Sequence[Item]) -> list[Item]:
    """The items naming a file (or a prefix of files) superpmi writes."""
    return [i for i in items if i.role in (OUTPUT_FILE, OUTPUT_PREFIX) and i.value is not None]


def output_name(item: Item) -> str:
    """A file name for an output item's redirected file: the switch and the user's base name."""
    base = re.sub(r"[^A-Za-z0-9._-]", "_", (item.value or "").rstrip("/").rsplit("/", 1)[-1])
    name = item.switch.name if item.switch is not None else "output"
    return f"{name}-{base or 'file'}"


def redirect_outputs(items: Sequence[Item], place: Callable[[Item], str]) -> list[Item]:
    """`items` with each output's value replaced by `place(item)`."""
    return [Item((i.tokens[0], place(i)), i.switch) if i in outputs([i]) else i for i in items]


def tokens(items: Sequence[Item]) -> list[str]:
    return [t for i in items for t in i.tokens]


def for_tool_run(
    grammar: Grammar, options: Sequence[str], place: Callable[[Item], str]
) -> list[str]:
    """The options of one of the tool's own runs: the verbosity it reads at, its own files."""
    items = read_options(grammar, options)
    return tokens(redirect_outputs(tool_verbosity(items), place))


def run_slug(*parts: str) -> str:
    """A short stable name for one run's files (its `-c` list and input)."""
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:12]
