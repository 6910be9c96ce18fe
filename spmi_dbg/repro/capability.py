"""What a JIT can show (issue 36 item 5): a verdict of "fixed", "clean" or "no crash" is given only
by a JIT that could have failed that way, established from the binary itself, never assumed.

- A JIT assert needs a JIT with asserts: a Checked or Debug build carries its assert report's
  format (`Assertion failed '%s' in '%s'...`, both eras); a Release build compiles asserts out.
- A setting needs a JIT that reads it: its configuration name among the names the JIT carries, as a
  whole NUL-terminated string, UTF-16 (3.1's `W("JitStressRegs")`) or plain (today's); most stress
  and debug settings exist only in Checked builds.
- A setting given as an environment variable needs superpmi to pass it on: its JIT host reads
  `<prefix><key>` for the prefixes its binary carries (3.1: `COMPlus_` only; today's: `DOTNET_` and
  `COMPlus_`)."""

from __future__ import annotations

import mmap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.jitoptions import JitSetting, settings_of

ASSERT_FORMAT = b"Assertion failed '%s' in '%s'"
ENV_PREFIXES = ("DOTNET_", "COMPlus_")


def carries(binary: str | Path, names: Sequence[str]) -> dict[str, bool] | None:
    """For each name, whether `binary` holds it as a whole NUL-terminated string, UTF-16 or plain
    (None: the file cannot be read)."""
    try:
        with (
            open(binary, "rb") as f,
            mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data,
        ):
            return {
                n: data.find(b"\0\0" + n.encode("utf-16-le") + b"\0\0") != -1
                or data.find(b"\0" + n.encode() + b"\0") != -1
                for n in names
            }
    except (OSError, ValueError):
        return None


def has_asserts(jit: str | Path) -> bool | None:
    """Whether the JIT reports asserts (a Checked or Debug build); None: unreadable."""
    try:
        with (
            open(jit, "rb") as f,
            mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data,
        ):
            return data.find(ASSERT_FORMAT) != -1
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Inability:
    """Why a JIT cannot show a failure: what it lacks, in a sentence."""

    jit: str
    reason: str  # "no-asserts", "setting-not-read", "prefix-not-read"
    text: str


def cannot_show(cmd: ReproCommand, *, assert_expected: bool) -> list[Inability]:
    """What keeps the command's JITs from showing its failure: an assert without asserts, a needed
    setting a JIT (or superpmi, for an environment variable) does not read."""
    out: list[Inability] = []
    if assert_expected:
        for jit in cmd.jits:
            if has_asserts(jit) is False:
                out.append(
                    Inability(
                        jit,
                        "no-asserts",
                        f"{Path(jit).name} has no asserts (no assert report in it: a Release "
                        "build), so it cannot show an assert",
                    )
                )
    _, settings = settings_of(cmd)
    for s in settings:
        out += _unread(cmd, s)
    return out


def _unread(cmd: ReproCommand, s: JitSetting) -> list[Inability]:
    key = s.config_key
    if s.from_environment:
        prefix = next((p for p in ENV_PREFIXES if s.key.lower().startswith(p.lower())), None)
        if prefix is None:
            return []  # not a JIT setting (a loader's, superpmi's, the user's own)
        host = carries(cmd.program, [prefix])
        if host is not None and not host[prefix]:
            return [
                Inability(
                    cmd.program,
                    "prefix-not-read",
                    f"{Path(cmd.program).name} does not pass {s.key} to the JIT (it reads no "
                    f"{prefix} variables)",
                )
            ]
        jits = list(cmd.jits)
    else:
        jits = (
            [cmd.jits[1]]
            if s.flag.lower().startswith("-jit2") and len(cmd.jits) > 1
            else [cmd.jits[0]]
        )
    out = []
    for jit in jits:
        found = carries(jit, [key])
        if found is not None and not found[key]:
            out.append(
                Inability(
                    jit,
                    "setting-not-read",
                    f"{Path(jit).name} does not read {key} (not among its configuration names), "
                    f"so {s.text} changes nothing in it",
                )
            )
    return out
