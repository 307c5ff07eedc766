"""Running commands and processes for a run, and leaving nothing behind.

Every run writes a state file ``/run/tcpfair/<run id>.json`` *before* it creates anything:
the owner's PID, the namespaces it will create, and every process it starts (PID plus
the kernel's start time, so a recycled PID is never killed). Tear-down and
``tcpfair doctor --cleanup`` work from these records and from the run-id prefix of the
namespace names only — never by process name.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import psutil

from .._text import one_line
from .commands import Cmd, netns_del
from .tools import absolute, child_env
from .topology import PREFIX

#: where kernel runs keep their state files and the machine lock (``TCPFAIR_STATE_DIR``)
DEFAULT_STATE_DIR = "/run/tcpfair"


def state_dir_problem(value: str | None) -> str | None:
    """What is wrong with ``TCPFAIR_STATE_DIR=value`` (None: unset or fine). An empty or
    relative value made the state files and the lock depend on the working folder: two
    runs started from different folders did not see each other's lock, and ``tcpfair
    doctor --cleanup`` looked for state files in whatever folder it was started from."""
    if value is None:
        return None
    if value.strip() and os.path.isabs(value):
        return None
    return (
        f"TCPFAIR_STATE_DIR={one_line(value)!r}: allowed: an absolute path (the folder of "
        f"kernel runs' state files and lock; default {DEFAULT_STATE_DIR}); leave it unset "
        f"for the default"
    )


#: the problem of this process's ``TCPFAIR_STATE_DIR`` (``state_dir_problem``): the
#: kernel backend and ``tcpfair doctor`` refuse to start while there is one
STATE_DIR_PROBLEM = state_dir_problem(os.environ.get("TCPFAIR_STATE_DIR"))
STATE_DIR = Path(
    DEFAULT_STATE_DIR
    if STATE_DIR_PROBLEM
    else os.environ.get("TCPFAIR_STATE_DIR", DEFAULT_STATE_DIR)
)


@contextmanager
def machine_lock(wait_message: bool = True) -> Iterator[None]:
    """One kernel-backend run at a time on this machine.

    Concurrent runs share the CPUs, and two emulators with real-time priority starve each
    other (measured: 40 ms stalls), so a second run waits here — before it creates
    anything — for ``STATE_DIR/kernel.lock``. The lock is an ``flock``: the kernel
    releases it when its holder exits, however it exits.
    """
    if STATE_DIR_PROBLEM:  # KernelOptions.from_env said it already; never the default here
        raise RuntimeError(STATE_DIR_PROBLEM)
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    path = STATE_DIR / "kernel.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if wait_message:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                print(
                    f"waiting for another kernel-backend run (pid {holder}) to finish…",
                    file=sys.stderr,
                )
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


class CommandError(RuntimeError):
    def __init__(self, argv: Cmd, rc: int, stderr: str):
        self.argv, self.rc, self.stderr = argv, rc, stderr
        super().__init__(f"command failed ({rc}): {' '.join(argv)}: {stderr.strip()}")


def run_cmd(
    argv: Cmd, check: bool = True, timeout: float = 30.0
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion; its programs by absolute path (``tools.absolute``)."""
    p = subprocess.run(
        absolute(argv), capture_output=True, text=True, timeout=timeout, env=child_env()
    )
    if check and p.returncode != 0:
        raise CommandError(argv, p.returncode, p.stderr)
    return p


def proc_start_time(pid: int) -> int | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks), None if gone: the kernel's
    exact integer, which state files and store locks record (psutil's ``create_time`` is a
    float derived from it and the boot time)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may contain spaces; fields after it follow the last ')'
    rest = text[text.rindex(")") + 2 :].split()
    return int(rest[19])


