"""report.json: everything a repro run found, as data (versioned schema:
spmi_dbg/report/schema/report-N.json). This is repro's own serializer; report.md and the text
summary are rendered from this data alone (spmi_dbg.report.markdown, spmi_dbg.report.text), so
`spmi-dbg report BUNDLE` re-renders a bundle without the run. The title and the `issue` section
(dotnet/runtime's bug template) are words over this data (spmi_dbg.report.issue); the configuration
is the run's (the binaries' identities, the machine)."""

from __future__ import annotations

import dataclasses
from typing import Any

from spmi_dbg import __version__
from spmi_dbg.analysis import knownbugs
from spmi_dbg.analysis.facts import Diagnosis, KnownBugMatch, to_json
from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.mch.collection import Collection
from spmi_dbg.method.recorded import Answers
from spmi_dbg.method.seen import method_seen
from spmi_dbg.report import issue
from spmi_dbg.report.method_part import MethodPart
from spmi_dbg.report.model import Configuration
from spmi_dbg.report.parsed import ReportJson
from spmi_dbg.report.schema import REPORT_SCHEMA_VERSION
from spmi_dbg.repro import identity
from spmi_dbg.repro.models import Located
from spmi_dbg.repro.result import ReproResult
from spmi_dbg.superpmi_argv import option_value


def report_data(result: ReproResult, files: list[str], *, replay_output: str = "") -> ReportJson:
    """report.json's data, with its facts read: the title and the issue section are words over
    them."""
    target = result.target
    d = target.diagnosis if target else None
    v = target.verification if target else None
    causes = [*(d.causes if d is not None else []), *result.causes]
    known = _known_bugs(result, d, replay_output)
    data: dict[str, Any] = {
        "schema": REPORT_SCHEMA_VERSION,
        "tool": f"spmi-dbg {__version__}",
        "outcome": result.outcome,
        "exit_code": result.exit_code,
        "failed_phase": result.error_phase,
        "failure": result.error,
        "failure_traceback": result.error_traceback,
        "seconds": round(result.seconds, 3),
        "command": _command(result),
        "debugger": result.options.debugger_name,
        "phases": [dataclasses.asdict(p) | {"seconds": round(p.seconds, 3)} for p in result.phases],
        "locate": _locate(result, target.under_debugger if target else None),
        "diagnosis": d.to_json() if d is not None else None,
        "repro": result.isolated.to_json() if result.isolated else None,
        "repro_command": None
        if result.isolated is None
        else (result.repro_command or result.options.command).shell_line(result.isolated.mch.name),
        # the repro's command line as data (its collection named relative to the bundle): what
        # bisect and recheck replay
        "repro_argv": None
        if result.isolated is None
        else (result.repro_command or result.options.command).argv(
            None, result.isolated.mch.name, user=True
        ),
        "verification_single_record": target.single.to_json() if target and target.single else None,
        "minimization": result.minimization.to_json() if result.minimization else None,
        "environment_experiment": result.environment_experiment.to_json()
        if result.environment_experiment
        else None,
        "verification": v.to_json() if v else None,
        "target": result.target_section(),
        "jit_settings": result.option_minimization.to_json()
        if result.option_minimization
        else None,
        "regression": result.regression.to_json() if result.regression else None,
        "needs": result.needs.to_json() if result.needs else None,
        "method": _method(result, d),
        # every cause in the setup: the stop's (the diagnosis') and the pipeline's own
        "causes": [c.to_json() for c in causes],
        "known_bugs": [to_json(b) for b in known],
        "bundle": str(result.bundle_dir()),
        "files": files,
    }
    # the title and the issue section: words over the data and its facts, as they stand
    facts = ReportJson(data, d, known, causes)
    words = {
        "title": issue.title(facts),
        "issue": issue.issue(facts, Configuration.from_json(_configuration(result))).to_json(),
    }
    return ReportJson(data | words, d, known, causes)


