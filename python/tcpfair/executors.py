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
import re
import shutil
import socket
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

from .dispatch import Dispatch
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
    one per machine), one run per worker at a time; the backend's machine-wide lock stays
    the last guard. Each such worker first checks which of the sweep's scenarios it can run
    (``tcpfair doctor``'s checks and the scenario's own, on its machine) and then gets only
    those (``tcpfair.dispatch``); one that can run none is named on stderr with the reason.
    A worker that joins mid-sweep is checked and gets runs; the run of a worker that is
    lost fails naming it, and the runs left go to the others."""

    name = "dask"
    shares_filesystem = False  # workers may be other machines: results come back

    #: how long the first capability checks may take before the sweep starts without the
    #: workers that have not answered (they join when they do)
    CHECK_TIMEOUT_S = 60.0
    #: how often a kernel sweep looks for workers that joined or were lost
    POLL_S = 2.0

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
        #: worker address → why it cannot run (some of) this sweep's kernel runs
        self.rejected: dict[str, str] = {}
        self.good: list[str] | None = None  # kernel workers that can run some of the sweep
        self.labels: dict[str, str] = {}  # worker address → "name (address)"
        self.joined: list[str] = []  # workers that passed their check after the start
        self.lost: list[str] = []  # workers lost while the sweep ran
        self._conn: tuple[Any, Any] | None = None
        self._kinds: dict[str, int] = {}  # scenario JSON → index into self._scenarios
        self._scenarios: list[Scenario] = []
        self._able: dict[str, frozenset[int]] = {}  # worker → scenarios it can run
        self._why: dict[str, dict[int, str]] = {}  # worker → scenario → why not
        self._checking: dict[Any, str] = {}  # check future → worker address

    def start(self) -> None:
        return None

    def connect(self) -> None:
        """Reach the scheduler at ``--scheduler`` now: ``run_sweep`` calls this before it
        creates the results store, so that a scheduler nobody runs is said at once and
        leaves nothing behind (it waited Dask's 20 s, after the store existed)."""
        self._open()

    def check_workers(self, scenarios: list[Scenario]) -> list[str]:
        """Connect and check every kernel worker against ``scenarios`` (every run of the
        sweep) before anything is stored: refused (``SweepError``) when some scenario no
        worker can run. ``map`` then gives each worker only runs it passed."""
        try:
            client = self._open()[0]
            self._scenarios, self._kinds = [], {}
            for sc in scenarios:
                key = sc.to_json()
                if key not in self._kinds:
                    self._kinds[key] = len(self._scenarios)
                    self._scenarios.append(sc)
            self._check_all(client)
        except BaseException:
            self.close()
            raise
        self.good = list(self._able)
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
            why = _nothing_listens(self.scheduler)
            if why is None:
                try:
                    return Client(self.scheduler, timeout="20s"), None
                except OSError as e:
                    why = str(e)
            raise SweepError(
                [
                    (
                        "--scheduler",
                        f"cannot reach the Dask scheduler {self.scheduler!r}: {why} (start one "
                        f"with `dask scheduler`, or leave out --scheduler for a local cluster)",
                    )
                ],
                option=True,
            )
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
            if self.kernel and tasks:
                yield from self._map_kernel(client, run_fn, tasks)
                return
            futures = {
                client.submit(execute_on_worker, run_fn, sc, backend, pure=False): key
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
        finally:
            self.close()

    # ------------------------------------------------------------------ kernel sweeps
    def _map_kernel(
        self, client: Any, run_fn: RunFn, tasks: list[Task]
    ) -> Generator[tuple[str, Outcome], None, None]:
        """One run per checked worker at a time, each worker only the runs it can run;
        workers that join are checked and used; a lost worker's run fails with the reason."""
        from distributed import wait as dask_wait

        if any(t[1].to_json() not in self._kinds for t in tasks):
            self.check_workers([t[1] for t in tasks])
        disp = Dispatch([self._kinds[t[1].to_json()] for t in tasks])
        for addr, able in self._able.items():
            disp.add_worker(addr, able)
        known = set(self.labels)
        running: dict[Any, tuple[int, str]] = {}  # future → (task, worker)
        while not disp.done:
            for task, addr in disp.assign():
                _key, sc, backend, _stage = tasks[task]
                fut = client.submit(
                    execute_on_worker,
                    run_fn,
                    sc,
                    backend,
                    pure=False,
                    workers=[addr],
                    allow_other_workers=False,
                    resources={KERNEL_RESOURCE: 1},
                )
                running[fut] = (task, addr)
            waiting = [*running, *self._checking]
            done: set[Any] = set()
            if waiting:
                try:
                    done, _ = dask_wait(waiting, timeout=self.POLL_S, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    pass
            for fut in done:
                if fut in running:
                    task, addr = running.pop(fut)
                    disp.finished(addr)
                    yield tasks[task][0], _dask_outcome(fut)
                    fut.release()
                elif fut in self._checking:
                    addr = self._checking.pop(fut)
                    if self._record_check(addr, fut):
                        disp.add_worker(addr, self._able[addr])
                        self.joined.append(addr)
                        print(
                            f"tcpfair: Dask worker {self.labels[addr]} joined and passed its "
                            "check; it gets runs from now on",
                            file=sys.stderr,
                        )
            alive = self._holders(client)
            for addr in [a for a in [*disp.able, *disp.busy] if a not in alive]:
                # its machine is gone: the run it held fails with the reason (not handed to
                # the next machine: a run may be what took this one down)
                for fut, (_t, a) in list(running.items()):
                    if a == addr:
                        running.pop(fut)
                        fut.cancel()
                held = disp.lost(addr)
                if addr not in self.lost:
                    self.lost.append(addr)
                label = self.labels.get(addr, addr)
                if held is not None:
                    now = time.time()
                    yield (
                        tasks[held][0],
                        Outcome(
                            None,
                            f"the Dask worker running it, {label}, was lost (machine down or "
                            "worker killed); the namespaces a lost machine left are its "
                            "`tcpfair doctor --cleanup` business",
                            now,
                            now,
                            0.0,
                        ),
                    )
                print(
                    f"tcpfair: Dask worker {label} was lost; the runs left go to the other "
                    "workers that can run them",
                    file=sys.stderr,
                )
            for addr in set(alive) - known:
                known.add(addr)
                self.labels[addr] = worker_label(addr, alive[addr])
                self._checking[self._submit_check(client, addr)] = addr
            stranded = disp.stranded()
            if stranded and not self._checking:
                why = self._stranded_reason()
                disp.drop(stranded)
                for task in stranded:
                    now = time.time()
                    yield tasks[task][0], Outcome(None, why, now, now, 0.0)

    def _holders(self, client: Any) -> dict[str, Any]:
        info = client.scheduler_info(n_workers=-1)["workers"]
        return {a: w for a, w in info.items() if w.get("resources", {}).get(KERNEL_RESOURCE)}

    def _submit_check(self, client: Any, addr: str) -> Any:
        # a task in the worker's thread (not ``client.run`` in its event loop: the check
        # takes seconds, and the worker must keep answering the scheduler meanwhile)
        return client.submit(
            worker_problems,
            self._scenarios,
            workers=[addr],
            allow_other_workers=False,
            pure=False,
        )

    def _check_all(self, client: Any) -> None:
        """Check every resourced worker; refuse the sweep when some scenario none can run."""
        from distributed import wait as dask_wait

        holders = self._holders(client)
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
                ],
                option=True,
            )
        self.labels.update({a: worker_label(a, w) for a, w in holders.items()})
        checks = {self._submit_check(client, a): a for a in holders}
        try:
            done, not_done = dask_wait(list(checks), timeout=self.CHECK_TIMEOUT_S)
        except TimeoutError:
            done, not_done = set(), set(checks)
        for fut in done:
            self._record_check(checks[fut], fut, announce=False)
        self._checking = {f: checks[f] for f in not_done}
        for addr in self._checking.values():
            print(
                f"tcpfair: Dask worker {self.labels[addr]} has not answered its capability "
                f"check in {self.CHECK_TIMEOUT_S:g} s (busy?); it gets runs once it has",
                file=sys.stderr,
            )
        covered = frozenset().union(*self._able.values()) if self._able else frozenset()
        missing = [k for k in range(len(self._scenarios)) if k not in covered]
        if not missing or self._checking:
            for addr in self.rejected:  # the sweep goes on: say who sits out what
                self._announce(addr)
            return
        if not self._able:
            msg = "no Dask worker with the kernel resource can run this sweep: "
        else:
            msg = (
                f"no Dask worker with the kernel resource can run {len(missing)} of this "
                f"sweep's {len(self._scenarios)} scenarios: "
            )
        raise SweepError(
            [
                (
                    "--scheduler",
                    msg
                    + " | ".join(
                        f"{self.labels[a]}: {why[missing[0]]}"
                        for a, why in self._why.items()
                        if missing[0] in why
                    ),
                )
            ],
            option=True,
        )

    def _record_check(self, addr: str, fut: Any, announce: bool = True) -> bool:
        """Note what ``addr`` can run from its check's answer; True when it can run some."""
        n = len(self._scenarios)
        try:
            probs = list(fut.result())
            if len(probs) != n:
                raise ValueError(f"{len(probs)} answers for {n} scenarios")
        except Exception as e:
            probs = [f"the capability check failed: {_describe(e)}"] * n
        able = frozenset(k for k, p in enumerate(probs) if not p)
        why = {k: p for k, p in enumerate(probs) if p}
        if why:
            self._why[addr] = why
            reasons = "; ".join(dict.fromkeys(why.values()))
            some = f"cannot run {len(why)} of the {n} scenarios: " if able else ""
            self.rejected[addr] = some + reasons
        if able:
            self._able[addr] = able
        if announce and why:
            self._announce(addr)
        return bool(able)

    def _announce(self, addr: str) -> None:
        whom = "those go to the others" if addr in self._able else "its runs go to the others"
        print(
            f"tcpfair: Dask worker {self.labels[addr]} {self.rejected[addr]} ({whom})"
            if addr in self._able
            else f"tcpfair: Dask worker {self.labels[addr]} cannot run this sweep, {whom}: "
            f"{self.rejected[addr]}",
            file=sys.stderr,
        )

    def _stranded_reason(self) -> str:
        """Why the runs left can never run: the workers that could are gone, or none can."""
        if self.lost:
            return (
                "every Dask worker that could run kernel runs was lost ("
                + ", ".join(self.labels.get(w, w) for w in self.lost)
                + "); the namespaces a lost machine left are its `tcpfair doctor --cleanup` "
                "business"
            )
        return "no Dask worker that passed its capability check can run it: " + "; ".join(
            f"{self.labels.get(a, a)}: {r}" for a, r in self.rejected.items()
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
    """On a worker: for each scenario, why this worker cannot run it (``tcpfair doctor``'s
    machine checks, then the scenario's own on this machine), ``""`` when it can."""
    from .backends import BackendError, get_backend

    be = get_backend("kernel")
    probs: list[str] = []
    for sc in scenarios:
        try:
            be.check(sc)
            probs.append("")
        except BackendError as e:
            probs.append(str(e))
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
            [("--backend", f"the {backend} backend is not available in this installation ({e})")],
            option=True,
        ) from None


#: Local workers per CPU core at most (``-j``): each is a process with its own memory.
JOBS_PER_CORE = 8


def max_local_jobs() -> int:
    return JOBS_PER_CORE * (os.cpu_count() or 1)


def default_jobs(backend: str) -> int:
    return 1 if backend == "kernel" else (os.cpu_count() or 1)


#: the address schemes a Dask scheduler listens on (distributed.comm's; inproc is within
#: one process, ucx needs a package tcpfair does not install)
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss")


#: [SCHEME://]HOST:PORT (HOST a name, an IPv4 address or a bracketed IPv6 one)
_ADDRESS_RE = re.compile(
    r"(?:([A-Za-z][A-Za-z0-9+.-]*)://)?(\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(\d{1,5})/?"
)


def scheduler_address_problem(address: str) -> str | None:
    """What is wrong with ``--scheduler ADDRESS`` as written, before anything connects:
    Dask said "missing port number in address ''" for ``tcp://`` and "unknown address
    scheme 'http'" (neither naming --scheduler) after the results store was created, and
    an empty address silently started a local cluster instead. None: well-formed."""
    allowed = (
        f"allowed: [SCHEME://]HOST:PORT, e.g. tcp://127.0.0.1:8786 (scheme: "
        f"{', '.join(SCHEDULER_SCHEMES)}; port 1-65535)"
    )
    shown = f"{address!r}: "
    m = _ADDRESS_RE.fullmatch(address)
    scheme = address.split("://", 1)[0] if "://" in address else None
    if scheme is not None and scheme not in SCHEDULER_SCHEMES:
        return f"{shown}unknown scheme {scheme!r}; {allowed}"
    if m is None:
        return f"{shown}not an address of a Dask scheduler; {allowed}"
    if not 1 <= int(m.group(3)) <= 65535:
        return f"{shown}port {int(m.group(3))} is out of range; {allowed}"
    return None


def _nothing_listens(address: str) -> str | None:
    """Why nothing can answer at ``address`` (well-formed: ``scheduler_address_problem``),
    found in one TCP connection attempt of at most 3 s — a refused connection or a host
    name that does not resolve, which Dask retries for its whole 20-s timeout. None when
    the port answered, or the attempt only timed out (Dask then tries for itself)."""
    m = _ADDRESS_RE.fullmatch(address)
    if m is None:
        return None
    host, port = m.group(2).strip("[]"), int(m.group(3))
    try:
        socket.create_connection((host, port), timeout=3.0).close()
    except ConnectionRefusedError:
        return f"nothing listens at {host}:{port} (connection refused)"
    except socket.gaierror as e:
        return f"the host {host!r} is not known ({e.strerror})"
    except OSError:
        return None
    return None


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
                ],
                option=True,
            )
        if jobs not in (None, 1):
            raise SweepError(
                [("-j", f"the kernel backend runs one at a time per machine; got -j {jobs}")],
                option=True,
            )
    n = jobs if jobs is not None else default_jobs(backend)
    if n < 1:
        raise SweepError([("-j", f"must be at least 1 (got {n})")], option=True)
    if n > max_local_jobs() and not (executor == "dask" and scheduler):
        raise SweepError(
            [
                (
                    "-j",
                    f"at most {max_local_jobs()} workers on this machine ({JOBS_PER_CORE} per "
                    f"CPU core; more only wait for a core and each holds a copy of tcpfair); "
                    f"got {n}",
                )
            ],
            option=True,
        )
    if executor == "local":
        if scheduler:
            raise SweepError([("--scheduler", "only with --executor dask")], option=True)
        return LocalExecutor(n)
    if executor == "dask":
        if scheduler is not None:
            problem = scheduler_address_problem(scheduler)
            if problem:
                raise SweepError([("--scheduler", problem)], option=True)
        return DaskExecutor(scheduler, n, kernel=backend == "kernel")
    raise SweepError(
        [("--executor", f"expected 'local' or 'dask' (got {executor!r})")], option=True
    )
