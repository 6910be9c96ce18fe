"""Arm64 (or any qemu-user guest) replays debugged from this machine (docs/debugger-notes.md
"Cross-arch"): each partition runs as `qemu-aarch64 -L <sysroot> -g PORT <superpmi argv>`, which
waits for a debugger on PORT, and gdb-multiarch attaches with `target remote` (sysroot set, the
JITs' directories on solib-search-path).

Ports are chosen here and never handed out twice by this process; a qemu that cannot bind its port
(another program took it in between) is noticed before gdb connects, and started again on another
one. Nothing is ever connected to the port but gdb: qemu's gdbstub takes one connection, and a probe
would be that one."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.driver.request import ReplayRequest
from spmi_dbg.errors import ToolFailure
from spmi_dbg.superpmi_argv import parse_command

DEFAULT_SYSROOTS = {"aarch64": "/usr/aarch64-linux-gnu"}
PORT_ATTEMPTS = 5
LISTEN_TIMEOUT = 10.0

_lock = threading.Lock()
_given: set[int] = set()


@dataclass(frozen=True)
class QemuTarget:
    arch: str = "aarch64"
    sysroot: str = DEFAULT_SYSROOTS["aarch64"]

    @property
    def emulator(self) -> str:
        return f"qemu-{self.arch}"

    def prefix(self) -> list[str]:
        """What runs a guest program natively here: `qemu-aarch64 -L SYSROOT`."""
        return [self.emulator, "-L", self.sysroot]


def library_dirs(argv: list[str]) -> list[str]:
    """Where the debugger finds the guest's own shared objects: the JITs' (absolute host paths) and
    the program's directories; the system libraries come from the sysroot."""
    out: list[str] = []
    for p in [*parse_command(argv).jits, argv[0]]:
        d = os.path.dirname(os.path.abspath(p))
        if d not in out:
            out.append(d)
    return out


def free_port() -> int:
    with _lock:
        for _ in range(100):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            if port not in _given:
                _given.add(port)
                return port
    raise ToolFailure("no free TCP port on 127.0.0.1 for qemu's gdbstub")


def _listening(port: int) -> bool:
    """A socket in LISTEN state on the port (/proc/net/tcp, state 0A), without connecting to it."""
    needle = f":{port:04X} "
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                for line in f.readlines()[1:]:
                    fields = line.split()
                    if len(fields) > 3 and (fields[1] + " ").endswith(needle) and fields[3] == "0A":
                        return True
        except OSError:
            continue
    return False


def start(
    target: QemuTarget,
    argv: list[str],
    *,
    stdout: Path,
    stderr: Path,
    cwd: str | None,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """The guest under qemu's gdbstub, waiting for gdb: (the qemu process, its port); the guest
    runs in `env` (None: this process's environment)."""
    last = ""
    for _ in range(PORT_ATTEMPTS):
        port = free_port()
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            try:
                proc = subprocess.Popen(
                    [*target.prefix(), "-g", str(port), *argv],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                )
            except OSError as e:
                raise ToolFailure(
                    f"cannot start {target.emulator}: {e.strerror} (Debian: apt-get install "
                    "qemu-user)"
                ) from None
        deadline = time.monotonic() + LISTEN_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if _listening(port):
                return proc, port
            time.sleep(0.005)
        with contextlib.suppress(OSError):
            last = stderr.read_text(errors="replace").strip()[-300:]
        kill(proc)
    raise ToolFailure(
        f"{target.emulator} did not open its gdbstub ({PORT_ATTEMPTS} ports tried): {last}"
    )


def start_replay(
    target: QemuTarget, request: ReplayRequest, cwd: str | None
) -> tuple[subprocess.Popen[bytes], int]:
    """`request`'s replay as a guest under qemu's gdbstub: its output where the request says, in its
    environment (the recorded one, when it names one)."""
    return start(
        target,
        list(request.argv),
        stdout=request.stdout,
        stderr=request.stderr,
        cwd=cwd,
        env=request.environment() if request.env is not None else None,
    )


def kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, 9)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
