"""The superpmi command being reproduced (docs/superpmi-conventions.md 1, 1.3): program, JITs (JIT1
= base, JIT2 = diff), input collection and options, from `-- <argv>` or from
--mch/--jit/--base-jit/--superpmi/--target/--jitoption, read as the program's own era reads it
(superpmi_argv): a command superpmi would refuse is refused before anything runs, in superpmi's
words. The options are kept as the user typed them. `-p/-parallel [N]` is dropped (a crash in a
-p worker is invisible to a debugger on the parent), and `-skipCleanup` with it; a `-c` list becomes
the selection that is partitioned. The tool's own runs (`argv`) read superpmi's output at the
verbosity they need and write their own files in place of the user's (`-f`, `-details`, `-w`,
`-r`); the command shown to the user (`argv(user=True)`, `shell_line`) keeps the user's `-v`."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
import os
import platform
import shlex
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg import paths, shell
from spmi_dbg.elf import elf_build_id, is_elf
from spmi_dbg.errors import InputError, SpmiDbgError, UsageError, printable
from spmi_dbg.mch.collection import Collection, record_sizes
from spmi_dbg.mch.mclist import MCList, compress_ranges, parse_mclist
from spmi_dbg.repro.environment import EnvVar, clean_prefix, shell_prefix
from spmi_dbg.superpmi_argv import edit
from spmi_dbg.superpmi_argv.era import EraEvidence, reading
from spmi_dbg.superpmi_argv.grammar import (
    COMPILE,
    ERA_TODAY,
    INPUT,
    JIT,
    PARALLEL,
    STRIDE,
    Grammar,
)
from spmi_dbg.superpmi_argv.grammar import era as grammar_of_era
from spmi_dbg.superpmi_argv.parse import Command, Item, read_options
from spmi_dbg.superpmi_argv.probe import probe_era

# the bundle's directory of the files the user's command names (-f, -details, -w, ...): repro.sh's
# runs write theirs there, and the bundle holds the tool's runs' own, merged
USER_FILES = "superpmi-files"
# locate_partitions: pieces per worker, and the least a piece holds (4 MB: a rerun of the replay
# in a warm session costs 10-25 ms; 4 MB replay in 0.04 s on the sample JIT, 0.2 s on a Checked JIT)
LOCATE_PIECES_PER_WORKER = 4
LOCATE_PIECE_BYTES = 4 << 20


@dataclass(frozen=True)
class Spelling:
    """How the user named the JITs, the input and the -c list: by switch as typed (`-jit`, `-l`,
    `-co`) or by position (None)."""

    jits: tuple[str | None, ...] = ()
    input: str | None = None
    compile: str = "-c"


@dataclass(frozen=True)
class Partition:
    """One worker's share: contiguous method context numbers, replayed with `-c <spec>`."""

    index: int  # 1-based
    numbers: tuple[int, ...]

    @property
    def spec(self) -> str:
        return compress_ranges(list(self.numbers))

    @property
    def first(self) -> int:
        return self.numbers[0]

    @property
    def last(self) -> int:
        return self.numbers[-1]


