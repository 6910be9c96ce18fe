"""triage.md and the triage summary, rendered from triage.json's data alone (written by
spmi_dbg.triage.triage_data; schema spmi_dbg/report/schema/triage-N.json): the bucket table, each
bucket's members, smallest member and repro bundle, the first-chance stops passed on, what superpmi
reported itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spmi_dbg import shell
from spmi_dbg.errors import printable
from spmi_dbg.report import phrases
from spmi_dbg.report.found import found_phrase
from spmi_dbg.report.parsed import BucketJson, TriageJson
from spmi_dbg.report.triage_model import (
    BucketRepro,
    Coverage,
    FailureBucket,
    Grouped,
    KeyGroup,
    Member,
    ReportedBySuperpmi,
    TriageDoc,
)


def triage_markdown(triage: TriageJson) -> str:
    doc = triage.doc
    lines = _summary(triage)
    lines += coverage_markdown(doc.coverage)
    if triage.buckets:
        lines += [*_bucket_table(triage.buckets), ""]
        for b in triage.buckets:
            lines += [*_bucket_section(b), ""]
    else:
        lines += ["No crash: every partition ran to its end.", ""]
    for g in doc.not_diagnosed:
        lines += [
            f"## Crashes not diagnosed: the storm of `{g.storm_bucket}`",
            "",
            f"Once most of a partition's crashes were in bucket `{g.storm_bucket}`, the rest of "
            "it was replayed without a debugger, but for a sample spread over it. "
            f"{g.count} method context(s) crashed ({g.signal}), each in a replay of it "
            "alone, and were not diagnosed (nothing is said of their bucket): "
            f"{members(g)}. `--diagnose-all` diagnoses each.",
            "",
        ]
    lines += _failure_buckets(doc)
    lines += _passed_on(doc.first_chance)
    lines += _reported_by_superpmi(doc.reported_by_superpmi)
    for t in doc.tool_failures:
        lines.append(
            f"- tool failure in partition {t.partition} (-c {t.compile}): {'; '.join(t.failures)}"
        )
    for e in doc.replay_input_errors:
        lines.append(f"- the replay exited with status {e.exit_status} ({e.name}): check its input")
    lines += [f"- {n}" for n in doc.notes + doc.command.notes]
    return "\n".join(lines).rstrip() + "\n"


def _summary(triage: TriageJson) -> list[str]:
    """The title, the command and what ran where, for how long."""
    doc = triage.doc
    cmd, cols, engine = doc.command, doc.collections, doc.engine
    where = (
        f"on the dask cluster {engine.scheduler} ({engine.workers} worker thread(s))"
        if engine.name == "dask"
        else f"on this machine ({engine.workers} worker(s))"
    )
    resumed = (
        f" Resumed: {len(engine.resumed_partitions)} partition(s) finished earlier were not "
        "replayed again."
        if engine.resumed_partitions
        else ""
    )
    stopped = (
        f" Stopped after --max-crashes {doc.max_crashes}." if doc.stopped_at_max_crashes else ""
    )
    inputs = Path(cmd.input).name if len(cols) == 1 else f"{len(cols)} collections"
    return [
        f"# spmi-dbg triage: {found_phrase(triage.data)} in {inputs}",
        "",
        f"`{shell.join(cmd.argv)}`"
        + (" (and the same on each collection)" if len(cols) > 1 else ""),
        "",
        f"{cmd.method_contexts} method contexts replayed in {engine.partitions} partition(s) "
        f"{where} under {doc.debugger}, resumed after each crash; {doc.seconds:.1f} s in "
        f"all ({doc.replay_seconds:.1f} s of replay).{stopped}{resumed}",
        "",
    ]


def _bucket_table(buckets: list[BucketJson]) -> list[str]:
    """One row a bucket, with the phrasebook's fact columns (phrases.TRIAGE_COLUMNS)."""
    columns = phrases.TRIAGE_COLUMNS
    lines = [
        "| bucket | what | "
        + "".join(f"{h} | " for h, _ in columns)
        + "count | method contexts | smallest (IL size) | repro | known bug |",
        "|---|---|" + "---|" * len(columns) + "---|---|---|---|---|",
    ]
    for b in buckets:
        part = b.part
        known = (
            ", ".join(f"[{k.id}]({k.url})" for k in b.known_bugs if phrases.is_about_the_crash(k))
            or "-"
        )
        cells = "".join(f"{_cell(cell(b.diagnosis))} | " for _, cell in columns)
        lines.append(
            f"| `{part.bucket}` | {_cell(part.title)} | {cells}{part.count} | "
            f"{members(part, 12)} | {_smallest_cell(part.smallest)} | {_repro_cell(part.repro)} "
            f"| {known} |"
        )
    return lines


