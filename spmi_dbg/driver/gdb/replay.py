"""One replay under gdb through MI, to the stop that matters (issue 5, docs/debugger-notes.md):
natively as a session of one run (session.py), or in a qemu-user guest that gdb attaches to through
qemu's gdbstub. The rooms: mi.py (the MI channel), setup.py (gdb's settings, catchpoints and
symbols), loop.py (the event loop of one run to its outcome), ask.py (the diagnosis and stacks the
extension answers), session.py (one gdb for several runs), core.py (a core file post-mortem). gdb
dying or not answering a request in time raises ToolFailure."""

from __future__ import annotations

import subprocess
import time

from spmi_dbg.driver.gdb import setup
from spmi_dbg.driver.gdb.loop import MiRun, RunRules, StopNotes
from spmi_dbg.driver.gdb.mi import MiChannel
from spmi_dbg.driver.gdb.session import GdbSession
from spmi_dbg.driver.outcome import ReplayOutcome
from spmi_dbg.driver.qemu import QemuTarget, start_replay
from spmi_dbg.driver.qemu import kill as qemu_kill
from spmi_dbg.driver.request import (
    DEFAULT_SETUP,
    NO_WATCH,
    DebuggerSetup,
    ReplayRequest,
    ReplayWatch,
)
from spmi_dbg.errors import ToolFailure

# gdb attaching to qemu's gdbstub: reads the guest's libraries from the sysroot
CONNECT_TIMEOUT = 60.0


def run_replay(
    request: ReplayRequest,
    watch: ReplayWatch = NO_WATCH,
    *,
    gdb: str = "gdb",
    config: DebuggerSetup = DEFAULT_SETUP,
    qemu: QemuTarget | None = None,
) -> ReplayOutcome:
    """One fresh gdb on the request's argv until a fatal stop (with `stop_at_break`, also the first
    debug break), a hang, the replay's exit, or the watch's `cancel`. Every MI request must be
    answered within the set-up's `request_timeout` seconds (the full diagnosis gets
    ask.DIAGNOSE_TIMEOUT). With `qemu`, argv is a guest program: it runs under qemu's gdbstub
    (spmi_dbg.driver.qemu) and gdb attaches to it."""
    config = config.for_request(request)
    if qemu is None:  # a session of one run
        with GdbSession(request.log(), gdb=gdb, config=config) as session:
            return session.run(request, watch)
    return _in_guest(request, watch, gdb, config, qemu)


def _in_guest(
    request: ReplayRequest,
    watch: ReplayWatch,
    gdb: str,
    config: DebuggerSetup,
    qemu: QemuTarget,
) -> ReplayOutcome:
    start = time.monotonic()
    argv = list(request.argv)
    guest: subprocess.Popen[bytes] | None = None
    with open(request.log(), "a", encoding="utf-8", errors="replace") as log:
        channel = MiChannel(
            gdb,
            log,
            cwd=config.cwd,
            env=setup.replay_env(),
            request_timeout=config.request_timeout,
        )
        # the stops passed inside gdb, one JSON line each
        notes = StopNotes.beside(request.log())
        rules = RunRules(config.max_passes, request.stop_at_break, remote=True)
        run = MiRun(channel, watch, notes, rules, start=start)
        try:
            setup.for_replay(channel, argv[0], notes.path, config.max_passes, config.debug_dirs)
            setup.set_args(channel, argv)  # what argv() reads
            setup.remote_paths(channel, qemu, argv)
            guest, port = start_replay(qemu, request, config.cwd)
            log.write(f"# {' '.join(qemu.prefix())} -g {port} {' '.join(argv)} (pid {guest.pid})\n")
            run.inferior = guest.pid
            reply = channel.request(f"-target-select remote 127.0.0.1:{port}", CONNECT_TIMEOUT)
            if reply.error is not None:
                raise ToolFailure(
                    f"gdb could not attach to {qemu.emulator}'s gdbstub on port {port}: "
                    f"{reply.error}"
                )
            # the *stopped of the attach (the guest waits at its entry point)
            channel.events.clear()
            return run.until_outcome(request.timeout, "-exec-continue")
        finally:
            channel.close(run.inferior)
            if guest is not None:
                qemu_kill(guest)
            notes.close()