def proc_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process, None if gone."""
    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return float(t.user + t.system)


def thread_cpu_seconds(pid: int) -> dict[int, float]:
    """User + system CPU time of each thread of a process (empty if gone)."""
    try:
        return {t.id: t.user_time + t.system_time for t in psutil.Process(pid).threads()}
    except psutil.Error:
        return {}


def alive(pid: int, start_time: int | None) -> bool:
    st = proc_start_time(pid)
    return st is not None and (start_time is None or st == start_time)


def kill_recorded(pid: int, start_time: int | None, grace_s: float = 2.0) -> bool:
    """SIGTERM, then SIGKILL after ``grace_s``, a process we recorded — only if its start
    time still matches (the PID was not recycled). Returns True if it was running.
    (psutil's ``Process`` re-checks its own identity before each signal and reaps our
    children while it waits.)"""
    if not alive(pid, start_time):
        return False
    try:
        p = psutil.Process(pid)
        p.terminate()
        try:
            p.wait(grace_s)
        except psutil.TimeoutExpired:
            p.kill()
            p.wait(1.0)
    except (psutil.NoSuchProcess, psutil.TimeoutExpired):
        pass
    return True


def list_namespaces() -> list[str]:
    p = run_cmd(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def namespace_pids(ns: str) -> list[int]:
    p = run_cmd(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in p.stdout.split() if x.isdigit()]


@dataclass
class Spawned:
    name: str
    popen: subprocess.Popen[bytes]
    start_time: int | None
    stdout_path: Path | None


@dataclass
class RunState:
    """The record of one run's resources; saved on every change."""

    run_id: str
    namespaces: list[str]
    procs: list[dict[str, Any]] = field(default_factory=list)
    path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.path = STATE_DIR / f"{self.run_id}.json"

    def save(self) -> None:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps(
                {
                    "run_id": self.run_id,
                    "owner_pid": os.getpid(),
                    "owner_start": proc_start_time(os.getpid()),
                    "namespaces": self.namespaces,
                    "procs": self.procs,
                }
            )
        )
        os.replace(tmp, self.path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


class ProcessGroup:
    """The processes of one run: spawned in their namespaces, recorded, stopped in order."""

    def __init__(self, state: RunState, workdir: Path):
        self.state = state
        self.workdir = workdir
        self.spawned: list[Spawned] = []

    def spawn(self, name: str, argv: Cmd, capture: bool = True) -> Spawned:
        out_path = self.workdir / f"{name}.out" if capture else None
        err_path = self.workdir / f"{name}.err"
        out: IO[bytes] | int = open(out_path, "wb") if out_path else subprocess.DEVNULL  # noqa: SIM115
        err = open(err_path, "wb")  # noqa: SIM115
        try:
            # A new session: Ctrl-C in the terminal reaches tcpfair only, which then stops
            # everything in order (the iperf3 reports are collected, not lost).
            p = subprocess.Popen(
                absolute(argv),
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=child_env(),
            )
        finally:
            if not isinstance(out, int):
                out.close()
            err.close()
        sp = Spawned(name, p, proc_start_time(p.pid), out_path)
        self.spawned.append(sp)
        self.state.procs.append({"name": name, "pid": p.pid, "start_time": sp.start_time})
        self.state.save()
        return sp

    def stop(self, sp: Spawned, grace_s: float = 2.0) -> None:
        if sp.popen.poll() is None:
            sp.popen.send_signal(signal.SIGTERM)
            try:
                sp.popen.wait(grace_s)
            except subprocess.TimeoutExpired:
                sp.popen.kill()
                sp.popen.wait(5)

    def stop_all(self) -> None:
        for sp in reversed(self.spawned):
            try:
                self.stop(sp)
            except Exception:  # noqa: BLE001 - tear-down must go on
                pass


def teardown(state: RunState, pg: ProcessGroup | None) -> list[str]:
    """Stop every process and delete every namespace of the run. Returns problems left."""
    problems: list[str] = []
    if pg is not None:
        pg.stop_all()
    for rec in state.procs:
        kill_recorded(int(rec["pid"]), rec.get("start_time"))
    for ns in state.namespaces:
        problems += remove_namespace(ns)
    if not problems:
        state.remove()
    return problems


def remove_namespace(ns: str) -> list[str]:
    """Delete one of our namespaces (veths inside go with it). Processes still inside one
    of *our* namespaces are ours; they are stopped first, by PID."""
    if not ns.startswith(PREFIX):
        return [f"refusing to touch namespace {ns!r}: not a tcpfair namespace"]
    if ns not in list_namespaces():
        return []
    for pid in namespace_pids(ns):
        kill_recorded(pid, proc_start_time(pid), grace_s=1.0)
    p = run_cmd(netns_del(ns), check=False)
    if p.returncode != 0 and ns in list_namespaces():
        return [f"could not delete namespace {ns}: {p.stderr.strip()}"]
    return []