@dataclass(frozen=True)
class ReproCommand:
    program: str  # absolute path of superpmi (or spmi-replay)
    jits: tuple[str, ...]  # absolute paths, JIT1 (base) first
    input: str  # absolute path of the collection
    options: tuple[str, ...]  # superpmi options, without -p/-c/-stride
    count: int  # method contexts in the collection
    selection: MCList | None = None  # the user's -c list, if any (within the collection)
    notes: tuple[str, ...] = field(default_factory=tuple)
    # --from-log: where in the superpmi.py log the command came from
    log: dict[str, Any] | None = None
    # --qemu: what runs the (guest) program here, e.g. qemu-aarch64 -L SYSROOT
    emulator: tuple[str, ...] = ()
    # the user's command ran `-p` (dropped here: a crash in a worker is what it hides)
    parallel: bool = False
    # the variables every native replay and repro.sh set, and nothing else (repro/environment.py)
    env: tuple[EnvVar, ...] = ()
    # the era whose grammar the program reads its command line by ("3.1", "today"; None: its
    # usage did not say) and how the user spelled the JITs, the input and -c
    era: str | None = None
    spelling: Spelling = field(default_factory=Spelling)

    @property
    def grammar(self) -> Grammar:
        return grammar_of_era(self.era) if self.era else ERA_TODAY

    def items(self) -> list[Item]:
        """The options as the program's era reads them."""
        return read_options(self.grammar, self.options)

    def argv(
        self,
        compile_list: str | None = None,
        input: str | os.PathLike[str] | None = None,
        *,
        user: bool = False,
    ) -> list[str]:
        """The command line, on `input` (default: the collection), restricted to `-c
        compile_list`: as the tool runs it (its verbosity, its own output files), or with `user`
        as the user wrote it."""
        inp = str(input) if input is not None else self.input
        opts = (
            list(self.options)
            if user
            else edit.for_tool_run(self.grammar, self.options, self._place(compile_list, inp))
        )
        out = [self.program, *opts]
        if compile_list:
            out += [self.spelling.compile, compile_list]
        for i, jit in enumerate(self.jits):
            sw = self.spelling.jits[i] if i < len(self.spelling.jits) else None
            out += [sw, jit] if sw else [jit]
        return [*out, *([self.spelling.input] if self.spelling.input else []), inp]

    def user_outputs(self) -> list[Item]:
        """The options naming files superpmi writes (-f, -details, -w, -r, -diffMCList)."""
        return edit.outputs(self.items())

    def run_outputs(self, compile_list: str | None, input: str | None = None) -> list[Path]:
        """Where one of the tool's runs (`argv(compile_list, input)`) wrote each of user_outputs'
        files, in their order."""
        place = self._place(compile_list, input if input is not None else self.input)
        return [Path(place(i)) for i in self.user_outputs()]

    def _place(self, compile_list: str | None, inp: str) -> Callable[[Item], str]:
        """Where one run of the tool writes the files the user's options name: a directory of
        its own per run (the -c list and input), under the system's temporary directory."""

        def place(item: Item) -> str:
            run = edit.run_slug(self.program, *self.options, compile_list or "", inp)
            where = Path(tempfile.gettempdir()) / f"spmi-dbg-outputs-{os.getuid()}" / run
            where.mkdir(parents=True, exist_ok=True)
            return str(where / edit.output_name(item))

        return place

    def native_argv(
        self, compile_list: str | None = None, input: str | os.PathLike[str] | None = None
    ) -> list[str]:
        """argv() as it runs on this machine without a debugger: in the recorded environment only
        (`env -i`), under the emulator for --qemu."""
        return [*clean_prefix(self.env), *self.emulator, *self.argv(compile_list, input)]

    def replay_env(self) -> tuple[str, ...]:
        """The recorded environment as a debugger replay takes it (ReplayRequest.env): the replay
        then gets these variables, PATH and HOME, and nothing else, as the native replays do."""
        return tuple(v.text for v in self.env)

    def numbers(self) -> list[int]:
        return (
            list(self.selection) if self.selection is not None else list(range(1, self.count + 1))
        )

    def partitions(self, workers: int, weights: list[int] | None = None) -> list[Partition]:
        """Contiguous shares of near-equal replay cost, by the records' bytes (the collection's
        index; issue 29: on the real api.mch with the Checked JIT the two halves by count replay in
        1.65 s and 2.35 s, by bytes in 1.99 s and 2.16 s), else of near-equal count. superpmi's own
        -p strides interleave; contiguous ranges keep each partition's earlier records -- the state
        a crash may depend on -- in front of it. `weights`: the selection's, when the caller read
        them already."""
        numbers = self.numbers()
        n = max(1, min(workers, len(numbers)))
        prefix = list(itertools.accumulate(weights or self._weights(numbers)))
        ends: list[int] = []
        for i in range(1, n):
            # the i-th cut: where the running cost passes i/n of the whole, leaving at least one
            # number for each share still to come
            cut = bisect.bisect_left(prefix, prefix[-1] * i / n) + 1
            low = ends[-1] + 1 if ends else 1
            ends.append(min(max(cut, low), len(numbers) - (n - i)))
        ends.append(len(numbers))
        out = [
            Partition(i + 1, tuple(numbers[start:end]))
            for i, (start, end) in enumerate(zip([0, *ends[:-1]], ends, strict=True))
        ]
        return [p for p in out if p.numbers]

    def _weights(self, numbers: list[int]) -> list[int]:
        """Each selected record's replay cost: its bytes (the collection's index), else 1."""
        try:
            record = record_sizes(self.input)
            return [record[k - 1] for k in numbers]
        except (SpmiDbgError, OSError, IndexError):
            return [1] * len(numbers)

    def locate_partitions(self, workers: int) -> list[Partition]:
        """The partitions a debugger locate takes in order, LOCATE_PIECES_PER_WORKER per worker
        when the selection is large enough for each to hold LOCATE_PIECE_BYTES, else one per worker
        (issue 39: the command's first crash is known once every partition before its own ended;
        with one partition per worker that is at least 1/workers of the replay even for a crash at
        its start, and a share misjudged by its bytes keeps its worker last; with smaller pieces
        taken in order the workers share the replay up to the crash, for a rerun each (a warm
        session's, driver/pool.py))."""
        weights = self._weights(self.numbers())  # read once: 200,000 records' sizes
        by_size = math.ceil(sum(weights) / LOCATE_PIECE_BYTES)
        pieces = max(workers, min(workers * LOCATE_PIECES_PER_WORKER, by_size))
        return self.partitions(pieces, weights)

    def shell_line(self, input: str, quote: Callable[[str], str] = shell.quote) -> str:
        """The command as one sh line in the recorded environment only (`env -i PATH="$PATH"
        HOME="$HOME" NAME=VALUE... superpmi ...`), input given verbatim (e.g.
        `"$here/repro.mch"`): the user's options, their files written beside the input (the
        bundle's `"$here/failingMCList-f.mcl"`), never where the user's command wrote them."""
        marker = "\0output\0"
        user = dataclasses.replace(
            self,
            options=tuple(
                edit.tokens(
                    edit.redirect_outputs(self.items(), lambda i: marker + edit.output_name(i))
                )
            ),
        )
        head, _, tail = input.rpartition("/")
        close = '"' if tail.endswith('"') else ""

        def word(a: str) -> str:
            if a.startswith(marker):
                name = f"{USER_FILES}/{a[len(marker) :]}"
                return f"{head}/{name}{close}" if head else quote(name)
            return quote(a)

        return (
            shell_prefix(self.env, quote)
            + " "
            + " ".join(word(a) for a in [*self.emulator, *user.argv(user=True)[:-1]])
            + " "
            + input
        )


