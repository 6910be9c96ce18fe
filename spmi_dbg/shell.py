"""The one way text from a path (or any argument) is written into a shell script, a shell command
line, or a comment in one. A word is single-quoted for POSIX sh (`quote`): nothing in it is expanded
or run, a newline included (it stays inside the quotes). A comment is one line (`comment`): a
newline there would end the comment and run the rest, so control characters are escaped and the text
is shown, never run."""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from spmi_dbg.errors import printable


def quote(word: str) -> str:
    """One sh word, exactly `word` once the shell has read it."""
    return shlex.quote(word)


def join(words: Iterable[str]) -> str:
    """A sh command line of these words."""
    return " ".join(quote(w) for w in words)


def comment(text: str) -> str:
    """`text` for a `# ...` line: one line, control characters escaped (never cut)."""
    return printable(text, limit=1 << 20)
