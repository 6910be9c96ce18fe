"""A gdb/MI channel (docs/debugger-notes.md, "pygdbmi"): records are read from gdb's pipe as they
come and parsed with pygdbmi's public parser (`pygdbmi.gdbmiparser`: no 0.2 s settle waits, no
private API); every command carries a token and waits for its own `^done/^running/^error`, with a
timeout on every request, and a transcript of all traffic. Async records (`*stopped`,
`=thread-group-exited`...) are queued for the caller.

gdb dying or not answering in time raises ToolFailure: the caller must never read it as a result."""

from __future__ import annotations

import collections
import contextlib
import os
import select
import signal
import subprocess
import time
from typing import IO, Any

from pygdbmi import gdbmiparser

from spmi_dbg.driver.leftovers import LeaderSession
from spmi_dbg.errors import ToolFailure

Record = dict[str, Any]
POLL = 0.05  # longest single read; gdb's death is noticed within this


def mi_quote(text: str) -> str:
    """An MI c-string: gdb unescapes backslash, quote and the usual control escapes."""
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    )
    return f'"{escaped}"'


class _MiReader:
    """gdb's MI output, read without blocking: whole lines parsed into records, a partial line kept
    for later."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._partial = b""

    def read(self, timeout: float) -> list[Record]:
        """The records gdb has written within `timeout` seconds (returns as soon as it has written
        any); EOFError when gdb closed its end."""
        data = b""
        wait = max(timeout, 0.0)
        while True:
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                break
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                if not data:
                    raise EOFError
                break
            data += chunk
            wait = 0.0  # take what is there already, then return
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        out: list[Record] = []
        for raw in lines:
            line = raw.decode(errors="replace").rstrip("\r")
            # `(gdb)` prompts end a batch: skipped
            if not line or gdbmiparser.response_is_finished(line):
                continue
            name, _, rest = line[1:].partition(",") if line.startswith("=") else ("", "", "")
            if name in UNREAD_NOTIFICATIONS:  # the text kept for the transcript, not parsed
                out.append({"type": "notify", "message": name, "payload": rest, "token": None})
            else:
                out.append(gdbmiparser.parse_response(line))
        return out


# Notifications no loop reads (a replay's start brings a dozen: parsing them cost more than the rest
# of a triage's restart after a crash)
UNREAD_NOTIFICATIONS = frozenset(
    (
        "library-loaded",
        "library-unloaded",
        "thread-created",
        "thread-exited",
        "breakpoint-modified",
        "cmd-param-changed",
        "thread-group-added",
    )
)


class MiReply:
    def __init__(self, result: Record, console: str, log: str) -> None:
        self.message: str = result.get("message") or ""  # done | running | error | exit
        self.payload: Any = result.get("payload")
        # `~` stream output produced by the command (e.g. a console command's text)
        self.console = console
        self.log = log  # `&` stream output (gdb's own error/warning text)

    @property
    def error(self) -> str | None:
        if self.message != "error":
            return None
        p = self.payload if isinstance(self.payload, dict) else {}
        return str(p.get("msg") or self.log.strip() or "error")


class MiChannel:
    """One gdb process speaking MI3. `transcript` receives every command and record, one per
    line."""

    def __init__(
        self,
        gdb: str,
        transcript: IO[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        request_timeout: float = 30.0,
    ) -> None:
        self.transcript = transcript
        self.request_timeout = request_timeout  # for requests that do not name their own
        argv = [
            gdb,
            "--interpreter=mi3",
            "-q",
            "-nx",
            "-iex",
            "set auto-load off",
            "-iex",
            "set debuginfod enabled off",
        ]
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                bufsize=0,
                cwd=cwd,
                env=env,
                # a terminal's Ctrl-C is ours to handle
                start_new_session=True,
            )
        except OSError as e:
            raise ToolFailure(f"cannot start {gdb}: {e.strerror}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        # gdb's session, for what a gdb that dies leaves behind (leftovers.py)
        self.session = LeaderSession.of(self.proc.pid)
        # Records are consumed as they arrive (no settle wait): the caller loops until its own
        # token's result.
        self.reader = _MiReader(self.proc.stdout.fileno())
        # async records not yet consumed
        self.events: collections.deque[Record] = collections.deque()
        self._token = 0
        self._log(f"# {' '.join(argv)} (pid {self.proc.pid})")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _log(self, line: str) -> None:
        with contextlib.suppress(ValueError, OSError):
            self.transcript.write(line + "\n")

    def _dead(self, doing: str) -> ToolFailure:
        code = self.proc.poll()
        if code is not None and code < 0:
            how = f"was killed by {_signame(-code)}"
        elif code is not None and code > 128:  # through a shell or wrapper script
            how = f"exited with status {code} (killed by {_signame(code - 128)}?)"
        else:
            how = f"exited with status {code}"
        self._log(f"# gdb {how} while {doing}")
        return ToolFailure(f"gdb (pid {self.proc.pid}) {how} while {doing}")

    def _read(self, timeout: float, doing: str) -> list[Record]:
        """Whatever gdb has said within `timeout` (returns early once it has said something)."""
        if not self.alive():
            # Drain what it wrote before dying, then report.
            try:
                rest = self.reader.read(0)
            except (OSError, ValueError, EOFError):
                rest = []
            if not rest:
                raise self._dead(doing)
            records = rest
        else:
            try:
                records = self.reader.read(timeout)
            except EOFError:  # gdb closed its output: it is exiting; its status says how
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=5)
                raise self._dead(doing) from None
            except (OSError, ValueError) as e:
                raise ToolFailure(f"reading from gdb (pid {self.proc.pid}) failed: {e}") from None
        for r in records:
            self._log("< " + _brief(r))
        return records

    def send(self, command: str) -> int:
        self._token += 1
        line = f"{self._token}{command}"
        self._log("> " + line)
        try:
            assert self.proc.stdin is not None
            data = (line + "\n").encode()
            while data:
                _, writable, _ = select.select([], [self.proc.stdin], [], 5.0)
                if not writable:
                    raise OSError("gdb's input pipe stayed full for 5 s")
                data = data[os.write(self.proc.stdin.fileno(), data) :]
        except (OSError, ValueError):
            raise self._dead(f"being sent {command.split(' ', 1)[0]}") from None
        return self._token

    def request(self, command: str, timeout: float | None = None) -> MiReply:
        """Send one command and wait for its own result record."""
        timeout = self.request_timeout if timeout is None else timeout
        token = self.send(command)
        deadline = time.monotonic() + timeout
        console: list[str] = []
        log: list[str] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._log(f"# no answer to token {token} in {timeout:g} s")
                raise ToolFailure(
                    f"gdb (pid {self.proc.pid}) did not answer `{command.split(' ', 1)[0]}` "
                    f"within {timeout:g} s"
                )
            reply: MiReply | None = None
            # The whole batch: records after the result are kept too.
            for r in self._read(min(left, POLL), f"answering `{command.split(' ', 1)[0]}`"):
                kind = r.get("type")
                if kind == "notify":
                    self.events.append(r)
                elif reply is not None:
                    continue
                elif kind == "result" and r.get("token") == token:
                    reply = MiReply(r, "".join(console), "".join(log))
                elif kind == "console":
                    console.append(str(r.get("payload") or ""))
                elif kind == "log":
                    log.append(str(r.get("payload") or ""))
            if reply is not None:
                return reply

    def console(self, command: str, timeout: float | None = None) -> MiReply:
        """A gdb CLI command (`-interpreter-exec console`): its text is the reply's console."""
        return self.request("-interpreter-exec console " + mi_quote(command), timeout)

    def must(self, command: str) -> str:
        """An MI command that must succeed: its console text (refused: a ToolFailure)."""
        reply = self.request(command)
        if reply.error is not None:
            raise ToolFailure(f"gdb refused `{command}`: {reply.error}")
        return reply.console

    def must_console(self, command: str) -> str:
        """A gdb CLI command that must succeed (`-interpreter-exec console`): its text (refused: a
        ToolFailure naming the command)."""
        reply = self.console(command)
        if reply.error is not None:
            raise ToolFailure(f"gdb refused `{command}`: {reply.error}")
        return reply.console

    def next_event(self, timeout: float) -> Record | None:
        """The next async record (`*stopped`, `=...`), or None after `timeout` seconds of none."""
        deadline = time.monotonic() + timeout
        while not self.events:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            for r in self._read(min(left, POLL), "the replay was running"):
                if r.get("type") == "notify":
                    self.events.append(r)
        return self.events.popleft()

    def close(self, inferior_pid: int | None = None) -> None:
        """Kill the inferior (a tracee left behind by a dead gdb keeps running) and gdb's process
        group; then the rest of gdb's session (gdb was started in a session of its own: a wrapper
        script and its children, and a replay whose pid a gdb that died early never said)."""
        if inferior_pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(inferior_pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.session is not None:
            self.session.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()


def _signame(signo: int) -> str:
    try:
        return signal.Signals(signo).name
    except ValueError:
        return f"signal {signo}"


def _brief(record: Record) -> str:
    kind = record.get("type")
    token = record.get("token")
    prefix = {
        "result": "^",
        "notify": "*",
        "console": "~",
        "log": "&",
        "target": "@",
        "output": "",
    }.get(str(kind), "?")
    head = f"{token if token is not None else ''}{prefix}{record.get('message') or ''}"
    payload = record.get("payload")
    text = repr(payload) if not isinstance(payload, str) else payload.rstrip("\n")
    return f"{head} {text}" if payload is not None else head