def from_argv(argv: Sequence[str], era: EraEvidence | None = None) -> ReproCommand:
    """`spmi-dbg repro -- superpmi [options] jit1 [jit2] input.mch`, read as `era` reads it:
    what the program says of itself (era_of(); None: asked here, in this environment). Without
    evidence of its era the command is read as both eras read it, today's where they differ, said
    in a note."""
    if not argv:
        raise UsageError(
            "expected the superpmi command after --, e.g. spmi-dbg repro -- superpmi -a base.so "
            "diff.so x.mch"
        )
    return _from_reading(list(argv), era)


def era_of(
    program: str, env: Mapping[str, str] | None = None, emulator: Sequence[str] = ()
) -> EraEvidence:
    """What `program` (as a command names it) says of its era: its usage text (run once with
    `-?`, in `env`, default this process's environment)."""
    return probe_era(_resolve_program(program), env, emulator)


@dataclass(frozen=True)
class FriendlyForm:
    """`spmi-dbg repro --mch X --base-jit B --jit D [--superpmi S] [--target arm64] [--jitoption
    k=v] -- -a`: the command given by its parts instead of whole."""

    mch: str
    jit: str | None = None
    base_jit: str | None = None
    superpmi: str | None = None
    target: str | None = None
    jitoptions: Sequence[str] = ()
    extra: Sequence[str] = ()


