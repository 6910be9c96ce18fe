"""Runs a replay under gdb through pygdbmi, to the stop that matters (issue 5,
docs/debugger-notes.md).

- Hardware faults (SIGSEGV/SIGBUS/SIGILL/SIGFPE) are caught by a `catch signal` catchpoint whose
  condition is the extension's `$_spmi_should_stop(...)` (spmi_dbg.ext.gdb.passing): inside gdb, at
  the fault, the quick check and the signal policy (spmi_dbg.analysis.policy) decide. A fault the
  replay survives (a first-chance fault in the JIT's protected call) is noted in a file and passed
  on by gdb itself, with no stop and no MI round trip; the first fault it does not survive -- or the
  second chance of a fault whose handler declined it -- stops, and gets the full `spmi diagnose
  --json`.
- SIGTRAP (gdb's default stop) and SIGABRT stop: the driver asks the same function over MI
  (`-data-evaluate-expression $_spmi_should_stop(...)`), so the quick check and the policy run once,
  inside gdb; a debug break nobody asked to stop at is resumed with `signal SIGTRAP` when the replay
  has a SIGTRAP handler (never a plain continue, which would swallow it), else absorbed as a
  debugger user's `continue` does (pc stepped over an aarch64 `brk`), since delivering it would kill
  the replay. Every other signal goes to the replay unseen. The replay's stdout/stderr go to files
  (the startup shell's redirections).
- After `timeout` seconds the replay is interrupted (-exec-interrupt), every thread's stack is
  captured and the stop diagnosed: a hang.
- A replay that exits is reported with its exit status (MI's exit codes are octal).
- gdb dying or not answering a request in time raises ToolFailure."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spmi_dbg import shell, stdbuf
from spmi_dbg.analysis.facts import Diagnosis
from spmi_dbg.analysis.policy import PassedStop, Verdict, mark_second_chance
from spmi_dbg.analysis.stacks import ThreadStack
from spmi_dbg.driver.gdb.mi import MiChannel, Record, mi_quote
from spmi_dbg.driver.gdb.solibs import SymbolsOnce
from spmi_dbg.driver.loader import gdbinit_line
from spmi_dbg.driver.outcome import OutcomeKind, ReplayOutcome
from spmi_dbg.driver.qemu import QemuTarget, library_dirs
from spmi_dbg.driver.qemu import kill as qemu_kill
from spmi_dbg.driver.qemu import start as qemu_start
from spmi_dbg.elf import elf_entry
from spmi_dbg.errors import ToolFailure

FAULTS = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE")  # caught by the conditional catchpoint
STOP_SIGNALS = ("SIGABRT",)  # plus SIGTRAP, stopped on by default
REQUEST_TIMEOUT = 30.0  # any single MI command
DIAGNOSE_TIMEOUT = 120.0  # the full diagnosis reads the collection and disassembles
# gdb attaching to qemu's gdbstub: reads the guest's libraries from the sysroot
CONNECT_TIMEOUT = 60.0
# a hang's stacks, from the view in gdb's Python (the extension is loaded: spmi_dbg is importable)
STACKS_COMMAND = (
    "python from spmi_dbg.analysis.stacks import stacks_line; "
    "from spmi_dbg.ext.gdb.view import GdbProcess; print(stacks_line(GdbProcess()))"
)

StopCallback = Callable[[PassedStop], None]


def run_replay(
    argv: list[str],
    *,
    timeout: float,
    stdout: Path,
    stderr: Path,
    transcript: Path,
    gdb: str = "gdb",
    cwd: str | None = None,
    cancel: threading.Event | None = None,
    on_stop: StopCallback | None = None,
    max_passes: int = 1_000_000,
    request_timeout: float = REQUEST_TIMEOUT,
    qemu: QemuTarget | None = None,
    debug_dirs: tuple[str, ...] = (),
    stop_at_break: bool = False,
) -> ReplayOutcome:
    """One fresh gdb on argv until a fatal stop (with `stop_at_break`, also the first debug break),
    a hang, the replay's exit, or `cancel`. Every MI request
    must be answered within `request_timeout` seconds (the full diagnosis gets DIAGNOSE_TIMEOUT).
    With `qemu`, argv is a guest program: it runs under qemu's gdbstub (spmi_dbg.driver.qemu) and
    gdb attaches to it."""
    if qemu is None:  # a session of one run
        with GdbSession(
            transcript=transcript,
            gdb=gdb,
            cwd=cwd,
            max_passes=max_passes,
            request_timeout=request_timeout,
            debug_dirs=debug_dirs,
        ) as session:
            return session.run(
                argv,
                timeout=timeout,
                stdout=stdout,
                stderr=stderr,
                cancel=cancel,
                on_stop=on_stop,
                stop_at_break=stop_at_break,
            )
    start = time.monotonic()
    # the stops passed inside gdb, one JSON line each
    notes = transcript.with_name(transcript.name + ".stops")
    notes.write_bytes(b"")
    guest: subprocess.Popen[bytes] | None = None
    with open(transcript, "a", encoding="utf-8", errors="replace") as log:
        channel = MiChannel(
            gdb,
            log,
            cwd=cwd,
            env=dict(os.environ, SHELL="/bin/sh"),
            request_timeout=request_timeout,
        )
        notes_reader = _Notes(notes)
        run = _Run(
            channel,
            cancel,
            on_stop,
            max_passes,
            notes_reader,
            remote=True,
            stop_at_break=stop_at_break,
        )
        try:
            _setup(channel, argv, notes, max_passes, debug_dirs)
            # what argv() reads
            _console(channel, f"set args {_args(argv)}")
            _remote_paths(channel, qemu, argv)
            guest, port = qemu_start(qemu, argv, stdout=stdout, stderr=stderr, cwd=cwd)
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
            return run.until_outcome(start, timeout, "-exec-continue")
        finally:
            channel.close(run.inferior)
            if guest is not None:
                qemu_kill(guest)
            notes_reader.close()


class GdbSession:
    """One gdb for several replays of the same program (triage: after a crash at N the partition
    goes on at N+1 in the same gdb: the inferior is killed and run again with the next `-c`), so a
    further crash costs neither a gdb start nor the symbol loading, only the replay's own start. The
    catchpoints, the signal table and the notes file are set up once, at the first run. Not for a
    qemu guest (each run is a new gdbstub to attach to).

    A ToolFailure leaves the session broken (`broken`): the caller closes it and opens another."""

    def __init__(
        self,
        *,
        transcript: Path,
        gdb: str = "gdb",
        cwd: str | None = None,
        max_passes: int = 1_000_000,
        request_timeout: float = REQUEST_TIMEOUT,
        debug_dirs: tuple[str, ...] = (),
    ) -> None:
        self.max_passes = max_passes
        self.debug_dirs = debug_dirs
        self.program: str | None = None
        # a stopped replay left by the last run (fatal, hang, cancelled)
        self.inferior: int | None = None
        self.broken = False
        self.runs = 0
        # the shared libraries' symbols, read once for the session's runs (solibs.py)
        self.symbols = SymbolsOnce()
        self._log = open(transcript, "a", encoding="utf-8", errors="replace")
        self._notes_path = transcript.with_name(transcript.name + ".stops")
        self._notes_path.write_bytes(b"")
        self._notes = _Notes(self._notes_path)
        try:
            # SHELL=/bin/sh: the replay's redirections (`set args ... > out 2> err`) are POSIX sh
            # syntax
            self.channel = MiChannel(
                gdb,
                self._log,
                cwd=cwd,
                env=dict(os.environ, SHELL="/bin/sh"),
                request_timeout=request_timeout,
            )
        except BaseException:
            self._notes.close()
            self._log.close()
            raise

    def run(
        self,
        argv: list[str],
        *,
        timeout: float,
        stdout: Path,
        stderr: Path,
        cancel: threading.Event | None = None,
        on_stop: StopCallback | None = None,
        stop_at_break: bool = False,
        transcript: Path | None = None,
    ) -> ReplayOutcome:
        """As run_replay, in this session's gdb (`transcript`: where this run's MI traffic goes from
        now on)."""
        if self.broken:
            raise ToolFailure("the gdb session broke in an earlier run")
        if transcript is not None:
            log = open(transcript, "a", encoding="utf-8", errors="replace")
            self.channel.transcript, old = log, self._log
            self._log = log
            old.close()
        start = time.monotonic()
        run = _Run(
            self.channel,
            cancel,
            on_stop,
            self.max_passes,
            self._notes,
            stop_at_break=stop_at_break,
            before_diagnose=lambda: self.symbols.check(self.channel),
        )
        try:
            if self.program is None:
                _setup(self.channel, argv, self._notes_path, self.max_passes, self.debug_dirs)
                # superpmi's stdout whole at a fatal stop
                for name, value in stdbuf.line_buffered().items():
                    _console(self.channel, f"set environment {name}={value}")
                self.program = argv[0]
            elif argv[0] != self.program:
                raise ToolFailure(f"a gdb session of {self.program} cannot run {argv[0]}")
            self._kill()
            redirect = f"> {shell.quote(str(stdout))} 2> {shell.quote(str(stderr))} < /dev/null"
            _console(self.channel, f"set args {_args(argv)} {redirect}")
            self.symbols.apply(self.channel)
            self.runs += 1
            outcome = run.until_outcome(start, timeout, "-exec-run")
            if outcome.kind in ("fatal", "hang"):  # stopped: gdb loaded every library's symbols
                self.symbols.learn(self.channel)
        except BaseException:
            self.broken = True
            self.inferior = run.inferior
            raise
        self.inferior = run.inferior if outcome.kind in ("fatal", "hang") else None
        # the replay still runs: this session ends with it (close kills it)
        if outcome.kind == "cancelled":
            self.inferior, self.broken = run.inferior, True
        return outcome

    def _kill(self) -> None:
        """The stopped replay of the last run goes before the next starts (gdb's `kill`, then its
        exit event)."""
        if self.inferior is None:
            return
        _console(self.channel, "kill")
        deadline = time.monotonic() + self.channel.request_timeout
        while time.monotonic() < deadline:
            event = self.channel.next_event(0.05)
            if event is not None and event.get("message") == "thread-group-exited":
                break
        else:
            raise ToolFailure(
                f"gdb did not end the stopped replay (pid {self.inferior}) within "
                f"{self.channel.request_timeout:g} s of `kill`"
            )
        self.channel.events.clear()
        self.inferior = None

    def close(self) -> None:
        try:
            self.channel.close(self.inferior)
        finally:
            self._notes.close()
            self._log.close()

    def __enter__(self) -> GdbSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _args(argv: list[str]) -> str:
    return shell.join(argv[1:])


def _console(channel: MiChannel, command: str) -> str:
    """A gdb CLI command through MI (`-interpreter-exec console`), refused: a ToolFailure."""
    return _check(channel, "-interpreter-exec console " + mi_quote(command))


def _check(channel: MiChannel, command: str) -> str:
    reply = channel.request(command)
    if reply.error is not None:
        raise ToolFailure(f"gdb refused `{command}`: {reply.error}")
    return reply.console


def index_cache_dir() -> str:
    """Where gdb keeps the symbol indexes it builds (one per build-id, checked by gdb): a directory
    of this user's under the temp directory, so every later gdb of this tool (each partition, each
    triage segment, the next run) reads the replay's and the JITs' symbols from the index instead of
    the DWARF."""
    return os.path.join(tempfile.gettempdir(), f"spmi-dbg-gdb-index-{os.getuid()}")


def _index_cache(channel: MiChannel) -> None:
    """A gdb without the index cache (older than 13) simply does without it."""
    channel.console(f"set index-cache directory {index_cache_dir()}")
    channel.console("set index-cache enabled on")


def _debug_dirs(channel: MiChannel, debug_dirs: tuple[str, ...]) -> None:
    """Where gdb looks for separate debug files (by gnu_debuglink, and by build-id under
    .build-id/)."""
    if debug_dirs:
        _console(channel, "set debug-file-directory " + ":".join(debug_dirs))


def _setup(
    channel: MiChannel,
    argv: list[str],
    notes: Path,
    max_passes: int,
    debug_dirs: tuple[str, ...] = (),
) -> None:
    # mi-async: gdb keeps reading commands while the replay runs, so -exec-interrupt is heard.
    # The *stopped records need no argument values (the analysis reads frames itself): cheaper
    # stops.
    for command in (
        "-gdb-set mi-async on",
        "-gdb-set pagination off",
        "-gdb-set startup-with-shell on",
        "-gdb-set print frame-info short-location",
        "-gdb-set print frame-arguments none",
        "-gdb-set confirm off",
    ):
        _check(channel, command)
    _console(channel, "handle all nostop noprint pass")
    _console(channel, f"handle {' '.join(STOP_SIGNALS)} stop print pass")
    _console(channel, gdbinit_line())
    # one catchpoint per signal: the condition is told which (no $_siginfo over qemu)
    for name in FAULTS:
        _console(channel, f"catch signal {name}")
        _console(
            channel,
            f"condition $bpnum $_spmi_should_stop({json.dumps(str(notes))}, {max_passes}, "
            f"{int(getattr(signal, name))})",
        )
    _index_cache(channel)
    _debug_dirs(channel, debug_dirs)
    _check(channel, "-file-exec-and-symbols " + mi_quote(argv[0]))


def _remote_paths(channel: MiChannel, qemu: QemuTarget, argv: list[str]) -> None:
    """The guest's libraries from the sysroot; the JITs (absolute host paths) from their own
    directories."""
    dirs = library_dirs(argv)
    _console(channel, f"set sysroot {qemu.sysroot}")
    _console(channel, f"set solib-search-path {':'.join(dirs)}")


class _Notes:
    """The stops passed inside gdb (spmi_dbg.ext.gdb.passing writes one JSON line each), read as
    they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open(path, encoding="utf-8")
        self._partial = ""

    def read(self) -> list[dict[str, Any]]:
        text = self._partial + self._file.read()
        lines = text.split("\n")
        self._partial = lines.pop()
        out: list[dict[str, Any]] = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out

    def close(self) -> None:
        self._file.close()


