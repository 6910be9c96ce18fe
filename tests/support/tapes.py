"""The tapes of real stops (tests/fixtures/tapes/): which stops of the real superpmi 3.1.23 they
are, how each is recorded (tests/real/test_tapes_real.py, live) and what its diagnosis must say
(tests/real/test_tapes.py, replayed in CI). A tape's paths are the build's with its root written
`{build}` and the test's temporary directory `{tmp}`, so a recording on any machine compares."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import ROOT

TAPES = ROOT / "tests" / "fixtures" / "tapes"


@dataclass(frozen=True)
class Stop:
    name: str
    # the command: program (a bin/ name, or "stripped:superpmi" for a stripped copy), its options,
    # the JIT (a bin/ name) and the collection (a collections/ name)
    program: str
    options: tuple[str, ...]
    jit: str = "libclrjit_checked.so"
    collection: str = "api.mch"
    debugger: str = "gdb"
    env: dict[str, str] = field(default_factory=dict)
    what: str = ""

    @property
    def tape(self) -> Path:
        return TAPES / f"{self.name}.tape.json"

    @property
    def expected(self) -> Path:
        return TAPES / f"{self.name}.diagnosis.json"


STOPS = [
    Stop(
        "o2-null-map-gdb",
        "superpmi",
        ("-jitoption", "JitStress=1", "-c", "4"),
        what="the -O2 null-map crash (MethodContext::repGetGSCookie), main's locals optimized out",
    ),
    Stop(
        "o2-null-map-lldb",
        "superpmi",
        ("-jitoption", "JitStress=1", "-c", "4"),
        debugger="lldb",
        what="the same stop in lldb",
    ),
    Stop(
        "o2-boa-assert",
        "superpmi",
        ("-boa", "-jitoption", "JitStressRegs=400", "-c", "543"),
        what="an assert of the Checked JIT under -boa: SIGTRAP in DebugBreakorAV <- doAssert",
    ),
    Stop(
        "o0-boa-assert",
        "superpmi_O0",
        ("-boa", "-jitoption", "JitStressRegs=400", "-c", "543"),
        what="the same assert in the -O0 superpmi (its locals readable)",
    ),
    Stop(
        "jit-state-minopts",
        "superpmi",
        ("-jitoption", "JITMinOpts=1", "-c", "481"),
        what="a null map met during the Checked JIT's morph: the JIT's state (method, phase)",
    ),
    Stop(
        "checked-on-release",
        "superpmi",
        ("-c", "2000"),
        "libclrjit_checked.so",
        "api-reljit.mch",
        what="the Checked JIT on a collection recorded with the Release JIT (09, 15c): a name "
        "query the Release JIT never made, no GetMethodSig map",
    ),
    Stop(
        "stripped-null-map",
        "stripped:superpmi",
        ("-jitoption", "JitStress=1", "-c", "4"),
        what="the null-map crash of a stripped superpmi: frames as module+offset",
    ),
]


def normalized(text: str, build: Path, tmp: Path) -> str:
    """`text` with the build's root and the temporary directory as placeholders."""
    for path, name in ((str(tmp), "{tmp}"), (str(build), "{build}")):
        text = text.replace(path, name)
    return text


def without_debugger(d: dict[str, Any]) -> dict[str, Any]:
    """A diagnosis but the name of what read it (gdb 13.1, lldb 16, or a tape of one)."""
    return {k: v for k, v in d.items() if k != "debugger"}


def load_expected(stop: Stop) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(stop.expected.read_text())
    return data
