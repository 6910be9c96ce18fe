"""triage/task.py SessionCache.lend: a triage's idle debugger sessions handed to its bundles' pool.
Bookkeeping only (which session goes where, which is closed): the sessions are stand-ins that
record what is done to them; the real gdb sessions' reuse is tested end to end in
tests/test_triage.py (a bundle's verification transcript has no gdb start)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.driver.gdb.driver import GdbDriver
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.request import ReplayRequest, ReplayWatch
from spmi_dbg.triage.task import SessionCache


@dataclass
class _Session:
    broken: bool = False
    closed: bool = False
    runs: int = 0

    def run(self, request: ReplayRequest, watch: ReplayWatch | None = None) -> ReplayOutcome:
        self.runs += 1
        return ReplayOutcome("exited", exit_status=0)

    def close(self) -> None:
        self.closed = True


def test_lend_hands_the_idle_sessions_over_and_closes_the_broken() -> None:
    gdb, other = GdbDriver("gdb"), GdbDriver("gdb-multiarch")
    cache = SessionCache()
    good, broken, foreign = _Session(), _Session(broken=True), _Session()
    cache.sessions = {
        (1, gdb, "/bin/superpmi"): good,  # type: ignore[dict-item]
        (2, gdb, "/bin/superpmi"): broken,  # type: ignore[dict-item]
        (3, other, "/bin/superpmi"): foreign,  # type: ignore[dict-item]
    }
    warm = cache.lend(gdb)
    # the lent and the broken left the cache; another driver's session stays for close_all
    assert list(cache.sessions.values()) == [foreign]
    assert broken.closed and not good.closed
    request = ReplayRequest(("/bin/superpmi", "x.mch"), 60, Path("o"), Path("e"), Path("t.log"))
    assert warm.run_replay(request).kind == "exited"
    assert good.runs == 1 and warm.reused == 1  # the lent session ran it: no new debugger
    warm.close()
    assert good.closed and not foreign.closed
    cache.close_all()
    assert foreign.closed and not cache.sessions
