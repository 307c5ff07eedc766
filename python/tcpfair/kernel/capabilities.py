"""What this machine can run: the capability checks behind ``check()`` and ``tcpfair doctor``.

Every check runs before the run creates anything and fails with one message that says
what is missing and what to do.
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import registry
from ..spec import Scenario
from . import tools as T
from .commands import ETH_HDR
from .procs import RunState
from .topology import (
    MAX_GROUPS,
    MAX_PORT_FLOWS,
    MAX_SPLIT_CONNS,
    PREFIX,
    SPORT_BASE,
    new_run_id,
)

#: Bottleneck rate the machine can emulate, per CPU core. Measured on the 2-core
#: development VM (docs/performance.md): with GSO off, 200 Mbit/s kept the emulator's mean
#: lateness at ~12 µs while 500 Mbit/s overran it (mean 0.3–1.5 ms, the kernel's own
#: packet processing saturating both cores); with GSO on, 500 Mbit/s was borderline
#: (mean 111 µs). Scaling with the core count is an assumption; override with
#: TCPFAIR_KERNEL_MAX_RATE (e.g. "2Gbit") on a machine you have measured.
MAX_RATE_BPS_PER_CORE_GSO_OFF = 150_000_000
MAX_RATE_BPS_PER_CORE_GSO_ON = 250_000_000


def max_rate_bps(gso: bool, n_cpus: int | None = None, env: dict[str, str] | None = None) -> int:
    """Highest bottleneck rate this machine is trusted to emulate."""
    e = os.environ if env is None else env
    override = e.get("TCPFAIR_KERNEL_MAX_RATE")
    if override:
        from ..units import UnitError, parse_rate

        try:
            return int(parse_rate(override))
        except UnitError as err:
            raise ValueError(f"TCPFAIR_KERNEL_MAX_RATE={override!r}: {err}") from None
    cores = n_cpus if n_cpus is not None else (os.cpu_count() or 1)
    per = MAX_RATE_BPS_PER_CORE_GSO_ON if gso else MAX_RATE_BPS_PER_CORE_GSO_OFF
    return per * cores


#: The namespaces, veths and relay add ~0.1 ms of their own to every RTT; below this the
#: configured RTT cannot be met within the 0.5 ms accuracy target.
MIN_RTT_NS = 1_000_000


@dataclass
class Capabilities:
    os_ok: bool
    root: bool
    tools: dict[str, str | None]  # tool → absolute path (tools.SYSTEM_DIRS only)
    netns: bool
    ccas: list[str]
    qdiscs: dict[str, bool]
    linkem: str | None
    kernel: str
    iperf3_version: str | None
    tool_versions: dict[str, str | None] = field(default_factory=dict)
    linkem_source: str = "none"  # TCPFAIR_LINKEM, package, build folder, none
    linkem_problem: str | None = None  # why the emulator found may not run
    #: the short-flow generator tcpfair-traffic (needed only by entries with ``arrivals``)
    traffic: str | None = None
    traffic_source: str = "none"  # TCPFAIR_TRAFFIC, package, build folder, none
    traffic_problem: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def tools_meta(self) -> dict[str, dict[str, str | None]]:
        """What the run executes: ``meta["kernel"]["tools"]`` (path and version of each)."""
        out = {
            name: {"path": path, "version": self.tool_versions.get(name)}
            for name, path in self.tools.items()
        }
        out[T.LINKEM] = {"path": self.linkem, "source": self.linkem_source}
        out[T.TRAFFIC] = {"path": self.traffic, "source": self.traffic_source}
        return out


def linkem_path() -> str | None:
    """The emulator to run (see ``tools.find_linkem``), or None."""
    return T.find_linkem().path


def available_ccas() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


def iperf3_version(path: str | None) -> str | None:
    """iperf3's version number ("3.12") from ``iperf3 --version``."""
    return _iperf3_number(T.tool_version(path, "iperf3"))


