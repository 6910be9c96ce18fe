"""`spmi-dbg mch il FILE N`: the IL of method context N with the names the collection recorded."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from spmi_dbg.errors import InputError
from spmi_dbg.mch.collection import Collection
from spmi_dbg.method.recorded import Answers
from spmi_dbg.method.view import MethodView, method_view
from spmi_dbg.usage import integer


def add_verbs(verbs: Any) -> None:
    """The `mch` verbs about the method (mch's own parser holds the collection's)."""
    p = verbs.add_parser(
        "il",
        help="the IL of one method context, tokens resolved to the names the collection recorded",
    )
    p.add_argument("collection")
    p.add_argument("number", type=integer(minimum=1), help="method context number (1-based)")
    p.add_argument("--json", action="store_true", help="the same as data")
    p.set_defaults(func=cmd_il)


def read_method(collection: str, number: int) -> MethodView:
    """Method context `number` of `collection` as the JIT saw it; InputError when its compile
    request cannot be read."""
    with Collection.open(collection) as col:
        answers = Answers.of_packets(col.packets(number))
    view = method_view(number, answers)
    if view is None:
        raise InputError(
            collection,
            "its CompileMethod packet is missing or of a layout this tool does not know: "
            "expected the compile request's METHOD_INFO",
            record=number,
        )
    view.notes[:0] = answers.problems
    return view


def cmd_il(args: argparse.Namespace) -> int:
    view = read_method(args.collection, args.number)
    if args.json:
        json.dump(view.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(view.text())
    return 0
