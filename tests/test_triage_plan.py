"""`spmi-dbg triage`'s plan, journal and accounting without a debugger: the partitions
(triage/plan.py) cover every selected method context of every collection once, contiguous and in
order, sized by bytes or by
--partition-methods; `--mch` arguments become collections; a saved plan is only resumed by the same
command; the coverage (triage/coverage.py) counts each method context once; a partition's journal
(triage/journal.py) round-trips, one written before its entries were typed reads back to the same
JSON, and an unreadable one is an error naming its path."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import math
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from spmi_dbg import exits
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.errors import InputError, SpmiDbgError, UsageError
from spmi_dbg.failures.output import Failure
from spmi_dbg.mch.collection import Collection
from spmi_dbg.mch.mclist import MCList, parse_mclist
from spmi_dbg.repro.command import Partition, ReproCommand
from spmi_dbg.repro.expect import Expectation
from spmi_dbg.repro.models import Located, PartitionRun
from spmi_dbg.triage import journal as journals
from spmi_dbg.triage import plan, task
from spmi_dbg.triage.coverage import coverage
from spmi_dbg.triage.engine import EngineReport
from spmi_dbg.triage.journal import (
    CrashEntry,
    Journal,
    NotReached,
    Running,
    Segment,
    SegmentRecord,
    ToolFailureEntry,
)
from spmi_dbg.triage.models import PartitionFound
from spmi_dbg.triage.plan import (
    PARTITIONS_PER_WORKER,
    TriagePartition,
    check_resumable,
    collections_of,
    command_for,
    member_names,
    plan_json,
    plan_partitions,
    record_sizes,
)
from spmi_dbg.triage.run import TriageRun
from spmi_dbg.triage.sweep import Declared, SweepState
from spmi_dbg.triage.task import KILLER_REASON, MAX_CRASHES_REASON

from .support.common import Collections

pytestmark = pytest.mark.unit  # none of these tests starts a process

# The command the plans are made for: never run here (plan_partitions reads only the collections).
BASE = ReproCommand(
    "/opt/core_root/superpmi",
    ("/opt/base/libclrjit.so", "/opt/diff/libclrjit.so"),
    "/none.mch",
    ("-a", "-target", "arm64"),
    1,
)


@pytest.fixture(scope="module")
def three(cols: Collections) -> list[ReproCommand]:
    """Three collections of different sizes, one with a ~60 KB record (a stack-overflow method)
    among ~1 KB ones."""
    return [
        command_for(
            BASE,
            str(cols.get("plan-a", 300, arch="arm64", seed=5, inject=[("stack-overflow", 120)])),
        ),
        command_for(BASE, str(cols.get("plan-b", 130, seed=2))),
        command_for(BASE, str(cols.get("plan-c", 41, seed=3))),
    ]


@pytest.fixture(scope="module")
def even(cols: Collections) -> list[ReproCommand]:
    """Three collections whose records are all small (a few KB at most)."""
    return [
        command_for(BASE, str(cols.get("plan-even", 300, arch="arm64", seed=5))),
        command_for(BASE, str(cols.get("plan-b", 130, seed=2))),
        command_for(BASE, str(cols.get("plan-c", 41, seed=3))),
    ]


def target_of(commands: list[ReproCommand], workers: int) -> int:
    """The byte target the plan promises: total / (workers x PARTITIONS_PER_WORKER), at most
    PARTITION_BYTES."""
    total = sum(sum(record_sizes(c.input)[n - 1] for n in c.numbers()) for c in commands)
    return max(1, min(plan.PARTITION_BYTES, math.ceil(total / (workers * PARTITIONS_PER_WORKER))))


def check_covers(parts: list[TriagePartition], commands: list[ReproCommand]) -> None:
    """Every selected number of every collection exactly once, in order, each partition a contiguous
    run of its collection's selection, the collections in the commands' order and never interleaved
    or mixed."""
    assert [p.index for p in parts] == list(range(1, len(parts) + 1))
    grouped = [(c, list(ps)) for c, ps in itertools.groupby(parts, key=lambda p: p.collection)]
    assert [c for c, _ in grouped] == [c.input for c in commands]
    for cmd, (_, ps) in zip(commands, grouped, strict=True):
        selected = cmd.numbers()
        assert [n for p in ps for n in p.numbers] == selected
        sizes = record_sizes(cmd.input)
        pos = 0
        for p in ps:
            numbers = list(p.numbers)
            assert numbers and numbers == selected[pos : pos + len(numbers)]
            pos += len(numbers)
            assert p.methods == len(numbers) and p.spec == MCList.of(numbers).spec()
            assert p.bytes == sum(sizes[n - 1] for n in numbers)
            if cmd.selection is None:
                assert len(p.numbers.ranges) == 1  # one -c range
            assert TriagePartition.from_json(json.loads(json.dumps(p.to_json()))) == p


@pytest.mark.parametrize("workers", [1, 2, 3, 8, 16])
def test_partitions_by_bytes_cover_everything_once(three: list[ReproCommand], workers: int) -> None:
    parts = plan_partitions(three, workers)
    check_covers(parts, three)
    assert len(parts) >= workers * PARTITIONS_PER_WORKER  # 471 method contexts allow it
    target = target_of(three, workers)
    # within the target at record granularity: what is over it is the piece's last record
    for p in parts:
        sizes = record_sizes(p.collection)
        assert p.bytes - sizes[p.numbers.last - 1] < target, (p, target)
        # a record larger than the target (the 60 KB one, from 8 workers on) is a partition of its
        # own
        assert p.methods == 1 or all(sizes[n - 1] <= target for n in p.numbers), (p, target)
    alone = (three[0].input, "120") in [(p.collection, p.spec) for p in parts]
    assert alone == (record_sizes(three[0].input)[119] > target), (workers, target)


@pytest.mark.parametrize("workers", [1, 2, 3, 4, 5, 8, 16, 30])
def test_partitions_by_bytes_at_least_two_per_worker(
    even: list[ReproCommand], workers: int
) -> None:
    parts = plan_partitions(even, workers)
    check_covers(parts, even)
    assert len(parts) >= workers * PARTITIONS_PER_WORKER
    target = target_of(even, workers)
    for cmd in even:  # each collection in as few near-equal pieces as keep within the target
        sizes = record_sizes(cmd.input)
        total, largest = sum(sizes), max(sizes)
        pieces = [p.bytes for p in parts if p.collection == cmd.input]
        assert len(pieces) == math.ceil(total / target)
        assert all(abs(b - total / len(pieces)) < largest for b in pieces), (pieces, largest)


def test_partition_bytes_cap(even: list[ReproCommand], monkeypatch: pytest.MonkeyPatch) -> None:
    """PARTITION_BYTES bounds a piece even with one worker."""
    monkeypatch.setattr(plan, "PARTITION_BYTES", 20_000)
    parts = plan_partitions(even, 1)
    check_covers(parts, even)
    assert len(parts) > 2 * len(even)
    for p in parts:
        assert p.bytes - record_sizes(p.collection)[p.numbers.last - 1] < 20_000


def test_an_oversized_record_does_not_swallow_its_neighbours(cols: Collections) -> None:
    cmd = command_for(
        BASE, str(cols.get("plan-oversized", 40, seed=1, inject=[("stack-overflow", 20)]))
    )
    sizes = record_sizes(cmd.input)
    target = target_of([cmd], 2)
    # 1-19, 20, 21-40 would do
    if not (sizes[19] > target > sum(sizes[:19]) and sum(sizes[20:]) < target):
        pytest.fail(f"not the collection this test is about: {sizes}, target {target}")
    parts = plan_partitions([cmd], 2)
    check_covers(parts, [cmd])
    assert all(p.bytes <= target or p.methods == 1 for p in parts), [
        (p.spec, p.bytes, target) for p in parts
    ]
    assert len(parts) >= 2 * PARTITIONS_PER_WORKER
    # 1-19, 20 alone, and the largest piece left (21-40) halved by bytes for the fourth partition
    assert [p.spec for p in parts[:2]] == ["1-19", "20"] and len(parts) == 4
    assert parts[2].numbers.first == 21 and parts[3].numbers.last == 40
    assert abs(parts[2].bytes - parts[3].bytes) < max(sizes[20:]), [
        (p.spec, p.bytes) for p in parts
    ]


def test_partition_methods_gives_pieces_of_n(three: list[ReproCommand]) -> None:
    parts = plan_partitions(three, 7, partition_methods=100)
    check_covers(parts, three)
    a, b, c = (cmd.input for cmd in three)
    assert [(p.collection, p.spec) for p in parts] == [
        (a, "1-100"),
        (a, "101-200"),
        (a, "201-300"),
        (b, "1-100"),
        (b, "101-130"),
        (c, "1-41"),
    ]
    by_41 = plan_partitions(three, 1, partition_methods=41)  # 8 + 4 + 1 pieces
    check_covers(by_41, three)
    assert [p.index for p in by_41] == list(range(1, 14)) and [p.methods for p in by_41[6:9]] == [
        41,
        13,
        41,
    ]
    whole = plan_partitions(three, 2, partition_methods=1000)
    assert [(p.collection, p.spec) for p in whole] == [(a, "1-300"), (b, "1-130"), (c, "1-41")]
    ones = plan_partitions([three[2]], 2, partition_methods=1)
    assert [p.spec for p in ones] == [str(n) for n in range(1, 42)]


def test_a_selection_is_respected(three: list[ReproCommand]) -> None:
    selection = parse_mclist("5-40,60,70-120,200-250,299")
    cmd = dataclasses.replace(three[0], selection=selection)
    for workers in (1, 2, 5):
        parts = plan_partitions([cmd], workers)
        check_covers(parts, [cmd])
        assert parts[0].numbers.first == 5 and parts[-1].numbers.last == 299
        assert sum(p.methods for p in parts) == selection.count() == 140
    by_n = plan_partitions([cmd], 2, partition_methods=25)
    check_covers(by_n, [cmd])
    assert [p.methods for p in by_n] == [25] * 5 + [15]
    assert by_n[0].spec == "5-29" and by_n[1].spec == "30-40,60,70-82"
    with pytest.raises(UsageError, match="nothing to replay"):
        plan_partitions([dataclasses.replace(cmd, selection=MCList(()))], 2)


def test_without_an_index_the_same_partitions(three: list[ReproCommand], tmp_path: Path) -> None:
    """record_sizes scans the record headers when there is no .mct: the same sizes, the same
    plan."""
    src = Path(three[0].input)
    copy = tmp_path / src.name
    shutil.copyfile(src, copy)  # the .mch alone
    with Collection.open(src) as indexed, Collection.open(copy) as bare:
        assert indexed.toc is not None and bare.toc is None
    cmd = command_for(BASE, str(copy))
    assert cmd.count == three[0].count == 300
    assert record_sizes(str(copy)) == record_sizes(str(src))
    for workers, methods in ((1, None), (2, None), (3, None), (16, None), (2, 64)):
        indexed_plan = [(p.numbers, p.bytes) for p in plan_partitions([three[0]], workers, methods)]
        bare_plan = [(p.numbers, p.bytes) for p in plan_partitions([cmd], workers, methods)]
        assert bare_plan == indexed_plan
        assert all(p.collection == str(copy) for p in plan_partitions([cmd], workers, methods))


def test_collections_of_directories_and_files(tmp_path: Path) -> None:
    d = tmp_path / "mch"
    (d / "sub.mch").mkdir(parents=True)  # a directory named *.mch: not a collection
    (d / "nested").mkdir()
    for name in ("libraries.pmi.mch", "benchmarks.mch", "coreclr_tests.mch", "nested/deeper.mch"):
        (d / name).write_bytes(b"x")
    for name in ("benchmarks.mch.mct", "notes.txt", "README"):
        (d / name).write_bytes(b"x")
    os.mkfifo(d / "zz.mch")  # not a regular file: left out of the directory's list
    listed = [str(d / n) for n in ("benchmarks.mch", "coreclr_tests.mch", "libraries.pmi.mch")]
    assert collections_of([str(d)]) == listed  # sorted by name, not recursive
    # Each collection once, at its first mention (a file also named through its directory, a symlink
    # to it).
    (tmp_path / "link.mch").symlink_to(d / "coreclr_tests.mch")
    other = tmp_path / "other.mch"
    other.write_bytes(b"x")
    got = collections_of(
        [
            str(d / "libraries.pmi.mch"),
            str(other),
            str(d),
            str(tmp_path / "link.mch"),
            str(other),
            str(d) + "/",
        ]
    )
    assert got == [
        str(d / "libraries.pmi.mch"),
        str(other),
        str(d / "benchmarks.mch"),
        str(d / "coreclr_tests.mch"),
    ]
    # A path that does not exist is passed on: the command for it says so.
    missing = str(tmp_path / "missing.mch")
    assert collections_of([missing]) == [missing]
    with pytest.raises(InputError, match=r"missing\.mch: collection not found"):
        command_for(BASE, missing)


def test_collections_of_refuses_what_is_not_a_collection(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "x.mct").write_bytes(b"x")
    (empty / "x.mch.txt").write_bytes(b"x")
    with pytest.raises(InputError) as e:
        collections_of([str(empty)])
    assert str(e.value) == f"{empty}: --mch: the directory holds no .mch files"
    fifo = tmp_path / "pipe.mch"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as e:
        collections_of([str(fifo)])  # never opened: a FIFO without a writer would block
    assert str(e.value) == f"{fifo}: --mch: not a regular file or a directory"
    with pytest.raises(InputError, match="not a regular file"):
        command_for(BASE, str(fifo))


def test_member_names() -> None:
    cs = [
        "/mch/a/libraries.pmi.mch",
        "/mch/b/libraries.pmi.mch",
        "/mch/a/benchmarks.mch",
        "rel/x.mch",
    ]
    assert member_names(cs) == {
        "/mch/a/libraries.pmi.mch": "/mch/a/libraries.pmi.mch",
        "/mch/b/libraries.pmi.mch": "/mch/b/libraries.pmi.mch",
        "/mch/a/benchmarks.mch": "benchmarks.mch",
        "rel/x.mch": "x.mch",
    }
    assert member_names(["/a/x.mch"]) == {"/a/x.mch": "x.mch"}
    assert member_names([]) == {}


def test_check_resumable_only_the_same_command(three: list[ReproCommand]) -> None:
    parts = plan_partitions(three, 2)
    saved = json.loads(json.dumps(plan_json(three, parts)))  # as partitions/plan.json holds it
    assert check_resumable(saved, three, "out") == parts
    selected = dataclasses.replace(three[0], selection=parse_mclist("1-50"))
    others = {
        "options": [dataclasses.replace(three[0], options=("-a",)), *three[1:]],
        "jit": [dataclasses.replace(three[0], jits=("/opt/base/libclrjit.so",)), *three[1:]],
        "fewer collections": three[:2],
        "other order": [three[1], three[0], three[2]],
        "selection": [selected, *three[1:]],
    }
    for what, commands in others.items():
        with pytest.raises(UsageError) as e:
            check_resumable(saved, commands, "/work/t")
        msg = str(e.value)
        assert (
            msg.startswith("--resume: /work/t holds a triage of another command (")
            and "\n" not in msg
        ), what
        assert "/opt/core_root/superpmi -a -target arm64" in msg and "leave out --resume" in msg, (
            what
        )
        assert e.value.exit_code == exits.USAGE
    with pytest.raises(UsageError, match="--resume"):
        check_resumable({**saved, "schema": 2}, three, "out")
    with pytest.raises(UsageError, match="--resume"):
        check_resumable({}, three, "out")
    # With a selection, the same selection resumes.
    sel_parts = plan_partitions([selected], 2)
    assert (
        check_resumable(json.loads(json.dumps(plan_json([selected], sel_parts))), [selected], "o")
        == sel_parts
    )


def _broken_plan(saved: dict[str, Any], how: str) -> Any:
    out = json.loads(json.dumps(saved))
    first = out["partitions"][0]
    if how == "not-an-object":
        return [out]
    if how == "partition-missing-fields":
        out["partitions"][0] = {"index": 1}
    elif how == "bad-compile":
        first["compile"] = "9-3"
    elif how == "another-collection":
        first["collection"] = "/elsewhere/x.mch"
    elif how == "no-partitions":
        out["partitions"] = []
    elif how == "beyond-the-collection":
        last = out["partitions"][-1]
        last["compile"] = f"{last['compile'].split('-')[0]}-{last['compile'].split('-')[1]}0"
    return out


@pytest.mark.parametrize(
    "how",
    [
        "not-an-object",
        "partition-missing-fields",
        "bad-compile",
        "another-collection",
        "no-partitions",
        "beyond-the-collection",
    ],
)
def test_check_resumable_refuses_a_broken_plan(three: list[ReproCommand], how: str) -> None:
    """A plan.json a foreign hand broke is refused as not this triage's plan (one line naming
    --resume)."""
    saved = json.loads(
        json.dumps(plan_json(three, plan_partitions(three, 2, partition_methods=100)))
    )
    assert len(check_resumable(saved, three, "out")) == 6
    # a UsageError or an InputError naming the plan
    with pytest.raises(SpmiDbgError, match="--resume"):
        check_resumable(_broken_plan(saved, how), three, "out")


def _failure(kind: str, n: int) -> Failure:
    if kind == "assert":
        return Failure(
            "assert",
            n,
            f"ISSUE: <ASSERT> #{n} x.cpp (1) - Assertion failed 'x' in 'M' during 'P'",
            "x",
            file="x.cpp",
            source_line=1,
            method="M",
            phase="P",
        )
    return Failure(
        "error", n, f"ERROR: Method {n} of size 9 failed to load and compile correctly", "boom"
    )


def _crash(n: int, segment: int = 1) -> CrashEntry:
    return CrashEntry(n, segment, None)


UNIDENTIFIED = "a crash in this replay whose method context could not be identified"
TASK_FAILED = "the partition's task failed: ValueError: broken journal"


def _journals() -> list[Journal]:
    a1 = Journal(
        TriagePartition.of(1, "/c/a.mch", MCList(((1, 50),)), 5000),
        accounted=50,
        done=True,
        crashes=[_crash(10), _crash(30)],
        failures=[_failure("assert", 5), _failure("error", 10), _failure("assert", 45)],
        failed_compiles=[5, 7, 10],  # 5: also an assert line; 10: the crash
        # 45 has a failure line
        not_reached=[NotReached("41-50", MAX_CRASHES_REASON)],
    )
    a2 = Journal(
        TriagePartition.of(2, "/c/a.mch", MCList(((51, 80),)), 3000),
        accounted=80,
        done=True,
        crashes=[_crash(75)],
        failures=[_failure("error", 70), _failure("assert", 78)],
        failed_compiles=[70],
        killers=[60],
        not_reached=[NotReached("60", KILLER_REASON), NotReached("76-80", UNIDENTIFIED)],
    )
    b = Journal(
        TriagePartition.of(3, "/c/b.mch", MCList(((1, 10), (20, 30))), 2100),
        accounted=30,
        crashes=[_crash(25)],
        failed_compiles=[3, 27],
        not_reached=[NotReached("26-30", TASK_FAILED)],
    )
    stray = Journal(
        TriagePartition.of(4, "/d/stray.mch", MCList(((1, 5),)), 500),
        accounted=5,
        done=True,
        failures=[_failure("error", 2)],
    )
    return [a1, a2, b, stray]


def _oracle(js: list[Journal]) -> dict[str, dict[str, int]]:
    """Each method context put in exactly one class by hand: crashed, failed compile, not reached,
    else clean."""
    out: dict[str, dict[str, int]] = {}
    for j in js:
        counts = out.setdefault(j.partition.collection, {})
        crashed = {c.method_context for c in j.crashes}
        failed = {f.method_context for f in j.failures} | set(j.failed_compiles)
        for n in j.partition.numbers:
            reasons = [e.reason for e in j.not_reached if n in parse_mclist(e.compile)]
            assert len(reasons) <= 1
            what = (
                "crashed"
                if n in crashed
                else "failed_compile"
                if n in failed
                else f"not_reached:{reasons[0]}"
                if reasons
                else "replayed_clean"
            )
            counts[what] = counts.get(what, 0) + 1
    return out


def test_coverage_counts_each_method_context_once() -> None:
    js = _journals()
    names = {"/c/a.mch": "a.mch", "/c/empty.mch": "empty.mch", "/c/b.mch": "b.mch"}
    covs = coverage(js, names)
    assert [c.collection for c in covs] == ["/c/a.mch", "/c/empty.mch", "/c/b.mch", "/d/stray.mch"]
    a, empty, b, stray = covs
    assert (a.method_contexts, a.crashed, a.failed_compile, a.replayed_clean, a.partitions) == (
        80,
        3,
        5,
        58,
        2,
    )
    assert a.not_reached == {MAX_CRASHES_REASON: 9, KILLER_REASON: 1, UNIDENTIFIED: 4}
    assert a.killers == [60] and len(a.not_reached_lists) == 3
    assert (b.method_contexts, b.crashed, b.failed_compile, b.not_reached, b.replayed_clean) == (
        21,
        1,
        2,
        {TASK_FAILED: 4},
        14,
    )
    assert (empty.method_contexts, empty.partitions, empty.replayed_clean) == (0, 0, 0)
    assert (stray.name, stray.method_contexts, stray.failed_compile, stray.replayed_clean) == (
        "stray.mch",
        5,
        1,
        4,
    )
    oracle = _oracle(js)
    for cov in (a, b, stray):
        d = cov.to_json()
        assert (
            d["replayed_clean"] + d["crashed"] + d["failed_compile"] + d["not_reached"]
            == d["method_contexts"]
        )
        got = {
            "crashed": d["crashed"],
            "failed_compile": d["failed_compile"],
            "replayed_clean": d["replayed_clean"],
        } | {f"not_reached:{r['reason']}": r["count"] for r in d["not_reached_reasons"]}
        assert {k: v for k, v in got.items() if v} == oracle[cov.collection]
        assert [r["reason"] for r in d["not_reached_reasons"]] == sorted(cov.not_reached)
    assert a.to_json()["worker_killers"] == [60] and a.to_json()["collection"] == "a.mch"


def _full_journal() -> Journal:
    p = TriagePartition.of(7, "/c/a.mch", MCList(((1, 10), (20, 30))), 4321)
    return Journal(
        p,
        accounted=25,
        done=False,
        running=Running(26, 30, "26-30", "host (pid 1)"),
        window_end=28,
        deaths={"1-30": 2, "26-30": 1},
        segments=[_segment(7, "1-10,20-30", 1)],
        crashes=[CrashEntry(22, 1, Expectation("crash", "SIGSEGV", "0efd428583"))],
        failures=[_failure("assert", 5)],
        failed_compiles=[5, 8],
        not_reached=[NotReached("24", KILLER_REASON)],
        killers=[24],
        tool_failures=[ToolFailureEntry("1-10", ["gdb died"])],
        notes=["a note"],
        attempts=3,
        seconds=12.5,
        storm=SweepState("0efd428583", 23, [23, 26], [0], 2, None, {"SIGSEGV": [23]}, 1, 0.25),
    )


def _segment(partition: int, spec: str, k: int) -> Segment:
    def at(name: str) -> Path:
        return Path(f"/x/p{partition}/seg-{k}.{name}")

    return Segment(
        partition,
        spec,
        parse_mclist(spec).count(),
        "fatal",
        1,
        [],
        None,
        None,
        0,
        1.5,
        0.25,
        [],
        "/c/a.mch",
        "host (pid 1)",
        at("stdout"),
        at("stderr"),
        at("debugger.log"),
        at("json"),
    )


def test_journal_round_trip(tmp_path: Path) -> None:
    j = _full_journal()
    data = j.to_json()
    assert (
        data["schema"] == journals.JOURNAL_SCHEMA and data["partition"]["compile"] == "1-10,20-30"
    )
    back = Journal.from_json(json.loads(json.dumps(data)))
    assert back == j and back.to_json() == data
    journals.save(tmp_path, j)
    path = journals.journal_path(tmp_path, 7)
    assert path == tmp_path / "p7.json" and path.read_text().endswith("}\n")
    assert json.loads(path.read_text()) == data
    # its files, read where the directory is now (the journal was written in /x)
    (tmp_path / "p7").mkdir()
    journals.write_record(tmp_path / "p7" / "seg-1.json", SegmentRecord(None))
    here = copy.deepcopy(j)
    for seg in here.segments:
        for name in ("stdout", "stderr", "transcript", "record"):
            setattr(seg, name, tmp_path / "p7" / Path(str(getattr(seg, name))).name)
    assert journals.load(tmp_path, j.partition) == here
    assert journals.read(tmp_path, 7) == here
    assert journals.read(tmp_path, 8) is None
    # a replay's record lost: the partition starts again, and says why
    (tmp_path / "p7" / "seg-1.json").unlink()
    again = journals.load(tmp_path, j.partition)
    assert again.segments == [] and again.accounted == 0 and not again.done
    assert again.notes[0].startswith("partition 7 replayed again: a replay's record")
    progress = journals.read(tmp_path, 7)
    assert progress is not None and progress.segments == [] and not progress.done
    fresh = journals.load(tmp_path, dataclasses.replace(j.partition, index=8))
    assert fresh == Journal(dataclasses.replace(j.partition, index=8))
    assert Journal.from_json(json.loads(json.dumps(fresh.to_json()))) == fresh
    assert not list(tmp_path.glob("*.tmp*")) and sorted(f.name for f in tmp_path.iterdir()) == [
        "p7",
        "p7.json",
    ]


# A journal and a replay's record as the code before the typed entries wrote them (dicts and
# hand-written to_json): every kind of entry, a storm, the three failure kinds, a stop passed on.
OLD_JOURNAL = (
    '{"schema": 1, "partition": {"index": 2, "collection": "/c/a.mch", "compile": "1-10,20-40", '
    '"methods": 31, "bytes": 4321}, "accounted": 26, "done": false, "running": {"from": 27, "to": '
    '40, "compile": "27-40", "by": "host (pid 12)"}, "window_end": null, "deaths": {"27-40": 1}, '
    '"segments": [{"partition": 2, "compile": "1-10,20-40", "methods": 31, "status": "fatal", '
    '"attempts": 1, "failures": [], "exit_status": null, "signal": null, "stops_passed": 1, '
    '"seconds": 0.963, "debugger_startup_seconds": 0.605, "notes": [], "collection": "/c/a.mch", '
    '"by": "host (pid 12)", "stdout": "/o/p2/seg-1.stdout", "stderr": "/o/p2/seg-1.stderr", '
    '"transcript": "/o/p2/seg-1.debugger.log", "record": "/o/p2/seg-1.json"}], "crashes": '
    '[{"method_context": 21, "segment": 1, "expectation": {"kind": "crash", "signal": "SIGSEGV", '
    '"bucket": "0efd428583"}, "method_context_source": "mcIndex argument of '
    'JitInstance::CompileMethod (frame 8)", "bisection": [], "method_context_rejected": ["3 '
    '(frame 2): not in the replay"], "notes": ["a note"]}], "failures": [{"kind": "assert", '
    '"method_context": 7, "key": "assert: x (x.cpp:12)", "message": "x", "line": "ISSUE: <ASSERT> '
    "#7 x.cpp (12) - Assertion failed 'x' in 'M' during 'P' (IL size 9)\", \"file\": \"x.cpp\", "
    '"source_line": 12, "method": "M", "phase": "P", "il_size": 9}, {"kind": "error", '
    '"method_context": 8, "key": "error: boom", "message": "boom", "line": "ERROR: Method 8 of '
    'size 5 failed to load and compile correctly by JIT1 (j.so).", "jit": "JIT1", "il_size": 5}, '
    '{"kind": "missing", "method_context": 9, "key": "missing: no key", "message": "no key", '
    '"line": "MISSING: Method context 9 failed to replay: no key"}], "failed_compiles": [8], '
    '"not_reached": [{"compile": "22", "reason": "it killed its worker twice: not retried"}], '
    '"killers": [22], "tool_failures": [{"compile": "23", "failures": ["gdb died", "gdb died '
    'again"]}], "notes": ["partition 2: a storm"], "attempts": 2, "seconds": 3.094, "storm": '
    '{"bucket": "0efd428583", "since": 24, "slots": [24, 28, 33, 37], "sampled": [0], "window": '
    '2, "debugger_until": null, "not_diagnosed": {"SIGSEGV": [25, 26]}, "native_replays": 3, '
    '"native_seconds": 0.04, "declared": {"crashes": 10, "accounted": 13}}}'
)

OLD_RECORD = (
    '{"outcome": {"kind": "exited", "diagnosis": null, "passed": [{"signal": "SIGSEGV", "kind": '
    '"first-chance", "frame": "Compiler::gtFoldDivByConst", "method_context": 50, "pc": '
    '140737352333573, "delivered": true, "seconds": 0.001234, "address": 16}], "exit_status": 0, '
    '"signal": null, "threads": [], "seconds": 0.5, "startup_seconds": 0.25, "notes": ["n"]}, '
    '"failures": [{"kind": "assert", "method_context": 7, "key": "assert: x (x.cpp:12)", '
    '"message": "x", "line": "ISSUE: <ASSERT> #7 x.cpp (12) - Assertion failed \'x\' in \'M\' '
    'during \'P\' (IL size 9)", "file": "x.cpp", "source_line": 12, "method": "M", "phase": "P", '
    '"il_size": 9}, {"kind": "error", "method_context": 8, "key": "error: boom", "message": '
    '"boom", "line": "ERROR: Method 8 of size 5 failed to load and compile correctly by JIT1 '
    '(j.so).", "jit": "JIT1", "il_size": 5}], "failed_compiles": [8, 10]}'
)


def test_an_old_journal_reads_back_and_writes_the_same_json(tmp_path: Path) -> None:
    text = OLD_JOURNAL.replace('"/o/', f'"{tmp_path}/')
    j = Journal.from_json(json.loads(text))
    assert json.dumps(j.to_json()) == text  # the same keys, values and order
    assert j.running == Running(27, 40, "27-40", "host (pid 12)")
    assert j.segments[0].record == tmp_path / "p2" / "seg-1.json" and j.segments[0].outcome is None
    assert j.crashes[0].expectation == Expectation("crash", "SIGSEGV", "0efd428583")
    assert [(f.kind, f.jit, f.il_size) for f in j.failures] == [
        ("assert", None, 9),
        ("error", "JIT1", 5),
        ("missing", None, None),
    ]
    assert j.not_reached == [NotReached("22", KILLER_REASON)]
    assert j.tool_failures == [ToolFailureEntry("23", ["gdb died", "gdb died again"])]
    assert j.storm is not None and j.storm.declared == Declared(10, 13)
    assert j.crashed == {21, 25, 26} and j.not_diagnosed() == [(25, "SIGSEGV"), (26, "SIGSEGV")]
    journals.save(tmp_path, j)
    assert journals.journal_path(tmp_path, 2).read_text() == text + "\n"

    record = SegmentRecord.from_json(json.loads(OLD_RECORD))
    assert json.dumps(record.to_json()) == OLD_RECORD
    assert record.outcome is not None and record.outcome.passed[0].seconds == 0.001234
    (tmp_path / "p2").mkdir()
    journals.write_record(tmp_path / "p2" / "seg-1.json", record)
    assert (tmp_path / "p2" / "seg-1.json").read_text() == OLD_RECORD + "\n"
    full = journals.with_records(j)
    assert full.segments[0].outcome == record.outcome and j.segments[0].outcome is None
    assert full.failures == j.failures + record.failures and full.failed_compiles == [8, 10]
    # the returned form: the record's outcome in its segment, the rest as the journal says
    data = full.to_json()
    assert data["segments"][0]["outcome"] == json.loads(OLD_RECORD)["outcome"]
    assert Journal.from_json(json.loads(json.dumps(data))) == full
    assert "outcome" not in json.loads(text)["segments"][0]


def test_a_partitions_facts_are_made_from_an_old_journal(tmp_path: Path) -> None:
    """A partition's facts made from its journal (triage/models.py): the replays with their
    outcomes, the crash with its expectation, the storm's crashes not diagnosed, the failure lines,
    and triage.json's tool failures."""
    text = OLD_JOURNAL.replace('"/o/', f'"{tmp_path}/')
    (tmp_path / "p2").mkdir()
    (tmp_path / "p2" / "seg-1.json").write_text(OLD_RECORD + "\n")
    full = journals.with_records(Journal.from_json(json.loads(text)))
    result = TriageRun([full.partition], [full], EngineReport("local", 1, task_failures={3: "x"}))
    found = PartitionFound.of(full, "a.mch")
    (segment,) = found.runs
    assert segment.partition == Partition(2, tuple(parse_mclist("1-10,20-40")))
    assert segment.outcome is not None and segment.outcome.kind == "exited"
    assert segment.stdout == tmp_path / "p2" / "seg-1.stdout" and segment.attempts == 1
    (crash,) = found.crashes
    assert (crash.member, crash.bucket, crash.run) == ("a.mch:21", "0efd428583", segment)
    assert crash.located.method_context_rejected == ["3 (frame 2): not in the replay"]
    assert [(c.member, c.signal, c.storm) for c in found.not_diagnosed] == [
        ("a.mch:25", "SIGSEGV", "0efd428583"),
        ("a.mch:26", "SIGSEGV", "0efd428583"),
    ]
    assert found.collection == "/c/a.mch"
    output = found.output
    assert [f.method_context for f in output.failures] == [7, 8, 9, 7, 8]
    assert [f.method_context for f in output.failed_compiles] == [8, 10]
    assert json.dumps(result.tool_failures) == (
        '[{"compile": "23", "failures": ["gdb died", "gdb died again"], "partition": 2}, '
        '{"partition": 3, "compile": "", "failures": ["x"]}]'
    )


