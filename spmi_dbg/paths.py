"""Where the package's native artifacts are: `_native/` beside the Python files (built by CMake at
`pip install`): `libspmimch.so`, `bin/spmi-replay`, `bin/spmi-mch-verify`,
`jit/libsamplejit_base.so`, `jit/libsamplejit_diff.so`. pathlib is imported where used: the console
script (launcher.py) imports this module before it execs the native verifier."""

from __future__ import annotations

import spmi_dbg

# not typing's: importing typing (and re) costs the console script milliseconds
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

REPLAY = "bin/spmi-replay"
REPLAY_O0 = "bin/spmi-replay-O0"  # the same core at -O0 (debugger tests)
BASE_JIT = "jit/libsamplejit_base.so"
DIFF_JIT = "jit/libsamplejit_diff.so"
# the base JIT as a Release build: no asserts, no DEBUG-only settings
RELEASE_JIT = "jit/libsamplejit_release.so"
MCH_VERIFY = "bin/spmi-mch-verify"  # `spmi-dbg mch verify`'s native fast path (launcher.py)


def native_dirs() -> list[Path]:
    """For a regular install that is site-packages/spmi_dbg/_native. For an editable install the
    package's __path__ lists the source tree and the directory the build was installed to, so all
    are searched; nothing assumes where site-packages is."""
    # start-up of the launcher: pathlib costs it ~15 ms before it execs `mch verify`
    from pathlib import Path

    return [Path(p) / "_native" for p in spmi_dbg.__path__]


def native_file(relative: str) -> Path | None:
    for d in native_dirs():
        candidate = d / relative
        if candidate.exists():
            return candidate
    return None
