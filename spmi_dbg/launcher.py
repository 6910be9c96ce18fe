"""The `spmi-dbg` console script. `spmi-dbg mch verify FILE [--max-problems N]` execs the native
verifier (native/mch/mchverify.c, installed as `_native/bin/spmi-mch-verify`), which prints the same
bytes with the same exit status as the Python verify without starting the package (it is timed
against `mcs -integ`, docs/mch-format.md 6); every other command line goes to `spmi_dbg.cli.main`
unchanged.

Only what the native verifier implements is taken: exactly one ASCII FILE that pathlib can name (not
"", "." or "/"; non-ASCII paths are escaped by Python's Unicode rules), `--max-problems N` /
`--max-problems=N` with N plain digits >= 1, and no other option (`-h`, `--json`, an abbreviation,
`--`, anything unknown); and not when the Python verify would draw its progress bar (stderr a
terminal and a collection of more than 256 MiB; or a .mct given, whose collection is not looked up
here). A missing or failing binary falls back to Python too. This module imports os and sys only:
everything else costs start-up time.
"""

from __future__ import annotations

import os
import sys

import spmi_dbg
from spmi_dbg.paths import MCH_VERIFY

DEFAULT_MAX_PROBLEMS = 100  # spmi_dbg/mch/commands.py: verify's --max-problems default
# spmi_dbg/mch/commands.py LONG_SCAN: the Python verify draws a progress bar above it
LONG_SCAN = 256 << 20
MAX_VALUE = (1 << 63) - 1  # what the native verifier's --max-problems holds


def _count(text: str) -> int | None:
    if not (text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if 1 <= value <= MAX_VALUE else None


def verify_arguments(args: list[str]) -> tuple[str, int] | None:
    """(FILE, N) when `args` (sys.argv[1:]) is a `mch verify` the native verifier takes as it is,
    else None."""
    if args[:2] != ["mch", "verify"]:
        return None
    path: str | None = None
    max_problems = DEFAULT_MAX_PROBLEMS
    rest = args[2:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--max-problems" or arg.startswith("--max-problems="):
            if arg == "--max-problems":
                if i + 1 >= len(rest):
                    return None
                text, i = rest[i + 1], i + 2
            else:
                text, i = arg.partition("=")[2], i + 1
            value = _count(text)
            if value is None:
                return None
            max_problems = value  # the last one counts, as in argparse
        elif arg.startswith("-") or path is not None:
            return None
        else:
            path, i = arg, i + 1
    if path is None or not path.isascii():
        return None
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:  # pathlib's name is empty: no index name can be made from it
        return None
    if _progress_bar(path, parts[-1]):
        return None
    return path, max_problems


def _progress_bar(path: str, name: str) -> bool:
    """Whether the Python verify would draw its progress bar (or might: a .mct's collection is not
    looked up)."""
    if not os.isatty(2):
        return False
    if name.lower().endswith(".mct"):
        return True
    try:
        return os.stat(path).st_size > LONG_SCAN
    except OSError:
        return False


def native_verifier() -> str | None:
    for d in spmi_dbg.__path__:
        candidate = os.path.join(d, "_native", MCH_VERIFY)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def main() -> int:
    taken = verify_arguments(sys.argv[1:])
    binary = native_verifier() if taken is not None else None
    if taken is not None and binary is not None:
        path, max_problems = taken
        try:
            os.execv(binary, [binary, "--max-problems", str(max_problems), "--", path])
        except OSError:
            pass  # not runnable after all: the Python verify gives the same answer
    from spmi_dbg.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
