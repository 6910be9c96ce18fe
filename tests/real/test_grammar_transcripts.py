"""The data half of superpmi's command-line grammar (spmi_dbg/superpmi_argv): every superpmi
command of the 3.1.23 transcripts read as 3.1 reads it must be refused exactly when the real
superpmi printed its usage, in its words, and otherwise name the JITs, the collection and the
settings the real run used (16a-16o: -jit/-load/-co, -j/-l, -jitoption f, upper case, -fail, -p
with -c, -c with -m); the era is read off the real usage text; the tool's own changes keep the
user's spelling."""

from __future__ import annotations

import pytest

from spmi_dbg.superpmi_argv import edit
from spmi_dbg.superpmi_argv.era import era_of_usage, reading
from spmi_dbg.superpmi_argv.grammar import ERA_31, ERA_TODAY
from spmi_dbg.superpmi_argv.parse import parse, read_options

from ..support.real import Reference, Transcript

pytestmark = pytest.mark.unit  # none of these tests starts a process

USAGE = "SuperPMI is a JIT compiler testing tool."


def _argv(t: Transcript) -> list[str]:
    return [
        a.replace("{bin}", "/b").replace("{collections}", "/c").replace("{tmp}", "/t")
        for a in t.argv
    ]


def _superpmi_transcripts(reference: Reference) -> list[Transcript]:
    out = []
    for d in sorted(reference.transcripts.iterdir()):
        if (d / "argv.json").is_file():
            t = Transcript(d)
            if t.argv[0].rsplit("/", 1)[-1] in ("superpmi", "superpmi_O0"):
                out.append(t)
    return out


def test_every_transcript_is_refused_exactly_when_superpmi_refused_it(
    reference: Reference,
) -> None:
    seen = 0
    for t in _superpmi_transcripts(reference):
        cmd = parse(_argv(t), ERA_31)
        refused = USAGE in t.stdout
        assert (cmd.refusal is not None) == refused, (t.name, cmd.refusal)
        if refused:
            assert cmd.refusal is not None and t.rc == cmd.refusal.status == 255, t.name
            errors = [x for x in t.stderr.splitlines() if x.startswith("ERROR: ")]
            said = [f"ERROR: {cmd.refusal.message}"] if cmd.refusal.message else []
            assert errors == said, t.name
        seen += 1
    assert seen >= 50


def test_jit_and_collection_by_switch_and_by_prefix(reference: Reference) -> None:
    words = parse(_argv(reference.transcript("16a-jit-load-words")), ERA_31)
    letters = parse(_argv(reference.transcript("16b-jit-load-letters")), ERA_31)
    for cmd in (words, letters):
        assert cmd.refusal is None
        assert cmd.jits == ("/b/libclrjit_checked.so",) and cmd.input == "/c/api.mch"
        assert cmd.value("compile") == "1-3"
    # the real run's header says the same JIT and input
    assert "Using jit(/b/libclrjit_checked.so) with input (/c/api.mch)" in reference.transcript(
        "16a-jit-load-words"
    ).stdout.replace("{bin}", "/b").replace("{collections}", "/c")
    assert [i.tokens[0] for i in words.items] == ["-jit", "-load", "-co"]


def test_force_by_prefix_and_names_without_case(reference: Reference) -> None:
    forced = parse(_argv(reference.transcript("16c-force-prefix")), ERA_31)
    upper = parse(_argv(reference.transcript("16d-upper-case")), ERA_31)
    [s] = forced.settings()
    assert (s.force, s.key, s.value) == (True, "JitStress", "1")
    [u] = upper.settings()
    assert (u.force, u.key, u.value) == (False, "JitStress", "1")
    assert upper.value("compile") == "4"


def test_fail_is_failing_mc_list_and_p_with_c_is_refused_by_the_workers(
    reference: Reference,
) -> None:
    fail = parse(_argv(reference.transcript("16i-fail-prefix")), ERA_31)
    assert fail.value("failingMCList") == "/t/f.mcl"
    t = reference.transcript("16l-parallel-count")
    p = parse(_argv(t), ERA_31)
    assert p.refusal is not None and p.refusal.by_children
    assert f"ERROR: {p.refusal.message}" in t.stderr.splitlines()


def test_the_era_is_read_off_the_usage_text(reference: Reference) -> None:
    found = era_of_usage(reference.transcript("08b-usage").stdout)
    assert found.grammar is ERA_31 and found.extra == ()
    assert era_of_usage("no usage here").grammar is None


TODAY_USAGE = """SuperPMI is a JIT compiler testing tool.

Usage: superpmi [options] [jitname] [jitname2] filename.mc
 -j[it] Name - optionally -jit can be used to specify jits
 -boe
 -box
 -ignoreStoredConfig
 -v[erbosity] messagetypes
 -details <file name.csv>
 -streaming filename
 -failureLimit <limit>
 -repeatCount <repetition count>
 -bug 91257
"""


