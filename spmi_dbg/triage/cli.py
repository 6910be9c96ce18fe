"""`spmi-dbg triage [options] -- <superpmi argv>`: the repro inputs; exit 0 crashes found and every
bucket's repro verified, 1 some bucket's repro not verified, 2 no crash, 3 usage or input error, 4
the debugger failed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from spmi_dbg import exits
from spmi_dbg.errors import UsageError
from spmi_dbg.repro.arguments import (
    add_pipeline_parser,
    add_replay_arguments,
    pipeline_errors,
    resume_hint,
)
from spmi_dbg.superpmi_argv import parse_command
from spmi_dbg.triage.plan import collections_of
from spmi_dbg.usage import Parser, count_option

# The pipeline, its results and the terminal display (rich) are imported by the functions that run a
# triage: `spmi-dbg --help` and every other command build this parser, and importing them costs each
# ~50-90 ms (start-up).

EPILOG = """Replays the whole collection under the debugger, resuming after each crash; crashes and
the failures superpmi reports itself (JIT asserts, failed compiles, missing data) are bucketed; one
verified repro bundle per bucket of the --failure kinds (from its smallest member by IL size), and a
summary: OUT/triage.md, OUT/triage.json.

exit status: 0 crashes found and each bucket's repro verified, 1 a bucket's repro not verified,
2 no crash, 3 usage or input error, 4 the debugger failed.

examples:
  spmi-dbg triage --out triage -- superpmi -a -target arm64 \\
      base/libclrjit.so diff/libclrjit.so libraries.mch
  spmi-dbg triage --mch /shared/mch/ --scheduler tcp://head:8786 --out /shared/triage \\
      -- superpmi clrjit.so
  spmi-dbg triage --resume --mch /shared/mch/ --scheduler tcp://head:8786 --out /shared/triage \\
      -- superpmi clrjit.so
  spmi-dbg triage --from-log artifacts/spmi/superpmi.4.log --max-crashes 50"""


def add_parsers(sub: Any) -> None:
    p = add_pipeline_parser(
        sub,
        "triage",
        run,
        help="replay a whole collection past every crash: crash buckets, one verified repro each",
        usage="spmi-dbg triage [options] -- SUPERPMI_ARGV...",
        epilog=EPILOG,
    )
    add_replay_arguments(p, collections=True)
    add_scheduler_arguments(
        p,
        help="run the partitions as tasks on this dask.distributed scheduler (e.g. "
        "tcp://host:8786; pip install 'spmi-dbg[dask]'); the workers need gdb, spmi-dbg and the "
        "same paths (a shared file system). Default: this machine, --workers at a time",
    )
    count_option(
        p,
        "--partition-methods",
        help="partitions of N method contexts "
        "(default: sized by bytes from the collection's index)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the interrupted triage in --out (same command): only unfinished "
        "partitions run",
    )
    count_option(
        p, "--max-crashes", default=1000, help="stop after N crashes in all (default 1000)"
    )
    p.add_argument(
        "--diagnose-all",
        action="store_true",
        help="diagnose every crash under the debugger, even in a crash storm (default: once most "
        "of a partition's crashes are in one bucket, its rest is replayed without a debugger but "
        "for a sample, and those crashes are counted, not diagnosed)",
    )
    p.add_argument(
        "--failure",
        metavar="KINDS",
        dest="bundle_kinds",
        default="crash,assert",
        help="which buckets get a verified repro bundle, comma-separated: crash, assert, error "
        "(failed compiles), missing, any (all of them); default crash,assert. "
        "Every kind is bucketed",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        default=Path("spmi-triage"),
        help="output directory: triage.md, triage.json, bucket-<bucket>/ (default spmi-triage)",
    )


def add_scheduler_arguments(p: Parser, *, help: str) -> None:
    """--scheduler ADDRESS (`help`: what runs there), and how it is reached: TLS credentials, or a
    plain tcp:// accepted off this machine."""
    p.add_argument("--scheduler", metavar="ADDRESS", help=help)
    p.add_argument(
        "--tls-ca-file",
        metavar="PEM",
        help="with --scheduler tls://...: the CA that signed the scheduler's and workers' "
        "certificates (default: dask's configuration, distributed.comm.tls)",
    )
    p.add_argument("--tls-cert", metavar="PEM", help="with tls://: this client's certificate")
    p.add_argument("--tls-key", metavar="PEM", help="with tls://: this client's private key")
    p.add_argument(
        "--insecure-scheduler",
        action="store_true",
        help="accept a plain tcp:// scheduler on another machine (anyone who reaches its port "
        "can run code as the workers' user)",
    )


