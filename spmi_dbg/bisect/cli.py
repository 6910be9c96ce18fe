"""`spmi-dbg bisect`: the first JIT build that fails as a repro does. Exit 0 a first bad build
found, 1 not found (a range of skipped builds, or an endpoint that is not what it was said to be),
3 usage or input error, 4 the debugger failed."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from spmi_dbg import exits
from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.bisect.store import Flavor, flavor_of
from spmi_dbg.bisect.verdict import Expected, Target
from spmi_dbg.errors import UsageError
from spmi_dbg.repro.arguments import add_env_arguments, add_pipeline_parser, pipeline_errors
from spmi_dbg.repro.command import ReproCommand, from_argv
from spmi_dbg.repro.environment import EnvVar, capture
from spmi_dbg.repro.needs import switches_of
from spmi_dbg.triage.cli import add_scheduler_arguments, scheduler_access
from spmi_dbg.usage import Parser, count_option, number_option

EPILOG = """The builds come from a store (--store: superpmi.py's basejit/<hash>.<os>.<arch>.<Build>/
or the rolling-build layout <hash>/<OS>/<arch>/<Build>/) in the order of a checkout's history
(--repo, --good, --bad: first-parent commits touching the JIT) or of --order FILE; or from --jits
FILE (one JIT path a line, oldest first). Each build replays the repro natively (--runs times) and
is bad (the repro's failure), good (clean) or skipped (another JIT-EE version, a JIT that does not
load, missing data only, another failure, flaky). Writes OUT/bisect.json, bisect.md, bisect-run.sh
(for `git bisect run`) and target.json.

exit status: 0 a first bad build found, 1 not found (a range, or wrong endpoints), 3 usage or input
error, 4 the debugger failed.

examples:
  spmi-dbg bisect spmi-repro --store artifacts/spmi/basejit --repo ~/runtime \\
      --good 1a2b3c4 --bad 5d6e7f8
  spmi-dbg bisect --jits builds.txt -- superpmi -c 543 -jitoption JitStressRegs=400 \\
      libclrjit.so api.mch"""


def add_parsers(sub: Any) -> None:
    p = add_pipeline_parser(
        sub,
        "bisect",
        run,
        help="find the first JIT build that fails as a repro does",
        usage="spmi-dbg bisect [BUNDLE] [options] [-- SUPERPMI_ARGV -c N]",
        epilog=EPILOG,
    )
    p.add_argument(
        "bundle",
        nargs="?",
        type=Path,
        metavar="BUNDLE",
        help="a repro bundle, or a triage directory (each bucket's bundle bisected)",
    )
    _build_arguments(p)
    _probe_arguments(p)
    p.add_argument(
        "--out", type=Path, default=Path("spmi-bisect"), metavar="DIR", help="(spmi-bisect)"
    )
    p.add_argument("command", nargs="*", help="after --: superpmi argv with -c N")


def _build_arguments(p: Parser) -> None:
    """The builds: where they are, in which order, between which endpoints, of which flavor."""
    p.add_argument("--store", type=Path, metavar="DIR", help="a store of JIT builds")
    p.add_argument("--jits", type=Path, metavar="FILE", help="JIT paths, one a line, oldest first")
    p.add_argument("--repo", type=Path, metavar="PATH", help="a dotnet/runtime or coreclr checkout")
    p.add_argument("--order", type=Path, metavar="FILE", help="commit hashes, oldest first")
    p.add_argument("--good", metavar="REV", help="a build known good")
    p.add_argument("--bad", metavar="REV", help="a build known bad")
    p.add_argument("--os", dest="os_name", metavar="OS", help="the store's os (default linux)")
    p.add_argument("--arch", metavar="ARCH", help="the store's arch (default: the JIT's)")
    p.add_argument(
        "--build",
        metavar="FLAVOR",
        help="Checked or Release "
        "(default: the JIT's, Checked when it has a Checked JIT's switches)",
    )
    p.add_argument(
        "--jit-name",
        metavar="NAME",
        help="the JIT's file name in the store's builds (default: the repro's JIT's name, else "
        "a build's only .so)",
    )
    p.add_argument(
        "--which",
        choices=("base", "diff"),
        help="with -a: the JIT the builds replace (default: the one the repro's regression "
        "experiment blames, else base)",
    )


def _probe_arguments(p: Parser) -> None:
    """How each build is probed: replays, at once or on a cluster, and what counts as bad."""
    count_option(
        p,
        "--runs",
        default=2,
        help="native replays per build; a build not the same on every run is flaky (default 2)",
    )
    count_option(
        p,
        "--workers",
        default=1,
        metavar="W",
        help="builds probed at once (k-ary search; default 1: binary)",
    )
    add_scheduler_arguments(
        p,
        help="probe the builds as tasks of this dask.distributed scheduler's cluster (the one "
        "triage uses; --workers builds at once); the workers need the same paths",
    )
    p.add_argument(
        "--other",
        choices=("skip", "bad", "good"),
        default="skip",
        help="what another failure counts as (default skip)",
    )
    number_option(p, "--timeout", default=60.0, help="seconds per replay (default 60)")
    add_env_arguments(p)
    p.add_argument(
        "--debugger",
        choices=("gdb", "lldb", "none"),
        default="gdb",
        help="confirms a crash's bucket (default gdb; none: by its signal only)",
    )


# BisectOptions' fields that are the options of the same names as parsed
AS_GIVEN = (
    "store",
    "jits",
    "repo",
    "order",
    "good",
    "bad",
    "runs",
    "workers",
    "other",
    "timeout",
    "bundle",
    "scheduler",
    "jit_name",
)


def run(args: argparse.Namespace) -> int:
    return pipeline_errors("bisect", lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    # what runs a bisect, not what parses its command line (every command builds this parser)
    from spmi_dbg.bisect.target import is_triage

    if args.bundle is not None and not args.command and is_triage(args.bundle):
        return _run_triage(args)
    return _run_one(args)


def _run_triage(args: argparse.Namespace) -> int:
    """A triage directory: each bucket's bundle bisected (OUT/bucket-<bucket>/), and one table of
    the answers (OUT/bisect.md); 0 when every bucket's first bad build was found."""
    from spmi_dbg.bisect.output import triage_table
    from spmi_dbg.bisect.target import triage_bundles

    answers = []
    out = args.out
    for bucket, bundle in triage_bundles(args.bundle):
        args.bundle, args.out = bundle, out / f"bucket-{bucket}"
        print(f"bisect: bucket {bucket} ({bundle})", file=sys.stderr)
        code = _run_one(args)
        answers.append((bucket, args.out, code))
    out.mkdir(parents=True, exist_ok=True)
    table = triage_table(answers)
    atomic_write_text(out / "bisect.md", table)
    print(f"bisect: {out / 'bisect.md'}", file=sys.stderr)
    return exits.FOUND if all(c == exits.FOUND for _, _, c in answers) else exits.NOT_FOUND