def test_a_record_that_cannot_be_read_is_a_note(tmp_path: Path) -> None:
    text = OLD_JOURNAL.replace('"/o/', f'"{tmp_path}/')
    j = Journal.from_json(json.loads(text))
    (tmp_path / "p2").mkdir()
    (tmp_path / "p2" / "seg-1.json").write_text('{"outcome": {"kind": "odd"}}')
    full = journals.with_records(j)
    assert full.segments[0].outcome is None and full.failures == j.failures
    assert full.notes[-1].startswith(
        f"{tmp_path}/p2/seg-1.json: the replay's record cannot be read"
    )
    assert "(SegmentRecord.outcome.kind: expected one of 'fatal', " in full.notes[-1]


def test_a_segment_carries_every_key_of_its_run(tmp_path: Path) -> None:
    """The journal's segment is the run's JSON (PartitionRun.to_json) and its files: a key the run
    gains and Segment lacks would be lost on the way."""
    run = PartitionRun(
        Partition(3, (5, 6, 7)),
        tmp_path / "seg-2.stdout",
        tmp_path / "seg-2.stderr",
        tmp_path / "seg-2.debugger.log",
        ReplayOutcome("signaled", exit_status=None, signal="SIGKILL", seconds=1.23456),
        attempts=2,
        failures=["gdb died"],
    )
    p = TriagePartition.of(3, "/c/a.mch", MCList(((1, 10),)), 100)
    segment = task._segment(run, p, "host (pid 1)", tmp_path / "seg-2.json")
    assert segment.to_json() == run.summary() | {
        "collection": "/c/a.mch",
        "by": "host (pid 1)",
        "stdout": str(run.stdout),
        "stderr": str(run.stderr),
        "transcript": str(run.transcript),
        "record": str(tmp_path / "seg-2.json"),
    }
    assert list(segment.to_json())[:3] == ["partition", "compile", "methods"]