def _bucket_section(b: BucketJson) -> list[str]:
    """The bucket's members, smallest member, facts, repro and known bugs."""
    part = b.part
    s = part.smallest
    lines = [
        f"## `{part.bucket}`: {part.title}",
        "",
        f"- method contexts ({part.count}): {members(part)}",
    ]
    if s is not None:
        lines.append(
            f"- smallest by IL size: {s.method_context} (`{s.name or '?'}`, IL size {s.il_size})"
        )
        lines += _il_head(s)
    facts = phrases.fact_lines(b.diagnosis, phrases.MARKDOWN)
    if facts:
        lines += ["- at the smallest member's stop:", *phrases.joined(facts, "  - ")]
    if part.repro:
        lines.append(f"- repro: `{part.repro.bundle}`: {part.repro.summary or part.repro.outcome}")
    for k in b.known_bugs:
        if phrases.is_about_the_crash(k):
            lines.append(f"- known bug [{k.id}]({k.url}): {k.title}; fix: {k.fix}")
        else:  # a bug in how the crash was reported, not the crash's
            lines.append(f"- also: {k.said or k.title} ([{k.id}]({k.url}))")
    return lines


def _il_head(s: Member) -> list[str]:
    """The smallest member's first IL lines, indented under its list item."""
    if not s.il_head:
        return []
    more = f" (all of it: `spmi-dbg mch il {s.collection} {s.method_context}`)"
    return [f"  its IL begins{more}:", "  ```", *(f"  {ln}" for ln in s.il_head), "  ```"]


def _failure_buckets(doc: TriageDoc) -> list[str]:
    """superpmi's own failures (asserts, failed compiles, missing data) by bucket."""
    if not doc.failure_buckets:
        return []
    lines = [
        "## JIT asserts and failed compiles (reported by superpmi)",
        "",
        f"Repro bundles for: {', '.join(doc.bundle_kinds)}.",
        "",
        "| bucket | what | count | method contexts | smallest (IL size) "
        "| JIT settings needed | repro |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| `{b.bucket}` | {_cell(b.title)} | {b.count} | {members(b)} | "
        f"{_smallest_cell(b.smallest)} | {_cell(b.jit_settings or '-')} | {_repro_cell(b.repro)} |"
        for b in doc.failure_buckets
    ]
    return [*lines, ""]


def _passed_on(fc: list[KeyGroup]) -> list[str]:
    """The first-chance stops the replay survived."""
    if not fc:
        return []
    lines = [
        "## Stops passed on (the replay survived them)",
        "",
        "| stop | count | method contexts |",
        "|---|---|---|",
    ]
    lines += [f"| {_cell(g.key)} | {g.count} | {_list(g.method_contexts)} |" for g in fc]
    return [*lines, ""]


LABELS = {"asserts": "JIT assert", "missing": "missing data", "failed_compiles": "failed compile"}


def _reported_by_superpmi(rep: ReportedBySuperpmi) -> list[str]:
    """What superpmi reported itself, by kind."""
    if not any(groups for _, groups in rep.kinds()):
        return []
    lines = [
        "## Reported by superpmi itself",
        "",
        "| kind | what | count | method contexts |",
        "|---|---|---|---|",
    ]
    for kind, groups in rep.kinds():
        lines += [
            f"| {LABELS[kind]} | {_cell(g.key)} | {g.count} | {_list(g.method_contexts)} |"
            for g in groups
        ]
    return [*lines, ""]


def _smallest_cell(s: Member | None) -> str:
    """`N (IL size)`: a bucket's smallest member."""
    if s is None:
        return "-"
    return f"{s.method_context} ({s.il_size if s.il_size is not None else '?'})"


def _repro_cell(rep: BucketRepro | None) -> str:
    """The repro's verdict and a link to its report.md."""
    outcome = rep.outcome if rep is not None else "-"
    verdict = {"verified": "verified", "not-verified": "NOT verified"}.get(outcome, outcome)
    name = Path(rep.bundle).name if rep is not None and rep.bundle else None
    bundle = "" if name is None else f"[{name}]({name}/report.md)"
    return f"{verdict} {bundle}"


def coverage_markdown(coverage: list[Coverage]) -> list[str]:
    """Per collection: every method context once, in one of four columns."""
    lines = [
        "| collection | method contexts | replayed clean | crashed "
        "| failed compile | not reached |",
        "|---|---|---|---|---|---|",
    ]
    for c in coverage:
        why = "; ".join(f"{r.count}: {r.reason}" for r in c.not_reached_reasons if r.count)
        lines.append(
            f"| {_cell(c.collection)} | {c.method_contexts} | {c.replayed_clean} | "
            f"{c.crashed}{_undiagnosed(c)} | "
            f"{c.failed_compile} | {c.not_reached}{' (' + _cell(why) + ')' if why else ''} |"
        )
    return [*lines, ""]


