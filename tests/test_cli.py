"""`spmi-dbg mch ...` and `spmi-dbg sample build` through the real command line; every command's
usage errors (their status, usage and prefix, no abbreviations, argument types in the user's words)
through `cli.main`."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from spmi_dbg import cli
from spmi_dbg.usage import Parser

from .support.common import build_collection, run_cli

README = Path(__file__).resolve().parent.parent / "README.md"


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
    assert (
        bad.stderr.strip() == "spmi-dbg mch list: error: MCL list must be increasing.. found 3 -> 2"
    )


def test_extract_then_verify(sample: tuple[Path, list[bytes]], tmp_path: Path) -> None:
    path, records = sample
    out = tmp_path / "repro.mch"
    r = run_cli("mch", "extract", "-c", "7", str(path), str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == records[6]
    v = run_cli("mch", "verify", str(out))
    assert (
        v.returncode == 0
        and "OK: 1 method contexts" in v.stdout
        and "index repro.mch.mct consistent" in v.stdout
    )
    assert run_cli("mch", "list", str(out)).stdout.splitlines()[1].split()[4] == f"{7:032X}"


def test_index_copies_known_hashes_and_never_invents_them(
    sample: tuple[Path, list[bytes]], tmp_path: Path
) -> None:
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
        r = run_cli(
            "sample",
            "build",
            "--methods",
            "300",
            "--seed",
            "5",
            "--arch",
            "arm64",
            "--out",
            str(out),
        )
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
    assert r.stderr.splitlines()[0].startswith("usage: spmi-dbg mch extract ")


@pytest.mark.unit
def test_the_readme_exit_status_table_is_the_exits_module() -> None:
    """Exit statuses are defined once (spmi_dbg/exits.py) and listed once, in the README's table."""
    from spmi_dbg import exits

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = readme[readme.index("## Exit status") : readme.index("## Architecture")]
    rows = {
        int(line.split("|")[1])
        for line in table.splitlines()
        if line.startswith("| ") and line.split("|")[1].strip().isdigit()
    }
    codes = {v for k, v in vars(exits).items() if k.isupper() and isinstance(v, int)}
    assert rows == codes


# ---------------------------------------------------------------------------------------- usage
# errors, as a class
def _exit_status_columns() -> dict[str, int]:
    """The README's "Exit status" table, read back: each command named in its header -> its usage
    error status (the row that says "usage error")."""
    table = README.read_text()
    table = table[table.index("## Exit status") : table.index("## Architecture")]
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in table.splitlines()
        if line.startswith("| ")
    ]
    header, body = rows[0], rows[1:]
    out: dict[str, int] = {}
    for col in range(1, len(header)):
        status = next(
            int(r[0]) for r in body if r[0].isdigit() and "usage" in r[col] and "error" in r[col]
        )
        out.update({name: status for name in re.findall(r"`([a-z]+)`", header[col])})
    return out


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under `spmi-dbg`, with the words that select it (groups such as `mch`
    included)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _commands(sub, (*path, name))


ALL = list(_commands(cli.build_parser()))
IDS = [" ".join(words) for words, _ in ALL]


def _status(words: tuple[str, ...]) -> int:
    """The usage error status the README gives this command (`gdb` and `lldb`: 2, said under the
    table)."""
    columns = _exit_status_columns()
    return columns.get(words[0], 2 if words[0] in ("gdb", "lldb") else -1)


def _required(
    parser: argparse.ArgumentParser, instead: argparse.Action | None = None, value: str = "1"
) -> list[str]:
    """The arguments `parser` requires, each given a plausible value ("1"); `instead` gets
    `value`."""
    out: list[str] = []
    for a in parser._actions:
        if a.option_strings and (a.required or a is instead) and a.nargs != 0:
            out += [a.option_strings[-1], value if a is instead else "1"]
        elif not a.option_strings and a.nargs not in (argparse.REMAINDER, argparse.PARSER):
            if not isinstance(a, argparse._SubParsersAction):
                out.append(value if a is instead else "1")
    return out


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.err


@pytest.mark.unit
def test_the_readme_names_every_command_s_exit_statuses() -> None:
    """Each command is in one column of the table (or, the launchers, in the note under it), so its
    statuses are written down; the pipelines' usage errors are 3, the tools' 2."""
    columns = _exit_status_columns()
    top = {words[0] for words, _ in ALL}
    assert top == set(columns) | {"gdb", "lldb"}
    pipelines = {"repro", "triage", "demo", "bisect", "recheck"}
    assert {c for c, status in columns.items() if status == 3} == pipelines
    assert all(status == 2 for c, status in columns.items() if c not in pipelines)
    assert all(isinstance(sub, Parser) and not sub.allow_abbrev for _, sub in ALL)


@pytest.mark.unit
@pytest.mark.parametrize("words", [w for w, _ in ALL], ids=IDS)
def test_an_unknown_option_is_the_command_s_own_usage_error(
    words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """`--verfy-runs 3`, `--deubgger`: the status the README gives that command (never 2 for a
    pipeline, where it means "no crash"), that command's usage, and one line with its own prefix."""
    sub = dict(ALL)[words]
    status, err = _main(capsys, *words, "--verfy-runs=3", *_required(sub))
    prog = "spmi-dbg " + " ".join(words)
    assert status == _status(words), err
    lines = err.splitlines()
    assert lines[0].startswith(f"usage: {prog} "), err
    assert lines[-1].startswith(f"{prog}: error: "), err
    # `mch`: its VERB is missing
    group = any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)
    assert group or "unrecognized arguments: --verfy-runs=3" in lines[-1], err
    assert "Traceback" not in err