def test_journal_remaining_and_give_up() -> None:
    j = Journal(TriagePartition.of(1, "/c/a.mch", MCList(((1, 10), (20, 30))), 100))
    assert j.remaining == j.partition.numbers
    j.accounted = 5
    assert j.remaining.spec() == "6-10,20-30"
    j.give_up("why", 22)
    assert j.not_reached == [NotReached("6-10,20-22", "why")] and j.accounted == 22
    j.give_up("rest")
    assert j.not_reached[-1] == NotReached("23-30", "rest") and j.accounted == 30
    assert j.remaining.count() == 0
    j.give_up("nothing left")
    assert len(j.not_reached) == 2 and j.accounted == 30


def test_journal_of_another_partition_is_an_error(tmp_path: Path) -> None:
    j = _full_journal()
    journals.save(tmp_path, j)
    path = journals.journal_path(tmp_path, 7)
    for other in (
        dataclasses.replace(j.partition, compile="1-10", methods=10),
        dataclasses.replace(j.partition, collection="/c/b.mch"),
        dataclasses.replace(j.partition, bytes=1),
    ):
        with pytest.raises(ValueError) as e:
            journals.load(tmp_path, other)
        assert str(e.value).startswith(f"{path}: the journal of another partition (")
        assert "'compile': '1-10,20-30'" in str(e.value)


