"""`spmi-dbg sample build`: write a sample collection (+ .mct)."""

from __future__ import annotations

import argparse
from typing import Any

from spmi_dbg.atomic import atomic_open
from spmi_dbg.mch.collection import write_index_file
from spmi_dbg.mch.mct import toc_path_for
from spmi_dbg.sample.synth import ARCH_VALUES, synthetic_collection


def add_parsers(sub: Any) -> None:
    sample = sub.add_parser("sample", help="build sample collections")
    verbs = sample.add_subparsers(dest="verb", required=True, metavar="VERB")
    p = verbs.add_parser("build", help="write a seeded synthetic collection in SuperPMI's format, with its .mct")
    p.add_argument("--methods", type=int, default=1000, help="number of method contexts (default 1000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--arch", choices=sorted(ARCH_VALUES), default="x64", help="recorded target architecture")
    p.add_argument("--mean-il", type=int, default=40, help="mean IL size in bytes (default 40)")
    p.add_argument("--inlinees", type=int, default=3, help="mean GetMethodInfo entries per context (default 3)")
    p.add_argument("--with-compile-results", action="store_true", help="store a compile result in each context")
    p.add_argument("--out", required=True, help="output .mch")
    p.set_defaults(func=cmd_build)


def cmd_build(args: argparse.Namespace) -> int:
    entries: list[tuple[int, int, bytes | None]] = []
    pos = 0
    with atomic_open(args.out) as f:
        for n, rec in enumerate(synthetic_collection(args.methods, args.seed, arch=args.arch, mean_il=args.mean_il,
                                                     inlinees=args.inlinees,
                                                     with_compile_result=args.with_compile_results), 1):
            f.write(rec)
            entries.append((pos, n, None))
            pos += len(rec)
    toc = toc_path_for(args.out)
    write_index_file(toc, entries)
    print(f"wrote {args.out}: {args.methods} method contexts, {pos} bytes (index {toc})")
    return 0
