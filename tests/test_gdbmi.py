"""The pygdbmi driver (spmi_dbg.driver.gdb.replay) on real processes under a real gdb: outcomes, the
signal policy, exit statuses, hangs, and gdb failing under it."""

from __future__ import annotations

import re
import shutil
import threading
import time
from pathlib import Path

import pytest

from spmi_dbg.driver.gdb.mi import mi_quote
from spmi_dbg.driver.gdb.replay import run_replay
from spmi_dbg.driver.outcome import PassedStop, ReplayOutcome
from spmi_dbg.driver.request import (
    NO_WATCH,
    REQUEST_TIMEOUT,
    DebuggerSetup,
    ReplayRequest,
    ReplayWatch,
)
from spmi_dbg.errors import ToolFailure

from .support.common import Collections
from .support.natives import BASE, DIFF, REPLAY, SEED_COMMAND, SEED_OPTIONS


def run(
    tmp_path: Path,
    *args: str,
    timeout: float = 60,
    watch: ReplayWatch = NO_WATCH,
    gdb: str = "gdb",
    request_timeout: float = REQUEST_TIMEOUT,
) -> ReplayOutcome:
    assert shutil.which("gdb") is not None, "gdb is required (.ci/run installs it)"
    request = ReplayRequest(
        (REPLAY, *args), timeout, tmp_path / "out", tmp_path / "err", tmp_path / "mi.log"
    )
    return run_replay(
        request, watch, gdb=gdb, config=DebuggerSetup(request_timeout=request_timeout)
    )


@pytest.mark.unit
def test_mi_quote() -> None:
    assert mi_quote('python print("a\\\\b")\n') == '"python print(\\"a\\\\\\\\b\\")\\n"'


def test_exit_statuses_are_read_in_octal(cols: Collections, tmp_path: Path) -> None:
    mch = str(cols.get("gdbmi-clean", 100))
    o = run(tmp_path, BASE, mch)
    assert (o.kind, o.exit_status, o.passed) == ("exited", 0, [])
    o = run(tmp_path, "-zzz", BASE, mch)
    assert (o.kind, o.exit_status) == ("exited", 255)  # MI says exit-code="0377"
    # the replay's own stderr, in its file
    assert "Unknown switch '-zzz'" in (tmp_path / "err").read_text()
    assert "'exit-code': '0377'" in (tmp_path / "mi.log").read_text()
    o = run(tmp_path, str(tmp_path / "nojit.so"), mch)
    assert (o.kind, o.exit_status) == ("exited", 254)


def test_first_chance_faults_then_the_fatal_stop(cols: Collections, tmp_path: Path) -> None:
    mch = str(
        cols.get(
            "gdbmi-jit-null",
            200,
            arch="arm64",
            seed=2,
            inject=[("jit-null", 20), ("seed-arm64", 150)],
        )
    )
    seen: list[PassedStop] = []
    o = run(tmp_path, *SEED_OPTIONS, BASE, DIFF, mch, watch=ReplayWatch(on_stop=seen.append))
    assert o.kind == "fatal" and o.method_context == 150
    assert [(p.signal, p.kind, p.method_context, p.delivered) for p in o.passed] == [
        ("SIGSEGV", "first-chance", 20, True)
    ] * 2
    assert seen == o.passed
    d = o.diagnosis.to_json() if o.diagnosis else {}
    assert d["null_map"]["member"] == "CompileMethod" and d["method_context"]["name"]
    assert (tmp_path / "err").read_text().count("Unexpected exception c0000005") == 2
    assert 0 < o.startup_seconds < o.seconds


