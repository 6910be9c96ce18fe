"""Bad input: one clear line (file, record, offset, expected vs found), non-zero exit, no traceback,
nothing half-written. Checked through the CLI for both backends' messages (they are the same
texts)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from spmi_dbg.errors import InputError
from spmi_dbg.mch import encode as E
from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.mct import ENTRY, build_toc_bytes

from .support.common import BACKENDS, build_collection, run_cli

Corrupt = Callable[[bytearray, list[int]], None]  # (file bytes, record offsets) -> mutate in place


def _at(rec: int, delta: int, value: bytes) -> Corrupt:
    def f(data: bytearray, offs: list[int]) -> None:
        pos = offs[rec] + delta
        data[pos : pos + len(value)] = value

    return f


def _truncate(keep: Callable[[int, list[int]], int]) -> Corrupt:
    def f(data: bytearray, offs: list[int]) -> None:
        del data[keep(len(data), offs) :]

    return f


# name, mutation, expected message fragment, expected record number (1-based), offset function
CASES: list[tuple[str, Corrupt, str, int]] = [
    ("truncated file", _truncate(lambda n, o: n - 10), "runs past end of file: expected", 20),
    (
        "truncated header",
        _truncate(lambda n, o: o[19] + 3),
        "truncated record header: expected 6 bytes, found 3",
        20,
    ),
    ("wrong magic", _at(4, 0, b"MC"), "bad magic: expected 'mc' (6d 63), found 4d 43", 5),
    ("length past end", _at(6, 2, struct.pack("<I", 0x7FFFFFF0)), "runs past end of file", 7),
    (
        "bad end canary",
        lambda d, o: d.__setitem__(slice(o[3] - 2, o[3]), b"43"),
        "bad end canary: expected '42'",
        3,
    ),
    ("bad packet canary", None, "bad canary after packet 143: expected 42", 2),  # filled below
    (
        "packet past record",
        _at(8, 7, struct.pack("<I", 0x00FFFFFF)),
        "packet 143 runs past end of record",
        9,
    ),
]


def _bad_packet_canary(data: bytearray, offs: list[int]) -> None:
    pos = offs[1] + 6  # first packet of record 2
    (size,) = struct.unpack_from("<I", data, pos + 1)
    data[pos + 5 + size] = 0x41


CASES[5] = ("bad packet canary", _bad_packet_canary, CASES[5][2], CASES[5][3])


def _offsets(records: list[bytes]) -> list[int]:
    out, pos = [], 0
    for r in records:
        out.append(pos)
        pos += len(r)
    return out


def _one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize(("name", "mutate", "fragment", "record"), CASES, ids=[c[0] for c in CASES])
def test_verify_reports_each_corruption(
    tmp_path: Path, name: str, mutate: Corrupt, fragment: str, record: int
) -> None:
    path = tmp_path / "bad.mch"
    records = build_collection(path, count=20, index=False)
    data = bytearray(path.read_bytes())
    mutate(data, _offsets(records))
    path.write_bytes(bytes(data))
    before = path.read_bytes()

    r = run_cli("mch", "verify", str(path))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith(f"{path}: record {record} at offset "), first
    assert fragment in first and "expected" in first
    assert path.read_bytes() == before  # inputs are never modified


@pytest.mark.unit
@pytest.mark.parametrize(("name", "mutate", "fragment", "record"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("backend", BACKENDS)
def test_api_and_backends_agree_on_the_first_problem(
    tmp_path: Path, name: str, mutate: Corrupt, fragment: str, record: int, backend: str
) -> None:
    path = tmp_path / "bad.mch"
    records = build_collection(path, count=20, index=False)
    data = bytearray(path.read_bytes())
    mutate(data, _offsets(records))
    path.write_bytes(bytes(data))
    with Collection.open(path, backend=backend) as col, pytest.raises(InputError) as e:
        col.scan(packets=True)
    assert e.value.record == record and fragment in e.value.detail


def test_extract_from_corrupt_input_leaves_nothing_behind(tmp_path: Path) -> None:
    path = tmp_path / "bad.mch"
    records = build_collection(path, count=20, index=False)
    data = bytearray(path.read_bytes())
    _at(4, 0, b"xx")(data, _offsets(records))
    path.write_bytes(bytes(data))
    out = tmp_path / "out.mch"
    r = run_cli("mch", "extract", "-c", "10", str(path), str(out))
    assert r.returncode != 0
    line = _one_error_line(r.stderr)
    assert f"{path}: record 5 at offset {_offsets(records)[4]}: bad magic" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mch"]


def test_empty_file_directory_and_missing_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mch"
    empty.write_bytes(b"")
    for args, fragment in [
        ((str(empty),), "empty file: expected at least one method context record"),
        ((str(tmp_path),), "not a regular file: expected a .mch/.mc collection, found a directory"),
        ((str(tmp_path / "nope.mch"),), "cannot open: No such file or directory"),
    ]:
        r = run_cli("mch", "info", *args)
        assert r.returncode == 1
        line = _one_error_line(r.stderr)
        assert line == f"spmi-dbg mch info: error: {args[0]}: {fragment}"


def _write_toc(path: Path, records: list[bytes], tweak: Callable[[bytearray], None]) -> None:
    entries = [(off, i + 1, None) for i, off in enumerate(_offsets(records))]
    data = bytearray(build_toc_bytes(entries))
    tweak(data)
    path.with_name(path.name + ".mct").write_bytes(bytes(data))


def _set_entry(
    i: int, offset: int | None = None, number: int | None = None
) -> Callable[[bytearray], None]:
    def f(d: bytearray) -> None:
        pos = 8 + 48 * i
        off, num, h = ENTRY.unpack_from(d, pos)
        ENTRY.pack_into(
            d, pos, off if offset is None else offset, num if number is None else number, h
        )

    return f


TOC_CASES = [
    (
        "bad start sentinel",
        lambda d: d.__setitem__(slice(0, 4), b"XNDX"),
        "missing the starting sentinel/length: expected 'INDX', found 58 4e 44 58",
    ),
    (
        "bad end sentinel",
        lambda d: d.__setitem__(slice(len(d) - 4, len(d)), b"INDY"),
        "missing the ending sentinel: expected 'INDX', found 49 4e 44 59",
    ),
    (
        "truncated",
        lambda d: d.__delitem__(slice(len(d) - 30, len(d))),
        "truncated: expected 492 bytes for 10 entries",
    ),
    ("too short", lambda d: d.__delitem__(slice(5, len(d))), "expected at least 8 bytes, found 5"),
    (
        "unsorted",
        _set_entry(4, number=2),
        "not sorted: expected numbers to increase, found 2 after 4",
    ),
    (
        "offset past end",
        _set_entry(7, offset=10**9),
        "entry 7: offset past the end of the collection",
    ),
]


@pytest.mark.parametrize(("name", "tweak", "fragment"), TOC_CASES, ids=[c[0] for c in TOC_CASES])
@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_index_files(
    tmp_path: Path, name: str, tweak: Callable[[bytearray], None], fragment: str, backend: str
) -> None:
    path = tmp_path / "c.mch"
    records = build_collection(path, count=10, index=False)
    _write_toc(path, records, tweak)
    with pytest.raises(InputError) as e:
        Collection.open(path, backend=backend)
    assert fragment in str(e.value) and str(e.value).startswith(f"{path}.mct: ")
    # The CLI: one line; verify names the bad index but still checks the collection itself.
    r = run_cli("mch", "list", str(path))
    assert r.returncode == 1 and fragment in _one_error_line(r.stderr)
    r = run_cli("mch", "verify", str(path))
    assert r.returncode == 1 and fragment in r.stdout


def test_stale_index_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "c.mch"
    records = build_collection(path, count=10, index=False)
    _write_toc(path, records, _set_entry(3, offset=_offsets(records)[3] + 1))
    r = run_cli("mch", "extract", "-c", "4", str(path), str(tmp_path / "o.mch"))
    assert r.returncode == 1
    assert "stale" in _one_error_line(r.stderr)
    assert not (tmp_path / "o.mch").exists()


def test_item_size_of_an_unknown_layout_is_not_corruption(tmp_path: Path) -> None:
    # A CR CompileMethod map whose items are 4 + 20 bytes: no era's Agnostic_CompileMethodResults
    # (16), but well framed. Framing never depends on struct sizes (docs/mch-format.md 10): verify
    # says OK, dump says the packet is not decoded, never that it is corrupt.
    bad = E.record([E.packet(118, E.lwm([(E.u32(0), b"\0" * 20)]))])
    path = tmp_path / "m.mc"
    path.write_bytes(bad)
    r = run_cli("mch", "verify", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == f"{path}: OK: 1 method contexts, 50 bytes\n"
    r = run_cli("mch", "dump", str(path), "1")
    assert r.returncode == 0, r.stderr
    assert "packet 118 (PacketCR_CompileMethod): not decoded (unknown layout, 24 bytes)" in r.stdout
    assert "problem" not in r.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_items_without_bytes_are_reported(tmp_path: Path, backend: str) -> None:
    # numItems 3 but no item bytes: no key or value type of any era is 0 bytes.
    body = b"LWM1" + struct.pack("<II", 3, 0)
    path = tmp_path / "z.mc"
    path.write_bytes(E.record([E.packet(45, body)]))
    with Collection.open(path, backend=backend) as col:
        problems: list = []
        col.scan(packets=True, problems=problems)
    assert [p.message for p in problems] == [
        "packet 45: items do not fill the map: expected at least 3 bytes, found 0"
    ]
    r = run_cli("mch", "verify", str(path))
    assert r.returncode == 1
    assert r.stdout.splitlines()[0] == (
        f"{path}: record 1 at offset 6: packet 45: items do not fill the map: "
        "expected at least 3 bytes, found 0"
    )


@pytest.mark.parametrize("path", ["", ".", "/"])
def test_a_path_with_no_file_name_is_one_line(tmp_path: Path, path: str) -> None:
    """`mch verify .` once died in the index lookup (a path without a file name has no index beside
    it)."""
    for command in ("verify", "info", "list"):
        r = run_cli("mch", command, path, cwd=tmp_path)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.strip().endswith(
            "not a regular file: expected a .mch/.mc collection, found a directory"
        )
        assert len(r.stderr.strip().splitlines()) == 1