def _method(result: ReproResult, d: Diagnosis | None) -> dict[str, Any] | None:
    """The failing method context's method, read from the bundle's repro.mch (its record of that
    number); None when there is none, or its compile request is not readable."""
    iso, target = result.isolated, result.target
    number = target.method_context if target is not None else None
    if iso is None or number is None or number not in iso.numbers:
        return None
    try:
        with Collection.open(iso.mch) as col:
            answers = Answers.of_packets(col.packets(iso.numbers.index(number) + 1))
    except (SpmiDbgError, OSError):
        return None
    seen = method_seen(number, answers)
    return MethodPart.of(seen, d.jit if d else None).to_json() if seen is not None else None


def _command(result: ReproResult) -> dict[str, Any]:
    cmd = result.options.command
    return {
        "program": cmd.program,
        "jits": list(cmd.jits),
        "input": cmd.input,
        "options": list(cmd.options),
        "selection": None if cmd.selection is None else cmd.selection.spec(),
        "method_contexts": cmd.count,
        "notes": list(cmd.notes),
        "from_log": cmd.log,
        "emulator": list(cmd.emulator),
        # the variables recorded from the user's environment: every native replay and repro.sh
        # set these and nothing else (`env -i`, plus PATH and HOME); the repro's own: repro_env
        "environment": [v.to_json() for v in cmd.env],
        "repro_environment": [v.to_json() for v in (result.repro_command or cmd).env],
    }


def _locate(result: ReproResult, located: Located | None) -> dict[str, Any] | None:
    """The crash's partitions under the debugger: which one won, the number and how it was found."""
    if located is None:
        return None
    winner = located.winner
    return {
        "workers": len(result.partitions),
        "timeout": result.options.timeout,
        "partitions": [r.summary() for r in located.runs],
        "winner": winner.partition.index if winner else None,
        "method_context": located.method_context,
        "method_context_source": located.method_context_source,
        "method_context_rejected": located.method_context_rejected,
        "expected": None
        if located.expectation is None
        else dataclasses.asdict(located.expectation),
        "bisection": located.bisection,
        "notes": located.notes,
        "first_found": located.first_found,
        "stops_passed_total": sum(len(r.outcome.passed) for r in located.runs if r.outcome),
        "stops_passed": [
            s.to_json() | {"partition": r.partition.index}
            for r in located.runs
            if r.outcome
            for s in r.outcome.passed
        ][:1000],
        "hang_threads": [t.to_json() for t in winner.outcome.threads]
        if winner and winner.outcome
        else [],
    }


def _known_bugs(result: ReproResult, d: Diagnosis | None, output: str) -> list[KnownBugMatch]:
    """The diagnosis' own matches, and those only the pipeline can see: a `-p` it dropped (the crash
    was in a worker), superpmi.py's log lines, the replay's output."""
    if d is None and (result.target is None or result.target.under_debugger is None):
        return []
    cmd = result.options.command
    parallel = cmd.parallel
    texts = [output, *list((cmd.log or {}).get("failures") or [])]
    facts = knownbugs.facts_of(d, argv=cmd.argv(), parallel=parallel, texts=texts)
    found = {b.id: b for b in d.known_bugs} if d is not None else {}
    for b in knownbugs.match(facts):
        found.setdefault(b.id, b)
    return list(found.values())


def _configuration(result: ReproResult) -> dict[str, Any]:
    """The bug template's configuration: the binaries' identities, the machine, the target."""
    cmd = result.options.command
    roles = ["base JIT (JIT1)", "diff JIT (JIT2)"] if len(cmd.jits) > 1 else ["JIT"]
    name = result.options.debugger_name
    return identity.machine() | {
        "target": option_value(cmd.options, "-target") or "the host's (no -target)",
        "superpmi": identity.binary(cmd.program, "superpmi", result.options.debug_dirs),
        "jits": [
            identity.binary(j, roles[i] if i < len(roles) else "JIT", result.options.debug_dirs)
            for i, j in enumerate(cmd.jits)
        ],
        "collection": identity.binary(cmd.input, "collection"),
        "debugger": {"name": name, "version": identity.debugger_version(name)},
        "emulator": None
        if not cmd.emulator
        else {
            "command": " ".join(cmd.emulator),
            "version": identity.debugger_version(cmd.emulator[0]),
        },
        "spmi_dbg": __version__,
    }
