"""The callees and JIT flags of real 3.1.23 method contexts (issue 41 items 2 and 3), from the
collections in the reference data (always run): 3.1's GetMethodInfo keyed by the handle with a
192-byte METHOD_INFO, CanInline's value with its restrictions, an 8-byte CORJIT_FLAGS named by
3.1's numbers."""

from __future__ import annotations

import json

from spmi_dbg.mch.collection import Collection
from spmi_dbg.method.recorded import Answers
from spmi_dbg.method.seen import MethodSeen, method_seen
from spmi_dbg.report.method_part import MethodPart, method_section

from ..support.common import run_cli
from ..support.real import Reference


def _seen(reference: Reference, number: int, *, callee_il: bool = False) -> MethodSeen:
    with Collection.open(reference.api) as col:
        seen = method_seen(number, Answers.of_packets(col.packets(number)), callee_il=callee_il)
    assert seen is not None
    return seen


def test_the_callees_of_35_are_its_call_sites_then_the_nested_one(reference: Reference) -> None:
    """35 (HashHelpers:GetPrime): three call sites, each given a body and allowed to inline, and
    SR:GetResourceString, met inside SR:get_Arg_HTCapacityOverflow."""
    found = _seen(reference, 35).callees
    assert [c.text() for c in found] == [
        "SR:get_Arg_HTCapacityOverflow(): called at IL_0004; IL size 11; inline allowed",
        "ArgumentException:.ctor(class String): called at IL_0009; IL size 19; inline allowed",
        "HashHelpers:IsPrime(int32): called at IL_0036; IL size 40; inline allowed",
        "SR:GetResourceString(class String): met inside another callee; IL size 12; inline allowed",
    ]


def test_what_the_jit_was_told_is_said_in_words(reference: Reference) -> None:
    never = {c.name: c for c in _seen(reference, 123).callees}
    assert never["Type:GetType(class String, class Func`2, class Func`4, bool)"].inline_words() == (
        "inline refused: never inline"
    )
    (ldstr,) = [c for c in _seen(reference, 283).callees if c.name == "AssemblyName:get_Name()"]
    assert ldstr.inline is not None and ldstr.inline.restrictions == 2
    assert ldstr.inline_words().endswith("only if the callee's strings stay unseen by its module")
    (nobody,) = [c for c in _seen(reference, 7).callees if c.call_sites == [0x54, 0xA8]]
    assert nobody.body_words() == "no body given (getMethodInfo answered false)"
    assert nobody.inline_words() == "inlining not asked"


def test_callees_il_on_request(reference: Reference) -> None:
    r = run_cli("mch", "il", "--callees", str(reference.api), "35")
    assert r.returncode == 0, r.stderr
    assert "// a callee in method context 35: HashHelpers:IsPrime (IL size 40)" in r.stdout
    assert "IL_0007:  call          <0x060003b9: not recorded>" in r.stdout
    plain = run_cli("mch", "il", str(reference.api), "35").stdout
    assert "// a callee in method context" not in plain and "HashHelpers:IsPrime(int32)" in plain
    data = json.loads(run_cli("mch", "il", "--json", "--callees", str(reference.api), "35").stdout)
    assert [c["il_size"] for c in data["callees"]] == [11, 19, 40, 12]
    assert data["callees"][2]["il"]["lines"][0]["opcode"] == "ldarg.0"
    assert data["callees"][0]["inline"] == {
        "result": 0,
        "restrictions": 0,
        "exception": 0,
        "words": "allowed",
    }


def test_the_flags_are_named_by_31s_numbers(reference: Reference) -> None:
    flags = _seen(reference, 35).flags
    assert flags is not None and (flags.era, flags.size, flags.raw) == (
        "3.1",
        8,
        0x003FF80000A2C010,
    )
    assert flags.names[:4] == ["DEBUG_INFO", "USE_AVX", "USE_AVX2", "FEATURE_SIMD"]
    # 3.1 records no target: its instruction-set bits stay numbers
    assert flags.names[-1] == "bits 43-53 (instruction sets; the target is not recorded)"
    assert flags.summary == ["full optimization (no tier flag)"]
    minopts = _seen(reference, 4344).flags
    assert minopts is not None and minopts.summary == ["MinOpts"] and "MIN_OPT" in minopts.names
    stub = _seen(reference, 60).flags
    assert stub is not None and "an IL stub" in stub.summary


def test_a_release_jit_collection_still_shows_callees_and_flags(reference: Reference) -> None:
    """The Release JIT asked for no names: said once; the callees keep their handles, sites, IL
    sizes and inline answers, the flags their words."""
    r = run_cli("mch", "il", str(reference.api_reljit), "35")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("no names for the method") == 1
    assert "// JIT flags: full optimization (no tier flag)" in r.stdout
    callees = [ln for ln in r.stdout.splitlines() if ln.startswith("//   <method 0x")]
    assert [ln.split(": ", 1)[1] for ln in callees] == [
        "name not recorded>: called at IL_0004; IL size 11; inline allowed",
        "name not recorded>: called at IL_0009; IL size 19; inline allowed",
        "name not recorded>: called at IL_0036; IL size 40; inline allowed",
        "name not recorded>: met inside another callee; IL size 12; inline allowed",
    ]


def test_a_release_jit_method_in_a_report_says_it_once(reference: Reference) -> None:
    """report.md's "The method" of a Release JIT's record (the live suite's repro of api-reljit's
    2000 makes this bundle): no name, said once, the IL and flags all the same."""
    with Collection.open(reference.api_reljit) as col:
        seen = method_seen(2000, Answers.of_packets(col.packets(2000)))
    assert seen is not None
    part = MethodPart.of(seen, None)
    text = "\n".join(method_section(part, ("repro.mch", 1)))
    assert text.count("holds no names for the method") == 1
    assert "`its method (the collection holds no name)` (IL size 30)" in text
    assert "IL_0018:  calli" in text and "full optimization (no tier flag), an IL stub" in text
    assert part.marked is None and MethodPart.from_json(part.to_json()) == part
