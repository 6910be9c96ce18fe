"""Triage on an existing dask.distributed cluster (`--scheduler tcp://host:8786`; the
`spmi-dbg[dask]` extra): each partition is a task (triage/task.py) on some worker. The workers need
gdb, spmi-dbg and the same paths as the coordinator (the runtime artifacts and the out directory on
a shared file system).

Nothing is lost when a worker dies: the scheduler runs the task again elsewhere, and the task goes
on from its journal's last accounted method context. When the scheduler gives up on a task
(KilledWorker, after `distributed.scheduler.allowed-failures` deaths) it is submitted again, up to
RESUBMITS times; a replay that kills its worker twice is split, and a single method context that
does is recorded and passed over (journal.DEATHS_BEFORE_SPLIT), so resubmitting always makes
progress."""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
import os
import socket
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from spmi_dbg import exits
from spmi_dbg.errors import ClusterLost, InputError
from spmi_dbg.repro.result import ReproResult, bundle_dir_for
from spmi_dbg.triage.engine import BundleJob, EngineReport, EngineRun
from spmi_dbg.triage.journal import Journal
from spmi_dbg.triage.task import (
    CrashBudget,
    MissingOnWorker,
    PartitionTask,
    SessionCache,
    run_partition,
)

CONNECT_TIMEOUT = 10.0  # seconds to reach the scheduler before `--scheduler` is an input error
RESUBMITS = 8  # tasks submitted again after the scheduler gave up on them (KilledWorker)
STOP_POLL = 1.0  # how often a task looks whether the coordinator asked the triage to stop
BUDGET_WAIT = 30.0  # the longest a task waits for the crash count another task holds


# in a worker process: each worker thread's debugger, kept for its next partition and the bundles
_SESSIONS = SessionCache()


def _close_sessions() -> int:
    """Run on every worker when the triage ends (or its tasks are stopped): its debuggers end."""
    n = len(_SESSIONS.sessions)
    _SESSIONS.close_all()
    return n


class ClusterBudget:
    """--max-crashes across a cluster's tasks: the count left is the one item of a dask Queue; a
    task that takes it changes it and puts it back (so one task at a time). Should a worker die
    holding it, the others count their crashes after BUDGET_WAIT rather than wait for ever (a few
    over the limit)."""

    def __init__(self, name: str) -> None:
        from distributed import Queue

        self.queue = Queue(name)
        self.left = 1
        self.lost = False  # the count went with a dead worker: this task no longer waits for it

    def take(self) -> bool:
        if self.lost:
            return True
        try:
            n = int(self.queue.get(timeout=BUDGET_WAIT))
        except TimeoutError:
            self.lost = True
            return True
        self.left = max(0, n - 1)
        self.queue.put(self.left)
        return n > 0


def _remote(task: PartitionTask, stop_event: str, budget: str) -> Journal:
    """The task as a dask worker runs it: named by the worker's address; stopped when the
    coordinator sets the cluster-wide event `stop_event` (--max-crashes reached, Ctrl-C)."""
    from distributed import Event

    where = _where()
    cancel = threading.Event()
    done = threading.Event()
    stop = Event(stop_event)

    def watch() -> None:
        while not done.is_set():
            try:
                if stop.wait(timeout=STOP_POLL):
                    cancel.set()
                    return
            # the scheduler went away: the task finishes its replay and its journal
            except Exception:
                done.wait(STOP_POLL)

    watcher = threading.Thread(target=watch, name="spmi-triage-stop", daemon=True)
    watcher.start()
    try:
        return run_partition(
            task, where=where, cancel=cancel, sessions=_SESSIONS, budget=ClusterBudget(budget)
        )
    finally:
        done.set()


def _where() -> str:
    from distributed import get_worker

    worker = get_worker()
    return (
        f"{worker.address} ({worker.name})"
        if str(worker.name) != worker.address
        else worker.address
    )