@pytest.mark.parametrize("era", ["3.1", "today"])
def test_debug_break_absorbed_without_handler_delivered_with_one(
    cols: Collections, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """3.1's superpmi has no SIGTRAP handler: the break is absorbed, as a user's `continue` does;
    today's PAL catches SIGTRAP and turns a break in the JIT's protected call into an exception:
    delivered. Either way a failed compile, and the replay goes on."""
    if era == "3.1":
        monkeypatch.setenv("SPMI_REPLAY_ERA", "3.1")
    mch = str(cols.get("gdbmi-assert", 60, inject=[("jit-assert", 30)]))
    o = run(tmp_path, "-boa", BASE, mch)
    assert (o.kind, o.exit_status) == ("exited", 1)
    assert [(p.signal, p.kind, p.method_context, p.delivered, p.frame) for p in o.passed] == [
        ("SIGTRAP", "debug-break", 30, era == "today", "DebugBreakorAV")
    ]


def test_hang_is_interrupted_with_stacks(cols: Collections, tmp_path: Path) -> None:
    mch = str(cols.get("gdbmi-hang", 60, inject=[("hang", 30)]))
    start = time.monotonic()
    o = run(tmp_path, BASE, mch, timeout=1.5)
    assert time.monotonic() - start < 15
    assert o.kind == "hang" and o.method_context == 30
    # Interrupted somewhere in the loop: in optCanonicalizeLoops or a function inlined into it.
    names = [f.function for f in o.threads[0].frames]
    assert "Compiler::optCanonicalizeLoops" in names[:2]
    assert (
        o.diagnosis is not None
        and o.diagnosis.signature_frames[0] == "Compiler::optCanonicalizeLoops"
    )
    assert any(f.function == "JitInstance::CompileMethod" for f in o.threads[0].frames)


def test_cancel_stops_the_run(cols: Collections, tmp_path: Path) -> None:
    mch = str(cols.get("gdbmi-hang", 60, inject=[("hang", 30)]))
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    o = run(tmp_path, BASE, mch, timeout=60, watch=ReplayWatch(cancel=cancel))
    assert o.kind == "cancelled" and o.seconds < 10


def _wrapper(tmp_path: Path, action: str) -> str:
    script = tmp_path / "gdb-wrapper"
    # once gdb has started the replay (a child of its own) and it ran a moment: what the tests are
    # about
    script.write_text(
        '#!/bin/bash\ngdb "$@" <&0 &\npid=$!\n(until pgrep -P $pid >/dev/null; do sleep 0.1; '
        "done; "
        f"sleep 1; kill -{action} $pid) &\nwait $pid\n"
    )
    script.chmod(0o755)
    return str(script)


def test_gdb_killed_is_a_tool_failure(cols: Collections, tmp_path: Path) -> None:
    mch = str(cols.get("gdbmi-hang", 60, inject=[("hang", 30)]))
    with pytest.raises(ToolFailure, match=r"killed by SIGKILL\?\) while the replay was running"):
        run(tmp_path, BASE, mch, timeout=60, gdb=_wrapper(tmp_path, "KILL"))
    assert "# gdb exited" in (tmp_path / "mi.log").read_text()


def test_gdb_that_stops_answering_is_a_tool_failure(cols: Collections, tmp_path: Path) -> None:
    mch = str(cols.get("gdbmi-hang", 60, inject=[("hang", 30)]))
    start = time.monotonic()
    with pytest.raises(ToolFailure, match=r"did not answer `-exec-interrupt` within 2 s"):
        run(tmp_path, BASE, mch, timeout=2, request_timeout=2, gdb=_wrapper(tmp_path, "STOP"))
    assert time.monotonic() - start < 20


def test_a_warm_driver_runs_the_next_replay_in_the_same_gdb(
    cols: Collections, tmp_path: Path
) -> None:
    """driver/pool.py: a replay of the same program after a fatal stop runs in the session the
    first left (the same gdb, the stopped replay killed first), with the same outcome as a fresh
    gdb's; a request with its own pass limit gets a fresh one; after close, every replay does."""
    from spmi_dbg.driver.gdb.driver import GdbDriver
    from spmi_dbg.driver.pool import Warm

    mch = str(cols.get("gdbmi-warm", 200, arch="arm64", seed=2, inject=[("seed-arm64", 150)]))

    def request(name: str, **kw: object) -> ReplayRequest:
        return ReplayRequest(
            (*SEED_COMMAND, mch),
            60,
            tmp_path / f"{name}.out",
            tmp_path / f"{name}.err",
            tmp_path / f"{name}.log",
            **kw,  # type: ignore[arg-type]
        )

    fresh = GdbDriver("gdb").run_replay(request("fresh"))
    with Warm(GdbDriver("gdb")) as warm:
        first = warm.run_replay(request("first"))
        again = warm.run_replay(request("again"))
        assert warm.reused == 1
        own_limit = warm.run_replay(request("limit", max_passes=0))
        assert warm.reused == 1  # a fresh gdb: the session's limit is set when it starts
    after = warm.run_replay(request("after"))
    assert warm.reused == 1
    for o in (first, again, own_limit, after):
        assert (o.kind, o.method_context) == (fresh.kind, fresh.method_context) == ("fatal", 150)
    assert again.diagnosis is not None and fresh.diagnosis is not None
    assert again.diagnosis.bucket == fresh.diagnosis.bucket
    # the second replay's traffic went to its own transcript, in the first one's gdb: no new start
    assert "-exec-run" in (tmp_path / "again.log").read_text()
    assert "-gdb-set mi-async on" not in (tmp_path / "again.log").read_text()
    assert "-gdb-set mi-async on" in (tmp_path / "after.log").read_text()


def test_notifications_no_loop_reads_are_kept_as_text(cols: Collections, tmp_path: Path) -> None:
    """The library and thread events of a replay's start are not parsed (mi.UNREAD_NOTIFICATIONS):
    the transcript keeps their text; the events the loop reads still arrive parsed."""
    o = run(tmp_path, BASE, str(cols.get("gdbmi-clean", 100)))
    assert (o.kind, o.exit_status) == ("exited", 0)
    log = (tmp_path / "mi.log").read_text()
    assert re.search(r"^< \*library-loaded id=\"[^\"]*libsamplejit_base\.so\"", log, re.M), log
    assert re.search(r"^< \*thread-group-started \{'id': 'i1', 'pid': '\d+'\}", log, re.M), log