def triage_text(triage: TriageJson) -> str:
    """The summary as `key: value` lines."""
    doc = triage.doc
    where = (
        printable(doc.command.input)
        if len(doc.collections) == 1
        else (f"{len(doc.collections)} collections")
    )
    out = [
        f"result: {found_phrase(triage.data)} in {where} (exit {doc.exit_code}, "
        f"{doc.seconds:.1f} s)"
    ]
    # the setup, not the JIT: said first (triage.json of before causes: none)
    out += [
        f"why: {c.kind}: {c.advice} ({c.crashes} crash(es) in {len(c.buckets)} bucket(s))"
        for c in doc.causes
    ]
    out += [
        f"coverage {printable(c.collection)}: {c.method_contexts} method contexts: "
        f"{c.replayed_clean} clean, {c.crashed} crashed{_undiagnosed(c)}, "
        f"{c.failed_compile} failed compile, {c.not_reached} not reached"
        for c in doc.coverage
    ]
    out += [_bucket_line(b) for b in triage.buckets]
    out += [
        f"not diagnosed: {g.count} crash(es) ({g.signal}) replayed without a debugger in the "
        f"storm of bucket {g.storm_bucket} ({members(g, 10)}); --diagnose-all diagnoses each"
        for g in doc.not_diagnosed
    ]
    out += [_failure_bucket_line(b, doc.bundle_kinds) for b in doc.failure_buckets]
    out += [f"passed on: {g.key} x{g.count}" for g in doc.first_chance]
    if not doc.failure_buckets:  # else the buckets above are these lines, grouped
        for kind, groups in doc.reported_by_superpmi.kinds():
            out += [f"reported by superpmi ({kind}): {g.key} x{g.count}" for g in groups]
    if doc.stopped_at_max_crashes:
        out.append(f"note: stopped after --max-crashes {doc.max_crashes}")
    out += [f"note: {printable(n, limit=1 << 12)}" for n in doc.notes]
    return "\n".join(out) + "\n"


def _repro_said(rep: BucketRepro | None) -> str:
    return f"repro {rep.outcome}: {printable(rep.bundle)}" if rep is not None else "repro -: -"


def _bucket_line(b: BucketJson) -> str:
    part = b.part
    s = part.smallest
    known = "".join(
        f"; known bug {k.id}" if phrases.is_about_the_crash(k) else f"; also {k.id}"
        for k in b.known_bugs
    )
    smallest = f"smallest {s.method_context} (IL size {s.il_size}); " if s is not None else ""
    return (
        f"bucket {part.bucket}: {part.title} x{part.count} ({members(part, 10)}); "
        f"{smallest}{_repro_said(part.repro)}{known}"
    )


def _failure_bucket_line(b: FailureBucket, bundled: list[str]) -> str:
    repro = (
        _repro_said(b.repro)
        if b.repro
        else f"no repro (this triage bundles {', '.join(bundled) or 'nothing'}: --failure "
        f"{','.join([*bundled, b.kind])} bundles these too)"
        if b.kind not in bundled
        else "no repro"
    )
    s = b.smallest
    smallest = f"smallest {s.method_context} (IL size {s.il_size}); " if s is not None else ""
    return f"{b.kind} bucket {b.bucket}: {b.title} x{b.count}; {smallest}{repro}"


def _undiagnosed(c: Coverage) -> str:
    """`crashed`'s part not diagnosed (a storm's sweep), when there is one."""
    return f" ({c.not_diagnosed} not diagnosed: storm)" if c.not_diagnosed else ""


MEMBERS_SHOWN = 20  # a list longer than this is cut, with its count and the file that has it all
MEMBERS_DIR = "members"  # under the triage's --out: <bucket>.txt, one member a line


def members_file(bucket: str) -> str:
    return f"{MEMBERS_DIR}/{bucket}.txt"


def needs_members_file(numbers: list[Any]) -> bool:
    return len(numbers) > MEMBERS_SHOWN


def members(b: Grouped, shown: int = MEMBERS_SHOWN) -> str:
    """A bucket's members on one line: all of them, or the first `shown`, how many there are and
    the file that lists them all (written with triage.json when the bucket has more than
    MEMBERS_SHOWN)."""
    numbers = b.method_contexts
    head = ", ".join(map(str, numbers[:shown]))
    if len(numbers) <= shown:
        return head
    where = f": {members_file(b.bucket)}" if needs_members_file(numbers) else ""
    return f"{head} ... ({len(numbers)} in all{where})"


def _list(numbers: list[Any]) -> str:
    return ", ".join(map(str, numbers[:20])) + (
        f" ... ({len(numbers)} in all)" if len(numbers) > 20 else ""
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
