"""`spmi-dbg mch info|list|extract|index|verify|dump`: mcs-like tools that never modify their
input."""

from __future__ import annotations

import argparse
import json
import sys
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from spmi_dbg.atomic import check_output
from spmi_dbg.errors import InputError
from spmi_dbg.mch import packets as P
from spmi_dbg.mch.collection import Collection, write_index_file
from spmi_dbg.mch.context import MethodContextInfo
from spmi_dbg.mch.maps import MapError, parse_map
from spmi_dbg.mch.mclist import parse_mclist
from spmi_dbg.mch.mct import collection_for_toc, find_toc, open_toc, toc_path_for
from spmi_dbg.mch.pyscan import SCAN_DONE, Problem, Stats
from spmi_dbg.usage import count_option, integer


def add_parsers(sub: Any) -> Any:
    """The `mch` command and its verbs; returns the verbs' subparsers (higher layers add theirs:
    `mch il`, spmi_dbg/method)."""
    mch = sub.add_parser("mch", help="inspect, check and cut SuperPMI collections (.mch/.mc/.mct)")
    verbs = mch.add_subparsers(dest="verb", required=True, metavar="VERB")

    p = verbs.add_parser("info", help="count, bytes, packet histogram, target architecture")
    p.add_argument("collection")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_info)

    p = verbs.add_parser(
        "list", help="one line per method context: number, offset, size, IL size, name, hash"
    )
    p.add_argument("collection")
    p.add_argument(
        "-c", "--compile", metavar="LIST", help="only these method contexts (superpmi -c syntax)"
    )
    p.add_argument("--json", action="store_true", help="a JSON array instead of a table")
    p.set_defaults(func=cmd_list)

    p = verbs.add_parser(
        "extract", help="copy method contexts byte-for-byte into a new collection (+ .mct)"
    )
    p.add_argument(
        "-c",
        "--compile",
        metavar="LIST",
        required=True,
        help="method contexts (superpmi -c syntax)",
    )
    p.add_argument("input")
    p.add_argument("output")
    p.set_defaults(func=cmd_extract)

    p = verbs.add_parser("index", help="build the .mct index (like mcs -toc)")
    p.add_argument("collection")
    p.add_argument("-o", "--output", help="index file (default: <collection>.mct)")
    p.set_defaults(func=cmd_index)

    p = verbs.add_parser(
        "verify", help="full framing check; exit 0 clean, 1 corrupt, one line per problem"
    )
    p.add_argument("collection")
    count_option(p, "--max-problems", default=100, help="stop listing after N (default 100)")
    p.set_defaults(func=cmd_verify)

    p = verbs.add_parser("dump", help="the packets of one method context")
    p.add_argument("collection")
    p.add_argument("number", type=integer(minimum=1), help="method context number (1-based)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_dump)
    return verbs


# ---------------------------------------------------------------------------------------- progress
@contextmanager
def progress_bar(label: str, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on a terminal; nothing when stderr is piped."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    # Imported here (start-up): rich costs every `spmi-dbg mch ...` ~70 ms; the bar is for long
    # scans only.
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    with Progress(
        TextColumn(label),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        transient=True,
        console=_stderr_console(),
    ) as prog:
        task = prog.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            prog.update(task, completed=done, total=total)

        yield update


def _stderr_console() -> Any:
    from rich.console import Console  # start-up, as in progress_bar

    return Console(stderr=True)


LONG_SCAN = 256 << 20  # show progress for files above this size


# ---------------------------------------------------------------------------------------- info
def cmd_info(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    with Collection.open(args.collection) as col:
        stats = Stats()
        with progress_bar("scanning", col.size > LONG_SCAN) as prog:
            col.scan(packets=True, stats=stats, progress=prog)
        count = len(col)
        first = col.method_context(1) if count else None
        arch = first.target_arch_name if first else None
        layout = _layout(first)
        smallest, largest = col.record_size_range()
        info: dict[str, Any] = {
            "collection": str(col.path),
            "index": str(col.toc.path) if col.toc is not None else None,
            "method_contexts": count,
            "bytes": col.size,
            "record_size": {"min": smallest, "mean": round(col.size / count, 1), "max": largest},
            "target_arch": arch,
            "target_arch_source": "GetExpectedTargetArchitecture of method context 1"
            if arch
            else None,
            "layout": layout,
            "layout_source": "CompileMethod of method context 1" if layout else None,
            "packets": [
                {
                    "id": pid,
                    "name": P.packet_label(pid),
                    "count": stats.packet_count[pid],
                    "bytes": stats.packet_bytes[pid],
                }
                for pid in range(256)
                if stats.packet_count[pid]
            ],
            "scan_seconds": round(time.perf_counter() - start, 3),
        }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    out = sys.stdout
    out.write(f"collection      {info['collection']}\n")
    out.write(f"index           {info['index'] or '(none)'}\n")
    out.write(f"method contexts {count}\n")
    out.write(f"bytes           {col.size} ({col.size / (1 << 20):.1f} MiB)\n")
    rs = info["record_size"]
    out.write(f"record size     min {rs['min']}  mean {rs['mean']}  max {rs['max']}\n")
    out.write(f"target arch     {arch or 'not recorded'}\n")
    out.write(f"layout          {layout or 'no CompileMethod packet'}\n")
    out.write("packets:\n")
    width = max([44, *(len(row["name"]) for row in info["packets"])])  # a re-used id's two names
    out.write(f"  {'id':>3}  {'name':<{width}} {'count':>10} {'bytes':>14}\n")
    for row in sorted(info["packets"], key=lambda r: -r["bytes"]):
        out.write(
            f"  {row['id']:>3}  {row['name']:<{width}} {row['count']:>10} {row['bytes']:>14}\n"
        )
    return 0


def _layout(mc: MethodContextInfo | None) -> str | None:
    """Which era's CompileMethod layout method context 1 has (e.g. "CompileMethod 200 bytes (3.1-era
    METHOD_INFO)"), or that it is not one this tool knows."""
    if mc is None:
        return None
    if mc.request is not None:
        return mc.request.layout.describe()
    pkt = mc.packet(P.CompileMethod)
    if pkt is None:
        return None
    try:
        size = parse_map(pkt.id, pkt.data).item_size
    except MapError as e:
        return f"CompileMethod: {e}"
    return f"CompileMethod {size} bytes: not decoded (unknown layout, {size} bytes)"


# ---------------------------------------------------------------------------------------- list
def _selected(col: Collection, compile_arg: str | None) -> Iterable[int]:
    """The numbers to show, walked lazily: a list past the collection's end fails at its first
    missing number."""
    if compile_arg is None:
        return range(1, len(col) + 1)
    return parse_mclist(compile_arg)


def _row(col: Collection, n: int) -> dict[str, Any]:
    mc = col.method_context(n)
    entry = col.toc.find(n) if col.toc is not None else None
    return {
        "number": n,
        "offset": mc.offset,
        "size": mc.size,
        "il_size": mc.il_size,
        "name": mc.name,
        "name_note": mc.name_note,
        "hash": entry.hash if entry is not None else None,
    }


def cmd_list(args: argparse.Namespace) -> int:
    with Collection.open(args.collection) as col:
        numbers = _selected(col, args.compile)
        out = sys.stdout
        if args.json:
            out.write("[")
            for i, n in enumerate(numbers):
                out.write(("," if i else "") + "\n  " + json.dumps(_row(col, n)))
            out.write("\n]\n")
            return 0
        out.write(f"{'number':>8} {'offset':>12} {'size':>8} {'IL':>6}  {'hash':<32}  name\n")
        for n in numbers:
            r = _row(col, n)
            il = "-" if r["il_size"] is None else str(r["il_size"])
            out.write(
                f"{n:>8} {r['offset']:>12} {r['size']:>8} {il:>6}  {r['hash'] or '(unknown)':<32}  "
                f"{r['name'] or '(no name packet)'}\n"
            )
    return 0


# ---------------------------------------------------------------------------------------- extract /
# index
def cmd_extract(args: argparse.Namespace) -> int:
    numbers = parse_mclist(args.compile)
    with Collection.open(args.input) as col:
        toc = col.extract(numbers, args.output)
    print(f"wrote {numbers.count()} method context(s) to {args.output} (index {toc})")
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    with Collection.open(args.collection) as col:
        out = Path(args.output) if args.output else toc_path_for(col.path)
        # Its own index is what `mch index` replaces; the collection itself, or a device, never.
        check_output(out, inputs=[col.path], what="index")
        with progress_bar("indexing", col.size > LONG_SCAN) as prog:
            col.scan(progress=prog)
        old = col.toc
        by_number = {e.number: e for e in old.all_entries()} if old is not None else {}
        entries: list[tuple[int, int, bytes | None]] = []
        known = 0
        for number, offset in enumerate(col.record_offsets(), 1):
            src = by_number.get(number)
            if src is not None and src.offset == offset and src.hash is not None:
                known += 1
                entries.append((offset, number, src.hash_field))
            else:
                entries.append((offset, number, None))
        write_index_file(out, entries)
    hashes = (
        f"{known} hashes copied from {old.path.name}"
        if old is not None
        else "hashes unknown (no source .mct)"
    )
    print(f"wrote {out}: {len(entries)} entries, {hashes}")
    return 0


# ---------------------------------------------------------------------------------------- verify
def cmd_verify(args: argparse.Namespace) -> int:
    problems: list[Problem] = []
    given = Path(args.collection)
    mch = collection_for_toc(given) if given.suffix.lower() == ".mct" else given
    toc_path = given if given.suffix.lower() == ".mct" else find_toc(mch)
    lines: list[str] = []
    with Collection.open(mch, use_toc=False) as col:
        with progress_bar("verifying", col.size > LONG_SCAN) as prog:
            rc = col.scan(
                packets=True, problems=problems, max_problems=args.max_problems, progress=prog
            )
        lines += [p.line(str(col.path)) for p in problems]
        count = len(col) if rc == SCAN_DONE else None
        size = col.size
        if toc_path is not None:
            try:
                col.toc = open_toc(toc_path, col.size)
            except InputError as e:
                lines.append(str(e))
            if col.toc is not None and rc == SCAN_DONE:
                lines += _toc_problems(col)
    for line in lines[: args.max_problems]:
        print(line)
    if len(lines) > args.max_problems:
        print("... and more problems (raise --max-problems to see them)")
    if lines:
        print(f"{args.collection}: CORRUPT: {len(lines)} problem(s)", file=sys.stderr)
        return 1
    index = f", index {toc_path.name} consistent" if toc_path is not None else ""
    print(f"{args.collection}: OK: {count} method contexts, {size} bytes{index}")
    return 0


def _toc_problems(col: Collection) -> list[str]:
    """Index entries that do not point where the records are (a stale .mct)."""
    assert col.toc is not None
    toc, out = col.toc, []
    raw_offsets, raw_numbers = toc.offsets_and_numbers_raw()
    # Numbers were checked >= 1 and strictly increasing when the index was opened, so n of them
    # ending at n are exactly 1..n; offsets are compared in bulk. The usual case costs a few ms for
    # 300k entries.
    n = len(col)
    last = array("i", raw_numbers[-4:])[0] if raw_numbers else 0
    if toc.count == n and last == n and raw_offsets == col.record_offsets_raw():
        return []
    offsets = col.record_offsets()
    toc_offsets, toc_numbers = toc.offsets_and_numbers()
    for off, num in zip(toc_offsets, toc_numbers, strict=True):
        if num > len(offsets):
            out.append(
                f"{toc.path}: entry for method context {num}: the collection has only "
                f"{len(offsets)}"
            )
        elif offsets[num - 1] != off:
            out.append(
                f"{toc.path}: entry for method context {num}: expected offset {offsets[num - 1]}, "
                f"found {off} (stale index: rebuild it with `spmi-dbg mch index`)"
            )
        if len(out) >= 20:
            break
    if not out and toc.count != len(offsets):
        out.append(f"{toc.path}: expected {len(offsets)} entries, found {toc.count} (stale index)")
    return out


# ---------------------------------------------------------------------------------------- dump
def cmd_dump(args: argparse.Namespace) -> int:
    with Collection.open(args.collection) as col:
        mc = col.method_context(args.number)
    facts = _facts(mc)
    if args.json:
        _json_dump(sys.stdout, args.number, mc, facts)
        return 0
    _print_dump(sys.stdout, args.number, mc, facts, [_packet_row(pkt) for pkt in mc.packets])
    return 0


def _packet_row(pkt: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": pkt.id,
        "name": P.packet_label(pkt.id),
        "offset": pkt.offset,
        "size": pkt.size,
    }
    try:
        m = parse_map(pkt.id, pkt.data)
        row["name"] = P.packet_label(pkt.id, m.item_size if m.count else None)
        row.update(
            kind="dense" if m.dense else ("keyed" if m.tagged else "keyed (untagged)"),
            items=m.count,
            item_size=m.item_size,
            buffer=len(m.buffer),
        )
    except MapError as e:
        row["problem"] = str(e)
    return row


def _json_dump(out: TextIO, number: int, mc: MethodContextInfo, facts: dict[str, Any]) -> None:
    """The record as one JSON object, its packets written one by one (issue 30 item 5: a record of
    100,000 empty maps made 232 MB of rows and text before anything was written)."""
    head = {"method_context": number, "offset": mc.offset, "size": mc.size, **facts}
    out.write("{\n")
    for key, value in head.items():
        out.write(f"  {json.dumps(key)}: {json.dumps(value)},\n")
    out.write('  "packets": [')
    for i, pkt in enumerate(mc.packets):
        out.write(("," if i else "") + "\n    " + json.dumps(_packet_row(pkt)))
    out.write(f'\n  ],\n  "problems": {json.dumps(mc.problems)}\n}}\n')


def _facts(mc: MethodContextInfo) -> dict[str, Any]:
    f: dict[str, Any] = {
        "name": mc.name,
        "name_note": mc.name_note,
        "target_arch": mc.target_arch_name,
        "undecoded": mc.undecoded,
    }
    if mc.request is not None:
        r = mc.request
        f["compile_method"] = {
            "ftn": f"0x{r.ftn:x}",
            "il_size": r.il_size,
            "il": r.il.hex(),
            "max_stack": r.max_stack,
            "eh_count": r.eh_count,
            "flags": f"0x{r.flags:x}",
            "layout": r.layout.describe(),
        }
    if mc.compile_result is not None:
        c = mc.compile_result
        f["compile_result"] = {
            "native_entry": f"0x{c.native_entry:x}",
            "native_size_of_code": c.native_size_of_code,
            "cor_jit_result": c.cor_jit_result,
        }
    if mc.alloc_mem is not None:
        a = mc.alloc_mem
        f["alloc_mem"] = {
            "layout": a.layout,
            "hot_code_size": a.hot_code_size,
            "cold_code_size": a.cold_code_size,
            "ro_data_size": a.ro_data_size,
            "hot_code_block": f"0x{a.hot_code_block:x}",
        }
    return f


def _print_dump(
    out: TextIO,
    number: int,
    mc: MethodContextInfo,
    facts: dict[str, Any],
    rows: list[dict[str, Any]],
) -> None:
    out.write(
        f"method context {number}: offset {mc.offset}, {mc.size} bytes, {len(rows)} packets\n"
    )
    note = f" ({facts['name_note']})" if facts["name_note"] else ""
    out.write(f"  name         {facts['name'] or '(no name packet)'}{note}\n")
    out.write(f"  target arch  {facts['target_arch'] or 'not recorded'}\n")
    if "compile_method" in facts:
        cm = facts["compile_method"]
        out.write(
            f"  method       {cm['ftn']}  IL size {cm['il_size']}  maxStack {cm['max_stack']}  "
            f"EH {cm['eh_count']}\n  IL           "
            f"{cm['il'][:96]}{'...' if len(cm['il']) > 96 else ''}\n"
            f"  layout       {cm['layout']}\n"
        )
    if "compile_result" in facts:
        cr = facts["compile_result"]
        out.write(
            f"  stored CR    CompileMethod: nativeSizeOfCode {cr['native_size_of_code']}, "
            f"CorJitResult {cr['cor_jit_result']}\n"
        )
    if "alloc_mem" in facts:
        am = facts["alloc_mem"]
        out.write(
            f"  stored CR    AllocMem ({am['layout']}-byte layout): hotCodeSize "
            f"{am['hot_code_size']}\n"
        )
    width = max([44, *(len(r["name"]) for r in rows)])  # a re-used id's two names
    out.write(f"  {'id':>3}  {'name':<{width}} {'offset':>12} {'size':>8}  map\n")
    for r in rows:
        desc = (
            r.get("problem")
            or f"{r['kind']}, {r['items']} item(s) x {r['item_size']} B, buffer {r['buffer']} B"
        )
        out.write(
            f"  {r['id']:>3}  {r['name']:<{width}} {r['offset']:>12} {r['size']:>8}  {desc}\n"
        )
    for u in mc.undecoded:
        out.write(f"  {u}\n")
    for p in mc.problems:
        out.write(f"  problem: {p}\n")


__all__ = ["InputError", "add_parsers"]