def from_options(form: FriendlyForm, era: EraEvidence | None = None) -> ReproCommand:
    """The command of the friendly form, read as the program reads it."""
    jits = [j for j in (form.base_jit, form.jit) if j]
    if not jits:
        raise UsageError("--mch needs --jit (and --base-jit for asm diffs)")
    program = form.superpmi or bundled_replay()
    opts = list(form.extra)
    if form.target:
        opts += ["-target", form.target]
    for kv in form.jitoptions:
        opts += ["-jitoption", kv]
        if len(jits) == 2:  # superpmi.py's asmdiffs -jitoption applies to both JITs
            opts += ["-jit2option", kv]
    if any(i.role in (JIT, INPUT) for i in read_options(ERA_TODAY, opts)):
        raise UsageError(
            "with --mch, give only superpmi options after -- (JITs come from --jit/--base-jit)"
        )
    return _from_reading([program, *opts, *jits, form.mch], era)


def _from_reading(argv: list[str], era: EraEvidence | None) -> ReproCommand:
    for path in argv:
        # gdb takes the program and its arguments on one command line
        if "\n" in path or "\r" in path:
            raise UsageError(
                f"{printable(path)}: a path holding a line break cannot be given to a debugger; "
                "rename it, or give a symbolic link to it"
            )
    prog = _resolve_program(argv[0])
    if era is None:
        era = probe_era(prog)
    read = reading([prog, *argv[1:]], era, _host(prog))
    cmd = read.command
    known = era.grammar is not None
    if cmd.refusal is not None:
        raise UsageError(
            f"{cmd.grammar.title if known else 'superpmi'} would not run this command, so "
            f"neither does spmi-dbg: {cmd.refusal.said()}: {shlex.join(argv)}"
        )
    notes: list[str] = []
    if read.disagreement:
        notes.append(
            f"{Path(prog).name} does not say which superpmi it is ({read.era.evidence}), and the "
            f"eras read this command differently: {read.disagreement}; read as today's superpmi"
        )
    if cmd.input is None:  # refused above in both eras; kept for the type
        raise UsageError(f"no collection (.mch/.mc) in the command: {shlex.join(argv)}")
    kept = _kept(cmd, notes)
    spelling = Spelling(
        jits=tuple(_spelled(i) for i in cmd.items if i.role == JIT)[: len(cmd.jits)],
        input=_spelled(next(i for i in reversed(cmd.items) if i.role == INPUT)),
        compile=next((i.tokens[0] for i in reversed(cmd.uses("compile"))), "-c"),
    )
    return _checked(
        ReproCommand(
            prog,
            tuple(cmd.jits),
            cmd.input,
            tuple(kept.options),
            0,  # counted by _checked
            kept.selection,
            tuple(notes),
            parallel=kept.parallel,
            era=cmd.grammar.era if known else None,
            spelling=spelling,
        )
    )


def _spelled(item: Item) -> str | None:
    """How the user named a JIT or the input: by switch (`-jit`, `-l`) or by position (None)."""
    return item.tokens[0] if item.switch is not None else None


def _host(program: str) -> str:
    machine = elf_build_id(program)[1] or platform.machine()
    return {"x86_64": "x64", "aarch64": "arm64", "i386": "x86", "arm": "arm"}.get(machine, machine)


def bundled_replay() -> str:
    found = paths.native_file(paths.REPLAY)
    if found is None:
        raise UsageError(
            "no --superpmi given and the bundled spmi-replay is not installed (reinstall spmi-dbg)"
        )
    return str(found)


