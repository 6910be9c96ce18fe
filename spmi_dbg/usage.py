"""The one kind of argument parser every `spmi-dbg` command is built from, and the argument types
and option shapes they share.

A usage error (an unknown or misspelt option, a missing argument, a bad value) prints the usage of
the command it belongs to and one line with that command's own prefix (`spmi-dbg triage: error:
...`), and exits with that command's usage status (README "Exit status", spmi_dbg.exits: 2 for the
tools, 3 for the pipelines, where 2 means "no crash"). Options are never abbreviated (`--worker` is
not `--workers`), and a bad value is described in the user's words (`expected a whole number of at
least 1, got 'two'`), never by a Python name."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from spmi_dbg import exits
from spmi_dbg.errors import printable

# the namespace attribute naming the innermost parser that took part (set_defaults: it wins)
LEAF = "_spmi_parser"


class Parser(argparse.ArgumentParser):
    """`argparse.ArgumentParser` with the rules above; `usage_status` is this command's exit status
    for a usage error. Sub-parsers (`add_subparsers().add_parser(...)`) are Parsers too and take
    `usage_status` as well."""

    def __init__(
        self,
        *args: Any,
        usage_status: int = exits.USAGE,
        passes_through: str | None = None,
        **kwargs: Any,
    ) -> None:
        """`passes_through`: this command starts another program (a debugger) and hands it the
        options it does not know itself, in `args.<passes_through>`; they go before `--`, the
        command line after it goes in `args.command` (without `--`, the command starts at the first
        word that is not an option of ours)."""
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        self.usage_status = usage_status
        self.passes_through = passes_through
        self.set_defaults(**{LEAF: self})

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(self.usage_status, f"{self.prog}: error: {message}\n")

    def parse_args(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        namespace: argparse.Namespace | None = None,
    ) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        # argparse reports these from the top-level parser: the command given them reports them
        if extras:
            leaf(ns, self).error("unrecognized arguments: " + " ".join(extras))
        return ns

    def parse_known_args(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        namespace: argparse.Namespace | None = None,
    ) -> tuple[argparse.Namespace, list[str]]:
        if self.passes_through is None:
            return super().parse_known_args(args, namespace)
        words = list(sys.argv[1:] if args is None else args)
        if "--" in words:
            ours, command = words[: words.index("--")], words[words.index("--") + 1 :]
        else:
            with_value = {s for a in self._actions if a.nargs != 0 for s in a.option_strings}
            i = 0
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in with_value else 1
            ours, command = words[:i], words[i:]
        ns, foreign = super().parse_known_args(ours, namespace)
        if foreign and "--" not in words:
            started = self.prog.rsplit(" ", 1)[-1]
            self.error(
                f"unrecognized arguments: {' '.join(foreign)} ({started}'s own options go before "
                "--, the "
                "command after it)"
            )
        setattr(ns, self.passes_through, foreign)
        ns.command = command
        return ns, []


def this_program() -> list[str]:
    """This spmi-dbg as a shell runs it again: `spmi-dbg` when that is the entry point running and
    the one on PATH, its full path when it is another; `python -m spmi_dbg` with this interpreter
    otherwise."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "spmi-dbg":
        me = shutil.which(argv0) or argv0
        on_path = shutil.which("spmi-dbg")
        if on_path is not None and os.path.exists(me) and os.path.samefile(on_path, me):
            return ["spmi-dbg"]
        if os.path.exists(me):
            return [os.path.abspath(me)]
    return [sys.executable, "-m", "spmi_dbg"]


def leaf(ns: argparse.Namespace, default: Parser) -> Parser:
    """The innermost parser that parsed `ns` (`spmi-dbg mch verify`'s, not `spmi-dbg`'s)."""
    found = getattr(ns, LEAF, None)
    return found if isinstance(found, Parser) else default


_GROUPED = re.compile(r"[+-]?\d{1,3}(,\d{3})+")  # 200,000 as the help texts print it


MAX_INTEGER_CHARS = 40  # a whole number's text, checked before it is converted


def _integer_text(text: str) -> int:
    t = text.strip()
    if len(t) > MAX_INTEGER_CHARS:  # Python itself refuses more than 4,300 digits, with a traceback
        raise ValueError(f"{len(t)} characters")
    if _GROUPED.fullmatch(t):
        t = t.replace(",", "")
    return int(t, 10)  # also 200_000


def integer(minimum: int | None = None) -> Callable[[str], int]:
    """A whole number (200000, 200,000 or 200_000), at least `minimum` when given."""
    want = "a whole number" + (f" of at least {minimum}" if minimum is not None else "")

    def convert(text: str) -> int:
        try:
            v = _integer_text(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {want}, got {printable(repr(text), limit=60)}"
            ) from None
        if minimum is not None and v < minimum:
            raise argparse.ArgumentTypeError(f"expected {want}, got {text!r}")
        return v

    return convert


def number(*, above: float | None = None) -> Callable[[str], float]:
    """A decimal number (1800, 0.5), more than `above` when given."""
    want = "a number" + (f" more than {above:g}" if above is not None else "")

    def convert(text: str) -> float:
        try:
            v = float(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {want}, got {text!r}") from None
        if v != v or v in (float("inf"), float("-inf")) or (above is not None and v <= above):
            raise argparse.ArgumentTypeError(f"expected {want}, got {text!r}")
        return v

    return convert


# The option shapes the commands repeat, each added one way. `help` and `metavar` go to argparse
# unchanged: None is argparse's own default (no help text; the option's name in capitals).


def count_option(
    p: argparse.ArgumentParser,
    flag: str,
    *,
    default: int | None = None,
    metavar: str | None = "N",
    minimum: int | None = 1,
    help: str | None = None,
) -> None:
    """`flag N`: a whole number (`integer`) of at least `minimum`, any when it is None."""
    p.add_argument(flag, type=integer(minimum=minimum), default=default, metavar=metavar, help=help)


def number_option(
    p: argparse.ArgumentParser,
    flag: str,
    *,
    default: float,
    metavar: str = "S",
    above: float = 0,
    help: str | None = None,
) -> None:
    """`flag S`: a decimal number (`number`) more than `above`; seconds unless said."""
    p.add_argument(flag, type=number(above=above), default=default, metavar=metavar, help=help)


def repeated_option(p: argparse.ArgumentParser, flag: str, *, metavar: str, help: str) -> None:
    """`flag X`, repeatable: its values in the order given, [] when it is not."""
    p.add_argument(flag, metavar=metavar, action="append", default=[], help=help)