def _bundle(job: BundleJob) -> tuple[str, ReproResult]:
    """A bucket's repro bundle, built by a worker (in the shared out directory), verified in the
    debuggers this worker's partitions left."""
    with _SESSIONS.lend(job.options.debugger) as warm:
        return _where(), job.run(warm)


@dataclass(frozen=True)
class SchedulerAccess:
    """How the coordinator reaches the scheduler: TLS credentials (a CA to trust, and this client's
    certificate and key, as `dask scheduler --tls-ca-file/--tls-cert/--tls-key` takes them; when
    none is given, dask's own configuration `distributed.comm.tls.*`), or a plain tcp:// the user
    accepted for an address that is not this machine's (`insecure`)."""

    ca_file: str | None = None
    cert: str | None = None
    key: str | None = None
    insecure: bool = False

    def given(self) -> bool:
        return any((self.ca_file, self.cert, self.key))


def _security(access: SchedulerAccess) -> Any:
    """dask's Security for a tls:// scheduler: the options given, else dask's configuration."""
    from distributed.security import Security

    if not access.given():
        configured: Any = Security(require_encryption=True)  # dask's configuration, if any
        if not (
            getattr(configured, "tls_ca_file", None)
            and getattr(configured, "tls_client_cert", None)
        ):
            raise InputError(
                "--scheduler",
                "tls:// needs this client's credentials: --tls-ca-file, --tls-cert and --tls-key "
                "(or dask's configuration, distributed.comm.tls)",
            )
        return configured
    missing = [
        name
        for name, value in (
            ("--tls-ca-file", access.ca_file),
            ("--tls-cert", access.cert),
            ("--tls-key", access.key),
        )
        if not value
    ]
    if missing:
        raise InputError("--scheduler", f"tls:// also needs {', '.join(missing)}")
    for value in (access.ca_file, access.cert, access.key):
        if value and not os.path.isfile(value):
            raise InputError(value, "not a file (a TLS credential for --scheduler)")
    return Security(
        tls_ca_file=access.ca_file,
        tls_client_cert=access.cert,
        tls_client_key=access.key,
        require_encryption=True,
    )


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _scheduler_address(address: str) -> tuple[str, str, int]:
    """The scheme, host and port of --scheduler, checked before a Client exists: a Client that
    failed to connect complains at exit, after a 20 s wait."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location)
    except ValueError as e:
        raise InputError(
            address,
            f"--scheduler: not a scheduler address ({e}); expected e.g. tcp://host:8786",
        ) from None
    if scheme not in ("tcp", "tls"):
        raise InputError(
            address,
            f"--scheduler: {scheme}:// is not supported; expected tls://host:port (or "
            "tcp://host:port on this machine)",
        )
    return str(scheme), str(host), int(port)


def _check_access(address: str, scheme: str, host: str, access: SchedulerAccess) -> None:
    """Plain tcp:// only on this machine (or with --insecure-scheduler, said), and the TLS options
    only with tls://."""
    if scheme == "tcp" and not _loopback(host):
        if not access.insecure:
            raise InputError(
                address,
                "--scheduler: a plain tcp:// scheduler on another machine runs the tasks of "
                "anyone who reaches its port, as the workers' user: use tls:// with "
                "--tls-ca-file, --tls-cert and --tls-key (the README's cluster recipe), or "
                "--insecure-scheduler on a network only you use",
            )
        print(
            f"spmi-dbg: warning: --insecure-scheduler: {address} is plain tcp://: anyone who "
            "reaches it can run code as the workers' user",
            file=sys.stderr,
        )
    if scheme == "tcp" and access.given():
        raise InputError(
            address, "--scheduler: --tls-ca-file/--tls-cert/--tls-key need a tls:// address"
        )