@dataclass
class _Kept:
    options: list[str]
    selection: MCList | None = None
    parallel: bool = False


def _kept(cmd: Command, notes: list[str]) -> _Kept:
    """The user's switches the tool's runs keep, as typed: all but the JITs and the input, the
    `-c` list (the tool's partitions replace it), and `-p`, with `-skipCleanup` (it means nothing
    without -p), and `-stride` (partitions are -c ranges)."""
    out = _Kept([])
    for item in cmd.options:
        said = " ".join(item.tokens)
        if item.name == "streaming":
            raise UsageError(
                f"`{said}`: a streaming run takes its method contexts from requests, which "
                "spmi-dbg does not replay: give them with -c"
            )
        if item.name == "matchHash":
            raise UsageError(
                f"`{said}` selects a method context by hash, and spmi-dbg's partitions select by "
                "-c, which superpmi refuses beside it: give the method context's number with -c"
            )
        if item.role == PARALLEL:
            out.parallel = True
            notes.append(
                f"dropped `{said}`: each partition runs sequentially under its own debugger"
            )
        elif item.name == "skipCleanup":
            notes.append(f"dropped `{said}`: it goes with -p, which is dropped")
        elif item.role == COMPILE and item.value is not None:
            out.selection = parse_mclist(item.value)
        elif item.role == STRIDE:
            notes.append(f"dropped `{said}`: partitions are -c ranges")
        else:
            if item in edit.outputs([item]):
                notes.append(
                    f"`{said}`: your file is never written; the tool's replays write their own, "
                    f"and the bundle's {USER_FILES}/{edit.output_name(item)} holds them merged "
                    "(repro.sh writes its own there too)"
                )
            out.options.extend(item.tokens)
    return out


def _resolve_program(program: str) -> str:
    found = shutil.which(program) if "/" not in program else program
    if found is None or not Path(found).is_file():
        raise InputError(program, "superpmi program not found")
    if not os.access(found, os.X_OK):
        raise InputError(found, "superpmi program is not executable")
    try:
        elf = is_elf(found)
    except OSError as e:
        raise InputError(found, f"cannot read the superpmi program: {e.strerror}") from None
    if not elf:
        raise InputError(
            found,
            "superpmi program is not an ELF executable (a debugger cannot run a script: give "
            "the real program)",
        )
    return str(Path(found).resolve())


def _checked(cmd: ReproCommand) -> ReproCommand:
    """The command with its JITs and collection checked and made absolute, the collection
    counted (InputError otherwise)."""
    abs_jits = []
    for j in cmd.jits:
        p = Path(j)
        if not p.is_file():
            raise InputError(j, "JIT not found")
        if not os.access(p, os.R_OK):
            raise InputError(j, "JIT is not readable")
        abs_jits.append(str(p.resolve()))
    path, count = checked_collection(cmd.input)
    if cmd.selection is not None and cmd.selection.last > count:
        raise InputError(
            cmd.input,
            f"-c asks for method context {cmd.selection.last}; the collection has {count}",
        )
    return dataclasses.replace(cmd, jits=tuple(abs_jits), input=path, count=count)


def checked_collection(mch: str) -> tuple[str, int]:
    """A collection the replay can read: its absolute path and how many method contexts it holds
    (InputError otherwise)."""
    src = Path(mch)
    try:
        st = os.stat(src)
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(mch, "collection not found") from None
    except OSError as e:  # too long, a loop, not searchable: said, never a traceback
        raise InputError(mch, f"cannot open: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(mch, "the collection is not a regular file")
    try:
        with Collection.open(src) as col:
            count = len(col)
    except OSError as e:
        raise InputError(mch, f"cannot read the collection: {e.strerror}") from None
    if count == 0:
        raise InputError(mch, "the collection holds no method contexts")
    return str(src.resolve()), count
