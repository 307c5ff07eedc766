"""Kernel-backend sweeps on a real Dask cluster (issue 15): a scheduler and two worker
processes on this machine (loopback only), one holding the ``kernel`` resource and one
without. Kernel runs all land on the resourced worker, one at a time; a simulator sweep
on the same cluster uses both workers; nothing is left behind.

Needs root, ``ip netns``, iperf3 and a built tcpfair-linkem (skips with the reason).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from badinput import fails_cleanly_subprocess
from kernel_support import KERNEL_MARKS

from tcpfair.executors import DaskExecutor
from tcpfair.kernel import capabilities as cap
from tcpfair.kernel.procs import list_namespaces, machine_lock
from tcpfair.kernel.topology import PREFIX
from tcpfair.orchestrate import run_sweep
from tcpfair.result import RunResult
from tcpfair.store import Store
from tcpfair.sweep import sweep_from_dict

pytestmark = KERNEL_MARKS

DASK = Path(sys.executable).with_name("dask")
BASE = {
    "name": "t",
    "duration": "3s",
    "seed": 5,
    "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
    "flows": [{"cca": "reno", "rtt": "20ms"}],
    "measure": {"interval": "1s", "from": "1s"},
}


def _new_namespaces(before: set[str]) -> set[str]:
    """Our namespaces that were not there ``before``, but for a worker's capability probe
    (``capabilities.probe_qdiscs``: a throw-away ``tf-<id>-probe`` for a few milliseconds,
    outside the machine lock, which is no run: it starts no traffic)."""
    return {
        n
        for n in list_namespaces()
        if n.startswith(PREFIX) and n not in before and not n.endswith("-probe")
    }


def _children(pids: list[int]) -> list[str]:
    """Processes whose parent is one of ``pids`` (iperf3, linkem a run left running)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid in pids:
                out.append(os.readlink(d / "exe"))
        except (OSError, ValueError, IndexError):
            continue
    return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[int]]]:
    workers = [("kernel-worker", ["--resources", "kernel=1"]), ("plain", [])]
    with _cluster(tmp_path_factory.mktemp("dask"), workers) as c:
        yield c


def _worker_cmd(scheduler: list[str], name: str, extra: list[str]) -> list[str]:
    return (
        [str(DASK), "worker", *scheduler]
        + ["--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--name", name]
        + ["--dashboard-address", ":0", *extra]
    )