class _Run:
    def __init__(
        self,
        channel: MiChannel,
        cancel: threading.Event | None,
        on_stop: StopCallback | None,
        max_passes: int,
        notes: _Notes | None = None,
        *,
        remote: bool = False,
        stop_at_break: bool = False,
        before_diagnose: Callable[[], None] | None = None,
    ) -> None:
        self.channel = channel
        self.before_diagnose = before_diagnose
        self.stop_at_break = stop_at_break
        self.cancel = cancel
        self.on_stop = on_stop
        self.max_passes = max_passes
        self.notes = notes
        self.inferior: int | None = None
        self.passed: list[PassedStop] = []
        # why the catchpoint stopped, when its diagnosis does not say
        self.stop_notes: list[str] = []
        self.stop_signal: int | None = None  # the signal of the catchpoint's stop
        self.second_chance: str | None = None  # the note, when the stop is a fault's second chance
        # a remote target (qemu): MI's pids are the stub's, /proc says nothing of the guest
        self.remote = remote

    def until_outcome(self, start: float, timeout: float, run: str = "-exec-run") -> ReplayOutcome:
        reply = self.channel.request(run)
        if reply.error is not None:
            raise ToolFailure(f"gdb could not start the replay: {reply.error}")
        running = time.monotonic()
        deadline = running + timeout
        while True:
            self._read_notes()
            if self.cancel is not None and self.cancel.is_set():
                return self._outcome("cancelled", start, running)
            now = time.monotonic()
            if now >= deadline:
                return self._hang(start, running, timeout)
            event = self.channel.next_event(min(0.1, deadline - now))
            if event is None:
                continue
            done = self._event(event, start, running)
            if done is not None:
                return done

    def _read_notes(self) -> None:
        if self.notes is None:
            return
        for record in self.notes.read():
            if "passed" in record:
                stop = PassedStop.from_json(record["passed"])
                self.passed.append(stop)
                if self.on_stop is not None:
                    self.on_stop(stop)
            elif "stop" in record:
                if record["stop"]:
                    self.stop_notes.append(str(record["stop"]))
                self.stop_signal = record.get("signal")
                self.second_chance = (
                    str(record["stop"] or "") if record.get("second_chance") else None
                )

    def _outcome(self, kind: OutcomeKind, start: float, running: float, **kw: Any) -> ReplayOutcome:
        self._read_notes()
        if kind == "fatal" and self.second_chance is not None and kw.get("diagnosis") is not None:
            mark_second_chance(kw["diagnosis"], self.second_chance)
        kw["notes"] = self.stop_notes + list(kw.get("notes") or [])
        return ReplayOutcome(
            kind,
            passed=self.passed,
            seconds=time.monotonic() - start,
            startup_seconds=running - start,
            **kw,
        )

    def _event(self, event: Record, start: float, running: float) -> ReplayOutcome | None:
        message = event.get("message")
        payload = event.get("payload") or {}
        if message == "thread-group-started":
            if not self.remote:  # qemu's stub says pid 1: the process is ours (the qemu we started)
                self.inferior = int(payload.get("pid", 0)) or None
            return None
        if message != "stopped":
            return None
        reasons = payload.get("reason") or []
        reasons = [reasons] if isinstance(reasons, str) else list(reasons)
        if "exited-normally" in reasons:
            return self._outcome("exited", start, running, exit_status=0)
        if "exited" in reasons:
            return self._outcome(
                "exited", start, running, exit_status=int(str(payload.get("exit-code", "0")), 8)
            )
        if "exited-signalled" in reasons:
            sig = str(payload.get("signal-name"))
            self._read_notes()
            notes = [f"the replay died of {sig} after it was passed on"] if self.passed else []
            return self._outcome("signaled", start, running, signal=sig, notes=notes)
        # the fault catchpoint (MI gives its stops no reason): its condition said "fatal"
        if not reasons:
            self._read_notes()
            return self._outcome(
                "fatal",
                start,
                running,
                diagnosis=self._diagnose(quick=False, signal=self.stop_signal),
            )
        if "signal-received" not in reasons:
            diag = self._diagnose(quick=False)
            return self._outcome(
                "fatal", start, running, diagnosis=diag, notes=[f"stopped for {', '.join(reasons)}"]
            )
        return self._signal_stop(payload, start, running)

    def _signal_stop(
        self, payload: dict[str, Any], start: float, running: float
    ) -> ReplayOutcome | None:
        """SIGTRAP or SIGABRT (faults go through the catchpoint): the same policy, asked of the same
        function inside gdb (`$_spmi_should_stop`, which notes a stop passed on in the notes file as
        the catchpoint does)."""
        sig = str(payload.get("signal-name"))
        signo = int(getattr(signal, sig, 0)) or None
        expression = (
            (
                f"$_spmi_should_stop({json.dumps(str(self.notes.path))}, {self.max_passes}, "
                f"{signo if signo is not None else 0}, 1, {int(self.stop_at_break)})"
            )
            if self.notes is not None
            else None
        )
        reply = (
            self.channel.request("-data-evaluate-expression " + mi_quote(expression))
            if expression is not None
            else None
        )
        if reply is not None and reply.error is not None:
            raise ToolFailure(f"gdb could not evaluate `{expression}`: {reply.error}")
        verdict = (
            Verdict(int(str((reply.payload or {}).get("value", "1")).split()[0]))
            if reply is not None
            else Verdict.STOP
        )
        self._read_notes()
        if verdict != Verdict.STOP:
            self._resume(sig, verdict == Verdict.PASS, verdict == Verdict.ABSORB_STEP_OVER_BRK)
            return None
        diag = self._diagnose(quick=False, signal=sig)
        return self._outcome("fatal", start, running, diagnosis=diag)

    def _resume(self, sig: str, deliver: bool, step_over_brk: bool) -> None:
        """Pass the stop's signal on with `signal SIGxxx`, or absorb it (a debug break the replay
        has no handler for), stepping over an aarch64 `brk`, which would trap again."""
        if deliver:
            reply = self.channel.console(f"signal {sig}")
        else:
            if step_over_brk:
                _console(self.channel, "set $pc = $pc + 4")
            reply = self.channel.request("-exec-continue")
        if reply.error is not None:
            raise ToolFailure(f"gdb could not resume after {sig}: {reply.error}")

    def _diagnose(self, *, quick: bool, signal: str | int | None = None) -> Diagnosis:
        if self.before_diagnose is not None:
            self.before_diagnose()
        command = (
            "spmi diagnose --json"
            + (" --quick" if quick else "")
            + (f" --signal {signal}" if signal else "")
        )
        reply = self.channel.console(
            command,
            None if quick else max(DIAGNOSE_TIMEOUT, self.channel.request_timeout),
        )
        if reply.error is not None:
            raise ToolFailure(f"`{command}` failed in gdb: {reply.error}")
        data = _json_line(reply.console)
        if data is not None:
            try:
                return Diagnosis.from_json(data)
            except ValueError as e:  # jsonfacts.FactJsonError: names the fact and the field
                raise ToolFailure(
                    f"`{command}` printed a diagnosis that could not be read: {e}"
                ) from None
        raise ToolFailure(f"`{command}` gave no JSON: {reply.console[-300:]!r}")

    def _hang(self, start: float, running: float, timeout: float) -> ReplayOutcome:
        if self.remote and self.inferior:
            # qemu-user's gdbstub reads gdb's interrupt only when the guest makes a syscall or gets
            # a signal (a spinning JIT does neither): a SIGINT to qemu goes to the guest, and the
            # stub reports that stop.
            os.kill(self.inferior, signal.SIGINT)
        else:
            reply = self.channel.request("-exec-interrupt")
            if reply.error is not None:
                raise ToolFailure(f"gdb could not interrupt the replay: {reply.error}")
        wait_until = time.monotonic() + self.channel.request_timeout
        while True:
            left = wait_until - time.monotonic()
            event = self.channel.next_event(left) if left > 0 else None
            if event is None:
                raise ToolFailure(
                    f"gdb did not stop the replay within {self.channel.request_timeout:g} s of "
                    "-exec-interrupt"
                )
            if event.get("message") == "stopped":
                reasons = (event.get("payload") or {}).get("reason") or []
                if any(
                    str(r).startswith("exited")
                    for r in ([reasons] if isinstance(reasons, str) else reasons)
                ):
                    return self._event(event, start, running) or self._outcome(
                        "exited", start, running
                    )
                break
            self._event(event, start, running)
        threads = self._stacks()
        diag = self._diagnose(quick=False)
        return self._outcome(
            "hang",
            start,
            running,
            diagnosis=diag,
            threads=threads,
            notes=[f"no exit and no fatal stop within --timeout {timeout:g} s: interrupted"],
        )

    def _stacks(self) -> list[ThreadStack]:
        """Every thread's stack, read in gdb's Python from the view by the lldb worker's function
        (spmi_dbg.analysis.stacks), one round trip."""
        reply = self.channel.console(
            STACKS_COMMAND,
            max(DIAGNOSE_TIMEOUT, self.channel.request_timeout),
        )
        if reply.error is not None:
            raise ToolFailure(f"gdb could not read the threads' stacks: {reply.error}")
        data = _json_line(reply.console)
        if data is None:
            raise ToolFailure(
                f"reading the threads' stacks in gdb gave no JSON: {reply.console[-300:]!r}"
            )
        try:
            return [ThreadStack.from_json(t) for t in data.get("threads") or []]
        except ValueError as e:  # jsonfacts.FactJsonError: names the fact and the field
            raise ToolFailure(f"gdb printed threads' stacks that could not be read: {e}") from None


