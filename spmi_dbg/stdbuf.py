"""superpmi's stdout made line-buffered for the replays the tool runs (docs/debugger-notes.md
"superpmi's stdout").

superpmi writes ISSUE, MISSING and progress lines to stdout with stdio, which is block-buffered when
stdout is a file or a pipe: a replay that dies, or that a debugger kills at its fatal stop, loses
what it had not flushed (up to a buffer of lines, the last one cut), and the method contexts those
lines named would count as replayed clean. coreutils' `stdbuf -oL` sets the buffering with a
preloaded library that reads `_STDBUF_O`; the same two variables are given to the replay's own
environment, so superpmi itself runs unchanged. Where the library is not installed (not a Linux
glibc host, or a guest of another architecture under qemu) nothing is added, and the report says
so."""

from __future__ import annotations

import os
from collections.abc import Mapping

LIBSTDBUF = (
    "/usr/libexec/coreutils/libstdbuf.so",
    "/usr/lib/coreutils/libstdbuf.so",
    "/usr/lib/x86_64-linux-gnu/coreutils/libstdbuf.so",
    "/usr/lib/aarch64-linux-gnu/coreutils/libstdbuf.so",
)


def library() -> str | None:
    return next((p for p in LIBSTDBUF if os.path.isfile(p)), None)


def line_buffered(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables to set in a replay's environment (on top of `env`, default os.environ):
    LD_PRELOAD with the library appended to any preload already there, and _STDBUF_O=L. Empty when
    the library is absent."""
    lib = library()
    if lib is None:
        return {}
    base = os.environ if env is None else env
    preload = base.get("LD_PRELOAD", "")
    if lib not in preload.split():
        preload = f"{preload} {lib}".strip()
    return {"LD_PRELOAD": preload, "_STDBUF_O": "L"}
