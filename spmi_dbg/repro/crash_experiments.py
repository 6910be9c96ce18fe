"""The experiments on a verified crash repro, each a native replay or a few of it: the JIT
settings the crash needs, whether it needs data the collection never recorded, which JIT crashes
alone (report: "Regression?"), the JIT switches that make it go away (`needs`). A failure of one is
said in the report (phase.experiment); the repro stands."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.analysis.facts import Cause
from spmi_dbg.repro.command import ReproCommand
from spmi_dbg.repro.expect import Expectation
from spmi_dbg.repro.jitoptions import (
    JitSetting,
    OptionMinimization,
    minimize_settings,
    settings_of,
    with_settings,
)
from spmi_dbg.repro.models import Located
from spmi_dbg.repro.native import NativeRun, run_native
from spmi_dbg.repro.needs import Needs, with_option
from spmi_dbg.repro.needs import Outcome as NeedsOutcome
from spmi_dbg.repro.needs_phase import needs_phase
from spmi_dbg.repro.phase import experiment
from spmi_dbg.repro.regression import Regression, regression
from spmi_dbg.repro.result import ReproOptions, ReproProgress, ReproResult
from spmi_dbg.repro.setup_causes import needs_unrecorded_data


@dataclass
class CrashExperiments:
    opts: ReproOptions
    result: ReproResult  # verified: its isolated repro is the one the experiments replay
    located: Located
    work: Path
    progress: ReproProgress | None

    @property
    def expected(self) -> Expectation:
        assert self.located.expectation is not None
        return self.located.expectation

    @property
    def mch(self) -> Path:
        assert self.result.isolated is not None
        return self.result.isolated.mch

    def run(self) -> None:
        """Each in turn, its value taken into the result."""
        result, opts = self.result, self.opts
        settings = self.settings()
        if settings is not None:
            result.option_minimization, result.repro_command = settings
            cause = self.unrecorded_data()
            if cause is not None:
                result.causes.append(cause)
        result.regression = self.regression()
        d = self.located.diagnosis
        module = d.faulting_module if d is not None else None
        in_jit = module is not None and module.role.is_jit
        if opts.needs == "on" or (opts.needs == "auto" and in_jit and self.expected.kind != "hang"):
            result.needs = self.needs()

    def native(self, cmd: ReproCommand, name: str) -> NativeRun:
        """One native replay of `cmd` on the repro, its output in the work directory as
        `name`.stdout and `name`.stderr."""
        return run_native(
            cmd.native_argv(None, self.mch),
            timeout=self.opts.verify_timeout,
            stdout=self.work / f"{name}.stdout",
            stderr=self.work / f"{name}.stderr",
        )

    def settings(self) -> tuple[OptionMinimization, ReproCommand] | None:
        """A repro whose command has JIT settings: which of them the crash needs (ddmin, each test
        a native replay of the repro), then the repro with only those, natively, --verify-runs
        times (at least once); it replaces the full command in repro.sh only when at least half of
        those runs crash the same way. Not for a hang: each test would take the whole timeout.
        None: no settings, a hang, or the experiment failed."""
        cmd, opts = self.opts.command, self.opts
        split, given = settings_of(cmd)
        if not given or self.expected.kind == "hang":
            return None

        def crashes(settings: list[JitSetting], name: str = "minimize-options") -> bool:
            return self.native(with_settings(cmd, split, settings), name).matches(self.expected)

        with experiment(self.result, "minimize-options", self.progress) as ph:
            # verify has just seen it crash
            m = minimize_settings(given, crashes, known_to_fail=True)
            if m.needed != list(given):
                runs = max(1, opts.verify_runs)
                ok = sum(crashes(m.needed, "verify-options") for _ in range(runs))
                if 2 * ok < runs:
                    m.notes.append(
                        f"only {ok}/{runs} replays with the needed settings alone crashed: "
                        "repro.sh keeps all of them"
                    )
                    m.needed = list(given)
            ph.detail = f"{m.summary()} ({m.tests} replays)"
            return m, with_settings(cmd, split, m.needed)
        return None  # the repro is verified: only the experiment is missing

    def unrecorded_data(self) -> Cause | None:
        """`option-needs-unrecorded-data`: the crash needs a setting, the null map is one the
        collection never recorded, and the record replays clean without the settings (one more
        native run)."""
        m = self.result.option_minimization
        d = self.located.diagnosis
        if m is None or not m.needed or d is None or d.null_map is None:
            return None
        split, _ = settings_of(self.opts.command)
        without = self.native(with_settings(self.opts.command, split, []), "without-settings")
        return needs_unrecorded_data(d, m, without)

    def needs(self) -> Needs | None:
        """The JIT's switches tried on the repro (repro/needs.py); one JIT commands only."""
        cmd = self.result.repro_command or self.opts.command

        def trial(key: str, value: str) -> tuple[NeedsOutcome, str]:
            run = self.native(with_option(cmd, key, value), f"needs-{key}")
            if run.matches(self.expected):
                return "still fails with", run.describe()
            if run.returncode == 0:
                return "gone with", run.describe()
            if run.returncode == 3:
                return "cannot tell (missing data)", run.describe()
            return "fails otherwise", run.describe()

        return needs_phase(self.opts, self.result, cmd, trial, self.progress)

    def regression(self) -> Regression | None:
        """Which JIT crashes alone (report: "Regression?")."""
        opts = self.opts
        if len(opts.command.jits) < 2:
            return None
        with experiment(self.result, "regression", self.progress) as ph:
            r = regression(
                opts.command,
                self.mch,
                self.expected,
                runs=2 if opts.verify_runs >= 2 else 1,
                timeout=opts.verify_timeout,
                workdir=self.work,
                shown=self.result.bundle_dir().absolute() / self.mch.name,
            )
            ph.detail = r.conclusion if r else ""
            return r
        return None  # the repro is verified: only the experiment is missing
