"""The superpmi command being reproduced (docs/superpmi-conventions.md 1, 1.3): program, JITs (JIT1
= base, JIT2 = diff), input collection and options, from `-- <argv>` or from
--mch/--jit/--base-jit/--superpmi/
--target/--jitoption. `-p/-parallel [N]` is dropped (a crash in a -p worker is invisible to a
debugger on the parent, and superpmi refuses `-c` with `-p`); a `-c` list becomes the selection that
is partitioned."""

from __future__ import annotations

import bisect
import itertools
import os
import shlex
import shutil
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spmi_dbg import paths, shell
from spmi_dbg.elf import is_elf
from spmi_dbg.errors import InputError, SpmiDbgError, UsageError, printable
from spmi_dbg.mch.collection import Collection, record_sizes
from spmi_dbg.mch.mclist import MCList, compress_ranges, parse_mclist
from spmi_dbg.repro.environment import EnvVar, clean_prefix, shell_prefix
from spmi_dbg.superpmi_argv import parse_command

_PARALLEL = ("-p", "-parallel")
_COMPILE = ("-c", "-compile")


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

    def argv(
        self, compile_list: str | None = None, input: str | os.PathLike[str] | None = None
    ) -> list[str]:
        """The command line, on `input` (default: the collection), restricted to `-c
        compile_list`."""
        out = [self.program, *self.options]
        if compile_list:
            out += ["-c", compile_list]
        return [*out, *self.jits, str(input) if input is not None else self.input]

    def native_argv(
        self, compile_list: str | None = None, input: str | os.PathLike[str] | None = None
    ) -> list[str]:
        """argv() as it runs on this machine without a debugger: in the recorded environment only
        (`env -i`), under the emulator for --qemu."""
        return [*clean_prefix(self.env), *self.emulator, *self.argv(compile_list, input)]

    def numbers(self) -> list[int]:
        return (
            list(self.selection) if self.selection is not None else list(range(1, self.count + 1))
        )

    def partitions(self, workers: int) -> list[Partition]:
        """Contiguous shares of near-equal replay cost, by the records' bytes (the collection's
        index; issue 29: on the real api.mch with the Checked JIT the two halves by count replay in
        1.65 s and 2.35 s, by bytes in 1.99 s and 2.16 s), else of near-equal count. superpmi's own
        -p strides interleave; contiguous ranges keep each partition's earlier records -- the state
        a crash may depend on -- in front of it."""
        numbers = self.numbers()
        n = max(1, min(workers, len(numbers)))
        try:
            record = record_sizes(self.input)
            weights = [record[k - 1] for k in numbers]
        except (SpmiDbgError, OSError, IndexError):
            weights = [1] * len(numbers)
        prefix = list(itertools.accumulate(weights))
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

    def shell_line(self, input: str, quote: Callable[[str], str] = shell.quote) -> str:
        """The command as one sh line in the recorded environment only (`env -i PATH="$PATH"
        HOME="$HOME" NAME=VALUE... superpmi ...`), input given verbatim (e.g.
        `"$here/repro.mch"`)."""
        return (
            shell_prefix(self.env, quote)
            + " "
            + " ".join(quote(a) for a in [*self.emulator, self.program, *self.options, *self.jits])
            + " "
            + input
        )


def from_argv(argv: Sequence[str]) -> ReproCommand:
    """`spmi-dbg repro -- superpmi [options] jit1 [jit2] input.mch`."""
    if not argv:
        raise UsageError(
            "expected the superpmi command after --, e.g. spmi-dbg repro -- superpmi -a base.so "
            "diff.so x.mch"
        )
    parsed = parse_command(list(argv))
    if parsed.input is None:
        raise UsageError(f"no collection (.mch/.mc) in the command: {shlex.join(argv)}")
    if not parsed.jits:
        raise UsageError(f"no JIT (.so) in the command: {shlex.join(argv)}")
    options, selection, notes, parallel = _clean_options(parsed.options)
    return _checked(parsed.program, parsed.jits, parsed.input, options, selection, notes, parallel)


def from_options(
    *,
    mch: str,
    jit: str | None,
    base_jit: str | None,
    superpmi: str | None,
    target: str | None,
    jitoptions: Sequence[str],
    extra: Sequence[str],
) -> ReproCommand:
    """`spmi-dbg repro --mch X --base-jit B --jit D [--target arm64] [--jitoption k=v] -- -a`."""
    jits = [j for j in (base_jit, jit) if j]
    if not jits:
        raise UsageError("--mch needs --jit (and --base-jit for asm diffs)")
    program = superpmi or _bundled_replay()
    opts = list(extra)
    if target:
        opts += ["-target", target]
    for kv in jitoptions:
        opts += ["-jitoption", kv]
        if len(jits) == 2:  # superpmi.py's asmdiffs -jitoption applies to both JITs
            opts += ["-jit2option", kv]
    parsed = parse_command([program, *opts])
    if parsed.jits or parsed.input:
        raise UsageError(
            "with --mch, give only superpmi options after -- (JITs come from --jit/--base-jit)"
        )
    options, selection, notes, parallel = _clean_options(parsed.options)
    return _checked(program, jits, mch, options, selection, notes, parallel)


def _bundled_replay() -> str:
    found = paths.native_file(paths.REPLAY)
    if found is None:
        raise UsageError(
            "no --superpmi given and the bundled spmi-replay is not installed (reinstall spmi-dbg)"
        )
    return str(found)


def _clean_options(
    options: Sequence[str],
) -> tuple[list[str], MCList | None, list[str], bool]:
    out: list[str] = []
    selection: MCList | None = None
    notes: list[str] = []
    parallel = False
    i = 0
    while i < len(options):
        a = options[i]
        low = a.lower()
        if low in _PARALLEL:
            n = options[i + 1] if i + 1 < len(options) and options[i + 1].isdigit() else None
            parallel = True
            notes.append(
                f"dropped `{a}{' ' + n if n else ''}`: each partition runs sequentially under its "
                "own debugger"
            )
            i += 2 if n else 1
        elif low in _COMPILE and i + 1 < len(options):
            selection = parse_mclist(options[i + 1])
            i += 2
        elif low == "-stride":
            notes.append(
                f"dropped `-stride {' '.join(options[i + 1 : i + 3])}`: partitions are -c ranges"
            )
            i += 3
        else:
            out.append(a)
            i += 1
    return out, selection, notes, parallel


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


def _checked(
    program: str,
    jits: Sequence[str],
    mch: str,
    options: list[str],
    selection: MCList | None,
    notes: list[str],
    parallel: bool = False,
) -> ReproCommand:
    for path in (program, *jits, mch):
        # gdb takes the program and its arguments on one command line
        if "\n" in path or "\r" in path:
            raise UsageError(
                f"{printable(path)}: a path holding a line break cannot be given to a debugger; "
                "rename it, or give a symbolic link to it"
            )
    prog = _resolve_program(program)
    abs_jits = []
    for j in jits:
        p = Path(j)
        if not p.is_file():
            raise InputError(j, "JIT not found")
        if not os.access(p, os.R_OK):
            raise InputError(j, "JIT is not readable")
        abs_jits.append(str(p.resolve()))
    path, count = checked_collection(mch)
    if selection is not None and selection.last > count:
        raise InputError(
            mch, f"-c asks for method context {selection.last}; the collection has {count}"
        )
    return ReproCommand(
        prog,
        tuple(abs_jits),
        path,
        tuple(options),
        count,
        selection,
        tuple(notes),
        parallel=parallel,
    )


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
