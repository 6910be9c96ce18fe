"""What a diagnosis reads at a stop, kept between stops (issue 39): /proc/PID/status through a kept
descriptor (analysis/procfs.py) and the collection framed once per debugger process
(analysis/records.py). What is kept must never answer for a process that is gone or a file that
changed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from spmi_dbg.analysis import procfs, records

from .support.common import Collections


@pytest.mark.unit
def test_the_status_of_a_process_is_read_again_through_the_same_descriptor() -> None:
    first = procfs.caught_signals(os.getpid())
    kept = list(procfs._status)
    assert first is not None and [pid for pid, _ in kept] == [os.getpid()]
    signal.signal(signal.SIGUSR2, lambda *_: None)  # read afresh: a handler set since is seen
    try:
        again = procfs.caught_signals(os.getpid())
    finally:
        signal.signal(signal.SIGUSR2, signal.SIG_DFL)
    assert procfs._status == kept
    assert again is not None and again & (1 << (signal.SIGUSR2 - 1))


def test_a_process_that_is_gone_reads_as_unknown_not_as_its_last_status() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        assert procfs.caught_signals(child.pid) is not None
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
        assert procfs.caught_signals(child.pid) is None  # ESRCH on the kept descriptor
        assert procfs._status == []  # and it is closed
    finally:
        child.kill()
        child.wait()


@pytest.mark.unit
def test_a_collection_is_framed_once_and_again_when_it_changes(
    cols: Collections, tmp_path: Path
) -> None:
    mch = tmp_path / "c.mch"
    shutil.copyfile(cols.get("reads-10", 10), mch)
    with records.CollectionRecords(str(mch)) as a, records.CollectionRecords(str(mch)) as b:
        assert a.count == b.count == 10 and a._col is b._col
        same = a._col
    shutil.copyfile(cols.get("reads-12", 12), tmp_path / "new.mch")
    os.replace(tmp_path / "new.mch", mch)  # another collection under the same name
    with records.CollectionRecords(str(mch)) as c:
        assert c.count == 12 and c._col is not same


@pytest.mark.unit
def test_no_more_than_the_kept_collections_stay_open(cols: Collections) -> None:
    paths = [str(cols.get(f"reads-kept-{n}", n)) for n in (3, 4, 5)]
    for p in paths:
        with records.CollectionRecords(p) as r:
            assert r.problem is None
    kept = [key[0] for key in records._open]
    assert len(kept) <= records._OPEN_KEPT and kept[-1] == paths[-1]
    assert paths[0] not in kept
