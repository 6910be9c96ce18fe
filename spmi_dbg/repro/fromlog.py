"""`spmi-dbg repro --from-log superpmi.N.log`: the failing superpmi command recovered from a
superpmi.py log (docs/superpmi-conventions.md 3.1).

Lines may carry superpmi.py's `[HH:MM:SS] ` prefix (older versions wrote none). `Running (SuperPMI
replay|asm diffs) of <mch>` starts a run (3.1's script: `Starting SuperPMI (replay|AsmDiffs).`, the
collection then being the command's input); the next `Invoking: <argv>` whose program is superpmi
(superpmi.exe, or the bundled spmi-replay that stands in for it) is its command, split on single
spaces as the script joined it. The lines up to the next run are its output: they tell whether the
run failed and name failing method contexts (`ERROR: Method N of size`, `ERROR: main method N of
size`, `ISSUE: <ASSERT> #N`, `MISSING: Method context N`, the `Method numbers with compilation
failures:` block), kept as hints for the report. A `-p` run whose parent's summary (`Loaded N ...`,
printed where the script's verbosity lets it) counts fewer method contexts than the collection (and,
with -c, its list) has lost a worker that died: 3.1's parent reports no dead child (exit status 1,
no other line; dotnet/runtime#56506), so that is a fatal failure of the run too.

The run reproduced is the first one whose output shows a fatal failure (superpmi died, a -p child's
results are missing), else the first with compilation failures, else the last run, with a note.
Files the command names for its own output (-f, -details, -r, -w, -baseMetricsSummary,
-diffMetricsSummary, -diffsInfo) live in a temporary directory superpmi.py has removed since: those
that no longer exist are dropped; -p is dropped as always."""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg.errors import InputError, SpmiDbgError
from spmi_dbg.repro.command import ReproCommand, era_of, from_argv
from spmi_dbg.superpmi_argv import parse_command

_PREFIX = re.compile(r"^\[\d\d:\d\d:\d\d\] ")
_RUNNING = re.compile(r"^Running (SuperPMI replay|asm diffs) of (.+?)\s*$")
_STARTING = re.compile(r"^Starting SuperPMI (replay|AsmDiffs)\.\s*$")  # 3.1's superpmi.py
_LOADED = re.compile(r"^Loaded (\d+)  Jitted \d+ ")
_INVOKING = re.compile(r"^Invoking: (.*?)\s*$")
_PROGRAMS = ("superpmi", "superpmi.exe", "spmi-replay")
_HINTS = (
    re.compile(r"^ERROR: Method (\d+) of size"),
    re.compile(r"^ERROR: (?:JIT2 )?main method (\d+) of size"),
    re.compile(r"^ISSUE: <ASSERT> #(\d+)"),
    re.compile(r"^MISSING: Method context (\d+)"),
)
_FAIL_BLOCK = "Method numbers with compilation failures:"
_FAILURE = re.compile(
    r"^(ERROR: |ISSUE: (?!<ASM_DIFF>)|MISSING: |General fatal error|Fatal error|Unknown error code|"
    r"JIT failed to initialize|Compilation failures)"
)
_FATAL = re.compile(
    r"^(General fatal error|Fatal error|Unknown error code|JIT failed to initialize|"
    r"ERROR: Couldn't load .* created by child process|ERROR: Unexpected exception|"
    r"-p lost a worker: )"
)
# what superpmi prints when it replays nothing at all: its usage (a refused command), a JIT it could
# not load or that is of another JIT-EE version, a collection it could not open
_NEVER = re.compile(
    r"^(SuperPMI is a JIT compiler testing tool\.|ERROR: Unknown switch|ERROR: Unknown file type|"
    r"ERROR: Missing name of|ERROR: Cannot use |ERROR: .* requires -parallel|"
    r"ERROR: Arg '.*' is invalid|"
    r"ERROR: Illegal target architecture|ERROR: Invalid workers count|ERROR: Incorrect |"
    r"ERROR: Jit Compiler has wrong version identifier|.*LoadLibrary failed|"
    r"ERROR: Failed to open file)"
)
OUTPUT_FILE_OPTIONS = (
    "-f",
    "-details",
    "-r",
    "-w",
    "-basemetricssummary",
    "-diffmetricssummary",
    "-diffsinfo",
)


@dataclass
class LogRun:
    mode: str  # "SuperPMI replay" | "asm diffs"
    mch: str
    line: int  # of the Invoking: line, 1-based
    argv: list[str]
    hints: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # the output lines that show the run failed
    loaded: int | None = None  # the `Loaded N` of the run's summary line (the -p parent's, with -p)
    # the lines that show superpmi replayed nothing (a refused command, a JIT it did not load)
    never: list[str] = field(default_factory=list)

    @property
    def severity(self) -> int:
        """2: superpmi died or gave up (a fatal error, a lost -p child), 1: compilation failures, 0:
        clean."""
        if any(_FATAL.match(line) for line in self.failures):
            return 2
        return 1 if self.failures else 0


