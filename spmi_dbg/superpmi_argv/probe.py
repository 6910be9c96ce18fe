"""Ask a superpmi binary which era it is: run it with `-?` (it prints its usage and exits 255, doing
nothing else) and read the usage (era.era_of_usage). Once per binary and environment per process."""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Mapping, Sequence

from spmi_dbg.superpmi_argv.era import EraEvidence, era_of_usage

PROBE_TIMEOUT = 30.0


def probe_era(
    program: str, env: Mapping[str, str] | None = None, emulator: Sequence[str] = ()
) -> EraEvidence:
    """The era of `program` (run under `emulator`, in `env`; default this process's environment)
    from its usage text."""
    environment = dict(os.environ if env is None else env)
    try:
        st = os.stat(program)
    except OSError as e:
        return EraEvidence(None, f"cannot run {program}: {e.strerror}")
    return _probe(
        program, st.st_mtime_ns, st.st_size, tuple(sorted(environment.items())), tuple(emulator)
    )


@functools.lru_cache(maxsize=32)
def _probe(
    program: str,
    mtime: int,
    size: int,
    environment: tuple[tuple[str, str], ...],
    emulator: tuple[str, ...],
) -> EraEvidence:
    try:
        done = subprocess.run(
            [*emulator, program, "-?"],
            env=dict(environment),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return EraEvidence(None, f"{program} -? did not answer ({e})")
    return era_of_usage(done.stdout.decode("utf-8", "replace"))
