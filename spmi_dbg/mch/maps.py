"""Decoding of serialised `LightWeightMap<K,V>` and `DenseLightWeightMap<V>` packets
(docs/mch-format.md 3-4)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from spmi_dbg.mch import packets as P
from spmi_dbg.mch.pyscan import check_map

NO_BLOB = 0xFFFFFFFF

# Key sizes of keyed maps the tool decodes (docs/mch-format.md 5.2-5.3). A keyed map's value size is
# item size - key size, so only the key size is needed to split items.
KEY_SIZES: dict[int, int] = {
    P.CompileMethod: 4,
    P.CR_CompileMethod: 4,
    P.CR_AllocMem: 4,
    P.CR_AllocGCInfo: 4,
    P.GetExpectedTargetArchitecture: 4,
    P.GetJitFlags: 4,
    P.GetMethodClass: 8,
    P.GetMethodSig: 16,
    P.GetClassName: 8,
    P.PrintMethodName: 8,
    P.PrintClassName: 8,
    P.GetMethodNameFromMetadata: 20,
    P.GetMethodName: 12,
    P.ResolveToken: 24,
    P.GetIntConfigValue: 8,
    P.GetStringConfigValue: 4,
    P.CanInline: 16,  # DLDL {caller, callee}
    P.GetArgNext: 8,
    P.GetEHinfo: 12,  # DLD {ftn, clause number}
    P.GetFieldName: 8,
    P.GetMethodAttribs: 8,
    P.GetMethodInfo: 8,  # 3.1's; today's is {handle, context}, 16 (method/recorded.py reads both)
    P.ConstructStringLiteral: 12,  # DLD {module, token}
    P.GetOSRInfo: 4,
    P.GetPgoInstrumentationResults: 8,
}


class MapError(ValueError):
    """A map whose structure does not match its packet (the message says what was expected)."""


@dataclass(frozen=True)
class SerializedMap:
    packet_id: int
    dense: bool
    tagged: bool
    count: int
    item_size: int
    items: bytes
    buffer: bytes
    key_size: int | None  # None for dense maps and for keyed maps whose key type is not known here

    def values(self) -> list[bytes]:
        k = 0 if self.dense else (self.key_size or 0)
        n = self.item_size - k if self.count else 0
        keys_len = self.count * k
        return [self.items[keys_len + i * n : keys_len + (i + 1) * n] for i in range(self.count)]

    def keys(self) -> list[bytes]:
        if self.dense:
            return [struct.pack("<I", i) for i in range(self.count)]
        k = self.key_size or 0
        return [self.items[i * k : (i + 1) * k] for i in range(self.count)]

    def get(self, key: bytes) -> bytes | None:
        """Value for a key (compared bytewise, as LightWeightMap::GetIndex does with memcmp)."""
        for k, v in zip(self.keys(), self.values(), strict=True):
            if k == key:
                return v
        return None

    def blob(self, offset: int) -> bytes | None:
        """The side-buffer chunk whose data starts at `offset` (None for 0xFFFFFFFF = no data)."""
        if offset == NO_BLOB:
            return None
        if offset < 4 or offset > len(self.buffer):
            raise MapError(
                f"blob offset {offset} outside the side buffer of {len(self.buffer)} bytes"
            )
        (length,) = struct.unpack_from("<I", self.buffer, offset - 4)
        if offset + length > len(self.buffer):
            raise MapError(
                f"blob at {offset} of {length} bytes runs past the side buffer "
                f"({len(self.buffer)} bytes)"
            )
        return self.buffer[offset : offset + length]


def parse_map(packet_id: int, data: bytes) -> SerializedMap:
    """Parse a packet's map bytes. Structure errors raise MapError (pyscan.check_map gives the
    text)."""
    problem = check_map(memoryview(data), 0, len(data))
    if problem is not None:
        raise MapError(problem)
    tag = data[:4]
    dense = tag == b"DWM1"
    tagged = dense or tag == b"LWM1"
    hdr = 4 if tagged else 0
    (count,) = struct.unpack_from("<I", data, hdr)
    if count == 0:
        return SerializedMap(
            packet_id, dense, tagged, 0, 0, b"", b"", None if dense else KEY_SIZES.get(packet_id)
        )
    (buflen,) = struct.unpack_from("<I", data, hdr + 4)
    items = data[hdr + 8 : len(data) - buflen]
    item_size = len(items) // count
    key_size = None if dense else KEY_SIZES.get(packet_id)
    if key_size is not None and key_size > item_size:
        raise MapError(f"items of {item_size} bytes cannot hold a {key_size}-byte key")
    return SerializedMap(
        packet_id, dense, tagged, count, item_size, items, data[len(data) - buflen :], key_size
    )
