"""The environment a replay needs, found by experiment (issue 36 item 4), not guessed by the user.

When the verification's native runs -- repro.sh's clean environment: `env -i`, PATH, HOME and the
recorded variables -- do not reproduce a crash the user's run showed, the cause may be a variable of
theirs that no class of recorded variables covers (a test JIT's own `SPMI_TEST_FAULT_METHOD`).
Before any record is minimized:

1. one run with the user's whole environment (all but the shell's own noise): when it does not
   reproduce either, the environment is not the cause and nothing more is tried;
2. the variables whose name or value the replay's own output mentions (a JIT that says what it was
   asked to do), tried alone: when they reproduce, the minimization is over them only;
3. a minimization (ddmin) over the candidates: each test one native run of the one-record repro.

The variables found are recorded (kind `found`) and the repro is verified again in the clean
environment with them; the report says which and how they were found."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.environment import EnvVar, capture
from spmi_dbg.repro.expect import Expectation
from spmi_dbg.repro.minimize import ddmin
from spmi_dbg.repro.native import run_native

# a value shorter than this is too common to count as mentioned (`1`, `on`)
MENTION_MIN = 4


@dataclass
class EnvExperiment:
    candidates: list[str]  # the names tried: the user's variables not recorded
    needed: list[EnvVar] = field(default_factory=list)
    mentioned: list[str] = field(default_factory=list)  # named or valued in the replay's output
    whole_reproduced: bool = False
    runs: int = 0
    seconds: float = 0.0

    @property
    def found(self) -> bool:
        return bool(self.needed)

    def summary(self) -> str:
        if not self.whole_reproduced:
            return (
                f"not the environment: the repro does not reproduce with your whole environment "
                f"either ({len(self.candidates)} variable(s) beyond the recorded ones; {self.runs} "
                "run(s))"
            )
        if not self.needed:
            return f"the environment could not be narrowed ({self.runs} runs)"
        how = (
            "named in the replay's own output"
            if {v.name for v in self.needed} <= set(self.mentioned)
            else f"by minimization over {len(self.candidates)} variable(s)"
        )
        said = ", ".join(v.text for v in self.needed)
        return (
            f"needs {said} from your environment, found by experiment ({how}; {self.runs} "
            f"run(s), {self.seconds:.1f} s)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "candidates": self.candidates,
            "mentioned": self.mentioned,
            "whole_reproduced": self.whole_reproduced,
            "needed": [v.to_json() for v in self.needed],
            "runs": self.runs,
            "seconds": round(self.seconds, 3),
            "summary": self.summary(),
        }


def find_environment(
    cmd: ReproCommand,
    repro: Path,
    expected: Expectation,
    *,
    timeout: float,
    workdir: Path,
    environ: dict[str, str] | None = None,
) -> EnvExperiment | None:
    """The variables of `environ` (default: this process's) beyond the recorded ones that the
    repro needs to reproduce `expected` natively; None when there is no such variable to try."""
    recorded = {v.name for v in cmd.env}
    # a variable every replay can be given as it is: a plain name, a value of one line (a debugger's
    # `set environment` and repro.sh take no other; exported shell functions are not a replay's)
    pool = [
        dataclasses.replace(v, kind="found")
        for v in capture(os.environ if environ is None else environ, (), True)
        if v.name not in recorded and v.name.isidentifier() and "\n" not in v.value
    ]
    if not pool:
        return None
    exp = EnvExperiment([v.name for v in pool])
    started = time.monotonic()
    out, err = workdir / "environment.stdout", workdir / "environment.stderr"

    def reproduces(extra: list[EnvVar]) -> bool:
        trial = dataclasses.replace(cmd, env=(*cmd.env, *extra))
        run = run_native(
            trial.native_argv(None, input=repro), timeout=timeout, stdout=out, stderr=err
        )
        exp.runs += 1
        return run.matches(expected)

    exp.whole_reproduced = reproduces(pool)
    if exp.whole_reproduced:
        said = _text(out) + _text(err)
        mentioned = [
            v for v in pool if v.name in said or (len(v.value) >= MENTION_MIN and v.value in said)
        ]
        exp.mentioned = [v.name for v in mentioned]
        if mentioned and len(mentioned) < len(pool) and reproduces(mentioned):
            pool = mentioned
        kept = ddmin(list(range(len(pool))), lambda idx: reproduces([pool[i] for i in idx]))
        exp.needed = [pool[i] for i in kept]
    exp.seconds = time.monotonic() - started
    return exp


def _text(path: Path) -> str:
    with contextlib.suppress(OSError):
        return path.read_text(errors="replace")
    return ""
