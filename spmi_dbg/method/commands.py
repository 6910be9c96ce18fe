"""`spmi-dbg mch il FILE N`: the IL of method context N with the names the collection recorded,
the JIT flags it was compiled with and the callees the JIT looked at (`--callees`: their IL
too)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from spmi_dbg.method.seen import read_method
from spmi_dbg.usage import integer


def add_verbs(verbs: Any) -> None:
    """The `mch` verbs about the method (mch's own parser holds the collection's)."""
    p = verbs.add_parser(
        "il",
        help="the IL of one method context, tokens resolved to the names the collection recorded",
    )
    p.add_argument("collection")
    p.add_argument("number", type=integer(minimum=1), help="method context number (1-based)")
    p.add_argument(
        "--callees",
        action="store_true",
        help="also the IL of each callee the JIT was given a body for (getMethodInfo)",
    )
    p.add_argument("--json", action="store_true", help="the same as data")
    p.set_defaults(func=cmd_il)


def cmd_il(args: argparse.Namespace) -> int:
    seen = read_method(args.collection, args.number, callee_il=args.callees)
    if args.json:
        json.dump(seen.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(seen.text())
    return 0