def _run_one(args: argparse.Namespace) -> int:
    from spmi_dbg.bisect.output import summary
    from spmi_dbg.bisect.run import BisectOptions, run_bisect
    from spmi_dbg.driver.select import pick

    target, discovery = _target(args)
    flavor = _flavor(args, target)
    debugger = None if args.debugger == "none" else pick(args.debugger, cwd=os.getcwd())
    opts = BisectOptions(
        target,
        args.out,
        flavor=flavor,
        debugger=debugger,
        scheduler_access=scheduler_access(args),
        needs_discovery=discovery,
        **{name: getattr(args, name) for name in AS_GIVEN},
    )
    result = run_bisect(opts)
    for line in summary(result):
        print(line)
    print(f"bisect: {args.out / 'bisect.md'}", file=sys.stderr)
    return result.exit_code


def _target(args: argparse.Namespace) -> tuple[Target, bool]:
    """What each build replays: a bundle's repro, or the command after -- with its -c N (then
    the failure is found on the bad build: True)."""
    from spmi_dbg.bisect.target import from_bundle  # start-up, as in _run

    rest = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.bundle is not None and not _is_dir(args.bundle) and rest:
        # `-- superpmi ...`: argparse gave the program to BUNDLE
        rest, args.bundle = [str(args.bundle), *rest], None
    varies = None if args.which is None else ["base", "diff"].index(args.which)
    if args.bundle is not None and rest:
        raise UsageError("give either a BUNDLE or a command after --, not both")
    if args.bundle is not None:
        return from_bundle(args.bundle, varies), False
    if not rest:
        raise UsageError("expected a repro BUNDLE, or a superpmi command with -c N after --")
    command = from_argv(rest)
    selection = command.selection
    if selection is None or selection.count() != 1:
        raise UsageError("the command after -- needs -c N: the one method context to replay")
    command = _with_env(
        command, capture(os.environ, args.env or (), bool(getattr(args, "env_all", False)))
    )
    return Target(command, Expected(), varies or 0, compile_list=selection.spec()), True


def _flavor(args: argparse.Namespace, target: Target) -> Flavor | None:
    """--os/--arch/--build, the rest from the JIT the builds replace; None when none is given."""
    if not (args.os_name or args.arch or args.build):
        return None
    jit = target.command.jits[target.varies]
    # the JIT's switches (a scan of its file) only when --build does not say
    base = flavor_of(jit, checked=bool(args.build) or bool(switches_of(jit)))
    return Flavor(args.os_name or base.os, args.arch or base.arch, args.build or base.build)


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # too long: not a directory (the bundle's own check says why, in one line)
        return False


def _with_env(command: ReproCommand, env: tuple[EnvVar, ...]) -> ReproCommand:
    return replace(command, env=env)
