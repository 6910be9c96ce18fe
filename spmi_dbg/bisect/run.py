"""Bisect, the whole (issue 28): the target (a bundle, or a command and `-c N`: its failure then
found on the bad build), the builds in order (a store read through a checkout's history or
--order, or a plain --jits list), the search, and what it writes."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from spmi_dbg.bisect import order as orders
from spmi_dbg.bisect.discover import discover
from spmi_dbg.bisect.output import BisectResult, annotate_bundle, write
from spmi_dbg.bisect.search import Outcome, Probe, search
from spmi_dbg.bisect.store import Build, Flavor, Store, flavor_of, read_jit_list
from spmi_dbg.bisect.target import TARGET_FILE, write_target
from spmi_dbg.bisect.verdict import Target, Verdict, probe
from spmi_dbg.driver.base import Driver
from spmi_dbg.errors import InputError, UsageError
from spmi_dbg.repro.needs import switches_of
from spmi_dbg.triage.cluster import DaskEngine, SchedulerAccess

Other = Literal["skip", "bad", "good"]


@dataclass
class BisectOptions:
    target: Target
    out: Path
    store: Path | None = None
    jits: Path | None = None  # --jits FILE
    repo: Path | None = None
    order: Path | None = None
    good: str | None = None
    bad: str | None = None
    flavor: Flavor | None = None  # os/arch/build (default: the command's JIT's)
    runs: int = 2
    workers: int = 1
    other: Other = "skip"
    timeout: float = 60.0
    debugger: Driver | None = None
    bundle: Path | None = None
    scheduler: str | None = None  # probes as tasks of this dask scheduler's cluster
    scheduler_access: SchedulerAccess | None = None
    needs_discovery: bool = False  # a command and -c N: the failure is the bad build's
    jit_name: str | None = None  # --jit-name: the JIT's file name in the store's builds


def jit_file(target: Target, named: str | None = None) -> str:
    """The JIT's file name in a build: --jit-name, else the name the repro's JIT has."""
    return named or Path(target.command.jits[target.varies]).name


def builds_of(opts: BisectOptions) -> tuple[list[Build], dict[str, orders.Commit], Flavor | None]:
    if opts.jits is not None:
        try:
            builds = read_jit_list(opts.jits)
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(str(opts.jits), f"(--jits) cannot be read ({e})") from None
        return builds, {}, None
    if opts.store is None:
        raise UsageError("expected --store DIR (with --repo or --order) or --jits FILE")
    if not opts.store.is_dir():
        raise InputError(str(opts.store), "(--store) not a directory")
    jit = opts.target.command.jits[opts.target.varies]
    flavor = opts.flavor or flavor_of(jit, checked=bool(switches_of(jit)))
    store = Store(
        opts.store, jit_file(opts.target, opts.jit_name), flavor, named=bool(opts.jit_name)
    )
    if opts.repo is not None:
        if not (opts.good and opts.bad):
            raise UsageError("--repo needs --good and --bad")
        commits = orders.from_repo(opts.repo, opts.good, opts.bad)
    elif opts.order is not None:
        commits = orders.from_file(opts.order, opts.good, opts.bad)
    else:
        raise UsageError("--store needs the order of its builds: --repo PATH or --order FILE")
    builds = [replace(store.find(c.hash), name=c.hash) for c in commits]
    return builds, {c.hash: c for c in commits}, flavor


def run_bisect(opts: BisectOptions) -> BisectResult:
    start = time.monotonic()
    builds, commits, flavor = builds_of(opts)
    if len(builds) < 2:
        raise UsageError(f"{len(builds)} build(s) to search: at least a good and a bad one")
    opts.out.mkdir(parents=True, exist_ok=True)
    work = (opts.out / "replays").absolute()  # as the cluster's workers see it (a shared path)
    stopped = _no_builds(opts, builds, flavor)
    target, discovered, discovery_seconds = opts.target, 0, 0.0
    if stopped is None:
        target, stopped, discovered, discovery_seconds = _discovered(opts, builds[-1], work)
    outcome = _search(opts, target, builds, work) if stopped is None else Outcome(builds)
    outcome.stopped = outcome.stopped or stopped
    outcome.discovery_replays, outcome.discovery_seconds = discovered, discovery_seconds
    source = opts.store if opts.store is not None else opts.jits
    result = BisectResult(
        target, outcome, commits, [], flavor, bundle=opts.bundle, source=str(source)
    )
    if outcome.first_bad is not None and outcome.last_good is not None:
        result.range_commits = _range_commits(opts, builds, commits, outcome)
    result.seconds = time.monotonic() - start
    target_file = opts.out / TARGET_FILE
    write_target(target_file, target)
    write(opts.out, result, target_file.absolute(), jit_file(target, opts.jit_name))
    if opts.bundle is not None and outcome.stopped is None:
        annotate_bundle(opts.bundle, result)
    return result


def _no_builds(opts: BisectOptions, builds: list[Build], flavor: Flavor | None) -> str | None:
    """Why nothing can be searched: a store none of whose builds has the JIT's file."""
    if opts.store is None or any(b.jit is not None for b in builds):
        return None
    name = jit_file(opts.target, opts.jit_name)
    where = f"{flavor.os}.{flavor.arch}.{flavor.build}" if flavor else "the JIT's flavor"
    return (
        f"none of the {len(builds)} builds has a JIT named {name} for {where} in {opts.store}"
        + ("" if opts.jit_name else ": --jit-name NAME names the JIT's file in the store's builds")
    )