def _json_line(console: str) -> dict[str, Any] | None:
    """The last line of a console reply that is a JSON object (what the extension printed)."""
    for line in reversed(console.splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                return None
            return data if isinstance(data, dict) else None
    return None


_CORE_BY = re.compile(r"Core was generated by `(.*)'\.")


def diagnose_core(
    core: Path,
    program: str | None,
    *,
    transcript: Path,
    gdb: str = "gdb",
    cwd: str | None = None,
    request_timeout: float = REQUEST_TIMEOUT,
    qemu: QemuTarget | None = None,
    argv: list[str] | None = None,
    debug_dirs: tuple[str, ...] = (),
) -> tuple[ReplayOutcome, str | None]:
    """Post-mortem: one fresh gdb on `program` (None: gdb finds it from the core) and `core`, the
    extension's full `spmi diagnose --json`. Returns the outcome (kind "fatal") and the command line
    the core names ("Core was generated by `...`": the kernel keeps only its first 80 characters).
    With `qemu`, a guest core written by qemu-user: the sysroot and the JITs' directories (from
    `argv`) are set, and the PIE executable and its libraries relocated when gdb could not
    (spmi_dbg.ext.gdb.coresyms)."""
    start = time.monotonic()
    notes = [f"post-mortem: diagnosed from the core file {core}"]
    with open(transcript, "a", encoding="utf-8", errors="replace") as log:
        channel = MiChannel(
            gdb, log, cwd=cwd, env=dict(os.environ), request_timeout=request_timeout
        )
        try:
            for command in (
                "-gdb-set pagination off",
                "-gdb-set print frame-info short-location",
                "-gdb-set print frame-arguments none",
                "-gdb-set print entry-values no",
                "-gdb-set confirm off",
            ):
                _check(channel, command)
            _console(channel, gdbinit_line())
            if qemu is not None:
                _remote_paths(channel, qemu, argv or [program or ""])
            _index_cache(channel)
            _debug_dirs(channel, debug_dirs)
            if program is not None:
                _check(channel, "-file-exec-and-symbols " + mi_quote(program))
            # a core keeps no argv gdb tells: the diagnosis reads the command's (its JITs, -c,
            # -target)
            if argv:
                _console(channel, f"set args {_args(argv)}")
            reply = channel.request(
                "-target-select core " + str(core).replace(" ", "\\ "), DIAGNOSE_TIMEOUT
            )
            if reply.error is not None:
                raise ToolFailure(f"gdb could not open the core file {core}: {reply.error}")
            said = reply.console + reply.log
            m = _CORE_BY.search(said)
            sig = re.search(r"Program terminated with signal (SIG[A-Z0-9]+)", said)
            if qemu is not None and program is not None:
                notes += _relocate(channel, program, qemu, argv or [program])
            opened = time.monotonic()
            diag = _Run(channel, None, None, 0)._diagnose(
                quick=False, signal=sig.group(1) if sig else None
            )
            outcome = ReplayOutcome(
                "fatal",
                diagnosis=diag,
                seconds=time.monotonic() - start,
                startup_seconds=opened - start,
                notes=notes,
            )
            return outcome, (m.group(1) if m else None)
        finally:
            channel.close(None)


def _relocate(channel: MiChannel, program: str, qemu: QemuTarget, argv: list[str]) -> list[str]:
    """A guest core of a PIE program that gdb left unrelocated: displacement = AT_ENTRY -
    e_entry."""
    auxv = _console(channel, "info auxv")
    m = re.search(r"AT_ENTRY\s.*?(0x[0-9a-f]+)\s*$", auxv, re.M)
    entry = elf_entry(program)
    if m is None or entry is None:
        return []
    at_entry = int(m.group(1), 16)
    where = _console(channel, f"info symbol {at_entry:#x}")
    if at_entry == entry or "No symbol matches" not in where:
        return []  # not PIE, or gdb relocated it itself
    disp = at_entry - entry
    _console(channel, f"symbol-file -o {disp:#x} {program}")
    dirs = library_dirs([program, *argv[1:]])
    added = _console(
        channel,
        "python print(len(__import__('spmi_dbg.ext.gdb.coresyms', "
        f"fromlist=['x']).load_solibs({qemu.sysroot!r}, "
        f"{dirs!r})))",
    )
    count = added.strip().splitlines()[-1] if added.strip() else "0"
    return [
        f"the guest core's PIE executable was relocated by {disp:#x} (AT_ENTRY - e_entry: "
        "qemu-user dumps no "
        f"text pages, so gdb could not) and {count} shared libraries added from the dynamic "
        "linker's list"
    ]
