"""One kernel-backend run, from an empty machine back to an empty machine.

Order: record the run (state file) → namespaces, sysctls, veths, offloads, routes, tbf →
linkem relay → idle RTT probes → iperf3 servers → clients on the scenario's schedule while
``tc -s`` is sampled → collect the JSON reports → stop everything → tear down. Tear-down
runs in ``finally``; the first SIGINT/SIGTERM/SIGHUP becomes ``KeyboardInterrupt`` and any
later one cannot cut it short (``Interrupts``), so an interrupted run leaves nothing
behind; a child that dies stops the run at once (``check_children``); ``tcpfair doctor
--cleanup`` covers a killed run.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

from .. import registry
from ..spec import Red, Scenario
from ..units import parse_time
from . import commands as C
from .capabilities import Capabilities
from .capture import PacketCapture
from .cleanup import WORKDIR_OWNER
from .procs import (
    ProcessGroup,
    RunState,
    Spawned,
    machine_lock,
    proc_cpu_seconds,
    proc_start_time,
    run_cmd,
    state_dir_problem,
    teardown,
    thread_cpu_seconds,
)
from .topology import Conn, Group, Topology, build, drawn_rtts, new_run_id


@dataclass
class KernelOptions:
    """Knobs of the kernel backend (recorded in ``meta["kernel"]``)."""

    gso: bool = False  # GSO/TSO/GRO on the veths
    rt_priority: int = 10  # SCHED_FIFO priority of linkem (0: normal scheduling)
    probe_count: int = 15  # idle RTT probes per flow group
    link_sample_s: float = 0.1  # tc -s sampling period (at most the measurement interval)
    keep_workdir: bool = False
    bottleneck: str = "tbf"  # "tbf" (kernel) or "linkem" (user-space drop-tail); RED: linkem
    burst_s: float = C.DEFAULT_BURST_S  # tbf burst as time at the rate (at least 2 frames)
    #: absolute path of tcpfair-linkem (None: ``TCPFAIR_LINKEM``, then the package and the
    #: checkout's build folder; ``tools.find_linkem``)
    linkem: str | None = None
    #: absolute path of tcpfair-traffic, the short-flow generator (None: ``TCPFAIR_TRAFFIC``,
    #: then as for linkem; ``tools.find_traffic``)
    traffic: str | None = None
    #: write a pcap of the bottleneck's far side (``tcpfair run --capture``;
    #: ``tcpfair.kernel.capture``)
    capture: bool = False

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> KernelOptions:
        """Options from ``TCPFAIR_KERNEL_GSO`` (on/off), ``TCPFAIR_KERNEL_RT_PRIORITY``
        (0–99), ``TCPFAIR_KERNEL_BOTTLENECK`` (tbf/linkem), ``TCPFAIR_KERNEL_KEEP``
        (keep the work directory with the raw iperf3 and linkem output) and
        ``TCPFAIR_KERNEL_BURST`` (tbf burst as a time, default 100us); the way to set
        them for ``tcpfair run`` and ``tcpfair.run``."""
        e = os.environ if env is None else env
        state = state_dir_problem(e.get("TCPFAIR_STATE_DIR"))
        if state:
            raise ValueError(state)
        o = cls()
        gso = e.get("TCPFAIR_KERNEL_GSO", "off").strip().lower()
        if gso not in ("on", "off", "1", "0", "true", "false"):
            raise ValueError(f"TCPFAIR_KERNEL_GSO={gso!r}: allowed: on or off (or 1/0, true/false)")
        o.gso = gso in ("on", "1", "true")
        prio = e.get("TCPFAIR_KERNEL_RT_PRIORITY", str(o.rt_priority)).strip()
        if not (prio.isascii() and prio.isdigit()) or not 0 <= int(prio) <= 99:
            raise ValueError(
                f"TCPFAIR_KERNEL_RT_PRIORITY={prio!r}: allowed: a whole number 0–99 (0: no "
                "real-time)"
            )
        o.rt_priority = int(prio)
        keep = e.get("TCPFAIR_KERNEL_KEEP", "0").strip().lower()
        if keep not in ("", "on", "off", "1", "0", "true", "false"):
            # "yes" was read as off: the work folder asked for was deleted without a word
            raise ValueError(
                f"TCPFAIR_KERNEL_KEEP={keep!r}: allowed: on or off (or 1/0, true/false)"
            )
        o.keep_workdir = keep in ("1", "on", "true")
        bn = e.get("TCPFAIR_KERNEL_BOTTLENECK", "tbf").strip().lower()
        if bn not in ("tbf", "linkem"):
            raise ValueError(f"TCPFAIR_KERNEL_BOTTLENECK={bn!r}: allowed: tbf or linkem")
        o.bottleneck = bn
        burst = e.get("TCPFAIR_KERNEL_BURST")
        if burst is not None:
            try:
                o.burst_s = parse_time(burst.strip()) / 1e9
            except ValueError as err:
                raise ValueError(
                    f"TCPFAIR_KERNEL_BURST={burst!r}: expected a time such as 1ms or 100us "
                    f"(the tbf burst as time at the bottleneck rate): {err}"
                ) from None
            if o.burst_s > 0.1:
                raise ValueError(
                    f"TCPFAIR_KERNEL_BURST={burst!r}: allowed: at most 100ms (a longer burst "
                    "would let the link run unshaped)"
                )
        return o


@dataclass
class RawRun:
    """Everything measured during a run, before conversion to a RunResult."""

    run_id: str
    topology: Topology
    t0_wall: float
    #: iperf3 client JSON text by client: group index, or "<group>.<k>" for connection k of
    #: an entry whose connections differ (``client_units``); launch_s/exit_s alike
    reports: dict[int | str, str] = field(default_factory=dict)
    client_stderr: dict[int | str, str] = field(default_factory=dict)
    launch_s: dict[int | str, float] = field(default_factory=dict)  # launch time since t0
    exit_s: dict[int | str, float] = field(default_factory=dict)
    rtt_probes: dict[int, dict[str, Any]] = field(default_factory=dict)
    tc_samples: list[tuple[float, dict[str, int]]] = field(default_factory=list)
    linkem_lines: list[dict[str, Any]] = field(default_factory=list)
    linkem_ready: dict[str, Any] = field(default_factory=dict)
    cpu: dict[str, Any] = field(default_factory=dict)
    tbf: dict[str, Any] | None = None
    queue: dict[str, Any] | None = None
    #: linkem's reverse-direction (b → a) queue, when the run has a reverse link
    rev_queue: dict[str, Any] | None = None
    #: short-flow entries: group → the generator client's / server's JSON output
    traffic_client: dict[int, str] = field(default_factory=dict)
    traffic_server: dict[int, str] = field(default_factory=dict)
    #: CLOCK_MONOTONIC (ns) of the run's t0, the origin of the generator's schedules
    t0_mono_ns: int = 0
    setup_s: float = 0.0
    workdir: str | None = None  # kept only with keep_workdir
    #: group → {"sender": {...}, "receiver": {...}}: the hosts' non-zero Tcp/TcpExt counters
    tcp_counters: dict[int, dict[str, dict[str, int]]] = field(default_factory=dict)
    #: with ``KernelOptions.capture``: the pcap's path and counts (``capture.CaptureStats``)
    capture: dict[str, Any] | None = None


def linkem_is_bottleneck(sc: Scenario, opts: KernelOptions) -> bool:
    """RED always runs in linkem (the kernel has no RED qdisc); drop-tail does when asked,
    and whenever the run has a reverse link: both directions are then the same user-space
    queue model (and both count the ACKs they drop, which tbf cannot tell apart)."""
    return (
        isinstance(sc.bottleneck.aqm, Red)
        or opts.bottleneck == "linkem"
        or sc.reverse_link() is not None
    )


class Interrupts:
    """SIGINT, SIGTERM and SIGHUP while a run owns the machine.

    The first one raises ``KeyboardInterrupt`` in the main thread, so the run stops and
    tears down; while ``hold()`` is active (tear-down) it is only recorded, and raised once
    tear-down is done. Every later one is only counted: impatient Ctrl-C presses can
    neither cut the tear-down short nor kill the process before it has cleaned up and
    reported (Python's default handler would, exiting with -2 instead of 130). After an
    interrupt the three signals stay ignored until the process exits (``restore``); a run
    that was not interrupted gives the previous handlers back.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.received: list[int] = []
        self.holding = False
        self.raised = False
        self.old: dict[int, Any] = {}
        self.active = threading.current_thread() is threading.main_thread()

    def install(self) -> None:
        if self.active:
            self.old = {s: signal.signal(s, self._handler) for s in self.SIGNALS}

    def _handler(self, signum: int, frame: Any) -> None:
        self.received.append(signum)
        if not self.holding and not self.raised:
            self.raised = True
            raise KeyboardInterrupt(f"signal {signum}")

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Signals are only recorded inside (``raise_pending`` raises the first after)."""
        self.holding = True
        try:
            yield
        finally:
            self.holding = False

    def raise_pending(self) -> None:
        """After a ``hold()``: the interrupt that arrived during it, if none was raised."""
        if self.received and not self.raised:
            self.raised = True
            raise KeyboardInterrupt(f"signal {self.received[0]} (held)")

    def restore(self) -> None:
        """Not interrupted: the previous handlers again. Interrupted: the signals are
        ignored from now on — a Python handler would not do, since the interpreter resets
        those to the default while it shuts down, and a press then kills the process with
        SIGINT (exit status -2) after it had reported "interrupted"."""
        if not self.active:
            return
        for s, h in self.old.items():
            signal.signal(s, signal.SIG_IGN if self.received else h)


def queue_config(
    rate_bps: int,
    buf_bytes: int | None,
    buf_pkts: int | None,
    aqm: dict[str, Any],
    mtu: int,
) -> dict[str, Any]:
    """A linkem queue (crates/linkem/src/config.rs ``Queue``) from resolved values."""
    red = None
    if aqm["kind"] == "red":
        red = {k: aqm[k] for k in ("min_th", "max_th", "max_p", "wq", "bytes", "gentle")}
    return {
        "rate_bps": rate_bps,
        "limit_bytes": buf_bytes,
        "limit_pkts": buf_pkts,
        "red": red,
        "mean_pkt_bytes": mtu + C.ETH_HDR,
    }


def user_queue(sc: Scenario, opts: KernelOptions | None = None) -> dict[str, Any] | None:
    """linkem's bottleneck queue (rate, buffer, RED), or None when tbf is the bottleneck."""
    b = sc.bottleneck
    if not linkem_is_bottleneck(sc, opts or KernelOptions()):
        return None
    buf_bytes, buf_pkts = sc.buffer_limits()
    return queue_config(b.rate, buf_bytes, buf_pkts, sc.resolved()["bottleneck"]["aqm"], b.mtu)


def reverse_queue(sc: Scenario) -> tuple[dict[str, Any], float] | None:
    """linkem's reverse-direction queue and loss (the effective reverse link: each key of
    ``[bottleneck.reverse]`` left out takes the forward value), or None when the run has no
    reverse link (a reverse flow or ``[bottleneck.reverse]``)."""
    rev = sc.reverse_link()
    if rev is None:
        return None
    aqm = sc.resolved()["bottleneck"]["reverse"]["aqm"]
    q = queue_config(rev.rate_bps, rev.buffer_bytes, rev.buffer_pkts, aqm, rev.mtu_bytes)
    return q, float(rev.loss)


def entry_params(res: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Each [[flows]] entry's TCP settings (rmem, wmem, sack, cwnd_clamp, cca, …) by group,
    from its first connection or, for a short-flow entry, its arrivals record."""
    out: dict[int, dict[str, Any]] = {a["group"]: a for a in res.get("arrivals", [])}
    for c in res["flows"]:
        out.setdefault(c["group"], c)
    return out


def setup_commands(topo: Topology, sc: Scenario, opts: KernelOptions) -> list[C.Cmd]:
    """Every command that builds the topology, in order (pure: unit-tested without root)."""
    res = sc.resolved()
    b = res["bottleneck"]
    cmds: list[C.Cmd] = [C.netns_add(ns) for ns in topo.namespaces]
    for ns in topo.namespaces:
        cmds += C.namespace_sysctls(ns, forwarding=ns in (topo.router_ns, topo.rx_ns))
    by_group = entry_params(res)
    for g in topo.groups:
        c = by_group[g.index]
        for ns in (g.sender_ns, g.receiver_ns):
            cmds += C.host_sysctls(ns, int(c["rmem_bytes"]), int(c["wmem_bytes"]), bool(c["sack"]))
    for v in topo.links:
        cmds += C.veth(v, b["mtu_bytes"])
    for v in topo.links:
        cmds.append(C.offloads(v.ns_a, v.if_a, opts.gso))
        cmds.append(C.offloads(v.ns_b, v.if_b, opts.gso))
    cmds.append(C.promisc(topo.emu_ns, topo.relay_a))
    cmds.append(C.promisc(topo.emu_ns, topo.relay_b))
    cmds += C.routes(topo)
    for g in topo.groups:
        cmds += C.conn_addresses(g)
    for g in topo.groups:
        clamp = by_group[g.index]["cwnd_clamp"]
        if clamp is not None:
            cmds.append(C.cwnd_clamp_route(g, int(clamp)))
    tbf = tbf_for(sc, opts)
    if tbf is not None:
        cmds += C.tbf(topo.router_ns, topo.bottleneck_if, tbf)
    return cmds


def tbf_for(sc: Scenario, opts: KernelOptions) -> C.TbfParams | None:
    if linkem_is_bottleneck(sc, opts):
        return None
    buf_bytes, buf_pkts = sc.buffer_limits()
    b = sc.bottleneck
    return C.tbf_params(b.rate, buf_bytes, buf_pkts, b.mtu, opts.gso, opts.burst_s, b.burst)


def client_seconds(start_ns: int, stop_ns: int | None, duration_ns: int) -> int:
    """iperf3 -t takes whole seconds: the flow's active time, rounded, at least 1."""
    end = stop_ns if stop_ns is not None else duration_ns
    return max(1, round((end - start_ns) / 1e9))


def setup_latency_s(rtt_s: float) -> float:
    """Approximate time from launching an iperf3 client to its first data byte: control
    connection (1 RTT), parameter exchange (1 RTT), data connections (1 RTT), test start
    (½ RTT), plus process start-up. Samples of a flow are shifted by launch + this."""
    return 3.5 * rtt_s + 0.005


def _read_lines(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        text = path.read_text()
    except OSError:
        return out
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
    return out


def _wait_for(
    pred: Callable[[], bool], timeout: float, what: str, err: Callable[[], str] = lambda: ""
) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what} {err()}".strip())
        time.sleep(0.01)


def _listening(pid: int, port: int) -> bool:
    """Is there a LISTEN socket on ``port`` in the network namespace of ``pid``?"""
    try:
        lines = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return False
    for ln in lines:
        parts = ln.split()
        if len(parts) > 3 and parts[3] == "0A" and int(parts[1].split(":")[1], 16) == port:
            return True
    return False


def _cpu_totals() -> tuple[float, float]:
    """(busy, total) CPU seconds over all CPUs since boot."""
    t = psutil.cpu_times()
    total = sum(t[:8])  # user … steal; guest time is already counted in user and nice
    return total - t.idle - t.iowait, total


class _Sampler(threading.Thread):
    """Samples ``tc -s`` of the bottleneck every ``period`` seconds."""

    def __init__(
        self, topo: Topology, t0: float, period: float, sink: list[tuple[float, dict[str, int]]]
    ):
        super().__init__(daemon=True)
        self.argv = C.qdisc_stats(topo.router_ns, topo.bottleneck_if)
        self.t0, self.period, self.sink = t0, period, sink
        self.stop_evt = threading.Event()
        self.error: str | None = None

    def sample(self) -> None:
        # tc reads the counters somewhere between its start and its exit (a few ms of
        # process start-up on a busy machine): stamp the sample at the midpoint
        t_a = time.time()
        p = run_cmd(self.argv, check=False, timeout=5)
        now = (t_a + time.time()) / 2 - self.t0
        if p.returncode == 0:
            try:
                self.sink.append((now, C.parse_qdisc_stats(json.loads(p.stdout))))
            except (ValueError, KeyError) as e:
                self.error = str(e)

    def run(self) -> None:
        k = 0
        while not self.stop_evt.is_set():
            target = self.t0 + k * self.period
            delay = target - time.time()
            if delay > 0 and self.stop_evt.wait(delay):
                break
            self.sample()
            k += 1


class ChildDied(RuntimeError):
    """A process of the run ended while the run still needed it; the run was stopped."""


def describe_child(name: str) -> str:
    """What a spawned process is, for messages (from the name ``ProcessGroup.spawn`` got)."""
    if name == "linkem":
        return "the emulator tcpfair-linkem"
    for prefix, what in (
        ("server", "iperf3 server"),
        ("client", "iperf3 client"),
        ("tserver", "short-flow generator's server (tcpfair-traffic)"),
        ("tclient", "short-flow generator's client (tcpfair-traffic)"),
    ):
        rest = name[len(prefix) :] if name.startswith(prefix) else ""
        if rest.isdigit():
            return f"the {what} of flows.{rest}"
        g, _, k = rest.partition(".")
        if g.isdigit() and k.isdigit():
            return f"the {what} of flows.{g} (connection {k})"
    return name


def exit_text(rc: int) -> str:
    """``Popen.returncode`` in words: "was killed by signal 9 (SIGKILL)" / "exited with …"."""
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = "unknown"
        return f"was killed by signal {-rc} ({name})"
    return f"exited with status {rc}"


def _last_words(sp: Spawned, workdir: Path) -> str:
    """What a dead child said last: iperf3's JSON ``error``, else its last stderr line."""
    if sp.stdout_path is not None:
        try:
            err = json.loads(sp.stdout_path.read_text()).get("error")
        except (OSError, ValueError, AttributeError):
            err = None
        if isinstance(err, str) and err.strip():
            return err.strip()
    try:
        lines = (workdir / f"{sp.name}.err").read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""


def check_children(
    relay: Spawned,
    servers: dict[int | str, Spawned],
    clients: dict[int | str, Spawned],
    workdir: Path,
) -> None:
    """Raise ``ChildDied`` naming every process that ended when it should not have: the
    emulator at any time, an iperf3 server or client with a non-zero status or a signal
    (they end with 0 when their test is over). Killed ones come first: they are the cause,
    the others usually followed them (a server whose client vanished fails too)."""
    dead: list[tuple[int, str]] = []
    for sp in (relay, *servers.values(), *clients.values()):
        rc = sp.popen.poll()
        if rc is None or (rc == 0 and sp is not relay):
            continue
        said = _last_words(sp, workdir)
        text = f"{describe_child(sp.name)} (pid {sp.popen.pid}) {exit_text(rc)}"
        dead.append((0 if rc < 0 else 1, text + (f" ({said})" if said else "")))
    if dead:
        dead.sort(key=lambda d: d[0])
        raise ChildDied(
            "stopped the run: " + "; ".join(t for _, t in dead) + " while the run was going on"
        )


def execute(sc: Scenario, caps: Capabilities, opts: KernelOptions, progress: bool) -> RawRun:
    """Run the scenario (one run at a time per machine); always tears everything down
    before returning or raising."""
    with machine_lock():
        return _execute_locked(sc, caps, opts, progress)


def _execute_locked(
    sc: Scenario, caps: Capabilities, opts: KernelOptions, progress: bool
) -> RawRun:
    assert caps.linkem is not None
    linkem = caps.linkem
    if caps.traffic is not None:
        opts = dataclasses.replace(opts, traffic=caps.traffic)
    rid = new_run_id()
    res = sc.resolved()
    kernel_cca = {k: v for k, v in registry.kernel_modules().items() if v is not None}
    topo = build(res, rid, kernel_cca, drawn_rtts(sc))
    intr = Interrupts()
    intr.install()
    try:
        return _execute_guarded(sc, opts, linkem, rid, topo, intr, progress)
    finally:
        intr.restore()


def _execute_guarded(
    sc: Scenario,
    opts: KernelOptions,
    linkem: str,
    rid: str,
    topo: Topology,
    intr: Interrupts,
    progress: bool,
) -> RawRun:
    state = RunState(rid, topo.namespaces)
    pg: ProcessGroup | None = None
    workdir: Path | None = None
    raw = RawRun(run_id=rid, topology=topo, t0_wall=0.0)
    problems: list[str] = []
    try:
        with intr.hold():  # the records first, whole: a signal here is raised just after
            state.save()  # before anything exists, so a crash at any point can be cleaned up
            workdir = make_workdir(rid)
            pg = ProcessGroup(state, workdir)
        intr.raise_pending()
        _execute(sc, topo, opts, linkem, pg, workdir, raw, progress)
    except BaseException:
        if raw.capture is not None:  # a failed run leaves no capture behind
            Path(raw.capture["path"]).unlink(missing_ok=True)
        raise
    finally:
        with intr.hold():
            try:
                problems = teardown(state, pg)
            finally:
                if workdir is not None and opts.keep_workdir:
                    raw.workdir = str(workdir)
                    _mark_kept(workdir)
                elif workdir is not None:
                    shutil.rmtree(workdir, ignore_errors=True)
    intr.raise_pending()
    if problems:
        raise RuntimeError(
            "tear-down left resources behind (run `tcpfair doctor --cleanup`): "
            + "; ".join(problems)
        )
    return raw


def _mark_kept(workdir: Path) -> None:
    """A work folder kept on purpose (``TCPFAIR_KERNEL_KEEP``) is not a leftover."""
    rec = json.loads((workdir / WORKDIR_OWNER).read_text())
    (workdir / WORKDIR_OWNER).write_text(json.dumps({**rec, "kept": True}))


def make_workdir(rid: str) -> Path:
    """The run's private work folder ``<temp folder>/tcpfair-<run id>-<random>`` (mode
    0700), with its owner record (PID and start time) so that ``tcpfair doctor --cleanup``
    removes only folders whose run is over."""
    workdir = Path(tempfile.mkdtemp(prefix=f"tcpfair-{rid}-"))
    pid = os.getpid()
    (workdir / WORKDIR_OWNER).write_text(
        json.dumps({"run_id": rid, "owner_pid": pid, "owner_start": proc_start_time(pid)})
    )
    return workdir


def _execute(
    sc: Scenario,
    topo: Topology,
    opts: KernelOptions,
    linkem: str,
    pg: ProcessGroup,
    workdir: Path,
    raw: RawRun,
    progress: bool,
) -> None:
    t_setup = time.monotonic()
    for cmd in setup_commands(topo, sc, opts):
        run_cmd(cmd)
    tbf = tbf_for(sc, opts)
    raw.tbf = tbf.as_dict() if tbf else None
    raw.queue = user_queue(sc, opts)
    rq = reverse_queue(sc)
    raw.rev_queue = rq[0] if rq else None
    cfg = C.relay_config(
        topo,
        sc.bottleneck.loss,
        sc.seed,
        raw.queue,
        opts.gso,
        sc.bottleneck.mtu,
        opts.rt_priority,
        rev_queue=raw.rev_queue,
        rev_loss=rq[1] if rq else 0.0,
    )
    cfg_path = workdir / "linkem.json"
    cfg_path.write_text(json.dumps(cfg))
    relay = pg.spawn("linkem", C.relay(topo, linkem, str(cfg_path)))
    relay_out = workdir / "linkem.out"
    _wait_for(
        lambda: (
            any(d.get("ready") for d in _read_lines(relay_out)) or relay.popen.poll() is not None
        ),
        10,
        "the emulator to start",
    )
    if relay.popen.poll() is not None:
        raise RuntimeError(
            "the emulator (tcpfair-linkem) exited at start: "
            + (workdir / "linkem.err").read_text().strip()
        )
    raw.linkem_ready = next(d for d in _read_lines(relay_out) if d.get("ready"))

    # Idle RTT per group (SYN → RST through the whole emulated path), before any traffic.
    probes = {
        g.index: pg.spawn(f"probe{g.index}", C.probe(g, linkem, opts.probe_count, 20))
        for g in topo.groups
    }
    for g, sp in probes.items():
        sp.popen.wait(timeout=opts.probe_count * (0.05 + topo.groups[g].rtt_ns / 1e9) + 30)
        check_children(relay, {}, {}, workdir)
        text = sp.stdout_path.read_text() if sp.stdout_path else ""
        raw.rtt_probes[g] = (
            json.loads(text) if text.strip() else {"errors": ["probe printed nothing"]}
        )

    wrapper = [linkem, "exec"]
    interval_s = sc.measure.interval / 1e9
    long_groups = [g for g in topo.groups if not g.short]
    short_groups = [g for g in topo.groups if g.short]
    units = client_units(long_groups)
    servers: dict[int | str, Spawned] = {
        key: pg.spawn(f"server{key}", C.iperf3_server(g, wrapper, interval_s, conn))
        for key, g, conn in units
    }
    for key, grp, conn in units:
        sp = servers[key]
        port = conn.port if conn else grp.server_port

        def server_up(sp: Spawned = sp, port: int = port) -> bool:
            return _listening(sp.popen.pid, port) or sp.popen.poll() is not None

        _wait_for(server_up, 10, describe_child(sp.name))
        check_children(relay, servers, {}, workdir)
        if sp.popen.poll() is not None:
            raise RuntimeError(
                f"{describe_child(sp.name)} exited: "
                + (workdir / f"server{key}.err").read_text().strip()
            )
    tservers = _start_traffic_servers(short_groups, opts, pg, relay, servers, workdir)
    servers_all = {**servers, **tservers}  # a group has either (disjoint keys)
    raw.setup_s = time.monotonic() - t_setup

    # Traffic on the scenario's schedule.
    res_flows = {c["group"]: c for c in sc.resolved()["flows"]}
    # the generator's clients start before t0 and need a moment to be ready
    lead_s = 0.1 + (0.2 if short_groups else 0.0)
    wall, mono = time.time(), time.monotonic_ns()
    t0 = wall + lead_s
    raw.t0_wall = t0
    raw.t0_mono_ns = mono + round(lead_s * 1e9)
    tclients = _start_traffic_clients(sc, short_groups, opts, pg, workdir, raw.t0_mono_ns)
    sampler = (
        _Sampler(topo, t0, min(opts.link_sample_s, interval_s), raw.tc_samples) if raw.tbf else None
    )
    capture = _start_capture(topo) if opts.capture else None
    if sampler:
        sampler.start()
    cpu0, em0, mono0 = _cpu_totals(), proc_cpu_seconds(relay.popen.pid), time.monotonic()
    th0 = thread_cpu_seconds(relay.popen.pid)
    pending = sorted(units, key=lambda u: unit_start_ns(u, res_flows))
    clients: dict[int | str, Spawned] = {}
    duration_s = sc.duration / 1e9
    bar = _progress(progress, duration_s, sc.name)
    try:
        while pending or any(
            sp.popen.poll() is None for sp in (*clients.values(), *tclients.values())
        ):
            check_children(relay, servers_all, {**clients, **tclients}, workdir)
            now = time.time() - t0
            while pending and unit_start_ns(pending[0], res_flows) / 1e9 <= now:
                key, grp, conn = pending.pop(0)
                c = res_flows[grp.index]
                size = conn.size_bytes if conn else c["size_bytes"]
                start = conn.start_ns if conn else c["start_ns"]
                secs = (
                    None if size is not None else client_seconds(start, c["stop_ns"], sc.duration)
                )
                argv = C.iperf3_client(
                    grp, wrapper, secs, size, interval_s, c["app_rate_bps"], conn
                )
                clients[key] = pg.spawn(f"client{key}", argv)
                raw.launch_s[key] = time.time() - t0
            _note_exits(raw, {**clients, **tclients}, t0, topo)
            if now > duration_s + 30 + 10 * max(topo.rtts_ns()) / 1e9:
                break  # a client that never ends is stopped below (its report is then partial)
            if bar:
                bar.update(min(now, duration_s))
            time.sleep(0.05)
        _note_exits(raw, {**clients, **tclients}, t0, topo)
        check_children(relay, servers_all, {**clients, **tclients}, workdir)
    finally:
        if bar:
            bar.close()
        if sampler:
            sampler.stop_evt.set()
            sampler.join(5)
        if capture:
            raw.capture = asdict(capture.stop())
    em1, mono1, cpu1 = proc_cpu_seconds(relay.popen.pid), time.monotonic(), _cpu_totals()
    th1 = thread_cpu_seconds(relay.popen.pid)
    wall = mono1 - mono0
    per_thread = [(th1[t] - th0.get(t, 0)) / wall for t in th1] if wall > 0 else []
    raw.cpu = {
        # the busiest emulator thread (each direction has one): saturation is per thread
        "emulator_thread_max_frac": max(per_thread) if per_thread else None,
        "emulator_core_frac": ((em1 - em0) / wall)
        if em0 is not None and em1 is not None and wall > 0
        else None,
        "machine_busy_frac": ((cpu1[0] - cpu0[0]) / (cpu1[1] - cpu0[1]))
        if cpu1[1] > cpu0[1]
        else None,
        "n_cpus": os.cpu_count() or 1,
        "wall_s": wall,
    }
    for grp in topo.groups:
        raw.tcp_counters[grp.index] = {
            role: _counters(ns)
            for role, ns in (("sender", grp.sender_ns), ("receiver", grp.receiver_ns))
        }
    for gi, sp in clients.items():
        pg.stop(sp)
        raw.reports[gi] = sp.stdout_path.read_text() if sp.stdout_path else ""
        raw.client_stderr[gi] = (workdir / f"client{gi}.err").read_text()
    for sp in servers.values():
        pg.stop(sp, grace_s=1.0)
    # a client still running prints what it has on SIGTERM; the servers print on SIGTERM
    for gi, sp in tclients.items():
        pg.stop(sp)
        raw.traffic_client[int(gi)] = sp.stdout_path.read_text() if sp.stdout_path else ""
    for gi, sp in tservers.items():
        pg.stop(sp, grace_s=2.0)
        raw.traffic_server[int(gi)] = sp.stdout_path.read_text() if sp.stdout_path else ""
    pg.stop(relay)
    raw.linkem_lines = [d for d in _read_lines(relay_out) if "t_ns" in d]


Unit = tuple[int | str, Group, Conn | None]


def client_units(groups: list[Group]) -> list[Unit]:
    """The iperf3 client/server pairs of the long-lived entries: one per entry (key: its
    group index, ``-P streams``), or one per connection of an entry whose connections
    differ (key ``"<group>.<k>"``, ``-P 1``)."""
    out: list[Unit] = []
    for g in groups:
        if g.conns:
            out += [(c.unit, g, c) for c in g.conns]
        else:
            out.append((g.index, g, None))
    return out


def unit_start_ns(u: Unit, res_flows: dict[int, dict[str, Any]]) -> int:
    _, g, conn = u
    return conn.start_ns if conn else int(res_flows[g.index]["start_ns"])


def _note_exits(raw: RawRun, clients: dict[int | str, Spawned], t0: float, topo: Topology) -> None:
    """Record each client's exit time; an entry split into connections has exited when
    all of its connections' clients have."""
    now = time.time() - t0
    for key, sp in clients.items():
        if key not in raw.exit_s and sp.popen.poll() is not None:
            raw.exit_s[key] = now
    for g in topo.groups:
        if g.conns and g.index not in raw.exit_s:
            if all(c.unit in raw.exit_s for c in g.conns):
                raw.exit_s[g.index] = max(raw.exit_s[c.unit] for c in g.conns)


def _start_traffic_servers(
    groups: list[Group],
    opts: KernelOptions,
    pg: ProcessGroup,
    relay: Spawned,
    servers: dict[int | str, Spawned],
    workdir: Path,
) -> dict[int | str, Spawned]:
    """One tcpfair-traffic server per short-flow entry, in the host receiving its data,
    each listening before the clock starts."""
    if not groups:
        return {}
    assert opts.traffic is not None  # capabilities.scenario_problems refuses the run without
    out: dict[int | str, Spawned] = {
        g.index: pg.spawn(f"tserver{g.index}", C.traffic_server(g, opts.traffic)) for g in groups
    }
    for g in groups:
        sp = out[g.index]

        def up(sp: Spawned = sp, port: int = g.traffic_port) -> bool:
            return _listening(sp.popen.pid, port) or sp.popen.poll() is not None

        _wait_for(up, 10, f"the short-flow generator's server of flows.{g.index}")
        check_children(relay, {**servers, **out}, {}, workdir)
    return out


def _start_traffic_clients(
    sc: Scenario,
    groups: list[Group],
    opts: KernelOptions,
    pg: ProcessGroup,
    workdir: Path,
    t0_mono_ns: int,
) -> dict[int | str, Spawned]:
    """One tcpfair-traffic client per short-flow entry, started now with the entry's whole
    schedule (the simulator's draws: ``Scenario.short_flow_schedule``), times from t0."""
    out: dict[int | str, Spawned] = {}
    for g in groups:
        sched = sc.short_flow_schedule(g.index)
        doc = C.traffic_schedule(
            g,
            sched.start_ns.tolist(),
            sched.size_bytes.tolist(),
            t0_mono_ns,
            sched.rtt_ns.tolist() if g.conns else None,
        )
        path = workdir / f"schedule{g.index}.json"
        path.write_text(json.dumps(doc))
        assert opts.traffic is not None
        out[g.index] = pg.spawn(f"tclient{g.index}", C.traffic_client(g, opts.traffic, str(path)))
    return out


def _start_capture(topo: Topology) -> PacketCapture:
    """Capture the receivers' router's side of the emulated link (``em`` in ``rx``): data
    after the bottleneck queue and the delay, ACKs as they leave (docs/kernel.md)."""
    fd, path = tempfile.mkstemp(prefix="tcpfair-capture-", suffix=".pcap")
    os.close(fd)
    return PacketCapture(path, "em", namespace=topo.rx_ns).start()


def _counters(ns: str) -> dict[str, int]:
    p = run_cmd(C.proc_net_counters(ns), check=False, timeout=5)
    return C.parse_proc_net_counters(p.stdout) if p.returncode == 0 else {}


class _Bar:
    def __init__(self, total: float, name: str):
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        self.p = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:.0f}/{task.total:.0f} s"),
            TimeRemainingColumn(),
            transient=True,
        )
        self.p.start()
        self.task = self.p.add_task(f"kernel: {name}", total=total)

    def update(self, done: float) -> None:
        self.p.update(self.task, completed=done)

    def close(self) -> None:
        self.p.stop()


def _progress(enabled: bool, total: float, name: str) -> _Bar | None:
    return _Bar(total, name) if enabled else None


def round_up(x: float) -> int:
    return int(math.ceil(x))
