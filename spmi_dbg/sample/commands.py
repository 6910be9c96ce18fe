"""`spmi-dbg sample build` and `spmi-dbg sample asm`: write sample collections (+ .mct) for the
sample JIT."""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

from spmi_dbg.errors import UsageError
from spmi_dbg.sample.build import (
    SampleSpec,
    build,
    corpus_files,
    load_corpus,
    records_for_methods,
    write_collection,
)
from spmi_dbg.sample.builder import ARCH_VALUES, RecordBuilder
from spmi_dbg.sample.inject import KINDS, parse_inject
from spmi_dbg.usage import count_option, number_option, repeated_option


def add_parsers(sub: Any) -> None:
    sample = sub.add_parser(
        "sample",
        help="build sample collections",
        description="Sample collections in SuperPMI's format for the bundled sample JIT.",
    )
    verbs = sample.add_subparsers(dest="verb", required=True, metavar="VERB")
    _add_build(verbs)
    _add_asm(verbs)


def _add_build(verbs: Any) -> None:
    p = verbs.add_parser(
        "build",
        help="write a seeded random collection, with chosen crash triggers, and its .mct",
        description="Write N method contexts of random methods the sample JIT compiles (same "
        "arguments, same bytes), optionally with corpus methods first and crash triggers at "
        "chosen numbers.",
    )
    count_option(
        p,
        "--methods",
        default=1000,
        metavar=None,
        help="number of method contexts (default 1000)",
    )
    count_option(p, "--seed", default=1, metavar=None, minimum=None, help="random seed (default 1)")
    p.add_argument(
        "--arch", choices=sorted(ARCH_VALUES), default="x64", help="recorded target architecture"
    )
    number_option(
        p,
        "--size-factor",
        default=1.0,
        metavar="F",
        help="scale the random methods' IL sizes by F (default 1: the usual mix)",
    )
    repeated_option(
        p,
        "--inject",
        metavar="KIND@N[,N...]",
        help="put a method with this trigger at these numbers (repeatable); "
        f"KIND: {', '.join(KINDS)}",
    )
    repeated_option(
        p,
        "--corpus",
        metavar="DIR_OR_FILES",
        help="assembled .il files (or directories of them, comma lists allowed) as method "
        "contexts 1..k",
    )
    _output_arguments(p)
    p.set_defaults(func=cmd_build)


def _add_asm(verbs: Any) -> None:
    a = verbs.add_parser(
        "asm",
        help="assemble IL text files into a collection (one method context per .method)",
        description="Assemble IL text (syntax: spmi_dbg/sample/README.md) into a collection.",
    )
    a.add_argument("files", nargs="+", metavar="FILE.il")
    a.add_argument(
        "--arch",
        choices=sorted(ARCH_VALUES),
        default=None,
        help="recorded target architecture (default: the files' .arch, else x64)",
    )
    _output_arguments(a)
    a.set_defaults(func=cmd_asm)


def _output_arguments(p: argparse.ArgumentParser) -> None:
    """What both verbs write: the JIT config recorded, and the collection."""
    repeated_option(
        p,
        "--config",
        metavar="NAME=VALUE[:DEFAULT]",
        help="record a GetIntConfigValue answer in every method context (repeatable); the key "
        "includes the default the JIT passes (0 unless given)",
    )
    p.add_argument("--out", required=True, help="output .mch (its index is written as OUT.mct)")


def parse_config(specs: list[str]) -> list[tuple[str, int, int]]:
    out = []
    for spec in specs:
        m = re.fullmatch(
            r"(\w+)=(-?(?:0x[0-9A-Fa-f]+|\d+))(?::(-?(?:0x[0-9A-Fa-f]+|\d+)))?", spec.strip()
        )
        if not m:
            raise UsageError(
                f"--config {spec!r}: expected NAME=VALUE[:DEFAULT] with integers, e.g. JitStress=2"
            )
        out.append((m.group(1), int(m.group(2), 0), int(m.group(3) or "0", 0)))
    return out


def cmd_build(args: argparse.Namespace) -> int:
    injections = [x for spec in args.inject for x in parse_inject(spec)]
    config = parse_config(args.config)
    corpus = [m for asm in load_corpus(corpus_files(args.corpus)) for m in asm.methods]
    if args.arch != "arm64" and any(k == "seed-arm64" for k, _ in injections):
        print(
            "spmi-dbg sample build: note: seed-arm64 is meant for an Arm64 collection "
            f"(--arch arm64); in this {args.arch} collection it is a plain ee-exception",
            file=sys.stderr,
        )
    r = build(
        args.out,
        SampleSpec(
            args.methods, args.seed, args.arch, injections, corpus, config, args.size_factor
        ),
    )
    placed = ", ".join(
        f"{k}@{n}" for n, k in sorted(r.placed.items()) if not k.startswith("corpus:")
    )
    extra = f"; corpus 1..{len(corpus)}" if corpus else ""
    extra += f"; injected {placed}" if placed else ""
    print(
        f"wrote {r.path}: {r.count} method contexts ({args.arch}), {r.size} bytes in "
        f"{r.seconds:.1f} s (index {r.toc}){extra}"
    )
    return 0


def cmd_asm(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    assemblies = load_corpus([Path(f) for f in args.files])
    arch = args.arch
    if arch is None:
        archs = {a.arch for a in assemblies if a.arch}
        if len(archs) > 1:
            raise UsageError(
                f"the files ask for different targets ({', '.join(sorted(archs))}): pass --arch"
            )
        arch = archs.pop() if archs else "x64"
    config = [c for a in assemblies for c in a.config] + parse_config(args.config)
    methods = [m for a in assemblies for m in a.methods]
    toc, count, size = write_collection(
        args.out, records_for_methods(methods, RecordBuilder(arch, config=config))
    )
    print(
        f"wrote {args.out}: {count} method contexts ({arch}), {size} bytes in "
        f"{time.perf_counter() - start:.1f} s (index {toc})"
    )
    for n, m in enumerate(methods, 1):
        print(f"  {n}: {m.name} ({m.nargs} args, {m.nlocals} locals, IL {len(m.il)} bytes)")
    return 0
