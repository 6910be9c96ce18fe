"""Writing sample collections: random methods, corpus methods and injected triggers -> .mch + .mct.

Numbering: corpus methods (if any) are method contexts 1..k in the order given; random methods fill
the rest up to `methods`; an injection replaces the method at its number. The random method at each
number is the same whatever is injected or placed elsewhere (every number draws its random method
from the main RNG, in order, even when it is replaced), so collections differ only where they were
asked to.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spmi_dbg.atomic import atomic_open, check_output
from spmi_dbg.errors import InputError, UsageError
from spmi_dbg.mch.collection import write_index_file
from spmi_dbg.mch.mct import toc_path_for
from spmi_dbg.sample.asm import Assembly, assemble_file
from spmi_dbg.sample.builder import Method, RecordBuilder, class_handle_for, ftn_for, scope_for
from spmi_dbg.sample.gen import CLASSES, Generator
from spmi_dbg.sample.inject import injected

BATCH = 4096


@dataclass
class BuildResult:
    path: Path
    toc: Path
    count: int
    size: int
    seconds: float
    # number -> injected kind or "corpus:<name>"
    placed: dict[int, str] = field(default_factory=dict)


def corpus_files(specs: Iterable[str]) -> list[Path]:
    """Corpus arguments (files or directories, comma-separated lists allowed) -> .il files in order;
    a directory contributes its *.il files sorted by name."""
    out: list[Path] = []
    for spec in specs:
        for part in spec.split(","):
            part = part.strip()
            if not part:
                continue
            p = Path(part)
            if p.is_dir():
                files = sorted(p.glob("*.il"))
                if not files:
                    raise UsageError(f"--corpus {part}: the directory has no .il files")
                out += files
            elif p.is_file():
                out.append(p)
            else:
                raise UsageError(f"--corpus {part}: no such file or directory")
    return out


def load_corpus(paths: Sequence[Path]) -> list[Assembly]:
    return [assemble_file(p) for p in paths]


class _CorpusHandles:
    """Class handles for assembled methods: one per distinct class name, apart from the random
    pool's."""

    def __init__(self) -> None:
        self.classes: dict[str, int] = {}

    def __call__(self, m: Method) -> int:
        idx = self.classes.setdefault(m.class_name, len(self.classes))
        return class_handle_for(CLASSES + 1 + idx)


def records_for_methods(methods: Sequence[Method], builder: RecordBuilder) -> Iterator[bytes]:
    """Records for assembled methods, numbered from 1 (`spmi-dbg sample asm`)."""
    handles = _CorpusHandles()
    for n, m in enumerate(methods, 1):
        yield builder.record(m, ftn=ftn_for(n), class_handle=handles(m), scope=scope_for(0))


def collection_records(
    methods: int,
    seed: int,
    builder: RecordBuilder,
    *,
    injections: Sequence[tuple[str, int]] = (),
    corpus: Sequence[Method] = (),
    size_factor: float = 1.0,
) -> Iterator[bytes]:
    """The records of a sample collection, in order (see the module docstring for the numbering)."""
    placed = plan(methods, injections, corpus)
    gen = Generator(seed, size_factor)
    handles = _CorpusHandles()
    record = builder.record
    for n in range(1, methods + 1):
        g = gen.method(n)
        what = placed.get(n)
        if what is not None:
            if n <= len(corpus):
                m = corpus[n - 1]
                yield record(m, ftn=ftn_for(n), class_handle=handles(m), scope=scope_for(0))
                continue
            g = injected(gen, what, n)
        yield record(g.method, ftn=ftn_for(n), class_handle=g.class_handle, scope=g.scope)


def plan(
    methods: int, injections: Sequence[tuple[str, int]], corpus: Sequence[Method]
) -> dict[int, str]:
    """number -> what is placed there; UsageError for a number out of range or used twice."""
    if methods < 1:
        raise UsageError(f"--methods {methods}: expected at least 1")
    if len(corpus) > methods:
        raise UsageError(
            f"the corpus has {len(corpus)} methods but --methods is {methods}: "
            f"expected --methods >= {len(corpus)}"
        )
    placed: dict[int, str] = {n: f"corpus:{m.name}" for n, m in enumerate(corpus, 1)}
    for kind, n in injections:
        if n > methods:
            raise UsageError(f"--inject {kind}@{n}: the collection has {methods} method contexts")
        if n in placed:
            raise UsageError(f"--inject {kind}@{n}: method context {n} already holds {placed[n]}")
        placed[n] = kind
    return placed


def write_collection(
    out: str | os.PathLike[str], records: Iterable[bytes]
) -> tuple[Path, int, int]:
    """Write records to `out` (atomically) and its `.mct`; returns (toc path, count, bytes)."""
    out_path = check_output(out, what="collection")
    check_output(toc_path_for(out_path), what="collection's index")
    entries: list[tuple[int, int, bytes | None]] = []
    pos = 0
    n = 0
    try:
        with atomic_open(out_path) as f:
            batch: list[bytes] = []
            for rec in records:
                n += 1
                entries.append((pos, n, None))
                pos += len(rec)
                batch.append(rec)
                if len(batch) >= BATCH:
                    f.write(b"".join(batch))
                    batch.clear()
            f.write(b"".join(batch))
    except OSError as e:
        raise InputError(str(out_path), f"cannot write: {e.strerror}") from None
    toc = toc_path_for(out_path)
    write_index_file(toc, entries)
    return toc, n, pos


@dataclass(frozen=True)
class SampleSpec:
    """What a sample collection holds: how many method contexts, the generator's seed, the target,
    the triggers injected at chosen numbers, the corpus methods first, the JIT config recorded in
    each, and the generated methods' size factor."""

    methods: int
    seed: int
    arch: str = "x64"
    injections: Sequence[tuple[str, int]] = ()
    corpus: Sequence[Method] = ()
    config: Sequence[tuple[str, int, int]] = ()
    size_factor: float = 1.0


def build(out: str | os.PathLike[str], spec: SampleSpec) -> BuildResult:
    start = time.perf_counter()
    placed = plan(spec.methods, spec.injections, spec.corpus)  # validate before creating anything
    builder = RecordBuilder(spec.arch, config=spec.config)
    records = collection_records(
        spec.methods,
        spec.seed,
        builder,
        injections=spec.injections,
        corpus=spec.corpus,
        size_factor=spec.size_factor,
    )
    toc, count, size = write_collection(out, records)
    return BuildResult(Path(out), toc, count, size, time.perf_counter() - start, placed)
