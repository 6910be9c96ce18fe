"""`spmi-dbg mch ...` and `spmi-dbg sample build` through the real command line."""

from __future__ import annotations

import json
from pathlib import Path

from .support.common import build_collection, run_cli


def test_info_text_and_json(sample: tuple[Path, list[bytes]]) -> None:
    path, records = sample
    r = run_cli("mch", "info", str(path))
    assert r.returncode == 0, r.stderr
    assert f"method contexts {len(records)}" in r.stdout
    assert "target arch     x64" in r.stdout
    assert "CompileMethod" in r.stdout and "PacketCR_AllocMem" in r.stdout
    j = json.loads(run_cli("mch", "info", "--json", str(path)).stdout)
    assert j["method_contexts"] == len(records) and j["bytes"] == sum(map(len, records))
    assert j["record_size"]["min"] == min(map(len, records))
    hist = {row["id"]: row for row in j["packets"]}
    assert hist[143]["count"] == len(records) and hist[118]["name"] == "PacketCR_CompileMethod"
    assert j["target_arch"] == "x64" and j["index"].endswith("sample.mch.mct")


def test_list_with_compile_list_and_json(sample: tuple[Path, list[bytes]]) -> None:
    path, records = sample
    r = run_cli("mch", "list", "-c", "2,4-5", str(path))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 4 and lines[0].split()[:4] == ["number", "offset", "size", "IL"]
    assert lines[1].split()[0] == "2" and f"{2:032X}" in lines[1]
    rows = json.loads(run_cli("mch", "list", "--json", str(path)).stdout)
    assert [row["number"] for row in rows] == list(range(1, len(records) + 1))
    assert rows[9]["size"] == len(records[9]) and rows[9]["hash"] == f"{10:032X}"
    assert rows[9]["name"].endswith("_10") and rows[9]["il_size"] > 0
    bad = run_cli("mch", "list", "-c", "3,2", str(path))
    assert bad.returncode == 2
    assert bad.stderr.strip() == "spmi-dbg: error: MCL list must be increasing.. found 3 -> 2"


def test_extract_then_verify(sample: tuple[Path, list[bytes]], tmp_path: Path) -> None:
    path, records = sample
    out = tmp_path / "repro.mch"
    r = run_cli("mch", "extract", "-c", "7", str(path), str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == records[6]
    v = run_cli("mch", "verify", str(out))
    assert v.returncode == 0 and "OK: 1 method contexts" in v.stdout and "index repro.mch.mct consistent" in v.stdout
    assert run_cli("mch", "list", str(out)).stdout.splitlines()[1].split()[4] == f"{7:032X}"


def test_index_copies_known_hashes_and_never_invents_them(sample: tuple[Path, list[bytes]], tmp_path: Path) -> None:
    path, records = sample
    r = run_cli("mch", "index", str(path), "-o", str(tmp_path / "new.mct"))
    assert r.returncode == 0 and f"{len(records)} hashes copied" in r.stdout
    assert (tmp_path / "new.mct").read_bytes() == Path(str(path) + ".mct").read_bytes()
    plain = tmp_path / "plain.mch"
    build_collection(plain, count=5, index=False)
    r = run_cli("mch", "index", str(plain))
    assert r.returncode == 0 and "hashes unknown" in r.stdout
    rows = json.loads(run_cli("mch", "list", "--json", str(plain)).stdout)
    assert [row["hash"] for row in rows] == [None] * 5


def test_verify_finds_a_stale_index(sample: tuple[Path, list[bytes]], tmp_path: Path) -> None:
    path, records = sample
    shorter = tmp_path / "short.mch"
    shorter.write_bytes(b"".join(records[1:]))  # same records, shifted: the old index is now stale
    Path(str(shorter) + ".mct").write_bytes(Path(str(path) + ".mct").read_bytes())
    r = run_cli("mch", "verify", str(shorter))
    assert r.returncode == 1
    assert "stale index" in r.stdout


def test_dump(sample: tuple[Path, list[bytes]]) -> None:
    path, _ = sample
    r = run_cli("mch", "dump", str(path), "3")
    assert r.returncode == 0, r.stderr
    assert "method context 3:" in r.stdout and "PacketCR_CompileMethod" in r.stdout
    assert "stored CR    CompileMethod: nativeSizeOfCode" in r.stdout
    j = json.loads(run_cli("mch", "dump", "--json", str(path), "3").stdout)
    assert j["compile_method"]["il_size"] == len(bytes.fromhex(j["compile_method"]["il"]))
    assert {p["id"] for p in j["packets"]} >= {143, 6, 71, 149, 154, 183, 115, 118}
    assert run_cli("mch", "dump", str(path), "999").returncode == 1


def test_sample_build_is_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a.mch", tmp_path / "b.mch"
    for out in (a, b):
        r = run_cli("sample", "build", "--methods", "300", "--seed", "5", "--arch", "arm64", "--out", str(out))
        assert r.returncode == 0, r.stderr
    assert a.read_bytes() == b.read_bytes()
    assert Path(str(a) + ".mct").read_bytes() == Path(str(b) + ".mct").read_bytes()
    j = json.loads(run_cli("mch", "info", "--json", str(a)).stdout)
    assert j["method_contexts"] == 300 and j["target_arch"] == "arm64"


def test_module_entry_point_and_help() -> None:
    r = run_cli("--help")
    assert r.returncode == 0 and "mch" in r.stdout
    r = run_cli("mch", "extract", "in.mch")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_the_readme_exit_status_table_is_the_exits_module() -> None:
    """Exit statuses are defined once (spmi_dbg/exits.py) and listed once, in the README's table."""
    from spmi_dbg import exits

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = readme[readme.index("## Exit status"):readme.index("## Architecture")]
    rows = {int(line.split("|")[1]) for line in table.splitlines() if line.startswith("| ") and
            line.split("|")[1].strip().isdigit()}
    codes = {v for k, v in vars(exits).items() if k.isupper() and isinstance(v, int)}
    assert rows == codes