def _long_options() -> Iterator[tuple[tuple[str, ...], str]]:
    for words, sub in ALL:
        known = {s for a in sub._actions for s in a.option_strings}
        for a in sub._actions:
            for opt in a.option_strings:
                if (
                    opt.startswith("--")
                    and len(opt) > 4
                    and opt[:-1] not in known
                    and opt != "--help"
                ):
                    yield words, opt


ABBREVIATED = list(_long_options())


@pytest.mark.unit
@pytest.mark.parametrize(
    ("words", "option"), ABBREVIATED, ids=[" ".join(w) + " " + o for w, o in ABBREVIATED]
)
def test_options_are_never_abbreviated(
    words: tuple[str, ...], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--worker` is not `--workers`, `--max-crash` not `--max-crashes`: an unknown option,
    refused."""
    sub = dict(ALL)[words]
    status, err = _main(capsys, *words, option[:-1], *_required(sub))
    assert status == _status(words), err
    assert f"unrecognized arguments: {option[:-1]}" in err.splitlines()[-1], err


def _typed() -> Iterator[tuple[tuple[str, ...], argparse.Action]]:
    for words, sub in ALL:
        for a in sub._actions:
            if a.type is not None and a.type not in (str, Path):
                yield words, a


TYPED = list(_typed())


@pytest.mark.unit
@pytest.mark.parametrize(
    ("words", "action"),
    TYPED,
    ids=[" ".join(w) + " " + (a.option_strings or [a.dest])[0] for w, a in TYPED],
)
def test_a_bad_value_is_described_in_the_user_s_words(
    words: tuple[str, ...], action: argparse.Action, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--workers two`: what was expected and what was given, never `invalid positive_int value`."""
    sub = dict(ALL)[words]
    status, err = _main(capsys, *words, *_required(sub, instead=action, value="two"))
    assert status == _status(words), err
    line = err.splitlines()[-1]
    assert re.fullmatch(
        rf"spmi-dbg {' '.join(words)}: error: argument \S+: expected an? [a-z ,0-9]+, got 'two'",
        line,
    ), line
    assert "invalid" not in line and "_" not in line.split("argument", 1)[1].split(":", 1)[1]


@pytest.mark.unit
def test_typed_options_are_there_to_test() -> None:
    """The class above covers the counts of repro, triage, demo, mch and sample (not an empty
    parametrization)."""
    names = {(w[0], (a.option_strings or [a.dest])[0]) for w, a in TYPED}
    assert {
        ("repro", "--workers"),
        ("repro", "--verify-runs"),
        ("repro", "--timeout"),
        ("triage", "--max-crashes"),
        ("demo", "--workers"),
        ("mch", "number"),
        ("sample", "--methods"),
    } <= names
    assert ("repro", "--workers") in {(w[0], o) for w, o in ABBREVIATED}


@pytest.mark.unit
def test_messages_name_their_own_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """triage's "no command" names triage, not repro; a tool's input error names the tool's verb."""
    status, err = _main(capsys, "triage")
    assert status == 3
    assert err.startswith(
        "spmi-dbg triage: error: expected the superpmi command after --, e.g. spmi-dbg triage -- "
    )
    assert "repro" not in err
    status, err = _main(capsys, "mch", "info", str(tmp_path / "nope.mch"))
    assert status == 1 and err.startswith(f"spmi-dbg mch info: error: {tmp_path / 'nope.mch'}: "), (
        err
    )
    status, err = _main(capsys, "repro", "--workers", "0", "--", "superpmi", "j.so", "x.mch")
    assert status == 3 and err.splitlines()[-1] == (
        "spmi-dbg repro: error: argument --workers: expected a whole number of at least 1, got '0'"
    )
    status, err = _main(capsys, "demo", "--workers", "0")
    assert status == 3 and err.splitlines()[-1].startswith(
        "spmi-dbg demo: error: argument --workers: "
    )


@pytest.mark.unit
def test_no_command_or_an_unknown_one_is_a_usage_error_a_pipeline_script_cannot_misread(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`spmi-dbg triag ...`: 3 (2 would read as "no crash" in a script that meant triage), the top
    usage."""
    for argv in ([], ["triag", "--", "superpmi"]):
        status, err = _main(capsys, *argv)
        assert (
            status == 3
            and err.startswith("usage: spmi-dbg ")
            and err.splitlines()[-1].startswith("spmi-dbg: error: ")
        ), err


@pytest.mark.unit
def test_grouped_numbers_are_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    """`--methods 200,000` as the help prints the default; `1,2` is not a number."""
    from spmi_dbg.usage import integer

    assert integer(minimum=1)("200,000") == integer()("200_000") == 200000
    with pytest.raises(argparse.ArgumentTypeError, match=r"expected a whole number, got '1,2'"):
        integer()("1,2")
