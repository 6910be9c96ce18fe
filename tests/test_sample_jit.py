"""Generated methods through the real sample JIT (native/jit) via its test host `samplejit-test`.

Needs the JIT libraries and `samplejit-test` (built by CMake at `pip install -e .`, not installed:
build/*/jit/, or the path in $SAMPLEJIT_TEST); their absence is a failure, not a skip.
samplejit-test answers resolveToken/getMethodSig from the token itself (numArgs = (T >> 4) & 0xF,
retType = T & 3), so call tokens are rewritten into that encoding first.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from spmi_dbg.sample import il as IL
from spmi_dbg.sample.builder import Method
from spmi_dbg.sample.gen import Generator
from spmi_dbg.sample.inject import injected

from .support.common import sample_jits, samplejit_host

HOST = samplejit_host()
JITS = sample_jits()

# the host and the JITs are built (conftest.py)
pytestmark = pytest.mark.usefixtures("samplejit_built")


def host_line(m: Method) -> str:
    by_token = {c.token: c for c in m.callees}
    il = bytearray(m.il)
    for ins in IL.decode(m.il):
        if ins.op.name == "call":
            assert ins.operand is not None
            c = by_token[ins.operand]
            r = 0 if c.ret_type == IL.TYPE_VOID else 1 if c.ret_type == IL.TYPE_INT else 2
            struct.pack_into("<I", il, ins.offset + 1, 0x0A000000 | (c.nargs << 4) | r)
    return f"args={m.nargs} locals={m.nlocals} ret=long {bytes(il).hex()}\n"


def run_host(
    tmp_path: Path, methods: list[Method], jit: str, target: str, *extra: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    f = tmp_path / f"methods-{jit}-{target}.txt"
    f.write_text("".join(host_line(m) for m in methods))
    assert HOST is not None
    return subprocess.run(
        [str(HOST), "-target", target, *extra, str(JITS[jit]), "-f", str(f)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def results(r: subprocess.CompletedProcess[str]) -> list[str]:
    return [ln for ln in r.stdout.splitlines() if ln.startswith("method ")]


@pytest.mark.parametrize("target", ["x64", "arm64"])
def test_random_methods_compile_and_only_pow2_methods_differ(tmp_path: Path, target: str) -> None:
    gen = Generator(5)
    methods = [gen.method(n).method for n in range(1, 501)]
    codes = {}
    for jit in ("base", "diff"):
        r = run_host(tmp_path, methods, jit, target)
        lines = results(r)
        assert r.returncode == 0 and len(lines) == len(methods), r.stderr
        bad = [
            ln[:160]
            for ln in lines
            if "(CORJIT_OK)" not in ln or "OVERRUN" in ln or "BAD-ENTRY" in ln
        ]
        assert not bad, bad[:5]
        codes[jit] = [ln.split("code=")[1] for ln in lines]
    differs = [b != d for b, d in zip(codes["base"], codes["diff"], strict=True)]
    pow2 = ["pow2-mul" in IL.find_triggers(m.il) for m in methods]
    assert differs == pow2 and sum(pow2) > 30


@pytest.mark.parametrize(
    ("kinds", "jit", "expect"),
    [
        (["jit-null"], "base", "signal 11"),
        (["jit-assert"], "base", "shiftAmount >= 0"),
        (["poison", "poison-crash"], "base", "double free"),
        (["stack-overflow"], "base", "signal 11"),
        (["diff-assert"], "diff", "multiplier != 0"),
    ],
)
def test_injected_triggers_fire(tmp_path: Path, kinds: list[str], jit: str, expect: str) -> None:
    gen = Generator(9)
    r = run_host(
        tmp_path,
        [injected(gen, k, 50).method for k in kinds],
        jit,
        "x64",
        "-quiet",
        "-catch",
        "-assert-throw",
        timeout=60,
    )
    assert expect in r.stdout + r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("kind", ["poison", "poison-crash", "diff-assert", "corrupt", "missing"])
def test_harmless_alone_on_the_base_jit(tmp_path: Path, kind: str) -> None:
    gen = Generator(9)
    r = run_host(tmp_path, [injected(gen, kind, 51).method], "base", "arm64", "-quiet", timeout=60)
    assert r.returncode == 0 and "(CORJIT_OK)" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize(
    ("config", "fires"),
    [
        ([], False),
        (["JitStress=2"], False),
        (["JitStressModeNames=STRESS_FOLD"], False),
        (["JitStress=1", "JitStressModeNames=STRESS_FOLD"], False),
        (["JitStress=2", "JitStressModeNames=STRESS_MAKE_CSE STRESS_FOLD"], True),
        (
            [
                "JitStress=2",
                "JitStressModeNames=STRESS_FOLD",
                "JitStressModeNamesAllow=STRESS_FOLD",
            ],
            True,
        ),
        (
            [
                "JitStress=2",
                "JitStressModeNames=STRESS_FOLD",
                "JitStressModeNamesAllow=STRESS_MAKE_CSE",
            ],
            False,
        ),
        (["JitStress=2", "JitStressModeNames=STRESS_FOLDX"], False),
    ],
)
def test_stress_assert_needs_the_stress_settings(
    tmp_path: Path, config: list[str], fires: bool
) -> None:
    gen = Generator(9)
    extra = [a for c in config for a in ("-config", c)]
    r = run_host(
        tmp_path,
        [injected(gen, "stress-assert", 52).method],
        "base",
        "x64",
        "-quiet",
        "-catch",
        "-assert-throw",
        *extra,
        timeout=60,
    )
    out = r.stdout + r.stderr
    assert ("magic[divisor] != 0" in out) == fires, out
    if not fires:
        assert r.returncode == 0 and "(CORJIT_OK)" in r.stdout, out


def test_stress_fold_keeps_other_divisors_compiling(tmp_path: Path) -> None:
    """Under the stress mode the random methods (whose `rem` literals are never 6) still compile."""
    gen = Generator(5)
    methods = [gen.method(n).method for n in range(1, 301)]
    assert sum(b"\x5d" in m.il for m in methods) > 30
    r = run_host(
        tmp_path,
        methods,
        "base",
        "x64",
        "-config",
        "JitStress=2",
        "-config",
        "JitStressModeNames=STRESS_FOLD",
    )
    lines = results(r)
    assert r.returncode == 0 and len(lines) == len(methods), r.stderr
    assert all("(CORJIT_OK)" in ln for ln in lines)
