"""`spmi-dbg recheck REPRO... --jit NEW_JIT`: is it fixed? Exit 0 all fixed, 1 otherwise (with
--git-bisect, one repro: 0 good, 1 bad, 125 skip, for `git bisect run`), 3 usage or input error."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from spmi_dbg import exits
from spmi_dbg.bisect.store import Store, flavor_of
from spmi_dbg.errors import UsageError
from spmi_dbg.repro.arguments import PIPELINE_USAGE, pipeline_errors
from spmi_dbg.repro.needs import switches_of
from spmi_dbg.tempfiles import temp_dir
from spmi_dbg.usage import count_option, number_option

GIT_BISECT = {
    "fixed": exits.FOUND,
    "still failing": exits.NOT_FOUND,
    "changed": exits.GIT_BISECT_SKIP,
    "cannot tell": exits.GIT_BISECT_SKIP,
}


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "recheck",
        help="replay repro bundles on a new JIT or superpmi: fixed, still failing, changed",
        usage="spmi-dbg recheck REPRO... (--jit SO | --store DIR --build HASH | --superpmi PROG)",
        description="REPRO: a repro bundle, a triage directory (each bucket's bundle) or a "
        "bisect's target.json. Each is replayed on the new build and said to be fixed, still "
        "failing, changed (another failure) or cannot tell (missing data, another JIT-EE "
        "version, a JIT that does not load, flaky); OUT/recheck.json.",
        usage_status=PIPELINE_USAGE,
    )
    p.add_argument("repros", nargs="+", type=Path, metavar="REPRO")
    p.add_argument("--jit", type=Path, metavar="SO", help="the new JIT")
    p.add_argument("--store", type=Path, metavar="DIR", help="a store of JIT builds (with --build)")
    p.add_argument("--build", metavar="HASH", help="the store's build to replay")
    p.add_argument(
        "--jit-name",
        metavar="NAME",
        help="with --store: the JIT's file name in its builds (default: the repro's JIT's name, "
        "else the build's only .so)",
    )
    p.add_argument("--superpmi", type=Path, metavar="PROG", help="the new superpmi")
    count_option(p, "--runs", default=2)
    number_option(p, "--timeout", default=60.0)
    p.add_argument("--debugger", choices=("gdb", "lldb", "none"), default="gdb")
    p.add_argument(
        "--git-bisect",
        action="store_true",
        help="one repro; exit 0 good (fixed), 1 bad (still failing), 125 skip (git bisect run)",
    )
    p.add_argument(
        "--out", type=Path, default=Path("spmi-recheck"), metavar="DIR", help="(spmi-recheck)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return pipeline_errors("recheck", lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    # what runs a recheck, not what parses its command line (every command builds this parser)
    from spmi_dbg.driver.select import pick
    from spmi_dbg.recheck.run import recheck, targets_of, write

    given = [x for x in (args.jit, args.store, args.superpmi) if x is not None]
    if len(given) != 1:
        raise UsageError(
            "give exactly one of --jit SO, --store DIR (with --build), --superpmi PROG"
        )
    if (args.store is None) != (args.build is None):
        raise UsageError("--store and --build go together")
    if args.git_bisect and len(args.repros) != 1:
        raise UsageError("--git-bisect takes one repro")
    targets = targets_of(args.repros)
    jit = args.jit
    if args.store is not None:
        t = targets[0][1]
        old = t.command.jits[t.varies]
        flavor = flavor_of(old, checked=bool(switches_of(old)))
        name = args.jit_name or Path(old).name
        store = Store(args.store, name, flavor, named=bool(args.jit_name))
        jit = store.find_any_flavor(args.build).jit
        if jit is None:
            raise UsageError(
                f"--build {args.build}: no build of it in --store {args.store} with a JIT named "
                f"{name} for {flavor.os}.{flavor.arch}.{flavor.build}"
                + ("" if args.jit_name else " (--jit-name NAME names the JIT's file in the store)")
            )
    for what in (jit, args.superpmi):
        if what is not None and not what.is_file():
            raise UsageError(f"{what}: not found")
    debugger = None if args.debugger == "none" else pick(args.debugger, cwd=os.getcwd())
    with temp_dir("recheck") as tmp:
        results = recheck(
            targets,
            jit=jit,
            superpmi=args.superpmi,
            runs=args.runs,
            timeout=args.timeout,
            work=Path(tmp),
            debugger=debugger,
        )
    for r in results:
        print(r.line())
    if not args.git_bisect:
        args.out.mkdir(parents=True, exist_ok=True)
        write(args.out, results, str(jit or args.superpmi))
        print(f"recheck: {args.out / 'recheck.json'}", file=sys.stderr)
        return exits.FOUND if all(r.status == "fixed" for r in results) else exits.NOT_FOUND
    return GIT_BISECT[results[0].status]