def _iperf3_number(first_line: str | None) -> str | None:
    parts = (first_line or "").split()
    return parts[1] if len(parts) > 1 and parts[0] == "iperf" else first_line or None


def _netns_works() -> bool:
    ip = T.tool_paths()["ip"]
    if ip is None:
        return False
    p = subprocess.run([ip, "netns", "list"], capture_output=True, text=True, env=T.child_env())
    return p.returncode == 0


@lru_cache(maxsize=1)
def probe_qdiscs() -> dict[str, bool]:
    """Try each qdisc the backend uses on the loopback of a throw-away namespace."""
    names = {
        "tbf": ["tbf", "rate", "10mbit", "burst", "3028", "limit", "30000"],
        "pfifo": ["pfifo", "limit", "10"],
        "bfifo": ["bfifo", "limit", "10000"],
        "netem": ["netem", "delay", "1ms"],
    }
    out = {k: False for k in names}
    ip, tc = T.tool_paths()["ip"], T.tool_paths()["tc"]
    if os.geteuid() != 0 or not _netns_works() or ip is None or tc is None:
        return out
    rid = new_run_id()
    ns = f"{PREFIX}{rid}-probe"
    env = T.child_env()
    # recorded as a run's namespaces are (owner PID and start time), first: `tcpfair doctor
    # --cleanup` in another terminal leaves a probe whose process is alive alone (it deleted
    # the namespace under the probe, whose qdiscs then read as missing), and removes one
    # whose process died between the two commands
    state = RunState(rid, [ns])
    try:
        state.save()
    except OSError:  # no state folder to write in: probe as before, unrecorded
        pass
    if subprocess.run([ip, "netns", "add", ns], capture_output=True, env=env).returncode != 0:
        state.remove()
        return out
    try:
        for k, args in names.items():
            p = subprocess.run(
                [tc, "-n", ns, "qdisc", "replace", "dev", "lo", "root", *args],
                capture_output=True,
                env=env,
            )
            out[k] = p.returncode == 0
    finally:
        if (
            subprocess.run([ip, "netns", "delete", ns], capture_output=True, env=env).returncode
            == 0
        ):
            state.remove()  # else the record stays, for `tcpfair doctor --cleanup`
    return out


def detect(linkem: str | None = None, traffic: str | None = None) -> Capabilities:
    """What this machine offers. ``linkem``/``traffic``: explicit paths of the emulator
    and the short-flow generator (default ``$TCPFAIR_LINKEM``/``$TCPFAIR_TRAFFIC``, then the
    package and the checkout's build folder)."""
    tools = dict(T.tool_paths())
    versions = {name: T.tool_version(path, name) for name, path in tools.items()}
    lk = T.find_linkem(linkem)
    tr = T.find_traffic(traffic)
    return Capabilities(
        os_ok=sys.platform.startswith("linux"),
        root=os.geteuid() == 0,
        tools=tools,
        netns=_netns_works(),
        ccas=available_ccas(),
        qdiscs=probe_qdiscs(),
        linkem=lk.path,
        kernel=platform.release(),
        iperf3_version=_iperf3_number(versions["iperf3"]),
        tool_versions=versions,
        linkem_source=lk.source,
        linkem_problem=lk.problem,
        traffic=tr.path,
        traffic_source=tr.source,
        traffic_problem=tr.problem,
    )


def host_info() -> dict[str, Any]:
    """The machine a run ran on (``meta["host"]``): name, kernel, CPU model and cores, so a
    sweep spread over many machines can be compared per host (``host`` in the export)."""
    model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model"):
                model = value.strip()
                break
    except OSError:
        pass
    return {
        "name": socket.gethostname(),
        "kernel": platform.release(),
        "cpu_model": model or platform.processor() or None,
        "cores": os.cpu_count(),
    }


