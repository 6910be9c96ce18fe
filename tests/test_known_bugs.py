"""The known-bug table (spmi_dbg/analysis/known_bugs.toml): its entries load, and diagnoses match
them -- or miss by one criterion and are not claimed. The in-debugger match on the real seed crash
is in test_debug_diagnosis.py; the pipeline's (a dropped -p, the replay's output) in
test_report.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from spmi_dbg.analysis import knownbugs
from spmi_dbg.analysis.facts import Diagnosis, KnownBugMatch, NearKnownBug

pytestmark = pytest.mark.unit  # none of these tests starts a process

SEED: dict[str, object] = {
    "signal": {"name": "SIGSEGV", "near_null": True},
    "arch": "x86_64",
    "folded": [
        "CompileResult::repCompileMethod",
        "NearDiffer::compare",
        "InvokeNearDiffer",
        "main",
    ],
    "null_map": {"owner_type": "CompileResult", "member": "CompileMethod"},
    "assertion": None,
}
ARGV = ["superpmi", "-a", "-target", "arm64", "base/libclrjit.so", "diff/libclrjit.so", "x.mch"]


def diagnosis(data: dict[str, object]) -> Diagnosis:
    """A diagnosis holding just these facts (in their JSON form), as the known-bug matcher reads
    it."""
    full: dict[str, object] = {
        "schema": 1,
        "debugger": "recorded",
        "handling": {"kind": "fatal", "reason": ""},
        "arch": "x86_64",
    } | data
    sig = full.get("signal")
    if isinstance(sig, dict):
        full["signal"] = {
            "signo": 11 if sig["name"] == "SIGSEGV" else 6,
            "code": None,
            "address": None,
            "source": "",
        } | sig
    nm = full.get("null_map")
    if isinstance(nm, dict):
        full["null_map"] = {
            "map_type": "",
            "packet_id": None,
            "packet_name": None,
            "role": "",
            "explanation": "",
            "source": "",
        } | nm
    return Diagnosis.from_json(full)


def ids(found: list[KnownBugMatch]) -> list[str]:
    return [b.id for b in found]


def test_table_has_the_issues_named() -> None:
    bugs = {b.id: b for b in knownbugs.table()}
    assert {"dotnet/runtime#91257", "dotnet/runtime#56506", "dotnet/runtime#86082"} <= set(bugs)
    assert (
        "91783" in bugs["dotnet/runtime#91257"].fix and "104907" in bugs["dotnet/runtime#56506"].fix
    )
    assert all(b.url.startswith("https://github.com/dotnet/runtime/") for b in bugs.values())


def test_seed_matches() -> None:
    found = knownbugs.match(knownbugs.facts_of(diagnosis(SEED), argv=ARGV))
    assert ids(found) == ["dotnet/runtime#91257"]
    assert found[0].fix_url == "https://github.com/dotnet/runtime/pull/91783"
    assert found[0].matched == ["frames", "near_null", "null_map", "signal", "target"]


@pytest.mark.parametrize(
    ("change", "criterion"),
    [
        # another map
        ({"null_map": {"owner_type": "CompileResult", "member": "AllocMem"}}, "null_map"),
        (
            {"folded": ["CompileResult::repCompileMethod", "JitInstance::CompileMethod", "main"]},
            "frames",
        ),
        ({"signal": {"name": "SIGSEGV", "near_null": False}}, "near_null"),
    ],
)
def test_near_misses_are_not_claimed(change: dict[str, object], criterion: str) -> None:
    facts = knownbugs.facts_of(diagnosis(SEED | change), argv=ARGV)
    assert knownbugs.match(facts) == []
    near: list[NearKnownBug] = knownbugs.near_misses(facts)
    assert [(b.id, b.differs_in) for b in near] == [("dotnet/runtime#91257", criterion)]


def test_the_seed_on_x64_is_not_the_seed() -> None:
    """The same null map on an x64 target: the x64 near differ never reads it, so it is not
    #91257."""
    facts = knownbugs.facts_of(
        diagnosis(SEED), argv=["superpmi", "-a", "-target", "x64", "b.so", "d.so", "x.mch"]
    )
    assert knownbugs.match(facts) == [] and knownbugs.near_misses(facts)[0].differs_in == "target"


def test_parallel_worker_crash() -> None:
    abort = diagnosis(
        {
            "signal": {"name": "SIGABRT", "near_null": False},
            "folded": ["Compiler::fgMorph"],
            "arch": "x86_64",
        }
    )
    # a -p child's command line
    worker = ["superpmi", "-stride", "2", "4", "-v", "ewmin", "jit.so", "x.mch"]
    assert ids(knownbugs.match(knownbugs.facts_of(abort, argv=worker))) == ["dotnet/runtime#56506"]
    assert (
        ids(knownbugs.match(knownbugs.facts_of(abort, argv=["superpmi", "jit.so", "x.mch"]))) == []
    )
    assert ids(knownbugs.match(knownbugs.facts_of(abort, parallel=True))) == [
        "dotnet/runtime#56506"
    ]


def test_jit_ee_mismatch_from_the_output() -> None:
    facts = knownbugs.facts_of(
        None,
        texts=[
            "ERROR: Exception thrown: SuperPMI assertion 'false' failed (Ended with unexpected "
            "sizes 300 != 298)"
        ],
    )
    assert ids(knownbugs.match(facts)) == ["dotnet/runtime#86082"]
    assert knownbugs.match(knownbugs.facts_of(None, texts=["Ended with expected sizes"])) == []


def test_a_bad_table_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bugs.toml"
    bad.write_text('[[bug]]\nid = "x"\ntitle = "t"\nurl = "u"\n[bug.match]\nsignl = "SIGSEGV"\n')
    with pytest.raises(ValueError, match="unknown criteria"):
        knownbugs.table(bad)


def test_what_an_entry_is_about_is_data(tmp_path: Path) -> None:
    """An entry is about the crash (the default) or about how the crash was reported (`about =
    "reporting"`, with the words a summary says it in): the table's #56506 is the latter, from its
    data, and its matches carry it."""
    bugs = {b.id: b for b in knownbugs.table()}
    assert bugs["dotnet/runtime#56506"].about == "reporting" and bugs["dotnet/runtime#56506"].said
    assert [b.id for b in bugs.values() if b.about != "crash"] == ["dotnet/runtime#56506"]
    found = knownbugs.match(knownbugs.facts_of(diagnosis(SEED), argv=ARGV, parallel=True))
    assert [(b.id, b.about, b.said) for b in found] == [
        ("dotnet/runtime#91257", "crash", ""),
        ("dotnet/runtime#56506", "reporting", "-p hid the crash"),
    ]

    def table(name: str, lines: str) -> Path:  # a file each: the table is read once per path
        path = tmp_path / f"{name}.toml"
        path.write_text(
            f'[[bug]]\nid = "a/b#1"\ntitle = "t"\nurl = "u"\n{lines}[bug.match]\nparallel = true\n'
        )
        return path

    reporting = table("reporting", 'about = "reporting"\nsaid = "hid it"\n')
    assert [(b.about, b.said) for b in knownbugs.table(reporting)] == [("reporting", "hid it")]
    assert [b.about for b in knownbugs.table(table("default", ""))] == ["crash"]
    for name, bad, why in (
        ("no-said", 'about = "reporting"\n', "needs said"),
        ("unknown", 'about = "the crash"\n', "expected one of"),
    ):
        with pytest.raises(ValueError, match=why):
            knownbugs.table(table(name, bad))
