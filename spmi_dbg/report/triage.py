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


def triage_markdown(triage: TriageJson) -> str:
    data = triage.data
    lines = _summary(data)
    lines += coverage_markdown(data["coverage"])
    if triage.buckets:
        lines += [*_bucket_table(triage.buckets), ""]
        for b in triage.buckets:
            lines += [*_bucket_section(b), ""]
    else:
        lines += ["No crash: every partition ran to its end.", ""]
    for g in data.get("not_diagnosed") or []:
        lines += [
            f"## Crashes not diagnosed: the storm of `{g['storm_bucket']}`",
            "",
            f"Once most of a partition's crashes were in bucket `{g['storm_bucket']}`, the rest of "
            "it was replayed without a debugger, but for a sample spread over it. "
            f"{g['count']} method context(s) crashed ({g['signal']}), each in a replay of it "
            "alone, and were not diagnosed (nothing is said of their bucket): "
            f"{members(g)}. `--diagnose-all` diagnoses each.",
            "",
        ]
    lines += _failure_buckets(data)
    lines += _passed_on(data["first_chance"])
    lines += _reported_by_superpmi(data["reported_by_superpmi"])
    for t in data["tool_failures"]:
        lines.append(
            f"- tool failure in partition {t['partition']} (-c {t['compile']}): "
            f"{'; '.join(t['failures'])}"
        )
    for e in data["replay_input_errors"]:
        lines.append(
            f"- the replay exited with status {e['exit_status']} ({e['name']}): check its input"
        )
    lines += [f"- {n}" for n in data["notes"] + data["command"]["notes"]]
    return "\n".join(lines).rstrip() + "\n"


