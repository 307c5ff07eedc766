"""Executors run a sweep's scenarios (the *execute* layer; ``tcpfair.orchestrate`` ties
spec → plan → execute → store together).

An executor takes a *run function* ``(scenario, backend) -> RunResult`` (by default the real
backends, ``run_backend``) and a list of tasks, and yields each task's ``Outcome`` as it
completes. Workers only compute; results come back to the calling process, which is the
only writer of the store (so a Dask worker on another machine needs no access to it).

- ``LocalExecutor(jobs)``: ``jobs == 1`` runs in this process; more use a process pool
  (spawned workers, so no state is inherited from a threaded parent).
- ``DaskExecutor(scheduler, jobs)``: an existing Dask scheduler (``tcp://host:8786``) or a
  ``LocalCluster`` of ``jobs`` single-threaded workers when no address is given.

Run functions must be picklable (module-level functions).
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import shutil
import sys
import time
import traceback
from collections.abc import Callable, Generator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Protocol

from .result import RunResult
from .spec import Scenario
from .store import Store, StoreError
from .sweep import SweepError

__all__ = [
    "Outcome",
    "LocalExecutor",
    "DaskExecutor",
    "run_backend",
    "backend_check",
    "make_executor",
    "Task",
    "RunFn",
]

RunFn = Callable[[Scenario, str], RunResult]
Task = tuple[str, Scenario, str, str | None]  # (key, scenario, backend, staging path or None)


@dataclass
class Outcome:
    result: RunResult | None
    error: str | None
    started: float
    finished: float
    wall_s: float
    staged: str | None = None  # the worker saved the result here instead of returning it
    disk_full: bool = False  # saving failed for want of space: the store's problem, not the run's

    @property
    def ok(self) -> bool:
        return self.error is None


def run_backend(scenario: Scenario, backend: str) -> RunResult:
    """The default run function: the named backend (``sim`` or ``kernel``)."""
    from .backends import get_backend

    return get_backend(backend).run(scenario)


def execute(run_fn: RunFn, scenario: Scenario, backend: str, stage: str | None = None) -> Outcome:
    """Run one scenario; any exception becomes a recorded error, never a crash of the sweep.
    With ``stage``, the worker writes the run directory there (in parallel with the other
    workers) and returns no tables; the caller commits it to the store."""
    from .backends import BackendError

    started = time.time()
    t0 = time.perf_counter()
    try:
        result = run_fn(scenario, backend)
        error = None
    except BackendError as e:
        result, error = None, str(e)
    except Exception as e:  # a run's failure is data; the sweep goes on
        result, error = None, _describe(e)
    finished, wall = time.time(), time.perf_counter() - t0
    if result is not None and stage is not None:
        try:
            result.save(stage)
        except Exception as e:
            shutil.rmtree(stage, ignore_errors=True)
            return Outcome(
                None,
                f"storing the result failed: {_describe(e)}",
                started,
                finished,
                wall,
                disk_full=_disk_full(e),
            )
        return Outcome(None, None, started, finished, wall, staged=stage)
    return Outcome(result, error, started, finished, wall)


def _disk_full(e: BaseException) -> bool:
    return isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)


def _stop_disk_full(store: Store, e: BaseException | str) -> StoreError:
    """A full disk stops the sweep (every further run would fail the same way); the run
    stays pending, so the same command runs it again once there is space."""
    why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
    return StoreError(
        f"{store.root}: the disk is full ({why}); nothing stored was lost — free space and run "
        "the same command again (finished runs are kept, the others run then)"
    )


def _describe(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return f"{type(e).__name__}: {e}{where}"


class Executor(Protocol):
    name: str
    jobs: int
    #: workers see the results directory (they write run directories themselves)
    shares_filesystem: bool

    def start(self) -> None: ...

    def map(
        self, run_fn: RunFn, tasks: list[Task]
    ) -> Generator[tuple[str, Outcome], None, None]: ...


class LocalExecutor:
    name = "local"
    shares_filesystem = True

    def __init__(self, jobs: int = 1):
        if jobs < 1:
            raise ValueError(f"-j must be at least 1 (got {jobs})")
        self.jobs = jobs
        self.pool: ProcessPoolExecutor | None = None

    def map(self, run_fn: RunFn, tasks: list[Task]) -> Generator[tuple[str, Outcome], None, None]:
        if self.jobs == 1 or len(tasks) <= 1:
            if self.pool is not None:
                self.pool.shutdown(wait=True)
                self.pool = None
            for key, sc, backend, stage in tasks:
                yield key, execute(run_fn, sc, backend, stage)
            return
        pending = list(reversed(tasks))
        suspects: list[Task] = []
        while pending:
            pool = self._pool()
            inflight: dict[Future[Outcome], Task] = {}
            try:
                while pending or inflight:
                    while pending and len(inflight) < 2 * self.jobs:
                        t = pending.pop()
                        inflight[pool.submit(execute, run_fn, t[1], t[2], t[3])] = t
                    done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                    for fut in done:
                        out = fut.result()  # BrokenProcessPool if a worker died
                        yield inflight.pop(fut)[0], out
            except BrokenProcessPool:
                # A worker died (killed, out of memory, a crash in native code) and took the
                # pool with it. Which run killed it is unknown: the runs in flight are re-run
                # one by one below, each in its own worker, and only the culprit fails.
                suspects.extend(inflight.values())
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
                self.pool = None
        for t in suspects:
            with ProcessPoolExecutor(
                max_workers=1, mp_context=self._context(), initializer=_worker_init
            ) as solo:
                try:
                    out = solo.submit(execute, run_fn, t[1], t[2], t[3]).result()
                except BrokenProcessPool:
                    now = time.time()
                    out = Outcome(
                        None,
                        "the worker process died during this run (killed, out of memory "
                        "or a crash in native code)",
                        now,
                        now,
                        0.0,
                    )
            yield t[0], out

    def start(self) -> None:
        """Start the workers now (before any progress-bar thread exists: see ``_pool``)."""
        if self.jobs > 1:
            self._pool()

    def _pool(self) -> ProcessPoolExecutor:
        # fork where available: workers start in milliseconds and a user's script needs no
        # ``if __name__ == "__main__"`` guard (spawn would re-import it). All workers are
        # forked here, up front, while this process has no other threads.
        if self.pool is None:
            self.pool = ProcessPoolExecutor(
                max_workers=self.jobs, mp_context=self._context(), initializer=_worker_init
            )
            for f in [self.pool.submit(_noop) for _ in range(self.jobs)]:
                f.result()
        return self.pool

    @staticmethod
    def _context() -> Any:
        return get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")


def _noop() -> None:
    return None


def _worker_init() -> None:
    """Ctrl-C reaches the whole process group: a worker leaves at once and quietly (the
    sweep process reports the interruption and keeps what finished). A worker also dies with
    the sweep process (Linux PR_SET_PDEATHSIG), so ``kill -9`` of the sweep leaves no idle
    workers behind."""
    import signal

    signal.signal(signal.SIGINT, lambda *_: os._exit(130))
    parent = os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


class DaskExecutor:
    """Runs on a Dask cluster. Kernel-backend runs (``kernel=True``) go only to workers
    holding the ``kernel`` resource (``dask worker … --resources kernel=1 --nthreads 1``,
    one per machine), so a machine runs one emulation at a time; the backend's machine-wide
    lock stays the last guard. Before the first kernel run each such worker checks it can
    run every scenario (``tcpfair doctor``'s checks); one that cannot is named on stderr
    with the reason and gets no runs."""

    name = "dask"
    shares_filesystem = False  # workers may be other machines: results come back

    def __init__(
        self,
        scheduler: str | None = None,
        jobs: int = 1,
        processes: bool = True,
        kernel: bool = False,
    ):
        self.scheduler = scheduler
        self.jobs = jobs
        self.processes = processes
        self.kernel = kernel
        #: worker address → why it cannot run this sweep's kernel runs
        self.rejected: dict[str, str] = {}
        self.good: list[str] | None = None  # the kernel workers that passed the check
        self.labels: dict[str, str] = {}  # worker address → "name (address)"
        self._conn: tuple[Any, Any] | None = None

    def start(self) -> None:
        return None

    def check_workers(self, scenarios: list[Scenario]) -> list[str]:
        """Connect and check every kernel worker against ``scenarios`` (before anything is
        stored); ``map`` then sends runs only to the workers that passed."""
        try:
            self.good = self._kernel_workers(self._open()[0], scenarios)
        except BaseException:
            self.close()
            raise
        return self.good

    def close(self) -> None:
        if self._conn is not None:
            client, cluster = self._conn
            self._conn = None
            client.close()
            if cluster is not None:
                cluster.close()

    def _open(self) -> tuple[Any, Any]:
        if self._conn is None:
            self._conn = self._client()
        return self._conn

    def _client(self) -> tuple[Any, Any]:
        from distributed import Client, LocalCluster

        if self.scheduler:
            try:
                return Client(self.scheduler, timeout="20s"), None
            except OSError as e:
                raise SweepError(
                    [("--scheduler", f"cannot reach the Dask scheduler {self.scheduler!r}: {e}")]
                ) from None
        cluster = LocalCluster(
            n_workers=1 if self.kernel else self.jobs,
            threads_per_worker=1,
            processes=self.processes,
            dashboard_address=None,
            resources={KERNEL_RESOURCE: 1} if self.kernel else None,
        )
        return Client(cluster), cluster

    def map(self, run_fn: RunFn, tasks: list[Task]) -> Generator[tuple[str, Outcome], None, None]:
        from distributed import wait as dask_wait

        client = self._open()[0]
        try:
            where: dict[str, Any] = {}
            if self.kernel and tasks:
                if self.good is None:
                    self.good = self._kernel_workers(client, [t[1] for t in tasks])
                where = {"resources": {KERNEL_RESOURCE: 1}, "workers": self.good}
            futures = {
                client.submit(execute_on_worker, run_fn, sc, backend, pure=False, **where): key
                for key, sc, backend, _stage in tasks
            }
            pending = set(futures)
            while pending:
                try:
                    done, pending = dask_wait(pending, timeout=5, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    done = set()
                for fut in done:
                    yield futures[fut], _dask_outcome(fut)
                    fut.release()
                why = self._orphaned(client, where.get("workers", [])) if not done else None
                if why:
                    for fut in pending:
                        fut.cancel()
                        now = time.time()
                        yield futures[fut], Outcome(None, why, now, now, 0.0)
                    pending = set()
        finally:
            self.close()

    def _kernel_workers(self, client: Any, scenarios: list[Scenario]) -> list[str]:
        """The resourced workers that can run every scenario; the others named on stderr."""
        info = client.scheduler_info(n_workers=-1)["workers"]
        holders = {a: w for a, w in info.items() if w.get("resources", {}).get(KERNEL_RESOURCE)}
        if not holders:
            raise SweepError(
                [
                    (
                        "--scheduler",
                        f"no Dask worker holds the '{KERNEL_RESOURCE}' resource, which kernel "
                        f"runs need (start one per machine, as root: dask worker "
                        f"{self.scheduler or 'tcp://host:8786'} --resources {KERNEL_RESOURCE}=1 "
                        "--nthreads 1)",
                    )
                ]
            )
        self.labels.update({a: worker_label(a, w) for a, w in holders.items()})
        found = client.run(worker_problems, scenarios, workers=list(holders), on_error="return")
        good = []
        for addr, w in holders.items():
            probs = found.get(addr, ["did not answer the capability check"])
            if isinstance(probs, BaseException):
                probs = [f"the capability check failed: {_describe(probs)}"]
            if probs:
                self.rejected[addr] = "; ".join(probs)
            else:
                good.append(addr)
        if not good:
            raise SweepError(
                [
                    (
                        "--scheduler",
                        "no Dask worker with the kernel resource can run this sweep: "
                        + " | ".join(
                            f"{worker_label(a, holders[a])}: {why}"
                            for a, why in self.rejected.items()
                        ),
                    )
                ]
            )
        for addr, why in self.rejected.items():
            print(
                f"tcpfair: Dask worker {worker_label(addr, holders[addr])} cannot run this "
                f"sweep, its runs go to the others: {why}",
                file=sys.stderr,
            )
        return good

    def _orphaned(self, client: Any, workers: list[str]) -> str | None:
        """Why the runs still pending can never run: every checked kernel worker is gone
        (its machine lost). Then they fail with that reason and the sweep ends."""
        if not self.kernel:
            return None
        alive = set(client.scheduler_info(n_workers=-1)["workers"])
        if alive & set(workers):
            return None
        return (
            "every Dask worker that could run kernel runs was lost ("
            + ", ".join(self.labels.get(w, w) for w in workers)
            + "); the namespaces a lost machine left are its `tcpfair doctor --cleanup` business"
        )


KERNEL_RESOURCE = "kernel"


def execute_on_worker(run_fn: RunFn, scenario: Scenario, backend: str) -> Outcome:
    """``execute`` on a Dask worker; the result's ``meta["dask_worker"]`` names the worker
    (with ``meta["host"]``, which of a machine's workers ran it)."""
    from distributed import get_worker

    out = execute(run_fn, scenario, backend)
    if out.result is not None:
        try:
            out.result.meta["dask_worker"] = str(get_worker().name)
        except ValueError:  # not on a worker (a test calling it directly)
            pass
    return out


def _dask_outcome(fut: Any) -> Outcome:
    try:
        out: Outcome = fut.result()
        return out
    except Exception as e:  # the worker itself died (KilledWorker) or lost the task
        now = time.time()
        return Outcome(None, f"Dask worker failed: {type(e).__name__}: {e}", now, now, 0.0)


def worker_label(addr: str, info: dict[str, Any]) -> str:
    name = info.get("name")
    return f"{name} ({addr})" if name not in (None, "", addr) else addr


def worker_problems(scenarios: list[Scenario]) -> list[str]:
    """On a worker: why it cannot run these kernel scenarios (``tcpfair doctor``'s checks,
    then each distinct scenario's), empty when it can."""
    from .backends import BackendError, get_backend

    be = get_backend("kernel")
    probs: list[str] = []
    seen: set[str] = set()
    for sc in scenarios:
        try:
            be.check(sc)
        except BackendError as e:
            msg = str(e)
            if msg not in seen:
                seen.add(msg)
                probs.append(msg)
    return probs


def backend_check(backend: str, machine: bool = True) -> Callable[[Scenario], None]:
    """The backend's pre-flight check, or a clear error when the backend cannot load.
    ``machine=False``: only the checks that do not depend on this machine (the kernel
    backend's runs on Dask workers, which check their own)."""
    from .backends import get_backend

    try:
        be = get_backend(backend)
        return be.check if machine else getattr(be, "check_scenario", be.check)
    except ImportError as e:
        raise SweepError(
            [("--backend", f"the {backend} backend is not available in this installation ({e})")]
        ) from None


#: Local workers per CPU core at most (``-j``): each is a process with its own memory.
JOBS_PER_CORE = 8


def max_local_jobs() -> int:
    return JOBS_PER_CORE * (os.cpu_count() or 1)


def default_jobs(backend: str) -> int:
    return 1 if backend == "kernel" else (os.cpu_count() or 1)


def make_executor(executor: str, backend: str, jobs: int | None, scheduler: str | None) -> Executor:
    if backend == "kernel":
        if executor == "dask" and not scheduler:
            raise SweepError(
                [
                    (
                        "--executor",
                        "the kernel backend on Dask needs --scheduler tcp://host:8786 (one "
                        "worker per machine with the kernel resource; docs/sweeps.md, "
                        '"Many machines"); on this machine alone use --executor local',
                    )
                ]
            )
        if jobs not in (None, 1):
            raise SweepError(
                [("-j", f"the kernel backend runs one at a time per machine; got -j {jobs}")]
            )
    n = jobs if jobs is not None else default_jobs(backend)
    if n < 1:
        raise SweepError([("-j", f"must be at least 1 (got {n})")])
    if n > max_local_jobs() and not (executor == "dask" and scheduler):
        raise SweepError(
            [
                (
                    "-j",
                    f"at most {max_local_jobs()} workers on this machine ({JOBS_PER_CORE} per "
                    f"CPU core; more only wait for a core and each holds a copy of tcpfair); "
                    f"got {n}",
                )
            ]
        )
    if executor == "local":
        if scheduler:
            raise SweepError([("--scheduler", "only with --executor dask")])
        return LocalExecutor(n)
    if executor == "dask":
        return DaskExecutor(scheduler, n, kernel=backend == "kernel")
    raise SweepError([("--executor", f"expected 'local' or 'dask' (got {executor!r})")])
