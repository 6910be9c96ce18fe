"""The installed replay core and sample JITs, looked up at import: a test module that imports this
fails (never skips) when `pip install -e .` has not built them."""

from __future__ import annotations

from spmi_dbg import paths

from .common import native

REPLAY = native(paths.REPLAY)
REPLAY_O0 = native(paths.REPLAY_O0)
BASE = native(paths.BASE_JIT)
DIFF = native(paths.DIFF_JIT)
RELEASE = native(paths.RELEASE_JIT)

# superpmi's options that make the sample seed crash (dotnet/runtime#91257): asm diffs of an Arm64
# target.
SEED_OPTIONS = ["-a", "-target", "arm64", "-bug", "91257"]
SEED_COMMAND = (REPLAY, *SEED_OPTIONS, BASE, DIFF)  # the seed crash's command, its collection last
# six JIT settings; the sample JIT's stress-only assert needs two (JitStress=2, STRESS_FOLD)
STRESS_SETTINGS = (
    *("-jitoption", "JitNoInline=1"),
    *("-jitoption", "JitStress=2"),
    *("-jitoption", "JitStressRegs=1"),
    *("-jitoption", "JitStressModeNames=STRESS_MAKE_CSE STRESS_FOLD STRESS_REVERSE_FLAG"),
    *("-jitoption", "JitMinOpts=0"),
    *("-jitoption", "JitDisasmSummary=0"),
)
# three of them, the two needed among them (a triage's and a stripped JIT's stress-only assert)
STRESS_SETTINGS_3 = (
    *("-jitoption", "JitStress=2"),
    *("-jitoption", "JitStressModeNames=STRESS_MAKE_CSE STRESS_FOLD"),
    *("-jitoption", "JitStressRegs=1"),
)