class DaskEngine:
    def __init__(
        self,
        address: str,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        access: SchedulerAccess | None = None,
    ) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise InputError(
                address, "--scheduler needs dask.distributed: pip install 'spmi-dbg[dask]'"
            ) from None
        self.address = address
        scheme, host, port = _scheduler_address(address)
        access = access or SchedulerAccess()
        _check_access(address, scheme, host, access)
        security = _security(access) if scheme == "tls" else None
        try:
            socket.create_connection((host, port), timeout=connect_timeout).close()
        except TimeoutError:
            raise InputError(
                address, f"--scheduler: no dask scheduler answered within {connect_timeout:g} s"
            ) from None
        except OSError as e:
            raise InputError(
                address, f"--scheduler: no dask scheduler there ({e.strerror or e})"
            ) from None
        try:
            self.client = Client(
                address,
                timeout=f"{connect_timeout}s",
                set_as_default=False,
                **({"security": security} if security is not None else {}),
            )
        except (OSError, TimeoutError, ValueError, TypeError) as e:
            raise InputError(
                address,
                f"--scheduler: no dask scheduler answered within {connect_timeout:g} s "
                f"({' '.join(str(e).split())[:200]})",
            ) from None
        self._stop = f"spmi-triage-stop-{uuid.uuid4().hex}"

    @property
    def dashboard(self) -> str | None:
        link = self.client.dashboard_link
        return str(link) if link else None

    @property
    def workers(self) -> int:
        return max(1, int(sum(self.client.nthreads().values())))

    def report(self) -> EngineReport:
        return EngineReport("dask", self.workers, self.address, self.dashboard)

    def run(
        self, tasks: list[PartitionTask], cancel: threading.Event, budget: CrashBudget
    ) -> EngineRun:
        from distributed import Event, Queue, as_completed

        ran = EngineRun(self.report())
        report = ran.report
        stop = Event(self._stop, client=self.client)
        order = sorted(tasks, key=lambda t: (-t.partition.bytes, t.partition.index))
        run_id = uuid.uuid4().hex[:8]
        budget_name = f"spmi-triage-budget-{run_id}"
        Queue(budget_name, client=self.client).put(max(0, budget.left))

        def submit(task: PartitionTask, attempt: int) -> Any:
            return self.client.submit(
                _remote,
                dataclasses.replace(task, exact_env=True),  # the worker's is not the user's
                self._stop,
                budget_name,
                key=f"spmi-triage-{run_id}-p{task.partition.index}-{attempt}",
                pure=False,
                priority=-task.partition.index,
            )

        try:
            futures = {submit(t, 0): (t, 0) for t in order}
        except Exception as e:
            raise self._lost(e) or e from None
        pending = as_completed(list(futures), loop=self.client.loop)
        finished = threading.Event()
        watcher = threading.Thread(
            target=self._watch,
            args=(cancel, finished, stop),
            name="spmi-triage-cancel",
            daemon=True,
        )
        watcher.start()
        try:
            for future in pending:
                task, attempt = futures[future]
                again, journal = self._settled(future, task, attempt, cancel, report)
                if journal is not None:
                    ran.journals[task.partition.index] = journal
                if again:
                    resubmitted = submit(task, attempt + 1)
                    futures[resubmitted] = (task, attempt + 1)
                    pending.add(resubmitted)
        except BaseException:
            cancel.set()
            raise
        finally:
            finished.set()
            if self.client.status == "running":  # a lost cluster has nothing left to stop
                try:
                    if cancel.is_set():
                        stop.set()
                        self.client.cancel(list(futures))
                        self.client.run(_close_sessions)
                # the scheduler went away before the client noticed (the error that ends the run
                # says so, not this one), or a worker took its debuggers with it
                except Exception:
                    pass
        return ran

    def _lost(self, e: BaseException) -> ClusterLost | None:
        """`e` as the cluster's loss when it is one: a task cancelled because the client lost its
        scheduler, a closed client or connection, or any error once the client is no longer
        running. A task's own failure is not."""
        reason = getattr(e, "reason", None)
        gone = reason == "scheduler-connection-lost" or type(e).__name__ in (
            "ClosedClientError",
            "CommClosedError",
        )
        if gone or self.client.status not in ("running", "newly-created"):
            # the client's reconnection, cut short by our close, would log its own traceback:
            # the run's one line says it all
            for name in ["distributed", *logging.root.manager.loggerDict]:
                if name.startswith("distributed"):
                    logging.getLogger(name).setLevel(logging.CRITICAL + 1)
            return ClusterLost(self.address, e)
        return None

    def _settled(
        self,
        future: Any,
        task: PartitionTask,
        attempt: int,
        cancel: threading.Event,
        report: EngineReport,
    ) -> tuple[bool, Journal | None]:
        """A task's end: (submit it again, the journal it returned). Submitted again when its
        worker died and it has tries left; a failure is the partition's, said in the report."""
        from distributed import KilledWorker

        try:
            journal: Journal = future.result()
            return False, journal
        except KilledWorker:
            if attempt < RESUBMITS and not cancel.is_set():
                report.resubmitted[task.partition.index] = attempt + 1
                return True, None
            report.task_failures[task.partition.index] = (
                f"its workers died {attempt + 1} x (KilledWorker)"
            )
        except MissingOnWorker:
            cancel.set()
            raise
        # a bug or a broken journal in the task: the partition's failure
        except Exception as e:
            lost = self._lost(e)
            if lost is not None:
                raise lost from None
            report.failed(task.partition.index, e)
        return False, None

    def run_bundles(self, jobs: list[BundleJob], report: EngineReport) -> dict[str, ReproResult]:
        """All at once, one task each: on the workers (each in the shared out directory, by its
        absolute path). A bundle whose task failed is a tool failure of that bucket, with the
        reason."""
        from distributed import as_completed

        jobs = [
            dataclasses.replace(
                j, options=dataclasses.replace(j.options, out=j.options.out.absolute())
            )
            if j.options.out is not None
            else j
            for j in jobs
        ]
        futures = {
            self.client.submit(
                _bundle, j, key=f"spmi-triage-bundle-{uuid.uuid4().hex[:8]}-{j.key}", pure=False
            ): j
            for j in jobs
        }
        out: dict[str, ReproResult] = {}
        for future in as_completed(list(futures), loop=self.client.loop):
            job = futures[future]
            try:
                where, result = future.result()
                report.bundle_workers[job.key] = where
            except Exception as e:  # a worker lacking an input, a worker that died twice, a bug
                lost = self._lost(e)
                if lost is not None:
                    raise lost from None
                result = ReproResult(
                    job.options,
                    [],
                    out=bundle_dir_for(job.options.out, None, "tool-failure"),
                    outcome="tool-failure",
                    exit_code=exits.TOOL_FAILURE,
                    error=f"the bundle's task failed: {type(e).__name__}: {e}",
                )
            out[job.key] = result
        return out

    @staticmethod
    def _watch(cancel: threading.Event, finished: threading.Event, stop: Any) -> None:
        """The coordinator's stop (--max-crashes, Ctrl-C) told to the running tasks at once."""
        while not finished.is_set():
            if cancel.wait(0.2):
                try:
                    stop.set()
                except Exception:  # the scheduler went away
                    pass
                return

    def run_all(self, fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
        """fn over items as tasks of the cluster, the results in order (bisect's probes: each a
        few replays, any worker)."""
        futures = self.client.map(fn, items, pure=False)
        return list(self.client.gather(futures))

    def close(self) -> None:
        try:
            # the workers' debuggers, kept for the bundles, end with the triage
            if self.client.status == "running":
                self.client.run(_close_sessions)
        except Exception:  # a lost cluster, or a worker that took its debuggers with it
            pass
        try:
            self.client.close(timeout=5)
        except Exception:
            pass
