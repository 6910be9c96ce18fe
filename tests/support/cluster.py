"""A real dask.distributed cluster on 127.0.0.1 for the tests: `dask scheduler` and `dask worker`
processes (no nanny: a SIGKILL'd worker is gone, as a machine that died), on free ports, each in its
own process group."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Worker:
    name: str
    port: int
    proc: subprocess.Popen[bytes]

    @property
    def address(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)


@dataclass(frozen=True)
class Credentials:
    """A CA and one certificate it signed for 127.0.0.1 (PEM files), made with openssl: the
    scheduler, the workers and the client all present it."""

    ca: Path
    cert: Path
    key: Path

    def flags(self) -> list[str]:
        return [
            "--tls-ca-file",
            str(self.ca),
            "--tls-cert",
            str(self.cert),
            "--tls-key",
            str(self.key),
        ]


def credentials(d: Path) -> Credentials:
    """The README's own recipe (`<!-- cluster-certificates -->`), run in `d` for this machine: the
    certificates the TLS tests' scheduler, workers and client present."""
    d.mkdir(parents=True, exist_ok=True)
    recipe = certificate_recipe().replace(
        next(
            line for line in certificate_recipe().splitlines() if line.startswith("export HOSTS=")
        ),
        'export HOSTS="IP:127.0.0.1"',
    )
    subprocess.run(["sh", "-e", "-c", recipe], check=True, capture_output=True, cwd=d)
    return Credentials(d / "ca.pem", d / "node.pem", d / "node.key")


def certificate_recipe() -> str:
    """The sh block after the README's `<!-- cluster-certificates -->` marker."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = text.split("<!-- cluster-certificates -->", 1)[1].split("```sh\n", 1)[1]
    return block.split("```", 1)[0]


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    log: Path
    # where the scheduler and the workers run (their own directory, as on another machine: a path
    # a task resolves against it is a path the coordinator's side cannot see)
    cwd: Path = Path("/")
    workers: list[Worker] = field(default_factory=list)
    tls: Credentials | None = None

    def add_worker(self, name: str, wrapper: Sequence[str] = ()) -> Worker:
        """A worker process (`wrapper`: a command it is started under, e.g. a private mount
        namespace)."""
        port = free_port()
        argv = [
            *wrapper,
            sys.executable,
            "-m",
            "dask",
            "worker",
            self.address,
            "--nthreads",
            "1",
            "--no-nanny",
            "--host",
            "127.0.0.1",
            "--worker-port",
            str(port),
            "--no-dashboard",
            "--name",
            name,
            *(self.tls.flags() if self.tls else []),
        ]
        with open(self.log, "ab") as log:
            proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.cwd
            )
        w = Worker(name, port, proc)
        self.workers.append(w)
        return w

    def wait_for_workers(self, n: int, timeout: float = 60.0) -> None:
        from distributed import Client

        security = None
        if self.tls is not None:
            from distributed.security import Security

            security = Security(
                tls_ca_file=str(self.tls.ca),
                tls_client_cert=str(self.tls.cert),
                tls_client_key=str(self.tls.key),
                require_encryption=True,
            )
        with Client(self.address, timeout="20s", set_as_default=False, security=security) as client:
            client.wait_for_workers(n, timeout=timeout)

    def close(self) -> None:
        for w in self.workers:
            if w.proc.poll() is None:
                w.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait(timeout=30)


@contextlib.contextmanager
def cluster(
    tmp: Path, workers: int = 2, wrapper: Sequence[str] = (), tls: Credentials | None = None
) -> Iterator[Cluster]:
    port = free_port()
    log = tmp / "dask.log"
    scheme = "tls" if tls else "tcp"
    argv = [
        sys.executable,
        "-m",
        "dask",
        "scheduler",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dashboard-address",
        f"127.0.0.1:{free_port()}",
        *(["--protocol", "tls", *tls.flags()] if tls else []),
    ]
    where = tmp / "cluster-cwd"
    where.mkdir(exist_ok=True)
    with open(log, "ab") as f:
        proc = subprocess.Popen(
            argv, stdout=f, stderr=subprocess.STDOUT, start_new_session=True, cwd=where
        )
    c = Cluster(f"{scheme}://127.0.0.1:{port}", proc, log, cwd=where, tls=tls)
    try:
        deadline = time.monotonic() + 60
        while True:  # the scheduler's port answers
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", port), timeout=1),
            ):
                break
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        for i in range(workers):
            c.add_worker(f"w{i + 1}", wrapper)
        if workers:
            c.wait_for_workers(workers)
        yield c
    finally:
        c.close()