def scheduler_access(args: argparse.Namespace) -> Any:
    from spmi_dbg.triage.cluster import SchedulerAccess  # imports nothing of dask itself

    return SchedulerAccess(args.tls_ca_file, args.tls_cert, args.tls_key, args.insecure_scheduler)


def bundle_kinds(spec: str) -> frozenset[str]:
    from spmi_dbg.triage.pipeline import BUNDLE_KINDS  # start-up (above)

    kinds = [k.strip() for k in spec.split(",")]
    bad = [k for k in kinds if k not in (*BUNDLE_KINDS, "any")]
    if bad or not kinds:
        raise UsageError(
            f"--failure {spec!r}: unknown kind {bad[0] if bad else ''!r}; expected a "
            f"comma-separated list of {', '.join(BUNDLE_KINDS)}, any"
        )
    return frozenset(BUNDLE_KINDS) if "any" in kinds else frozenset(kinds)


def run(args: argparse.Namespace) -> int:
    from spmi_dbg.triage.result import PARTITIONS_DIR, PLAN_FILE  # start-up (above)

    plan = args.out / PARTITIONS_DIR / PLAN_FILE
    return pipeline_errors("triage", lambda: _run(args), resumable=plan.is_file)


def _run(args: argparse.Namespace) -> int:
    from spmi_dbg.repro.options import options  # start-up (above), as the three below
    from spmi_dbg.triage.display import print_summary, progress_for
    from spmi_dbg.triage.pipeline import TriageOptions, run_triage, with_collections

    kinds = bundle_kinds(args.bundle_kinds)
    _check_command_given(args)
    collections = _collections(args)
    repro = options(args, bundle_out=False)
    commands = with_collections(repro, collections)
    opts = TriageOptions(
        repro,
        args.out,
        args.max_crashes,
        kinds,
        commands=commands,
        scheduler=args.scheduler,
        scheduler_access=scheduler_access(args),
        partition_methods=args.partition_methods,
        resume=args.resume,
        diagnose_all=args.diagnose_all,
    )
    progress = progress_for(sys.stderr)
    try:
        result = run_triage(opts, progress)
    finally:
        progress.close()
    print_summary(result)
    stopped = result.run.engine.system_stops
    failed = {i: result.run.engine.task_failures[i] for i in stopped}
    if failed:
        first = min(failed)
        print(
            f"spmi-dbg triage: error: {len(failed)} partition(s) could not finish (partition "
            f"{first}: {failed[first]}): their method contexts after that point were "
            f"not replayed; what was done is kept; {resume_hint('triage')}",
            file=sys.stderr,
        )
    unwritten = [
        x.bundle_error
        for x in [*result.bundles.values(), *result.failure_bundles.values()]
        if x.exit_code == exits.INCOMPLETE and x.bundle_error
    ]
    if unwritten and not failed:
        print(
            f"spmi-dbg triage: error: {len(unwritten)} bundle(s) not written ({unwritten[0]}); "
            f"every method context is accounted; {resume_hint('triage')}",
            file=sys.stderr,
        )
    return int(result.exit_code)


def _check_command_given(args: argparse.Namespace) -> None:
    """Nothing to replay: said in triage's words (repro's own check would name repro)."""
    rest = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not rest and not args.mch and args.from_log is None and not (args.jit or args.base_jit):
        raise UsageError(
            "expected the superpmi command after --, e.g. spmi-dbg triage -- superpmi -a base.so "
            "diff.so x.mch (or --mch PATH with --jit, or --from-log LOG)"
        )


def _collections(args: argparse.Namespace) -> list[str]:
    """--mch PATH...: the collections; the first stands in the command (after --, or beside
    --jit)."""
    if not args.mch:
        args.mch = None
        return []
    found = collections_of(args.mch)
    rest = list(args.command[1:]) if args.command[:1] == ["--"] else list(args.command)
    if args.jit or args.base_jit or args.superpmi:
        args.mch = found[0]
    elif rest:
        if parse_command(rest).input is not None:
            raise UsageError(
                "give the collections either with --mch or in the command after --, not both"
            )
        args.command = [*rest, found[0]]
        args.mch = None
    else:
        raise UsageError(
            "--mch needs the superpmi command after -- (without a collection), or --jit"
        )
    return found
