"""Collection API: opening, pairing with .mct, records, packets, decoding, extraction."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from spmi_dbg.errors import InputError
from spmi_dbg.mch import encode as E
from spmi_dbg.mch import packets as P
from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.native import load
from spmi_dbg.mch.pyscan import Stats
from spmi_dbg.paths import native_file

from .support.common import BACKENDS, build_collection

pytestmark = pytest.mark.unit  # none of these tests starts a process


def test_native_library_is_installed() -> None:
    nat = load()
    assert nat is not None, "libspmimch was not installed with the package"
    assert nat.ffi.string(nat.lib.spmimch_version()) == b"1.0"
    # the out-of-line cffi module generated at build time is used: no C parsing at start-up
    assert native_file("_spmimch_cffi.py") is not None
    assert type(nat.ffi).__module__ == "_cffi_backend"


@pytest.mark.parametrize("backend", BACKENDS)
def test_records_are_the_file_positions(sample: tuple[Path, list[bytes]], backend: str) -> None:
    path, records = sample
    with Collection.open(path, backend=backend) as col:
        assert col.backend_name == backend
        assert len(col) == len(records)
        offset = 0
        for ref, rec in zip(col, records, strict=True):
            assert (ref.offset, ref.size) == (offset, len(rec))
            offset += len(rec)
        assert col.record(1) == records[0]
        assert col.record(len(records)) == records[-1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_open_finds_the_pair_like_superpmi(
    sample: tuple[Path, list[bytes]], tmp_path: Path, backend: str
) -> None:
    path, records = sample
    with Collection.open(path, backend=backend) as col:
        assert col.toc is not None and col.toc.path.name == "sample.mch.mct"
    with Collection.open(tmp_path / "sample.mch.mct", backend=backend) as col:
        assert col.path == path and col.record(3) == records[2]
    # `file.mct` beside `file.mch` is found too, and a `.mc` is the same format.
    alt = tmp_path / "alt"
    alt.mkdir()
    shutil.copy(path, alt / "one.mc")
    shutil.copy(tmp_path / "sample.mch.mct", alt / "one.mct")
    with Collection.open(alt / "one.mc", backend=backend) as col:
        assert col.toc is not None and col.toc.path.name == "one.mct"
    with Collection.open(alt / "one.mct", backend=backend) as col:
        assert col.path.name == "one.mc" and len(col) == len(records)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lookup_through_the_index_does_not_scan(
    sample: tuple[Path, list[bytes]], backend: str
) -> None:
    path, records = sample
    with Collection.open(path, backend=backend) as col:
        assert col.record(40) == records[39]
        assert col._backend.position() == 0  # no scan happened
        assert col.toc is not None
        entry = col.toc.find(40)
        assert entry is not None and entry.hash == f"{40:032X}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_decoded_method_context(sample: tuple[Path, list[bytes]], backend: str) -> None:
    path, _ = sample
    with Collection.open(path, backend=backend) as col:
        mc = col.method_context(5)
        ids = [p.id for p in col.packets(5)]
    assert ids[:6] == [
        P.CompileMethod,
        P.PrintMethodName,
        P.GetMethodClass,
        P.PrintClassName,
        P.GetJitFlags,
        P.GetExpectedTargetArchitecture,
    ]
    assert mc.problems == []
    assert mc.request is not None and mc.request.il_size == len(mc.request.il) > 0
    assert mc.request.il[0] == 0x02 and mc.request.il[-1] == 0x2A
    assert mc.request.ftn == 0x7FF000000000 + 5 * 0x40
    assert (
        mc.name is not None and mc.name.endswith(":" + mc.name.split(":")[-1]) and "_5" in mc.name
    )
    assert mc.target_arch_name == "x64"
    assert mc.compile_result is not None and mc.alloc_mem is not None
    assert mc.alloc_mem.layout == 56
    assert (
        mc.alloc_mem.hot_code_size
        == mc.compile_result.native_size_of_code
        == len(mc.alloc_mem.hot_code)
    )


def _seed_like_record(layout: int) -> bytes:
    """A context as the seed bug leaves it: AllocMem with hotCodeSize 0, no CR CompileMethod; arm64
    target."""
    buf = E.BlobBuffer()
    il = bytes([0x02, 0x2A])
    off = buf.add(il)
    return E.record(
        [
            E.packet(
                P.CompileMethod,
                E.lwm([(E.u32(0), E.compile_method_value(0x1234, off, len(il)))], buf),
            ),
            E.packet(P.GetExpectedTargetArchitecture, E.lwm([(E.u32(0), E.u32(0xAA64))])),
            E.packet(
                P.CR_AllocMem,
                E.lwm([(E.u32(0), E.alloc_mem_value(0, 0xFFFFFFFF, 0, layout=layout))]),
            ),
            E.packet(7, E.lwm([(E.u64(1), E.u32(2))])),  # a packet we do not decode
            E.packet(250, b"LWM1" + struct.pack("<I", 0)),  # an id no table knows
        ]
    )


@pytest.mark.parametrize("layout", [56, 52])
@pytest.mark.parametrize("backend", BACKENDS)
def test_alloc_mem_layouts_and_unknown_packets(tmp_path: Path, layout: int, backend: str) -> None:
    path = tmp_path / "seed.mc"
    path.write_bytes(_seed_like_record(layout))
    with Collection.open(path, backend=backend) as col:
        mc = col.method_context(1)
        pkts = col.packets(1)
    assert (
        mc.alloc_mem is not None
        and mc.alloc_mem.layout == layout
        and mc.alloc_mem.hot_code_size == 0
    )
    assert mc.alloc_mem.flag == (0 if layout == 56 else None)
    assert mc.compile_result is None  # no CompileMethod CR map: the "successful error case"
    assert mc.target_arch_name == "arm64" and mc.name is None
    assert [(p.id, p.name) for p in pkts][-2:] == [
        (7, "CanGetCookieForPInvokeCalliSig"),
        (250, "Packet250"),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_extract_is_byte_exact_and_indexed(
    sample: tuple[Path, list[bytes]], tmp_path: Path, backend: str
) -> None:
    path, records = sample
    out = tmp_path / "cut" / "repro.mch"
    out.parent.mkdir()
    with Collection.open(path, backend=backend) as col:
        toc = col.extract([3, 17, 50], out)
    assert out.read_bytes() == records[2] + records[16] + records[49]
    assert toc == out.with_name("repro.mch.mct")
    with Collection.open(out, backend=backend) as cut:
        assert len(cut) == 3 and cut.toc is not None
        assert [e.hash for e in cut.toc] == [f"{3:032X}", f"{17:032X}", f"{50:032X}"]
        assert [e.number for e in cut.toc] == [1, 2, 3]
        assert cut.record(2) == records[16]
    assert sorted(p.name for p in out.parent.iterdir()) == ["repro.mch", "repro.mch.mct"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_extract_without_source_index_leaves_hashes_unknown(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "plain.mch"
    records = build_collection(path, count=10, index=False)
    with Collection.open(path, backend=backend) as col:
        assert col.toc is None
        col.extract([10], tmp_path / "one.mch")
    with Collection.open(tmp_path / "one.mch", backend=backend) as one:
        assert one.record(1) == records[9]
        assert one.toc is not None and [e.hash for e in one.toc] == [None]
        assert one.toc.entry(0).hash_field == b"\0" * 33


@pytest.mark.parametrize("backend", BACKENDS)
def test_missing_numbers_are_clear_errors(sample: tuple[Path, list[bytes]], backend: str) -> None:
    path, _ = sample
    with Collection.open(path, backend=backend, use_toc=False) as col:
        with pytest.raises(
            InputError, match="method context 51 does not exist: the collection has 50"
        ):
            col.record(51)
        with pytest.raises(InputError, match="numbers start at 1"):
            col.record(0)
    with Collection.open(path, backend=backend) as col:
        with pytest.raises(InputError, match="method context 99 is not in the index"):
            col.record(99)


@pytest.mark.parametrize("backend", BACKENDS)
def test_refuses_to_overwrite_its_input(sample: tuple[Path, list[bytes]], backend: str) -> None:
    path, _ = sample
    before = path.read_bytes()
    with (
        Collection.open(path, backend=backend) as col,
        pytest.raises(InputError, match="overwrite"),
    ):
        col.extract([1], path)
    assert path.read_bytes() == before


def test_backends_agree_on_stats(sample: tuple[Path, list[bytes]]) -> None:
    path, records = sample
    results = []
    for backend in BACKENDS:
        stats = Stats()
        with Collection.open(path, backend=backend) as col:
            col.scan(packets=True, stats=stats)
        results.append(stats)
    assert results[0] == results[1]
    assert results[0].records == len(records)
    assert results[0].packet_count[P.CompileMethod] == len(records)