@contextlib.contextmanager
def _worker(address: str, name: str, extra: list[str], log: Path) -> Iterator[int]:
    """One more worker joining the scheduler at ``address``: its pid."""
    with open(log, "w") as err:
        p = subprocess.Popen(
            _worker_cmd([address], name, extra), stdout=subprocess.DEVNULL, stderr=err
        )
        try:
            yield p.pid
        finally:
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@contextlib.contextmanager
def _cluster(
    tmp: Path, workers: list[tuple[str, list[str]]], envs: dict[str, dict[str, str]] | None = None
) -> Iterator[tuple[str, list[int]]]:
    """A scheduler and ``workers`` (name, extra options; ``envs[name]`` added to that
    worker's environment) on loopback: (address, worker pids)."""
    tmp.mkdir(parents=True, exist_ok=True)
    sched_file = tmp / "scheduler.json"
    env = dict(os.environ)
    logs = contextlib.ExitStack()
    procs = [
        subprocess.Popen(
            [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0"]
            + ["--dashboard-address", ":0", "--scheduler-file", str(sched_file)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=logs.enter_context(open(tmp / "scheduler.log", "w")),
        )
    ]
    try:
        deadline = time.monotonic() + 30
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        for name, extra in workers:
            procs.append(
                subprocess.Popen(
                    _worker_cmd(["--scheduler-file", str(sched_file)], name, extra),
                    env={**env, **(envs or {}).get(name, {})},
                    stdout=subprocess.DEVNULL,
                    stderr=logs.enter_context(open(tmp / f"{name}.log", "w")),
                )
            )
        from distributed import Client

        with Client(scheduler_file=str(sched_file), timeout="30s") as c:
            c.wait_for_workers(len(workers), timeout=30)
            address = c.scheduler.address
        yield address, [p.pid for p in procs[1:]]
    finally:
        # the workers first, then the scheduler: a worker whose scheduler closed first hung
        # in its own close (CancelledError in rpc.close) until killed after the 15 s below,
        # which made the module's tear-down 15-31 s now and then
        for group in (procs[1:], procs[:1]):
            for p in group:
                p.terminate()
            for p in group:
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        logs.close()


def _runs(store: Path, sweep: str) -> list[tuple[float, float, str]]:
    """(started, finished, worker) of every run, in start order."""
    t = Store(store).table(sweep=sweep)
    assert list(t["status"]) == ["done"] * len(t), t[["status", "error"]]
    out = []
    for _, row in t.iterrows():
        meta = RunResult.load(store / row["run_dir"]).meta
        out.append((float(row["started"]), float(row["finished"]), meta["dask_worker"]))
    return sorted(out)


def test_kernel_runs_go_only_to_the_resourced_worker_one_at_a_time(
    cluster: tuple[str, list[int]], tmp_path: Path
) -> None:
    address, worker_pids = cluster
    ns_before = {n for n in list_namespaces() if n.startswith(PREFIX)}
    sw = sweep_from_dict({"name": "kd", "base": BASE, "axes": {"flows.0.cca": ["reno", "cubic"]}})
    ex = DaskExecutor(address, kernel=True)
    rep = run_sweep(sw, backend="kernel", executor=ex, output=tmp_path / "k")
    assert (rep.finished, rep.failed) == (2, 0), rep.errors
    assert ex.rejected == {}
    runs = _runs(tmp_path / "k", "kd")
    assert [w for _, _, w in runs] == ["kernel-worker", "kernel-worker"]
    # never two at once: each run starts after the previous one finished
    assert runs[1][0] >= runs[0][1]
    # the runs are complete, as a local kernel sweep's: per-host columns in the export
    t = Store(tmp_path / "k").table(sweep="kd")
    assert set(t["host"]) == {cap.host_info()["name"]}
    # graded on the worker as a local run is (how well this host emulates the path — a busy
    # VM can grade a run invalid — is the validity checks' business, tested on their own)
    assert set(t["grade"]) <= {"ok", "warning", "invalid"}
    for rd in t["run_dir"]:
        res = RunResult.load(tmp_path / "k" / rd)
        assert res.meta["host"]["cores"] == os.cpu_count()
        assert len(res.flows) == 1 and res.samples["t_s"].max() >= 2.0
    # equal in shape to a local kernel sweep: the same columns, runs and tables
    loc = run_sweep(sw, backend="kernel", executor="local", output=tmp_path / "l")
    assert (loc.finished, loc.failed) == (2, 0), loc.errors
    tl = Store(tmp_path / "l").table(sweep="kd")
    assert list(tl.columns) == list(t.columns)
    assert sorted(tl["run_hash"]) == sorted(t["run_hash"])
    for a, b in zip(sorted(t["run_dir"]), sorted(tl["run_dir"]), strict=True):
        ra, rb = RunResult.load(tmp_path / "k" / a), RunResult.load(tmp_path / "l" / b)
        assert list(ra.flows.columns) == list(rb.flows.columns)
        assert list(ra.samples.columns) == list(rb.samples.columns)
        assert set(ra.meta) - {"dask_worker"} == set(rb.meta)
    shown = subprocess.run(
        [str(Path(sys.executable).with_name("tcpfair")), "results", str(tmp_path / "k")],
        capture_output=True,
        text=True,
    ).stdout
    assert f"hosts: {cap.host_info()['name']} 2 runs (" in shown, shown
    # nothing left behind: no namespace of ours, no process under a worker
    assert {n for n in list_namespaces() if n.startswith(PREFIX)} == ns_before
    assert _children(worker_pids) == []


def test_a_worker_that_cannot_run_the_scenario_is_named(
    cluster: tuple[str, list[int]], tmp_path: Path
) -> None:
    # 40 Gbit/s is past what this machine emulates: its worker refuses, by name, with the
    # key and the limit, before any run (and the client itself does not judge the machine)
    address, _ = cluster
    (tmp_path / "x.toml").write_text(
        'name = "kx"\n[base]\nduration = "3s"\n[base.bottleneck]\nrate = "40Gbit"\n'
        'buffer = "1bdp"\n[[base.flows]]\ncca = "reno"\nrtt = "20ms"\n'
        '[axes]\n"flows.0.cca" = ["reno"]\n'
    )
    args = ["sweep", "x.toml", "--backend", "kernel", "--executor", "dask"]
    line = fails_cleanly_subprocess(
        [*args, "--scheduler", address, "-o", "out"],
        mentions=["kernel-worker", "bottleneck.rate", "Mbit/s"],
        cwd=tmp_path,
    )
    assert "plain" not in line  # a worker without the resource is not asked
    assert not (tmp_path / "out").exists()  # refused before anything was stored
    # without a scheduler: refused, saying what to do
    fails_cleanly_subprocess(args + ["-o", "out2"], mentions=["--scheduler"], cwd=tmp_path)


def test_simulator_sweep_on_the_same_cluster_uses_both_workers(
    cluster: tuple[str, list[int]], tmp_path: Path
) -> None:
    address, _ = cluster
    base = {**BASE, "duration": "60s", "bottleneck": {"rate": "50Mbit", "buffer": "1bdp"}}
    sw = sweep_from_dict(
        {"name": "sd", "base": base, "repeats": 4, "axes": {"flows.0.cca": ["reno", "cubic"]}}
    )
    rep = run_sweep(sw, backend="sim", executor=DaskExecutor(address), output=tmp_path / "s")
    assert (rep.finished, rep.failed) == (8, 0), rep.errors
    assert {w for _, _, w in _runs(tmp_path / "s", "sd")} == {"kernel-worker", "plain"}


def test_a_worker_lost_mid_run_fails_its_runs_and_the_sweep_ends(tmp_path: Path) -> None:
    ns_before = {n for n in list_namespaces() if n.startswith(PREFIX)}
    sw = sweep_from_dict(
        {
            "name": "kl",
            "base": {**BASE, "duration": "20s"},
            "axes": {"flows.0.cca": ["reno", "cubic"]},
        }
    )
    with _cluster(tmp_path / "c", [("doomed", ["--resources", "kernel=1"])]) as (address, pids):

        def kill_when_running() -> None:  # the first run's namespaces exist: machine lost
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if _new_namespaces(ns_before):
                    break
                time.sleep(0.2)
            time.sleep(1)
            os.kill(pids[0], signal.SIGKILL)

        killer = threading.Thread(target=kill_when_running)
        killer.start()
        t0 = time.monotonic()
        rep = run_sweep(
            sw, backend="kernel", executor=DaskExecutor(address, kernel=True), output=tmp_path / "k"
        )
        killer.join()
        assert time.monotonic() - t0 < 35  # not the 2 × 20 s the runs would have taken
    assert (rep.finished, rep.failed) == (0, 2)
    for why in rep.errors.values():
        assert "lost" in why and "doomed" in why and "doctor --cleanup" in why, why
    t = Store(tmp_path / "k").table(sweep="kl")
    assert list(t["status"]) == ["failed", "failed"]
    # what the lost worker left is the machine's `tcpfair doctor --cleanup` business
    left = {n for n in list_namespaces() if n.startswith(PREFIX)} - ns_before
    assert left  # the run died with its worker, namespaces and all
    subprocess.run(
        [str(Path(sys.executable).with_name("tcpfair")), "doctor", "--cleanup"],
        capture_output=True,
        timeout=60,
    )
    assert {n for n in list_namespaces() if n.startswith(PREFIX)} - ns_before == set()


class _Watch:
    """Counts, every 50 ms, the kernel runs whose namespaces exist at the same time (each
    run's namespaces share its run id: ``tf-<run id>-<role>``). Not a worker's capability
    probe (``_new_namespaces``): counting it made this test fail now and then when a probe
    fell on another worker's run."""

    def __init__(self, before: set[str]) -> None:
        self.before, self.most, self.stop = before, 0, threading.Event()
        self.seen: list[set[str]] = []  # each listing that held more than one run
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop.is_set():
            names = _new_namespaces(self.before)
            runs = {n.rsplit("-", 1)[0] for n in names}
            if len(runs) > 1:
                self.seen.append(names)
            self.most = max(self.most, len(runs))
            time.sleep(0.05)

    def __enter__(self) -> _Watch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def test_two_kernel_workers_on_one_machine_each_get_the_runs_they_can_run(tmp_path: Path) -> None:
    # "small" trusts this machine with 10 Mbit/s only (TCPFAIR_KERNEL_MAX_RATE, as an
    # operator sets it on a slow machine), "big" with the default: the 20 Mbit/s runs all
    # go to "big", the 5 Mbit/s ones to either; the machine lock keeps the two workers'
    # runs from overlapping (never two runs' namespaces at once)
    ns_before = {n for n in list_namespaces() if n.startswith(PREFIX)}
    base = {**BASE, "bottleneck": {"rate": "5Mbit", "buffer": "1bdp"}}
    sw = sweep_from_dict(
        {"name": "k2", "base": base, "repeats": 2, "axes": {"bottleneck.rate": ["5Mbit", "20Mbit"]}}
    )
    workers = [("small", ["--resources", "kernel=1"]), ("big", ["--resources", "kernel=1"])]
    envs = {"small": {"TCPFAIR_KERNEL_MAX_RATE": "10Mbit"}}
    with _cluster(tmp_path / "c", workers, envs) as (address, pids), _Watch(ns_before) as watch:
        ex = DaskExecutor(address, kernel=True)
        rep = run_sweep(sw, backend="kernel", executor=ex, output=tmp_path / "k")
        left = _children(pids)
    assert (rep.finished, rep.failed) == (4, 0), rep.errors
    assert (
        "cannot run 2 of the 4 scenarios"
        in ex.rejected[[a for a in ex.labels if "small" in ex.labels[a]][0]]
    )
    t = Store(tmp_path / "k").table(sweep="k2")
    by_worker: dict[str, list[str]] = {}
    for _, row in t.iterrows():
        res = RunResult.load(tmp_path / "k" / row["run_dir"])
        by_worker.setdefault(res.meta["dask_worker"], []).append(row["bottleneck.rate"])
    assert (
        sorted(by_worker.get("big", []) + by_worker.get("small", []))
        == ["20Mbit"] * 2 + ["5Mbit"] * 2
    )
    assert by_worker["small"] and set(by_worker["small"]) == {"5Mbit"}
    assert watch.most == 1, watch.seen
    assert left == [] and {n for n in list_namespaces() if n.startswith(PREFIX)} == ns_before


def test_a_kernel_worker_that_joins_mid_sweep_gets_runs(tmp_path: Path) -> None:
    sw = sweep_from_dict(
        {"name": "kj", "base": BASE, "repeats": 4, "axes": {"flows.0.cca": ["reno"]}}
    )
    with _cluster(tmp_path / "c", [("first", ["--resources", "kernel=1"])]) as (address, _):
        ex = DaskExecutor(address, kernel=True)
        joined = threading.Event()

        def join_after_first_run() -> None:  # a second machine comes up while the sweep runs
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not list(tmp_path.glob("k/**/summary.json")):
                time.sleep(0.2)
            # The test holds the machine lock from here until "late" has been given a run
            # (its run then waits for the lock and says so on its stderr), so "first"
            # cannot take the runs left meanwhile. Without the hold, the three runs left
            # (~12 s on an idle machine, ~7 s more than "late" took to start and pass its
            # check under load 4) were a race the late worker could lose on a busier one.
            log = tmp_path / "late.log"
            lock = contextlib.ExitStack()
            lock.enter_context(machine_lock(wait_message=False))
            try:
                with _worker(address, "late", ["--resources", "kernel=1"], log):
                    joined.set()
                    given = time.monotonic() + 60  # (if it never gets one, the test fails)
                    while time.monotonic() < given and "waiting for another" not in (
                        log.read_text(errors="replace")
                    ):
                        time.sleep(0.2)
                    lock.close()
                    while not done.is_set():
                        time.sleep(0.2)
            finally:
                lock.close()

        done = threading.Event()
        th = threading.Thread(target=join_after_first_run)
        th.start()
        try:
            rep = run_sweep(sw, backend="kernel", executor=ex, output=tmp_path / "k")
        finally:
            done.set()
            th.join()
    assert joined.is_set()
    assert (rep.finished, rep.failed) == (4, 0), rep.errors
    workers = [w for _, _, w in _runs(tmp_path / "k", "kj")]
    assert workers[0] == "first" and "late" in workers, workers
    assert [ex.labels[a].split(" ")[0] for a in ex.joined] == ["late"]
