"""The repro bundle: repro.mch + repro.mch.mct (written by isolate), repro.sh (the exact command on
the repro, quoted for sh), diagnosis.json, report.json (repro.report_data) and report.md (rendered
from it by spmi_dbg.report), debugger.log (the debugger transcripts), replay.stdout/replay.stderr
(the replay's own output). Written atomically, also when a phase failed: the report then says which
one and why. With --redact every file but the collection records has the home directory, user name
and host name replaced (spmi_dbg.report.redact)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

from spmi_dbg import shell
from spmi_dbg.outdir import publish, stage
from spmi_dbg.report.markdown import render_repro_markdown
from spmi_dbg.report.parsed import ReportJson
from spmi_dbg.report.redact import Redactor
from spmi_dbg.report.sarif import repro_sarif
from spmi_dbg.repro.command import USER_FILES
from spmi_dbg.repro.isolate import REPRO_NAME
from spmi_dbg.repro.report_data import report_data
from spmi_dbg.repro.result import JIT_OUTPUT_FILE, Bundle, ReproResult
from spmi_dbg.superpmi_argv.edit import output_name
from spmi_dbg.superpmi_argv.grammar import OUTPUT_FILE

JIT_OUTPUT_LIMIT = 64 << 20  # bytes of the JIT's own output kept in the bundle


def write_bundle(result: ReproResult, work: Path) -> Bundle:
    """Build the bundle in a temporary sibling of `result.out` and rename it into place when
    complete (an earlier run's bundle there is replaced whole). With --redact, values are redacted
    before they are serialised (report.json, diagnosis.json) and texts in every form they take there
    (the logs)."""
    out = result.bundle_dir()
    staged = stage(out)
    try:
        names, report = _write_files(result, work, staged)
        publish(staged, out)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    isolated = (
        None
        if result.isolated is None
        else dataclasses.replace(
            result.isolated, mch=out / result.isolated.mch.name, mct=out / result.isolated.mct.name
        )
    )
    return Bundle([out / name for name in names], report, isolated)


def _write_files(result: ReproResult, work: Path, staged: Path) -> tuple[list[str], ReportJson]:
    names: list[str] = []
    redactor = Redactor.here() if result.options.redact else None

    def put(name: str, data: str | bytes, mode: int = 0o644) -> None:
        if redactor is not None:
            data = redactor.text(data if isinstance(data, str) else data.decode(errors="replace"))
        (staged / name).write_bytes(data.encode() if isinstance(data, str) else data)
        (staged / name).chmod(mode)
        names.append(name)

    if result.isolated is not None:
        for src in (result.isolated.mch, result.isolated.mct):  # byte-for-byte: never redacted
            shutil.copyfile(src, staged / src.name)
            names.append(src.name)
        put("repro.sh", repro_script(result, redactor), 0o755)
    diagnosis = result.target.diagnosis if result.target else None
    if diagnosis is not None:
        d = diagnosis.to_json()
        put(
            "diagnosis.json",
            json.dumps(redactor.data(d) if redactor is not None else d, indent=2, sort_keys=True)
            + "\n",
        )
    jit_output = result.target.jit_output if result.target else None
    if jit_output is not None and jit_output.file is not None and jit_output.file.is_file():
        with open(jit_output.file, "rb") as f:  # a Checked JIT's dump of a big method can be huge
            dump = f.read(JIT_OUTPUT_LIMIT + 1)
        if len(dump) > JIT_OUTPUT_LIMIT:
            dump = dump[:JIT_OUTPUT_LIMIT] + f"\n... (cut at {JIT_OUTPUT_LIMIT} bytes)\n".encode()
        put(JIT_OUTPUT_FILE, dump)
    for name, data in _user_files(result):
        (staged / USER_FILES).mkdir(exist_ok=True)
        put(f"{USER_FILES}/{name}", data)
    stdout, stderr = _replay_output(result)
    put("replay.stdout", stdout)
    put("replay.stderr", stderr)
    put("debugger.log", _debugger_log(result, work))
    report = report_data(
        result,
        [*names, "report.md", "report.json", "report.sarif"],
        replay_output=(stdout + stderr).decode(errors="replace")[-200_000:],
    )
    if redactor is not None:
        report = ReportJson.read(redactor.data(report.data))
    put("report.json", json.dumps(report.data, indent=2) + "\n")
    put("report.md", render_repro_markdown(report))
    put("report.sarif", json.dumps(repro_sarif(report), indent=2) + "\n")
    for name in names:  # on disk before the rename makes the bundle visible
        with open(staged / name, "rb") as f:
            os.fsync(f.fileno())
    return names, report


# ------------------------------------------------------------------------------------------------
# repro.sh
def repro_script(result: ReproResult, redactor: Redactor | None = None) -> str:
    """repro.sh; with a redactor, paths under the home directory are written as "$HOME"/... (still
    runnable). Paths go into the comments through shell.comment (one line, shown, never run) and
    into the command through shell.quote (or the redactor's quoting), nowhere else."""
    cmd = result.repro_command or result.options.command
    isolated = result.isolated
    assert isolated is not None
    numbers = ", ".join(map(str, isolated.numbers))
    comments = [
        f"spmi-dbg repro: method context(s) {numbers} of {cmd.input}, copied byte-for-byte into "
        f"{REPRO_NAME}.",
        f"Expected: {result.target.describe() if result.target else 'a failure.'}",
    ]
    if result.option_minimization is not None and result.option_minimization.given:
        comments.append(f"JIT settings: {result.option_minimization.summary()}.")
    if redactor is not None:
        comments = [redactor.text(c) for c in comments]
    command = cmd.shell_line(
        f'"$here/{REPRO_NAME}"', redactor.shell_word if redactor else shell.quote
    )
    # superpmi opens the files the command names where repro.sh puts them: the bundle's USER_FILES
    mkdir = [f'mkdir -p "$here/{USER_FILES}"'] if cmd.user_outputs() else []
    return "\n".join(
        [
            "#!/bin/sh",
            *(f"# {shell.comment(c)}" for c in comments),
            'here=$(dirname -- "$0")',
            *mkdir,
            f"exec {command}",
            "",
        ]
    )


# ------------------------------------------------------------------------------------------------
# outputs
def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _user_files(result: ReproResult) -> list[tuple[str, bytes]]:
    """The files the user's command names (-f, -details, -w, -diffMCList), as the tool's replays of
    the located partitions wrote them, merged in the partitions' order: a method context list
    sorted and once each, a CSV with its header once, a log whole (the -r repro files aside: the
    bundle's repro.mch is the repro)."""
    cmd = result.options.command
    partitions = [r.partition for r in result.target.located.runs] if result.target else []
    specs = [p.spec for p in sorted(partitions, key=lambda p: p.index)]
    out: list[tuple[str, bytes]] = []
    for k, item in enumerate(cmd.user_outputs()):
        if item.role != OUTPUT_FILE:
            continue
        parts = [_read(cmd.run_outputs(spec)[k]) for spec in specs]
        out.append((output_name(item), _merged(item.name, parts)))
    return out


def _merged(switch: str, parts: list[bytes]) -> bytes:
    if switch in ("failingMCList", "diffMCList"):
        numbers = sorted({int(x) for p in parts for x in p.split() if x.isdigit()})
        return b"".join(b"%d\r\n" % n for n in numbers)
    if switch == "details":
        lines = [p.splitlines(keepends=True) for p in parts if p]
        head = lines[0][:1] if lines else []
        return b"".join([*head, *(x for ls in lines for x in ls[1:])])
    return b"".join(parts)


def _replay_output(result: ReproResult) -> tuple[bytes, bytes]:
    """The target's replay output (the run that showed it, else every partition's)."""
    return result.target.replay_output() if result.target is not None else (b"", b"")


def _debugger_log(result: ReproResult, work: Path) -> str:
    located = result.target.under_debugger if result.target else None
    winner = located.winner if located else None
    runs = sorted(located.runs if located else [], key=lambda r: r is not winner)
    parts = []
    for r in runs:
        tag = " (the fatal stop)" if r is winner else ""
        parts.append(
            f"==== partition {r.partition.index} (-c {r.partition.spec}){tag}: {r.status}\n"
            + _read(r.transcript).decode(errors="replace")
        )
    for label in ("verify", "verify-environment", "verify-minimized"):
        text = _read(work / f"{label}.debugger.log").decode(errors="replace")
        if text:
            parts.append(f"==== {label}: the repro under the debugger\n" + text)
    return "\n".join(parts) if parts else "(no debugger run)\n"
