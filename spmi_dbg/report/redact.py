"""`--redact`: the home directory, the user name and the host name replaced in what is written
($HOME/..., $USER, $HOSTNAME), so a bundle can be attached to a public issue. Paths stay readable.
The collection records (repro.mch and its .mct) are copied byte-for-byte and never rewritten: they
hold no paths of this machine (method contexts record the JIT-EE answers, not the replay's
environment)."""

from __future__ import annotations

import getpass
import json
import os
import re
import socket
from dataclasses import dataclass
from typing import Any

from spmi_dbg import shell

# A user or host name is replaced where it stands as a word of its own (in a path, "pytest-of-jdoe",
# a sentence), not inside another word ("root" in "groot").
_WORD = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"


def forms(value: str) -> list[str]:
    """The ways `value` can stand in what is written: as it is, JSON-escaped (a non-ASCII home in
    report.json), C-escaped in octal (gdb/MI), \\x-escaped bytes, and its UTF-8 bytes read as
    Latin-1 (a transcript that decoded them so). Longest first, so a longer form is replaced before
    a shorter one inside it."""
    raw = value.encode("utf-8", "surrogateescape")
    out = {
        value,
        json.dumps(value)[1:-1],
        raw.decode("latin-1"),
        raw.decode("ascii", "backslashreplace"),
        "".join(f"\\{b:03o}" if b >= 0x80 else chr(b) for b in raw),
    }
    return sorted(out, key=len, reverse=True)


def add_redact_argument(parser: Any) -> None:
    """`--redact` of a command that prints what it read (`spmi-dbg report`, `spmi-dbg why`)."""
    parser.add_argument(
        "--redact",
        action="store_true",
        help="replace the home directory, user name and host name in the output",
    )


@dataclass(frozen=True)
class Redactor:
    """`homes`: the home directory as given ($HOME) and as resolved (a home reached through a
    symbolic link appears in both forms)."""

    homes: tuple[str, ...]
    user: str | None
    host: str | None

    @classmethod
    def here(cls) -> Redactor:
        home = os.path.expanduser("~")
        try:
            user: str | None = getpass.getuser()
        except (KeyError, OSError):
            user = None
        host = socket.gethostname() or None
        homes = [h for h in dict.fromkeys((home, os.path.realpath(home))) if h not in ("", "/")]
        return cls(tuple(sorted(homes, key=len, reverse=True)), user, host)

    @property
    def home(self) -> str | None:
        return self.homes[0] if self.homes else None

    def _patterns(self) -> list[tuple[re.Pattern[str], str]]:
        out = []
        for home in self.homes:
            for form in forms(home):
                out.append((re.compile(re.escape(form) + r"(?=/|\b|$|\\|\")"), "$HOME"))
        for value, name in ((self.host, "$HOSTNAME"), (self.user, "$USER")):
            if value:
                for form in forms(value):
                    out.append((re.compile(_WORD.format(re.escape(form))), name))
        return out

    def text(self, text: str) -> str:
        for pattern, name in self._patterns():
            text = pattern.sub(name, text)
        return text

    def data(self, value: Any) -> Any:
        """`value` (JSON-like data) with every string redacted, keys included: redacted before it is
        serialised, so no escaping hides a value from the redaction."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                self.text(k) if isinstance(k, str) else k: self.data(v) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value

    def shell_word(self, word: str) -> str:
        """One sh word: a path under the home directory stays runnable ("$HOME"/rest)."""
        for home in self.homes:
            if word == home or word.startswith(home + "/"):
                rest = word[len(home) :]
                return '"$HOME"' + (shell.quote(rest) if rest else "")
        return self.text(shell.quote(word))

    def left_in(self, text: str) -> list[str]:
        """What of this machine's identity is still in `text`, in any of its forms (for tests and a
        last check)."""
        out = []
        for home in self.homes:
            if any(form in text for form in forms(home)):
                out.append(home)
        for value in (self.user, self.host):
            if value and any(
                re.search(_WORD.format(re.escape(form)), text) for form in forms(value)
            ):
                out.append(value)
        return out