def machine_problems(caps: Capabilities) -> list[str]:
    """Problems that stop any kernel-backend run on this machine."""
    if not caps.os_ok:
        return ["the kernel backend needs Linux (network namespaces, tc, AF_PACKET)"]
    probs: list[str] = []
    if not caps.root:
        probs.append(
            "the kernel backend needs root (it creates network namespaces and qdiscs); run "
            "it with sudo"
        )
    where = ", ".join(T.SYSTEM_DIRS)
    for t in ("ip", "tc", "ethtool", "sysctl", "cat"):
        if not caps.tools.get(t):
            probs.append(
                f"'{t}' not found in {where} (tcpfair never runs tools from $PATH); install "
                "iproute2, ethtool, procps and coreutils (./dev setup does)"
            )
    if not caps.tools.get("iperf3"):
        probs.append(
            f"iperf3 not found in {where} (tcpfair never runs tools from $PATH); install it "
            "(apt-get install iperf3, or ./dev setup)"
        )
    if caps.root and caps.tools.get("ip") and not caps.netns:
        probs.append(
            "'ip netns' does not work here (no network namespace support or not permitted)"
        )
    if caps.linkem_problem:
        probs.append(caps.linkem_problem)
    elif not caps.linkem:
        probs.append(
            f"tcpfair-linkem not found (looked in {T.PACKAGE_BIN} and the checkout's "
            "target/release): install a wheel built by `./dev wheel` (it carries the "
            "emulator), build it in a checkout with `cargo build --release -p "
            "tcpfair-linkem` (./dev setup does), or set TCPFAIR_LINKEM to its absolute path"
        )
    if caps.root and caps.netns:
        for q in ("tbf", "pfifo"):
            if not caps.qdiscs.get(q):
                probs.append(
                    f"the kernel lacks the '{q}' qdisc (sch_{q}), which the bottleneck needs"
                )
    return probs


def split_connections(vals: dict[str, list[Any]]) -> int:
    """How many connections of an entry run on their own (own address, delay class and
    iperf3 client/server, docs/kernel.md): all of them when their rtt/start/size differ."""
    rows = set(zip(vals["rtt"], vals["start"], vals["size"], strict=True))
    return len(vals["rtt"]) if len(rows) > 1 else 0


def _split_limit_problem(per_entry: dict[int, int]) -> list[str]:
    total = sum(per_entry.values())
    if total <= MAX_SPLIT_CONNS:
        return []
    where = ", ".join(f"flows.{i}: {n}" for i, n in per_entry.items() if n)
    return [
        f"flows: {total} connections draw their own rtt/start/size ({where}); the kernel "
        f"backend runs each with its own address and delay class (and two iperf3 processes; "
        f"a short-flow entry: one address per distinct RTT), at most "
        f"{MAX_SPLIT_CONNS} per run; allowed: fewer streams, or one value for rtt, start "
        "and size in some entries"
    ]


def traffic_missing(caps: Capabilities) -> str | None:
    """Why the short-flow generator cannot run (None: it can)."""
    if caps.traffic_problem:
        return caps.traffic_problem
    if not caps.traffic:
        return (
            "tcpfair-traffic (the short-flow generator) not found; build it with `cargo "
            "build --release -p tcpfair-traffic` (./dev setup does) or set TCPFAIR_TRAFFIC "
            "to its absolute path"
        )
    return None


def _arrival_problems(i: int, sc: Scenario, caps: Capabilities) -> list[str]:
    """An entry with ``arrivals`` runs through tcpfair-traffic, one host pair per entry:
    the generator must be there; its RTTs: an address per listed value (forward entries),
    else a source port per flow, each at least ``MIN_RTT_NS``."""
    f = sc.flows[i]
    probs: list[str] = []
    missing = traffic_missing(caps)
    if missing:
        probs.append(f"flows.{i}.arrivals: short flows need {missing}")
    reverse = f.direction == "reverse"
    by_port = not isinstance(f.rtt, int) and (f.rtt.kind != "list" or reverse)
    if isinstance(f.rtt, int):
        rtts = [f.rtt]
    elif by_port:
        rtts = sc.short_flow_schedule(i).rtt_ns.tolist()
    else:
        rtts = list(f.rtt.values)
    if by_port and len(rtts) > MAX_PORT_FLOWS:
        probs.append(
            f"flows.{i}.rtt: the kernel backend gives each short flow of its own RTT its "
            f"own source port ({SPORT_BASE}-{SPORT_BASE + MAX_PORT_FLOWS - 1}), at most "
            f"{MAX_PORT_FLOWS} flows per entry, but this entry has {len(rtts)}; allowed: "
            "fewer arrivals (rate or window)" + ("" if reverse else ", or a list of RTTs")
        )
    elif rtts and min(rtts) < MIN_RTT_NS:
        probs.append(
            f"flows.{i}.rtt: {min(rtts) / 1e6:g} ms is below what the namespaces can emulate "
            f"accurately ({MIN_RTT_NS / 1e6:g} ms minimum)"
        )
    return probs