def test_todays_usage_and_a_builds_own_switches() -> None:
    found = era_of_usage(TODAY_USAGE)
    assert found.grammar is ERA_TODAY
    assert [(s.name, s.args) for s in found.extra] == [("bug", "one")]
    cmd = reading(["/x/superpmi", "-bug", "91257", "/x/a.so", "/x/a.mch"], found).command
    assert cmd.refusal is None and cmd.value("bug") == "91257"


@pytest.mark.parametrize(
    ("argv", "old", "new"),
    [
        # -s is -stride in 3.1 and -streaming today; -d is nothing in 3.1 and -details today
        (["-s", "1", "2"], "stride", "streaming"),
        (["-d", "x.csv"], None, "details"),
        (["-box"], None, "box"),
        (["-diffMCList", "d.mcl", "-a"], "diffMCList", None),
    ],
)
def test_the_eras_differ_where_their_sources_do(
    argv: list[str], old: str | None, new: str | None
) -> None:
    def first(grammar: object) -> str | None:
        cmd = parse(["/x/superpmi", *argv, "/x/a.so", "/x/a.mch"], grammar)  # type: ignore[arg-type]
        return cmd.items[0].name if cmd.items and cmd.items[0].switch else None

    assert first(ERA_31) == old and first(ERA_TODAY) == new


def test_refusals_of_each_era() -> None:
    def said(grammar: object, *args: str) -> str | None:
        cmd = parse(["/x/superpmi", *args], grammar)  # type: ignore[arg-type]
        return cmd.refusal.message if cmd.refusal else "runs"

    assert said(ERA_31, "-skipCleanup", "a.so", "a.mch") == "-skipCleanup requires -parallel."
    assert said(ERA_31, "-p", "-skipCleanup", "a.so", "a.mch") == "runs"
    assert said(ERA_31, "a.so", "b.so", "c.so", "a.mch") == "runs"  # the last is JIT2
    assert said(ERA_TODAY, "a.so", "b.so", "c.so", "a.mch") == "Too many JITs specified."
    assert said(ERA_31, "a.mch") == "Missing name of a Jit."
    assert said(ERA_TODAY, "a.mch") == "runs"  # /x/libclrjit.so, beside superpmi
    assert parse(["/x/superpmi", "a.mch"], ERA_TODAY).jits == ("/x/libclrjit.so",)
    assert said(ERA_TODAY, "-jitoption", "JitStress#1", "a.so", "a.mch") == "runs"
    assert said(ERA_31, "-jitoption", "JitStress#1", "a.so", "a.mch") is None  # usage only
    assert said(ERA_31, "-target", "x64", "a.so", "a.mch") == (
        "Illegal target architecture specified with -target (only arm64 is supported on x64 host)."
    )
    assert said(ERA_TODAY, "-target", "riscv64", "a.so", "a.mch") == "runs"
    assert said(ERA_TODAY, "-p", "-streaming", "stdin", "a.so", "a.mch") == (
        "streaming mode and parallel mode are incompatible."
    )
    assert said(ERA_TODAY, "-repeatCount", "0", "a.so", "a.mch") == (
        "Invalid repeat count specified. Repeat count must be between 1 and INT_MAX."
    )
    assert said(ERA_TODAY, "-p", "65", "a.so", "a.mch") == (
        "Invalid workers count specified, workers count cannot be more than 64."
    )


def test_the_tools_runs_read_what_the_users_verbosity_hides() -> None:
    assert edit.tool_letters("ewi") == "ewimn" + "v"
    assert edit.tool_letters("EWMI") == "EWMIewminv"  # letters are case-sensitive (16n)
    assert edit.tool_letters("q") == "ewminv"
    assert edit.tool_letters("a") == "a"
    items = read_options(ERA_31, ["-verb", "ewi", "-jitoption", "f", "JitStress=1"])
    run = edit.tokens(edit.tool_verbosity(items))
    assert run == ["-verb", "ewimnv", "-jitoption", "f", "JitStress=1"]


def test_the_users_files_are_redirected_in_the_users_spelling() -> None:
    items = read_options(ERA_31, ["-fail", "/home/u/f.mcl", "-w", "log.txt", "-co", "4"])
    out = edit.tokens(edit.redirect_outputs(items, lambda i: f"/run/{edit.output_name(i)}"))
    assert out == [
        "-fail",
        "/run/failingMCList-f.mcl",
        "-w",
        "/run/writeLogFile-log.txt",
        "-co",
        "4",
    ]
