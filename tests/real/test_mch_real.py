"""The collection layer on the real 3.1.23 collections, checked against the real mcs and superpmi.

3.1's agnostic structs differ from today's (its CompileMethod item is 200 bytes), while its framing
is today's: `mch verify` must agree with `mcs -integ`, `mch list` names with `mcs -dumpMap`, `mch
extract` bytes with `mcs -copy`, IL sizes with superpmi's own `main method N of size S`
(docs/mch-format.md 11).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg.mch import packets as P
from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.commands import cmd_dump
from spmi_dbg.mch.mct import open_toc, toc_path_for
from spmi_dbg.mch.pyscan import Problem, Stats

from ..support.common import BACKENDS, run_cli
from ..support.real import Real

COLLECTIONS = ["api", "api_reljit"]
COUNTS = {"api": 5657, "api_reljit": 5514}  # ../shared/real-superpmi/README.md
LAYOUT_31 = "CompileMethod 200 bytes (3.1-era METHOD_INFO)"


def _path(real: Real, which: str) -> Path:
    path: Path = getattr(real, which)
    return path


@pytest.fixture(scope="module")
def listed(real: Real) -> dict[str, list[dict[str, Any]]]:
    """`mch list --json` of both collections (the tool's decoded names and IL sizes)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for which in COLLECTIONS:
        r = run_cli("mch", "list", "--json", str(_path(real, which)))
        assert r.returncode == 0, r.stderr
        out[which] = json.loads(r.stdout)
    return out


# ------------------------------------------------------------------------------------------ mcs
# -integ
def _integ(real: Real, path: Path) -> tuple[int, int | None, int | None]:
    """mcs -integ: (exit status, the method context it calls of low integrity, how many it says it
    checked). 3.1's mcs stops at the first bad record and still exits 0; a map whose size does not
    match its packet makes it die (an exception its filter does not catch) without naming the
    record."""
    r = real.mcs_run("-integ", path)
    bad = re.search(r"ERROR: Method (\d+) is of low integrity\.", r.stderr)
    checked = re.search(r"Checked the integrity of (\d+) methodContexts", r.stdout)
    return (
        r.returncode,
        int(bad.group(1)) if bad else None,
        int(checked.group(1)) if checked else None,
    )


def _verify(path: Path) -> tuple[int, list[int], str]:
    """mch verify: (exit status, the records its problem lines name, stdout)."""
    r = run_cli("mch", "verify", "--max-problems", "1000", str(path))
    records = [int(m.group(1)) for m in re.finditer(r": record (\d+) at offset \d+: ", r.stdout)]
    return r.returncode, records, r.stdout


@pytest.mark.parametrize("which", COLLECTIONS)
def test_verify_agrees_with_mcs_integ(real: Real, which: str) -> None:
    path = _path(real, which)
    rc, bad, checked = _integ(real, path)
    assert (rc, bad, checked) == (0, None, COUNTS[which])
    rc, records, out = _verify(path)
    assert rc == 0 and records == [], out
    assert out.startswith(
        f"{path}: OK: {COUNTS[which]} method contexts, {path.stat().st_size} bytes"
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("which", COLLECTIONS)
def test_both_scanners_find_the_collections_clean(real: Real, which: str, backend: str) -> None:
    problems: list[Problem] = []
    stats = Stats()
    with Collection.open(_path(real, which), backend=backend) as col:
        col.scan(packets=True, stats=stats, problems=problems)
        assert len(col) == COUNTS[which]
    assert problems == []
    assert stats.records == COUNTS[which] and stats.packet_count[P.CompileMethod] == COUNTS[which]


def _corrupt(data: bytes, kind: str, number: int, real_path: Path) -> bytes:
    """A copy of the collection with method context `number` damaged one way."""
    with Collection.open(real_path) as col:
        ref = col.locate(number)
        pkt = col.packets(number)[3]
    b = bytearray(data)
    if kind == "truncation":
        return bytes(b[: ref.offset + ref.size // 2])
    if kind == "packet-size":
        b[pkt.offset + 1] ^= 0x01  # low byte of the 4th packet's u32 size
    elif kind == "packet-canary":
        b[pkt.offset + 5 + pkt.size] ^= 0x01
    elif kind == "end-canary":
        b[ref.offset + ref.size - 1] ^= 0x01
    return bytes(b)


@pytest.mark.parametrize("kind", ["truncation", "packet-size", "packet-canary", "end-canary"])
@pytest.mark.parametrize("which", COLLECTIONS)
def test_verify_agrees_with_mcs_integ_on_corrupted_copies(
    real: Real, tmp_path: Path, which: str, kind: str
) -> None:
    src = _path(real, which)
    number = 3000
    bad_path = tmp_path / "bad.mch"
    bad_path.write_bytes(_corrupt(src.read_bytes(), kind, number, src))

    rc, records, out = _verify(bad_path)
    assert rc == 1 and records == [number], out  # only the damaged record is reported
    mcs_rc, mcs_bad, mcs_checked = _integ(real, bad_path)
    if mcs_bad is not None:  # mcs names the record and stops there
        assert (mcs_rc, mcs_bad, mcs_checked) == (0, number, number)
    else:  # mcs died on the record without naming it (a packet size that does not match its map)
        assert kind == "packet-size" and mcs_rc != 0 and mcs_checked is None

    # Record by record: what verify calls clean mcs checks clean, what it calls bad mcs refuses.
    before = tmp_path / "before.mch"
    r = run_cli("mch", "extract", "-c", f"1-{number - 1}", str(bad_path), str(before))
    assert r.returncode == 0, r.stderr
    assert _integ(real, before) == (0, None, number - 1)
    # the record's framing holds: the records after it are there
    if kind in ("packet-size", "packet-canary"):
        after = tmp_path / "after.mch"
        r = run_cli(
            "mch", "extract", "-c", f"{number + 1}-{COUNTS[which]}", str(bad_path), str(after)
        )
        assert r.returncode == 0, r.stderr
        assert _integ(real, after) == (0, None, COUNTS[which] - number)
        alone = tmp_path / "alone.mc"
        with Collection.open(bad_path) as col:
            alone.write_bytes(col.record(number))  # framing intact, packets not: extract refuses it
        r = run_cli("mch", "extract", "-c", str(number), str(bad_path), str(tmp_path / "x.mch"))
        assert r.returncode == 1 and f"record {number} at offset" in r.stderr
        mcs_rc, mcs_bad, _ = _integ(real, alone)
        assert mcs_bad == 1 or mcs_rc != 0
        rc, records, out = _verify(alone)
        assert rc == 1 and records == [1], out


# ------------------------------------------------------------------------------------------ mcs
# -dumpMap
def _dump_map_names(text: str) -> dict[int, str]:
    """`index,method name,"full signature"` rows; the name is not quoted and may hold commas."""
    names: dict[int, str] = {}
    lines = text.splitlines()
    assert lines[0] == "index,method name,full signature"
    for line in lines[1:]:
        index, rest = line.split(",", 1)
        names[int(index)] = rest[: rest.rindex(',"')]
    return names


@pytest.mark.parametrize("which", COLLECTIONS)
def test_list_names_agree_with_mcs_dump_map(
    real: Real, which: str, listed: dict[str, list[dict[str, Any]]]
) -> None:
    if which == "api":
        text = real.api_map.read_text()
    else:
        r = real.mcs_run("-dumpMap", real.api_reljit)
        assert r.returncode == 0, r.stderr
        text = r.stdout
    want = _dump_map_names(text)
    assert len(want) == COUNTS[which]
    got = {row["number"]: row["name"] for row in listed[which]}
    differ = [(n, got.get(n), want[n]) for n in want if got.get(n) != want[n]]
    assert differ == [] and len(got) == len(want)


def test_names_keep_what_mcs_prints_for_recorded_nulls(
    listed: dict[str, list[dict[str, Any]]],
) -> None:
    # A class name recorded as null (IL stubs) is printed by mcs's printf("%s") as "(null)";
    # api.map.csv has them.
    names = [row["name"] for row in listed["api"]]
    assert any(n.startswith("(null):IL_STUB") for n in names)


# ------------------------------------------------------------------------------------------ mcs
# -copy
@pytest.mark.parametrize(
    "selection", ["1", "2000", "5514", "1,2000,5514", "100-120", "1,100-120,2000,5514"]
)
@pytest.mark.parametrize("which", COLLECTIONS)
def test_extract_is_byte_identical_to_mcs_copy(
    real: Real, tmp_path: Path, which: str, selection: str
) -> None:
    src = _path(real, which)
    theirs, ours = tmp_path / "mcs.mch", tmp_path / "ours.mch"
    r = real.mcs_run("-copy", selection, src, theirs)
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("mch", "extract", "-c", selection, str(src), str(ours))
    assert r.returncode == 0, r.stderr
    assert ours.read_bytes() == theirs.read_bytes()
    assert toc_path_for(ours).is_file()


# ------------------------------------------------------------------------------------------ info
# and dump
@pytest.mark.parametrize("which", COLLECTIONS)
def test_info_names_the_3_1_layout(real: Real, which: str) -> None:
    path = _path(real, which)
    r = run_cli("mch", "info", str(path))
    assert r.returncode == 0, r.stderr
    assert f"layout          {LAYOUT_31}\n" in r.stdout
    assert "target arch     not recorded\n" in r.stdout  # 3.1 has no GetExpectedTargetArchitecture
    r = run_cli("mch", "info", "--json", str(path))
    info = json.loads(r.stdout)
    assert (
        info["layout"] == LAYOUT_31 and info["layout_source"] == "CompileMethod of method context 1"
    )
    assert info["method_contexts"] == COUNTS[which]


@pytest.mark.parametrize("which", COLLECTIONS)
def test_dump_works_on_every_record(
    real: Real, which: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _path(real, which)
    failures = []
    for n in range(1, COUNTS[which] + 1):
        assert cmd_dump(argparse.Namespace(collection=str(path), number=n, json=True)) == 0
        d = json.loads(capsys.readouterr().out)
        cm = d.get("compile_method", {})
        ok = (
            not d["problems"]
            and not d["undecoded"]
            and cm.get("layout") == LAYOUT_31
            and all("problem" not in p for p in d["packets"])
            and d["name"]
        )
        if not ok:
            failures.append((n, d["problems"], d["undecoded"]))
    assert failures == []
    r = run_cli("mch", "dump", str(path), str(COUNTS[which]))
    assert r.returncode == 0 and f"  layout       {LAYOUT_31}\n" in r.stdout, r.stderr


# ------------------------------------------------------------------------------------------ IL
# sizes
@pytest.mark.parametrize("which", COLLECTIONS)
def test_il_sizes_agree_with_superpmi(
    real: Real, tmp_path: Path, which: str, listed: dict[str, list[dict[str, Any]]]
) -> None:
    # superpmi prints `main method N of size S with was excluded from the compilation.` (S = the IL
    # size it replays, mc->methodSize) for every method context whose hash is in the paired .exc
    # file: list every hash of the collection's .mct there (a copy of the collection beside it, by
    # symlink).
    src = _path(real, which)
    link = tmp_path / "c.mch"
    link.symlink_to(src)
    toc = open_toc(toc_path_for(src), src.stat().st_size)
    try:
        hashes = [e.hash for e in toc.all_entries()]
    finally:
        toc.close()
    assert all(h is not None for h in hashes)
    (tmp_path / "c.exc").write_text("\n".join(str(h) for h in hashes) + "\n")
    r = real.replay(real.jit_release, link, cwd=tmp_path)
    sizes = {
        int(m.group(1)): int(m.group(2))
        for m in re.finditer(
            r"main method (\d+) of size (\d+) with was excluded from the compilation\.", r.stdout
        )
    }
    assert len(sizes) == COUNTS[which], r.stdout[-2000:] + r.stderr[-2000:]
    ours = {row["number"]: row["il_size"] for row in listed[which]}
    assert ours == sizes