def scenario_problems(sc: Scenario, caps: Capabilities, gso: bool) -> list[str]:
    """Problems with this scenario on this machine (each names the scenario key)."""
    probs: list[str] = []
    have = set(caps.ccas)
    kernel_cca = registry.kernel_modules()
    supported = sorted(n for n, k in kernel_cca.items() if k is not None and k in have)
    split: dict[int, int] = {}
    for i, f in enumerate(sc.flows):
        k = kernel_cca.get(f.cca)
        if k is None or k not in have:
            hint = ""
            if k is not None and _module_exists(f"tcp_{k}"):
                hint = f" (the module exists: `modprobe tcp_{k}` makes it available)"
            probs.append(
                f"flows.{i}.cca: {f.cca!r} is not available in this kernel{hint}; the "
                "kernel backend "
                f"supports: {', '.join(supported) or 'nothing (no congestion controls listed)'}"
            )
        if f.arrivals is not None:
            probs += _arrival_problems(i, sc, caps)
            if not isinstance(f.rtt, int) and f.rtt.kind == "list":
                n = len(set(f.rtt.values))
                split[i] = n if n > 1 else 0  # one address per distinct RTT
            continue
        vals = sc.entry_values(i)
        if min(vals["rtt"]) < MIN_RTT_NS:
            probs.append(
                f"flows.{i}.rtt: {min(vals['rtt']) / 1e6:g} ms is below what the namespaces "
                f"can emulate accurately ({MIN_RTT_NS / 1e6:g} ms minimum)"
            )
        split[i] = split_connections(vals)
    probs += _split_limit_problem(split)
    if len(sc.flows) > MAX_GROUPS:
        probs.append(
            f"flows: at most {MAX_GROUPS} [[flows]] entries on the kernel backend, got "
            f"{len(sc.flows)}"
        )
    b = sc.bottleneck
    try:
        limit = max_rate_bps(gso)
    except ValueError as e:
        probs.append(str(e))
        limit = b.rate
    if b.rate > limit:
        probs.append(
            f"bottleneck.rate: {b.rate / 1e6:g} Mbit/s is above what this machine emulates "
            f"within the lateness limits ({limit / 1e6:g} Mbit/s with GSO "
            f"{'on' if gso else 'off'} on {os.cpu_count()} cores; see docs/performance.md, "
            "or set TCPFAIR_KERNEL_MAX_RATE on a faster machine)"
        )
    buf_bytes, buf_pkts = sc.buffer_limits()
    frame = b.mtu + ETH_HDR
    if buf_pkts is not None and buf_pkts < 1:
        probs.append("bottleneck.buffer: the kernel backend needs a buffer of at least 1 packet")
    if buf_bytes is not None and buf_bytes < frame:
        probs.append(
            f"bottleneck.buffer: {buf_bytes} B is smaller than one frame ({frame} B = mtu + "
            "14 B Ethernet "
            "header); tbf would drop every packet"
        )
    return probs


def _module_exists(name: str) -> bool:
    base = Path("/lib/modules") / platform.release()
    try:
        for line in (base / "modules.dep").read_text().splitlines():
            if f"/{name}.ko" in line.split(":")[0]:
                return True
    except OSError:
        pass
    return False