def _discovered(
    opts: BisectOptions, bad: Build, work: Path
) -> tuple[Target, str | None, int, float]:
    """The target, with the failure the bad build shows when the command named none; or why the
    search cannot start; and the replays that took, and their seconds."""
    if not opts.needs_discovery:
        return opts.target, None, 0, 0.0
    if bad.jit is None:
        return opts.target, f"the bad build {bad.name} has no build in the store", 0, 0.0
    found, seconds = discover(
        opts.target,
        bad.jit,
        timeout=opts.timeout,
        workdir=work / "discover",
        debugger=opts.debugger,
    )
    if isinstance(found, str):
        return opts.target, f"the bad build {bad.name} {found}", 1, seconds
    return replace(opts.target, expected=found), None, 1, seconds


def _search(opts: BisectOptions, target: Target, builds: list[Build], work: Path) -> Outcome:
    """The builds probed in order (k-ary with --workers, on the cluster with --scheduler)."""

    def one(build: Build) -> Verdict:
        assert build.jit is not None
        v = probe(
            target,
            jit=build.jit,
            runs=opts.runs,
            timeout=opts.timeout,
            workdir=work / _safe(build.name),
            debugger=opts.debugger,
        )
        if v.reason == "other-failure" and opts.other != "skip":
            v.evidence += f" (--other {opts.other})"
            v.kind, v.reason = opts.other, None
        return v

    p: Probe = one
    engine = DaskEngine(opts.scheduler, access=opts.scheduler_access) if opts.scheduler else None
    try:
        return search(
            builds, p, workers=opts.workers, mapper=engine.run_all if engine is not None else None
        )
    finally:
        if engine is not None:
            engine.close()


def _range_commits(
    opts: BisectOptions, builds: list[Build], commits: dict[str, orders.Commit], outcome: Outcome
) -> list[orders.Commit]:
    """The commits from the last good build (excluded) to the first bad one."""
    assert outcome.first_bad is not None and outcome.last_good is not None
    if opts.repo is not None:
        return orders.between(
            opts.repo, builds[outcome.last_good].name, builds[outcome.first_bad].name
        )
    return [
        commits[b.name]
        for b in builds[outcome.last_good + 1 : outcome.first_bad + 1]
        if b.name in commits
    ]


def _safe(name: str) -> str:
    """A build's name as one directory name (a --jits path has slashes)."""
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in name)[-120:] or "build"
