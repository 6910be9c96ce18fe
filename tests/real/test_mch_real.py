"""The collection layer on the real 3.1.23 collections, checked against the real mcs and superpmi.

3.1's agnostic structs differ from today's (its CompileMethod item is 200 bytes), while its framing
is today's: `mch verify` must agree with `mcs -integ`, `mch list` names with `mcs -dumpMap`, `mch
extract` bytes with `mcs -copy`, IL sizes with superpmi's own `main method N of size S`
(docs/mch-format.md 11). Each check has its data half (against what mcs and superpmi printed, the
transcripts; always run) and, where it runs the tools again on new input, its live half (marker
`live`: a real build).
"""

from __future__ import annotations

import argparse
import hashlib
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
from ..support.real import Real, Reference

COLLECTIONS = ["api", "api_reljit"]
COUNTS = {"api": 5657, "api_reljit": 5514}  # ../shared/real-superpmi/README.md
LAYOUT_31 = "CompileMethod 200 bytes (3.1-era METHOD_INFO)"


def _path(real: Real | Reference, which: str) -> Path:
    path: Path = getattr(real, which)
    return path


@pytest.fixture(scope="module")
def listed(reference: Reference) -> dict[str, list[dict[str, Any]]]:
    """`mch list --json` of both collections (the tool's decoded names and IL sizes)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for which in COLLECTIONS:
        r = run_cli("mch", "list", "--json", str(_path(reference, which)))
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


@pytest.mark.live
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


@pytest.mark.unit
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("which", COLLECTIONS)
def test_both_scanners_find_the_collections_clean(
    reference: Reference, which: str, backend: str
) -> None:
    problems: list[Problem] = []
    stats = Stats()
    with Collection.open(_path(reference, which), backend=backend) as col:
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


@pytest.mark.live
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
    reference: Reference, which: str, listed: dict[str, list[dict[str, Any]]]
) -> None:
    text = (reference.api_map if which == "api" else reference.api_reljit_map).read_text()
    want = _dump_map_names(text)
    assert len(want) == COUNTS[which]
    got = {row["number"]: row["name"] for row in listed[which]}
    differ = [(n, got.get(n), want[n]) for n in want if got.get(n) != want[n]]
    assert differ == [] and len(got) == len(want)


@pytest.mark.unit
def test_names_keep_what_mcs_prints_for_recorded_nulls(
    listed: dict[str, list[dict[str, Any]]],
) -> None:
    # A class name recorded as null (IL stubs) is printed by mcs's printf("%s") as "(null)";
    # api.map.csv has them.
    names = [row["name"] for row in listed["api"]]
    assert any(n.startswith("(null):IL_STUB") for n in names)


@pytest.mark.live
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
def test_info_names_the_3_1_layout(reference: Reference, which: str) -> None:
    path = _path(reference, which)
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
    reference: Reference, which: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _path(reference, which)
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


@pytest.mark.live
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


# ------------------------------------------------------------- the data half: what mcs printed
def _transcript_integ(reference: Reference, name: str) -> tuple[int, int | None, int | None, str]:
    """What a recorded `mcs -integ` said: (exit status, the method context it called of low
    integrity, how many it said it checked, the file it checked as the placeholder path). Its
    stdout is block-buffered when piped: where the run died, the unbuffered copy holds what it
    printed."""
    t = reference.transcript(name)
    out = t.stdout or (t.stdout_unbuffered or "")
    err = t.stderr or (t.stderr_unbuffered or "")
    bad = re.search(r"ERROR: Method (\d+) is of low integrity\.", err)
    checked = re.search(r"Checked the integrity of (\d+) methodContexts", out)
    return (
        t.rc,
        int(bad.group(1)) if bad else None,
        int(checked.group(1)) if checked else None,
        t.argv[-1],
    )


@pytest.mark.parametrize(
    ("which", "transcript"),
    [("api", "14b-mcs-integ-api"), ("api_reljit", "14c-mcs-integ-api-reljit")],
)
def test_verify_agrees_with_what_mcs_integ_said(
    reference: Reference, which: str, transcript: str
) -> None:
    path = _path(reference, which)
    rc, bad, checked, checked_file = _transcript_integ(reference, transcript)
    assert (rc, bad, checked) == (0, None, COUNTS[which])
    assert checked_file == "{collections}/" + path.name
    rc, records, out = _verify(path)
    assert rc == 0 and records == [], out
    size = path.stat().st_size
    assert out.startswith(f"{path}: OK: {COUNTS[which]} method contexts, {size} bytes")


def _damage_as_recorded(data: bytes, transcript: str) -> bytes:
    """The damaged copies of api.mch the transcripts 14g-14i describe (their notes.md): the last
    100 bytes cut; the canary of record 1000 (its last byte, at file offset 9099179) flipped from
    0x32 to 0xcd; the size field of record 2000 (file offset 22009244) set to 0xFFFFFFFF."""
    b = bytearray(data)
    if transcript == "14g-mcs-integ-truncated":
        return bytes(b[:-100])
    if transcript == "14h-mcs-integ-flip-last-byte-rec1000":
        assert b[9099179] == 0x32
        b[9099179] = 0xCD
    else:
        assert b[22009244 - 2 : 22009244] == b"mc"
        b[22009244 : 22009244 + 4] = b"\xff\xff\xff\xff"
    return bytes(b)


@pytest.mark.parametrize(
    ("transcript", "record"),
    [
        ("14g-mcs-integ-truncated", 5657),
        ("14h-mcs-integ-flip-last-byte-rec1000", 1000),
        ("14i-mcs-integ-len-ffffffff-rec2000", 2000),
    ],
)
def test_verify_names_the_record_mcs_called_of_low_integrity(
    reference: Reference, tmp_path: Path, transcript: str, record: int
) -> None:
    """mcs says `Method N is of low integrity.` and still exits 0, or dies on the record (a size of
    0xFFFFFFFF: SIGSEGV in MethodInitHelperFile, its notes); verify names that record and only it,
    and exits 1."""
    rc, bad, checked, _ = _transcript_integ(reference, transcript)
    if transcript.startswith("14i"):
        assert rc == 139 and bad is None and checked is None
        notes = reference.transcript(transcript).notes
        assert "MethodContext::Initialize loadedCount=2000" in notes
    else:
        assert (rc, bad) == (0, record)
    damaged = tmp_path / "damaged.mch"
    damaged.write_bytes(_damage_as_recorded(reference.api.read_bytes(), transcript))
    rc, records, out = _verify(damaged)
    assert rc == 1 and records[:1] == [record] and set(records) == {record}, out


def test_extract_is_byte_identical_to_what_mcs_copy_wrote(
    reference: Reference, tmp_path: Path
) -> None:
    """`mcs -copy 543 api.mch x.mch` wrote 58,389 bytes, sha256 baadb226... (14f's notes)."""
    notes = reference.transcript("14f-mcs-copy-543").notes
    digest = re.search(r"both sha256 ([0-9a-f]{64})", notes)
    size = re.search(r"x\.mch is (\d+) bytes", notes)
    assert digest and size
    out = tmp_path / "x.mch"
    r = run_cli("mch", "extract", "-c", "543", str(reference.api), str(out))
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert len(data) == int(size.group(1))
    assert hashlib.sha256(data).hexdigest() == digest.group(1)


def test_index_agrees_with_what_mcs_toc_wrote(reference: Reference, tmp_path: Path) -> None:
    """`mcs -toc` of a copy wrote the shipped .mct but for the 3 padding bytes of each entry
    (14e's notes): `mch index` of a copy gives the same entries (offsets and numbers; the hashes it
    copies from the index beside the collection it was copied from)."""
    assert "equals the shipped api.mch.mct except" in reference.transcript("14e-mcs-toc-copy").notes
    copy = tmp_path / "toccopy.mch"
    copy.write_bytes(reference.api.read_bytes())
    r = run_cli("mch", "index", str(copy))
    assert r.returncode == 0, r.stderr
    theirs = open_toc(reference.api_index, reference.api.stat().st_size)
    ours = open_toc(toc_path_for(copy), copy.stat().st_size)
    try:
        assert [(e.number, e.offset) for e in ours.all_entries()] == [
            (e.number, e.offset) for e in theirs.all_entries()
        ]
        assert len(ours.all_entries()) == COUNTS["api"]
    finally:
        ours.close()
        theirs.close()


SIZE_LINES = re.compile(r"(?:main method|Method) (\d+) of size (\d+)")


@pytest.mark.unit
def test_il_sizes_agree_with_what_superpmi_printed(
    reference: Reference, listed: dict[str, list[dict[str, Any]]]
) -> None:
    """Every `main method N of size S` / `Method N of size S` line superpmi printed on either
    collection: S is the IL size it replayed (mc->methodSize), ours is the same."""
    seen: dict[str, dict[int, int]] = {"api": {}, "api_reljit": {}}
    for t in reference.all_transcripts():
        if t.program not in ("superpmi", "superpmi_O0") or not t.argv[-1].endswith(".mch"):
            continue
        which = "api_reljit" if t.argv[-1].endswith("api-reljit.mch") else "api"
        for text in (t.stdout, t.stderr, t.stdout_unbuffered or "", t.stderr_unbuffered or ""):
            for m in SIZE_LINES.finditer(text):
                if m.group(1):
                    seen[which][int(m.group(1))] = int(m.group(2))
    assert len(seen["api"]) >= 300  # the transcripts name hundreds (10c's asm diffs, 07a's asserts)
    for which, sizes in seen.items():
        ours = {row["number"]: row["il_size"] for row in listed[which]}
        assert {n: ours[n] for n in sizes} == sizes
