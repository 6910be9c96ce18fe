"""The ids 3.1's superpmi used for other packets than today's (packets.py REUSED_SINCE_31,
docs/mch-format.md 11) are named on the real 3.1 collection by what its maps show, never by today's
name alone: 66 and 149 by their 3.1 item sizes, 148 (the same shape in both eras) by both names."""

from __future__ import annotations

import json

from ..support.common import run_cli
from ..support.real import Reference


def test_mch_dump_names_reused_ids_by_their_item_size(reference: Reference) -> None:
    first = json.loads(run_cli("mch", "dump", "--json", str(reference.api), "1").stdout)
    names = {p["id"]: (p["name"], p["item_size"]) for p in first["packets"]}
    assert names[66] == ("GetIntrinsicID (3.1's item size)", 16)
    assert names[148] == ("IsIntrinsicType or 3.1's IsInSIMDModule", 12)
    assert names[143][0] == "CompileMethod"  # an id of one meaning keeps its name
    with_149 = json.loads(run_cli("mch", "dump", "--json", str(reference.api), "31").stdout)
    assert [(p["name"], p["item_size"]) for p in with_149["packets"] if p["id"] == 149] == [
        ("AppendClassName (3.1's item size)", 24)
    ]
    text = run_cli("mch", "dump", str(reference.api), "31").stdout
    assert "  149  AppendClassName (3.1's item size)  " in text


def test_mch_info_names_reused_ids_by_both_eras(reference: Reference) -> None:
    """The histogram has no item sizes: both names, for every re-used id the collection holds."""
    info = json.loads(run_cli("mch", "info", "--json", str(reference.api)).stdout)
    names = {p["id"]: p["name"] for p in info["packets"]}
    assert names[66] == "GetArrayIntrinsicID or 3.1's GetIntrinsicID"
    assert names[148] == "IsIntrinsicType or 3.1's IsInSIMDModule"
    assert names[149] == "PrintClassName or 3.1's AppendClassName"
    assert 10 not in names and 112 not in names
    text = run_cli("mch", "info", str(reference.api)).stdout
    assert any(
        line.split()[:2] == ["148", "IsIntrinsicType"] and "3.1's IsInSIMDModule" in line
        for line in text.splitlines()
    )
