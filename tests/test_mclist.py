"""superpmi's -c list syntax and its error texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from spmi_dbg.mch.mclist import MCListError, compress_ranges, format_mcl, parse_mclist, read_mcl

pytestmark = pytest.mark.unit  # none of these tests starts a process


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("5", [5]),
        ("1,3,7-12", [1, 3, 7, 8, 9, 10, 11, 12]),
        ("20,25,30,32", [20, 25, 30, 32]),
        ("5,10-12,101,201-203", [5, 10, 11, 12, 101, 201, 202, 203]),
    ],
)
def test_ranges(arg: str, expected: list[int]) -> None:
    assert parse_mclist(arg) == expected


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("0", "MCL list needs to start from 1!"),
        ("0-3", "MCL list needs to start from 1!"),
        ("5,3", "MCL list must be increasing.. found 5 -> 3"),
        ("3-7,5", "MCL list must be increasing.. found 7 -> 5"),
        ("7-3", "Arg '7-3' is invalid, needed method context list."),
        ("4-4", "Arg '4-4' is invalid, needed method context list."),
        ("abc", "Arg 'abc' is invalid, needed method context list."),
        ("", "Arg '' is invalid, needed method context list."),
        ("1-2-3", "Arg '1-2-3' is invalid, needed method context list."),
    ],
)
def test_errors_use_superpmi_texts(arg: str, message: str) -> None:
    with pytest.raises(MCListError) as e:
        parse_mclist(arg)
    assert str(e.value) == message


def test_mcl_files(tmp_path: Path) -> None:
    f = tmp_path / "fail.mcl"
    f.write_bytes(format_mcl([2, 9, 150000]))
    assert f.read_bytes() == b"2\r\n9\r\n150000\r\n"
    assert parse_mclist(str(f)) == [2, 9, 150000]
    (tmp_path / "x.MCL").write_text("4 extra words\n\n  8\n")
    assert read_mcl(tmp_path / "x.MCL") == [4, 8]
    (tmp_path / "bad.mcl").write_text("3\n1\n")
    with pytest.raises(MCListError, match=r"MCL list must be increasing.. found 3 -> 1"):
        parse_mclist(str(tmp_path / "bad.mcl"))
    with pytest.raises(MCListError, match="cannot read method context list"):
        parse_mclist(str(tmp_path / "missing.mcl"))
    with pytest.raises(
        MCListError, match=r"Arg 'list\.txt' is invalid, needed method context list\."
    ):
        parse_mclist("list.txt")


def test_compress_round_trips() -> None:
    nums = [1, 2, 3, 7, 9, 10, 11, 12, 20]
    assert compress_ranges(nums) == "1-3,7,9-12,20"
    assert parse_mclist(compress_ranges(nums)) == nums
