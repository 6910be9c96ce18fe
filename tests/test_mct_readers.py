"""Issue 30 item 3: the C and the pure-Python `.mct` readers say the same of every index, byte for
byte: the message, the record and the offset, over the mutants of a real 3.1.23 index (its size,
sentinels, entry numbers and offsets changed one at a time)."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from spmi_dbg.errors import InputError
from spmi_dbg.mch.mct import open_toc

from .support.real import Reference, reference

pytestmark = pytest.mark.unit  # none of these tests starts a process

ENTRY = 48  # bytes of an entry: i64 offset, i32 number, 36 bytes of hash and padding


@pytest.fixture(scope="module")
def real() -> Reference:
    return reference()


def _said(path: Path, size: int, backend: str) -> str:
    try:
        toc = open_toc(path, size, backend=backend)
    except InputError as e:
        return f"error: {e}"
    return f"ok: {len(toc)} entries"


def _mutants(index: bytes, rng: random.Random) -> list[tuple[str, bytes]]:
    (count,) = struct.unpack_from("<I", index, 4)
    out: list[tuple[str, bytes]] = [("clean", index)]
    for cut in (0, 3, 7, 8, 9, 8 + ENTRY, len(index) - 4, len(index) - 1):
        out.append((f"cut at {cut}", index[:cut]))
    out += [("one byte more", index + b"\0"), ("a page more", index + b"\0" * 4096)]
    out.append(("start sentinel", b"XNDX" + index[4:]))
    out.append(("end sentinel", index[:-4] + b"INDY"))
    out.append(("count + 1", index[:4] + struct.pack("<I", count + 1) + index[8:]))
    out.append(("count - 1", index[:4] + struct.pack("<I", count - 1) + index[8:]))
    for _ in range(40):
        i = rng.randrange(count)
        b = bytearray(index)
        at = 8 + i * ENTRY
        field = rng.choice(["offset", "number"])
        if field == "offset":
            struct.pack_into("<q", b, at, rng.choice([-1, 0, 1 << 40, rng.randrange(1 << 26)]))
        else:
            struct.pack_into("<i", b, at + 8, rng.choice([0, -5, 1, i, i + 2, 1 << 30]))
        out.append((f"entry {i} {field}", bytes(b)))
    return out


def test_both_readers_say_the_same_of_every_mutant(real: Reference, tmp_path: Path) -> None:
    index = real.api.with_name("api.mch.mct").read_bytes()
    size = real.api.stat().st_size
    path = tmp_path / "x.mch.mct"
    differ = []
    for name, data in _mutants(index, random.Random(30)):
        path.write_bytes(data)
        native, python = _said(path, size, "native"), _said(path, size, "python")
        if native != python:
            differ.append(f"{name}:\n  C:      {native}\n  Python: {python}")
    assert not differ, "\n".join(differ)
