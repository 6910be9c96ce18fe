"""The environment is part of a repro (issue 26 item 1): the variables that can change a replay,
recorded from the user's environment when the command is given, set by repro.sh and by every native
replay of the pipeline, and nothing else (`env -i`, plus PATH and HOME). So "verified" means "it
reproduces from repro.sh in a clean shell".

Recorded: the JIT's configuration (`DOTNET_*`, `COMPlus_*`: superpmi's JIT host falls back to them,
docs/superpmi-conventions.md, the config lookup order), the loader's (`LD_LIBRARY_PATH`,
`LD_PRELOAD`, `LD_BIND_NOW`: superpmi -a needs coredistools), superpmi's own (`SuperPMI*`), any
variable the user names (`--env NAME`), or everything but the shell's own noise (`--env-all`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from spmi_dbg.errors import UsageError

EnvKind = Literal["jit", "loader", "superpmi", "named", "found"]
JIT_PREFIXES = ("dotnet_", "complus_")  # compared without case: as the user spelled it is kept
LOADER = ("LD_LIBRARY_PATH", "LD_PRELOAD", "LD_BIND_NOW")
SUPERPMI_PREFIX = "superpmi"
# what every replay gets from the tool's own environment, never recorded
INHERITED = ("PATH", "HOME")
# the shell's and the terminal's own: not part of a replay even with --env-all
NOISE = frozenset(
    {
        "_",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "TERM",
        "COLORTERM",
        "TERM_PROGRAM",
        "TERM_PROGRAM_VERSION",
        "COLUMNS",
        "LINES",
        "PS1",
        "PS2",
        "PS4",
        "PROMPT_COMMAND",
        "LS_COLORS",
        "LESSOPEN",
        "LESSCLOSE",
        "MAIL",
        "SHELL",
        "HISTFILE",
        "HISTSIZE",
        "DISPLAY",
        "SSH_AUTH_SOCK",
        "SSH_CLIENT",
        "SSH_CONNECTION",
        "SSH_TTY",
        "XDG_SESSION_ID",
        "XDG_RUNTIME_DIR",
        "DBUS_SESSION_BUS_ADDRESS",
        *INHERITED,
    }
)


def kind_of(name: str) -> EnvKind | None:
    """What a variable is to a replay: the JIT's, the loader's, superpmi's own, or nothing."""
    low = name.lower()
    if low.startswith(JIT_PREFIXES):
        return "jit"
    if name in LOADER:
        return "loader"
    if low.startswith(SUPERPMI_PREFIX):
        return "superpmi"
    return None


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str
    kind: EnvKind

    @property
    def text(self) -> str:
        return f"{self.name}={self.value}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "kind": self.kind}


def capture(
    environ: Mapping[str, str], named: Sequence[str] = (), everything: bool = False
) -> tuple[EnvVar, ...]:
    """The variables of `environ` a replay's repro keeps, in name order. A name given with `--env`
    that is not set is a UsageError: the user expects it in the repro."""
    out: dict[str, EnvVar] = {}
    for name in named:
        if not name or "=" in name:
            raise UsageError(f"--env {name!r}: expected a variable name (without =VALUE)")
        if name not in environ:
            raise UsageError(f"--env {name}: not set in this environment")
        out[name] = EnvVar(name, environ[name], kind_of(name) or "named")
    for name, value in environ.items():
        kind = kind_of(name)
        if kind is None and everything and name not in NOISE:
            kind = "named"
        if kind is not None and name not in out:
            out[name] = EnvVar(name, value, kind)
    return tuple(out[n] for n in sorted(out))


def clean_prefix(variables: Iterable[EnvVar]) -> list[str]:
    """`env -i PATH=... HOME=... NAME=VALUE...`: the argv prefix of a replay that gets exactly
    these variables (PATH and HOME as this process has them)."""
    kept = [f"{n}={os.environ[n]}" for n in INHERITED if n in os.environ]
    return ["env", "-i", *kept, *(v.text for v in variables)]


def shell_prefix(variables: Iterable[EnvVar], quote: Callable[[str], str]) -> str:
    """The same for repro.sh: PATH and HOME from the shell that runs it."""
    words = ["env", "-i", 'PATH="$PATH"', 'HOME="$HOME"', *(quote(v.text) for v in variables)]
    return " ".join(words)
