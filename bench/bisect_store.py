#!/usr/bin/env python3
"""`spmi-dbg bisect` on a store of --builds JIT builds (issue 28 item 8): the builds probed against
the bound of a binary search, and the tool's overhead against the replays' own time.

The store (superpmi.py's basejit layout, an --order file of made-up hashes, every JIT a link): the
first 5/8 of the builds are good, the rest bad, and --skips builds in the bad half's search path
are JITs that do not load (a text file). The input: the replay core with the sample base JIT
(good) and diff JIT (bad) on a 20-method sample collection whose method context 7 asserts in the
diff JIT only (`diff-assert`); both JITs have asserts.

There is no real-build mode any more: the real 3.1.23 build has one Checked JIT, and since issue 38
a Release JIT is never a good build for an assert (it has none to show), so a search between the
Release and the Checked JIT ends at its first probe (the good end is a skip) and times nothing.
The replay core's replays are a few milliseconds, a real Checked JIT's a tenth of a second or more:
the overhead measured here is the larger of the two.

(Issue 28 names it bench/bisect.py: a script of that name beside _common.py would shadow the
standard library's bisect module, which tempfile imports.)

One run (`--runs 1`, `--debugger none`, --workers 1: binary search), timed with time.monotonic.
Prints:
  - builds probed vs the bound: 2 endpoints + ceil(log2(builds - 1)) + the skips met;
  - the tool's overhead: (the bisect's own seconds - the replays' seconds) / its seconds (goal
    <= 15 %, issue 39), from bisect.json (`seconds`: from the start of the search to its files
    written; `replay_seconds`: the replays' own wall time, the bad build's first replay that
    finds its failure included), and the same with the interpreter's start-up included (the
    command's wall time).

--quick (CI, seconds; not a measurement): --builds 16 --skips 1, the same run and lines.

Usage: bench/bisect_store.py [--quick] [--builds 64] [--skips 2] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import USER_ENV as ENV
from _common import cached_collection, common_arguments, figure, load, native, parse, run_dir

from spmi_dbg import paths
from spmi_dbg.bisect.search import search
from spmi_dbg.bisect.store import Build
from spmi_dbg.bisect.verdict import Verdict

GOAL_OVERHEAD = 0.15
# the lines this bench is for (tests/test_benches.py checks that its --quick prints each)
RATIO_LINES = [
    r"^  builds probed: \d+ \(bound: 2 endpoints \+ ceil\(log2 \d+\) = \d+ \+ \d+ skip\(s\) = "
    r"\d+: (met|NOT met)\)$",
    r"^  overhead: [\d.]+ % of the bisect's [\d.]+ s \(goal <= 15 %: (met|NOT met)\); with the "
    r"interpreter's start-up: [\d.]+ % of [\d.]+ s$",
]


def store(root: Path, good: Path, bad: Path, broken: Path, n: int, skips: int) -> Path:
    """The store and its --order file: n made-up hashes, 5/8 good then bad; `skips` builds that do
    not load where a binary search over the bad half meets them."""
    s = root / "store"
    s.mkdir()
    first_bad = n * 5 // 8
    # the builds a binary search probes (the same search, simulated): each skip is put where the
    # search over the bad half goes next
    skip_at: list[int] = []
    for _ in range(skips):
        order: list[int] = []

        def verdict(b: Build, order: list[int] = order) -> Verdict:
            i = int(b.name)
            order.append(i)
            kind = "skip" if i in skip_at else "good" if i < first_bad else "bad"
            return Verdict(kind, "", "jit-does-not-load" if kind == "skip" else None)  # type: ignore[arg-type]

        search([Build(str(i), Path("x")) for i in range(n)], verdict)
        nxt = [i for i in order[2:] if i > first_bad and i not in skip_at]
        if nxt:
            skip_at.append(nxt[0])
    hashes = [f"{i:08x}" + "b15ec7" * 5 + f"{i:02x}" for i in range(n)]
    for i, h in enumerate(hashes):
        d = s / f"{h}.linux.x64.Checked"
        d.mkdir()
        jit = broken if i in skip_at else good if i < first_bad else bad
        (d / "libclrjit.so").symlink_to(jit)
    (root / "order.txt").write_text("".join(f"{h}\n" for h in hashes))
    return s


def run_bisect(a: argparse.Namespace, tmp: Path) -> tuple[float, dict[str, Any]] | None:
    """The store set up in `tmp` and one `spmi-dbg bisect` over it: its wall seconds and
    bisect.json (None, its output printed, when it fails)."""
    broken = tmp / "broken.so"
    broken.write_text("not a JIT\n")
    good, bad = Path(native(paths.BASE_JIT)), Path(native(paths.DIFF_JIT))
    superpmi = native(paths.REPLAY)
    mch = str(
        cached_collection(
            a.dir / "bisect-diff-assert-20.mch",
            methods=20,
            seed=1,
            injections=[("diff-assert", 7)],
        )
    )
    options = ["-c", "7"]
    what = "the replay core, sample base then diff JIT, diff-assert at 7"
    command_jit = tmp / "cmd" / "libclrjit.so"
    command_jit.parent.mkdir()
    command_jit.write_bytes(bad.read_bytes())
    s = store(tmp, good, bad, broken, a.builds, a.skips)
    print(f"{os.cpu_count()} CPUs, load average {load()}; {what}; {a.builds} builds")
    argv = [
        sys.executable, "-m", "spmi_dbg", "bisect", "--out", str(tmp / "o"),
        "--store", str(s), "--order", str(tmp / "order.txt"), "--build", "Checked",
        "--runs", "1", "--debugger", "none", "--",
        superpmi, *options, str(command_jit), mch,
    ]  # fmt: skip
    start = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, env=dict(ENV), cwd=tmp)
    wall = time.monotonic() - start
    if p.returncode not in (0, 1):
        print(p.stdout + p.stderr)
        return None
    data: dict[str, Any] = json.loads((tmp / "o" / "bisect.json").read_text())
    return wall, data


def report(a: argparse.Namespace, wall: float, data: dict[str, Any]) -> None:
    """The builds probed against the bound, the overhead, their figures and the answer."""
    probed = len(data["tried"])
    skips = len([t for t in data["tried"] if t["verdict"] == "skip"])
    steps = math.ceil(math.log2(a.builds - 1))
    bound = 2 + steps + skips
    print(
        f"  builds probed: {probed} (bound: 2 endpoints + ceil(log2 {a.builds - 1}) = "
        f"{2 + steps} + {skips} skip(s) = {bound}: {'met' if probed <= bound else 'NOT met'})"
    )
    own, replays = float(data["seconds"]), float(data["replay_seconds"])
    overhead = (own - replays) / own if own > 0 else 0.0
    with_start = (wall - replays) / wall if wall > 0 else 0.0
    print(
        f"  overhead: {100 * overhead:.1f} % of the bisect's {own:.3f} s (goal <= 15 %: "
        f"{'met' if overhead <= GOAL_OVERHEAD else 'NOT met'}); with the interpreter's "
        f"start-up: {100 * with_start:.1f} % of {wall:.3f} s"
    )
    figure(
        "bisect's own overhead",
        100 * overhead,
        "<= 15",
        "%",
        f"{own - replays:.3f} s of the bisect's {own:.3f} s outside its {probed} replays",
    )
    figure("builds probed over the search's bound", probed / bound, "<= 1", "x")
    print(f"  answer: {data['first_bad']['build'] if data['first_bad'] else data['stopped']}")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--builds", type=int, default=64)
    ap.add_argument("--skips", type=int, default=2)
    common_arguments(ap)
    a = parse(ap, quick={"builds": 16, "skips": 1})
    with run_dir(a.dir, "bisect") as tmp_name:
        ran = run_bisect(a, Path(tmp_name))
    if ran is None:
        return 1
    report(a, *ran)
    return 0


if __name__ == "__main__":
    sys.exit(main())