def _summary(data: dict[str, Any]) -> list[str]:
    """The title, the command and what ran where, for how long."""
    cmd = data["command"]
    cols = data["collections"]
    engine = data["engine"]
    where = (
        f"on the dask cluster {engine['scheduler']} ({engine['workers']} worker thread(s))"
        if engine["name"] == "dask"
        else f"on this machine ({engine['workers']} worker(s))"
    )
    resumed = (
        f" Resumed: {len(engine['resumed_partitions'])} partition(s) finished earlier were not "
        "replayed again."
        if engine["resumed_partitions"]
        else ""
    )
    stopped = (
        f" Stopped after --max-crashes {data['max_crashes']}."
        if data["stopped_at_max_crashes"]
        else ""
    )
    inputs = Path(cmd["input"]).name if len(cols) == 1 else f"{len(cols)} collections"
    return [
        f"# spmi-dbg triage: {found_phrase(data)} in {inputs}",
        "",
        f"`{shell.join(cmd['argv'])}`"
        + (" (and the same on each collection)" if len(cols) > 1 else ""),
        "",
        f"{cmd['method_contexts']} method contexts replayed in {engine['partitions']} partition(s) "
        f"{where} under {data['debugger']}, resumed after each crash; {data['seconds']:.1f} s in "
        f"all ({data['replay_seconds']:.1f} s of replay).{stopped}{resumed}",
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
        data = b.data
        known = (
            ", ".join(f"[{k.id}]({k.url})" for k in b.known_bugs if phrases.is_about_the_crash(k))
            or "-"
        )
        cells = "".join(f"{_cell(cell(b.diagnosis))} | " for _, cell in columns)
        lines.append(
            f"| `{data['bucket']}` | {_cell(data['title'])} | {cells}{data['count']} | "
            f"{members(data, 12)} | {_smallest_cell(data)} | {_repro_cell(data)} | {known} |"
        )
    return lines


def _bucket_section(b: BucketJson) -> list[str]:
    """The bucket's members, smallest member, facts, repro and known bugs."""
    data = b.data
    smallest = data["smallest"]
    lines = [
        f"## `{data['bucket']}`: {data['title']}",
        "",
        f"- method contexts ({data['count']}): {members(data)}",
        f"- smallest by IL size: {smallest['method_context']} "
        f"(`{smallest['name'] or '?'}`, IL size {smallest['il_size']})",
    ]
    facts = phrases.fact_lines(b.diagnosis, phrases.MARKDOWN)
    if facts:
        lines += ["- at the smallest member's stop:", *phrases.joined(facts, "  - ")]
    if data["repro"]:
        lines.append(
            f"- repro: `{data['repro']['bundle']}`: "
            f"{data['repro']['summary'] or data['repro']['outcome']}"
        )
    for k in b.known_bugs:
        if phrases.is_about_the_crash(k):
            lines.append(f"- known bug [{k.id}]({k.url}): {k.title}; fix: {k.fix}")
        else:  # a bug in how the crash was reported, not the crash's
            lines.append(f"- also: {k.said or k.title} ([{k.id}]({k.url}))")
    return lines


def _failure_buckets(data: dict[str, Any]) -> list[str]:
    """superpmi's own failures (asserts, failed compiles, missing data) by bucket."""
    fbs = data["failure_buckets"]
    if not fbs:
        return []
    lines = [
        "## JIT asserts and failed compiles (reported by superpmi)",
        "",
        f"Repro bundles for: {', '.join(data['bundle_kinds'])}.",
        "",
        "| bucket | what | count | method contexts | smallest (IL size) "
        "| JIT settings needed | repro |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| `{b['bucket']}` | {_cell(b['title'])} | {b['count']} | {members(b)} | "
        f"{_smallest_cell(b)} | {_cell(b.get('jit_settings') or '-')} | {_repro_cell(b)} |"
        for b in fbs
    ]
    return [*lines, ""]


def _passed_on(fc: list[dict[str, Any]]) -> list[str]:
    """The first-chance stops the replay survived."""
    if not fc:
        return []
    lines = [
        "## Stops passed on (the replay survived them)",
        "",
        "| stop | count | method contexts |",
        "|---|---|---|",
    ]
    lines += [f"| {_cell(g['key'])} | {g['count']} | {_list(g['method_contexts'])} |" for g in fc]
    return [*lines, ""]


def _reported_by_superpmi(rep: dict[str, Any]) -> list[str]:
    """What superpmi reported itself, by kind."""
    if not any(rep.values()):
        return []
    lines = [
        "## Reported by superpmi itself",
        "",
        "| kind | what | count | method contexts |",
        "|---|---|---|---|",
    ]
    for kind, label in (
        ("asserts", "JIT assert"),
        ("missing", "missing data"),
        ("failed_compiles", "failed compile"),
    ):
        lines += [
            f"| {label} | {_cell(g['key'])} | {g['count']} | {_list(g['method_contexts'])} |"
            for g in rep[kind]
        ]
    return [*lines, ""]


def _smallest_cell(b: dict[str, Any]) -> str:
    """`N (IL size)`: a bucket's smallest member."""
    s = b["smallest"]
    return f"{s['method_context']} ({s['il_size'] if s['il_size'] is not None else '?'})"


def _repro_cell(b: dict[str, Any]) -> str:
    """The repro's verdict and a link to its report.md."""
    rep = b["repro"] or {}
    outcome = str(rep.get("outcome") or "-")
    verdict = {"verified": "verified", "not-verified": "NOT verified"}.get(outcome, outcome)
    name = Path(rep["bundle"]).name if rep.get("bundle") else None
    bundle = "" if name is None else f"[{name}]({name}/report.md)"
    return f"{verdict} {bundle}"


def coverage_markdown(coverage: list[dict[str, Any]]) -> list[str]:
    """Per collection: every method context once, in one of four columns."""
    lines = [
        "| collection | method contexts | replayed clean | crashed "
        "| failed compile | not reached |",
        "|---|---|---|---|---|---|",
    ]
    for c in coverage:
        why = "; ".join(
            f"{r['count']}: {r['reason']}" for r in c["not_reached_reasons"] if r["count"]
        )
        lines.append(
            f"| {_cell(c['collection'])} | {c['method_contexts']} | {c['replayed_clean']} | "
            f"{c['crashed']}{_undiagnosed(c)} | "
            f"{c['failed_compile']} | {c['not_reached']}{' (' + _cell(why) + ')' if why else ''} |"
        )
    return [*lines, ""]


def triage_text(triage: TriageJson) -> str:
    """The summary as `key: value` lines."""
    data = triage.data
    cols = data["collections"]
    where = printable(data["command"]["input"]) if len(cols) == 1 else f"{len(cols)} collections"
    out = [
        f"result: {found_phrase(data)} in {where} (exit {data['exit_code']}, "
        f"{data['seconds']:.1f} s)"
    ]
    # the setup, not the JIT: said first (triage.json of before causes: none)
    out += [
        f"why: {c['kind']}: {c['advice']} ({c['crashes']} crash(es) in "
        f"{len(c['buckets'])} bucket(s))"
        for c in data.get("causes") or []
    ]
    out += [
        f"coverage {printable(c['collection'])}: {c['method_contexts']} method contexts: "
        f"{c['replayed_clean']} clean, {c['crashed']} crashed{_undiagnosed(c)}, "
        f"{c['failed_compile']} failed compile, {c['not_reached']} not reached"
        for c in data["coverage"]
    ]
    out += [_bucket_line(b) for b in triage.buckets]
    out += [
        f"not diagnosed: {g['count']} crash(es) ({g['signal']}) replayed without a debugger in the "
        f"storm of bucket {g['storm_bucket']} ({members(g, 10)}); --diagnose-all diagnoses each"
        for g in data.get("not_diagnosed") or []
    ]
    bundled = data.get("bundle_kinds") or []
    out += [_failure_bucket_line(b, bundled) for b in data["failure_buckets"]]
    out += [f"passed on: {g['key']} x{g['count']}" for g in data["first_chance"]]
    if not data["failure_buckets"]:  # else the buckets above are these lines, grouped
        for kind, groups in data["reported_by_superpmi"].items():
            out += [f"reported by superpmi ({kind}): {g['key']} x{g['count']}" for g in groups]
    if data["stopped_at_max_crashes"]:
        out.append(f"note: stopped after --max-crashes {data['max_crashes']}")
    out += [f"note: {printable(n, limit=1 << 12)}" for n in data["notes"]]
    return "\n".join(out) + "\n"


def _bucket_line(b: BucketJson) -> str:
    data = b.data
    rep = data["repro"] or {}
    s = data["smallest"]
    known = "".join(
        f"; known bug {k.id}" if phrases.is_about_the_crash(k) else f"; also {k.id}"
        for k in b.known_bugs
    )
    return (
        f"bucket {data['bucket']}: {data['title']} x{data['count']} ({members(data, 10)}); "
        f"smallest {s['method_context']} (IL size {s['il_size']}); "
        f"repro {rep.get('outcome', '-')}: {printable(str(rep.get('bundle', '-')))}{known}"
    )


def _failure_bucket_line(b: dict[str, Any], bundled: list[str]) -> str:
    rep = b["repro"]
    s = b["smallest"]
    repro = (
        f"repro {rep.get('outcome', '-')}: {printable(str(rep.get('bundle', '-')))}"
        if rep
        else f"no repro (this triage bundles {', '.join(bundled) or 'nothing'}: --failure "
        f"{','.join([*bundled, b['kind']])} bundles these too)"
        if b["kind"] not in bundled
        else "no repro"
    )
    return (
        f"{b['kind']} bucket {b['bucket']}: {b['title']} x{b['count']}; smallest "
        f"{s['method_context']} (IL size {s['il_size']}); {repro}"
    )


def _undiagnosed(c: dict[str, Any]) -> str:
    """`crashed`'s part not diagnosed (a storm's sweep), when there is one."""
    n = c.get("not_diagnosed") or 0
    return f" ({n} not diagnosed: storm)" if n else ""


MEMBERS_SHOWN = 20  # a list longer than this is cut, with its count and the file that has it all
MEMBERS_DIR = "members"  # under the triage's --out: <bucket>.txt, one member a line


def members_file(bucket: str) -> str:
    return f"{MEMBERS_DIR}/{bucket}.txt"


def needs_members_file(b: dict[str, Any]) -> bool:
    return len(b["method_contexts"]) > MEMBERS_SHOWN


def members(b: dict[str, Any], shown: int = MEMBERS_SHOWN) -> str:
    """A bucket's members on one line: all of them, or the first `shown`, how many there are and
    the file that lists them all (written with triage.json when the bucket has more than
    MEMBERS_SHOWN)."""
    numbers = b["method_contexts"]
    head = ", ".join(map(str, numbers[:shown]))
    if len(numbers) <= shown:
        return head
    where = f": {members_file(b['bucket'])}" if needs_members_file(b) else ""
    return f"{head} ... ({len(numbers)} in all{where})"


def _list(numbers: list[str]) -> str:
    return ", ".join(map(str, numbers[:20])) + (
        f" ... ({len(numbers)} in all)" if len(numbers) > 20 else ""
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