def _bad_spec() -> str:
    data = _full_journal().to_json()
    data["partition"]["compile"] = "30-20"
    return json.dumps(data)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("garbage", id="not-json"),
        pytest.param("", id="empty"),
        pytest.param("{}", id="no-schema"),
        pytest.param('{"schema": 2}', id="other-schema"),
        pytest.param('{"schema": 1, "partition": {"index": 7}}', id="no-partition-fields"),
        pytest.param(
            json.dumps({**_full_journal().to_json(), "accounted": "many"}), id="accounted-not-int"
        ),
        pytest.param(
            json.dumps({**_full_journal().to_json(), "deaths": [1, 2]}), id="deaths-not-dict"
        ),
        pytest.param(
            "[]", id="list"
        ),  # these three raised AttributeError / MCListError before ddc383d
        pytest.param("null", id="null"),
        pytest.param(_bad_spec(), id="bad-compile"),
    ],
)
def test_unreadable_journal_is_an_error_naming_it(tmp_path: Path, text: str) -> None:
    p = _full_journal().partition
    path = journals.journal_path(tmp_path, p.index)
    path.write_text(text)
    with pytest.raises(ValueError) as e:
        journals.load(tmp_path, p)
    assert str(e.value).startswith(f"{path}: not a partition journal of this spmi-dbg (")
    # the progress display and the tally: unreadable is None
    assert journals.read(tmp_path, p.index) is None
    assert path.read_text() == text  # never silently restarted