def parse_log(text: str) -> list[LogRun]:
    runs: list[LogRun] = []
    pending: tuple[str, str] | None = None  # a Running line still waiting for its Invoking line
    in_block = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = _PREFIX.sub("", raw.rstrip("\r"), count=1)
        m = _RUNNING.match(line)
        if m:
            pending, in_block = (m.group(1), m.group(2)), False
            continue
        m = _STARTING.match(line)
        if m:
            pending, in_block = (
                ("SuperPMI replay" if m.group(1) == "replay" else "asm diffs", ""),
                False,
            )
            continue
        m = _INVOKING.match(line)
        if m and pending is not None:
            argv = [a for a in m.group(1).split(" ") if a]
            if argv and re.split(r"[\\/]", argv[0])[-1].lower() in _PROGRAMS:
                mch = pending[1] or next(
                    (a for a in reversed(argv) if a.lower().endswith((".mch", ".mc", ".mct"))), ""
                )
                runs.append(LogRun(pending[0], mch, number, argv))
                pending, in_block = None, False
            continue
        if not runs or pending is not None:
            continue
        run = runs[-1]
        if line.strip() == _FAIL_BLOCK:
            in_block = True
            continue
        if in_block:
            if line.strip().isdigit():
                _hint(run, int(line.strip()))
                continue
            in_block = False
        for pattern in _HINTS:
            h = pattern.match(line)
            if h:
                _hint(run, int(h.group(1)))
        if _FAILURE.match(line):
            run.failures.append(line.strip())
        if _NEVER.match(line) and run.loaded is None:
            run.never.append(line.strip())
        m = _LOADED.match(line)
        if m:
            run.loaded = int(m.group(1))
    return runs


def lost_worker(run: LogRun, count: int | None) -> str | None:
    """The fatal failure line of a -p run whose parent's summary counts fewer method contexts than
    the collection has (`count`: its method contexts, or those of its -c list), else None."""
    if (
        not parse_command(run.argv).parallel
        or run.loaded is None
        or count is None
        or run.loaded >= count
    ):
        return None
    return (
        f"-p lost a worker: the parent's summary counts {run.loaded} of {count:,} method contexts "
        "and names no "
        "crash (a worker that dies is not reported: dotnet/runtime#56506)"
    )


def _count(run: LogRun) -> int | None:
    """How many method contexts the run's command asks for: its collection's, or its -c list's
    (None: the collection cannot be read)."""
    try:
        cmd = from_argv(_drop_output_files(run.argv)[0])
    except SpmiDbgError:
        return None
    return cmd.selection.count() if cmd.selection is not None else cmd.count


def _hint(run: LogRun, n: int) -> None:
    if n not in run.hints:
        run.hints.append(n)


def _drop_output_files(argv: list[str]) -> tuple[list[str], list[str]]:
    out: list[str] = []
    notes: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if (
            i > 0
            and a.lower() in OUTPUT_FILE_OPTIONS
            and i + 1 < len(argv)
            and not os.path.exists(argv[i + 1])
        ):
            notes.append(
                f"dropped `{a} {argv[i + 1]}`: superpmi.py's temporary file no longer exists"
            )
            i += 2
            continue
        out.append(a)
        i += 1
    return out, notes


def command_from_log(path: str | os.PathLike[str], emulator: tuple[str, ...] = ()) -> ReproCommand:
    log = Path(path)
    try:
        text = log.read_text(errors="replace")
    except FileNotFoundError:
        raise InputError(str(log), "superpmi.py log not found") from None
    except OSError as e:
        raise InputError(str(log), f"cannot read the log: {e.strerror}") from None
    runs = parse_log(text)
    if not runs:
        raise InputError(
            str(log),
            "no superpmi command in the log (expected `Running SuperPMI replay of ...` or "
            "`Running asm diffs of ...` followed by `Invoking: .../superpmi ...`)",
        )
    for r in runs:
        lost = lost_worker(r, _count(r)) if r.loaded is not None else None
        if lost is not None:
            r.failures.append(lost)
    worst = max(r.severity for r in runs)
    failed = [r for r in runs if r.severity == worst and worst > 0]
    run = failed[0] if failed else runs[-1]
    if run.never:
        said = next((x for x in run.never if x.startswith("ERROR")), run.never[0])
        raise InputError(
            str(log),
            f"line {run.line}: the logged superpmi run never replayed anything (it said: {said}); "
            "there is no failure of it to reproduce: fix the command superpmi.py ran",
        )
    argv, notes = _drop_output_files(run.argv)
    where = f"{log.name} line {run.line}"
    notes.insert(
        0,
        f"command from {where} ({run.mode} of {run.mch}"
        + (
            f"; of {len(runs)} runs in the log, the first that failed"
            + (" fatally" if worst == 2 else "")
            if len(runs) > 1 and failed
            else ""
        )
        + ")",
    )
    if not failed:
        notes.append("the log shows no failure for any run: the last run's command is replayed")
    notes += [
        f"-p hid a crash: {line.removeprefix('-p lost a worker: ')}"
        for line in run.failures
        if line.startswith("-p lost a worker: ")
    ]
    if run.hints:
        notes.append(
            "the log names failing method context(s) "
            + ", ".join(map(str, run.hints[:50]))
            + (" ..." if len(run.hints) > 50 else "")
        )
    cmd = from_argv(argv, era_of(argv[0], emulator=emulator) if argv else None)
    info: dict[str, Any] = {
        "log": str(log.resolve()),
        "line": run.line,
        "mode": run.mode,
        "mch": run.mch,
        "argv": run.argv,
        "hints": run.hints,
        "failures": run.failures[:20],
        "runs_in_log": len(runs),
    }
    return dataclasses.replace(cmd, notes=tuple(notes) + cmd.notes, log=info)
