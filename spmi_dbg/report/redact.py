"""`--redact`: the home directory, the user name and the host name replaced in what is written ($HOME/...,
$USER, $HOSTNAME), so a bundle can be attached to a public issue. Paths stay readable. The collection records
(repro.mch and its .mct) are copied byte-for-byte and never rewritten: they hold no paths of this machine
(method contexts record the JIT-EE answers, not the replay's environment)."""

from __future__ import annotations

import getpass
import os
import re
import socket
from dataclasses import dataclass

from spmi_dbg import shell

# A user or host name is replaced where it stands as a word of its own (in a path, "pytest-of-jdoe", a
# sentence), not inside another word ("root" in "groot").
_WORD = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"


@dataclass(frozen=True)
class Redactor:
    home: str | None
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
        return cls(home if home not in ("", "/") else None, user, host)

    def text(self, text: str) -> str:
        if self.home:
            text = re.sub(re.escape(self.home) + r"(?=/|\b|$)", "$HOME", text)
        for value, name in ((self.host, "$HOSTNAME"), (self.user, "$USER")):
            if value:
                text = re.sub(_WORD.format(re.escape(value)), name, text)
        return text

    def shell_word(self, word: str) -> str:
        """One sh word: a path under the home directory stays runnable ("$HOME"/rest)."""
        if self.home and (word == self.home or word.startswith(self.home + "/")):
            rest = word[len(self.home):]
            return '"$HOME"' + (shell.quote(rest) if rest else "")
        return self.text(shell.quote(word))

    def left_in(self, text: str) -> list[str]:
        """What of this machine's identity is still in `text` (for tests and a last check)."""
        out = []
        if self.home and self.home in text:
            out.append(self.home)
        for value in (self.user, self.host):
            if value and re.search(_WORD.format(re.escape(value)), text):
                out.append(value)
        return out