def test_holding_is_one_attempt_at_a_time(tmp_path: Path) -> None:
    entered = threading.Event()

    def second() -> None:
        with journals.holding(tmp_path, 3):
            entered.set()

    with journals.holding(tmp_path, 3):
        t = threading.Thread(target=second)
        t.start()
        assert not entered.wait(0.5)  # waits for the first attempt
        with journals.holding(tmp_path, 4):  # another partition's lock is free
            pass
    assert entered.wait(10)
    t.join(10)
    assert (tmp_path / "p3.lock").is_file()


@pytest.mark.unit
def test_located_is_a_json_fact_its_winner_one_of_its_runs(tmp_path: Path) -> None:
    """repro/models.py's facts read back whole: the partition's numbers, the outcome, the files,
    and the winner the very run of `runs` it was."""
    runs = [
        PartitionRun(
            Partition(i, (10 * i, 10 * i + 1)),
            tmp_path / f"p{i}.stdout",
            tmp_path / f"p{i}.stderr",
            tmp_path / f"p{i}.log",
            ReplayOutcome("exited" if i == 1 else "fatal", exit_status=0 if i == 1 else None),
            attempts=1,
        )
        for i in (1, 2)
    ]
    located = Located(runs, winner=runs[1], method_context=21, method_context_source="mcIndex")
    back = Located.from_json(json.loads(json.dumps(located.to_json())))
    assert back == located and back.winner is back.runs[1]
    assert back.runs[0].summary() == runs[0].summary()
