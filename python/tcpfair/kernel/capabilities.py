"""What this machine can run: the capability checks behind ``check()`` and ``tcpfair doctor``.

Every check runs before the run creates anything and fails with one message that says
what is missing and what to do.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..spec import Scenario
from .commands import ETH_HDR
from .topology import MAX_GROUPS, PREFIX, new_run_id

#: scenario congestion-control names → Linux module names (``compound`` has no Linux
#: implementation; Linux ``reno`` is NewReno with SACK, RFC 6582 / RFC 6675)
KERNEL_CCA: dict[str, str | None] = {
    "reno": "reno",
    "newreno": "reno",
    "cubic": "cubic",
    "bic": "bic",
    "highspeed": "highspeed",
    "vegas": "vegas",
    "bbr": "bbr",
    "compound": None,
}

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

TOOLS = ("ip", "tc", "iperf3", "ethtool", "sysctl")


@dataclass
class Capabilities:
    os_ok: bool
    root: bool
    tools: dict[str, str | None]
    netns: bool
    ccas: list[str]
    qdiscs: dict[str, bool]
    linkem: str | None
    kernel: str
    iperf3_version: str | None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def linkem_path() -> str | None:
    env = os.environ.get("TCPFAIR_LINKEM")
    if env:
        return env if os.access(env, os.X_OK) else None
    here = Path(__file__).resolve()
    for root in (here.parents[3], Path.cwd()):
        cand = root / "target" / "release" / "tcpfair-linkem"
        if os.access(cand, os.X_OK):
            return str(cand)
    return shutil.which("tcpfair-linkem")


def available_ccas() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


def iperf3_version(path: str | None) -> str | None:
    if not path:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = out.splitlines()[0] if out else ""
    parts = first.split()
    return parts[1] if len(parts) > 1 and parts[0] == "iperf" else first or None


def _netns_works() -> bool:
    if not shutil.which("ip"):
        return False
    p = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
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
    if os.geteuid() != 0 or not _netns_works() or not shutil.which("tc"):
        return out
    ns = f"{PREFIX}{new_run_id()}-probe"
    if subprocess.run(["ip", "netns", "add", ns], capture_output=True).returncode != 0:
        return out
    try:
        for k, args in names.items():
            p = subprocess.run(
                ["tc", "-n", ns, "qdisc", "replace", "dev", "lo", "root", *args],
                capture_output=True,
            )
            out[k] = p.returncode == 0
    finally:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
    return out


def detect() -> Capabilities:
    tools = {t: shutil.which(t) for t in TOOLS}
    return Capabilities(
        os_ok=sys.platform.startswith("linux"),
        root=os.geteuid() == 0,
        tools=tools,
        netns=_netns_works(),
        ccas=available_ccas(),
        qdiscs=probe_qdiscs(),
        linkem=linkem_path(),
        kernel=platform.release(),
        iperf3_version=iperf3_version(tools["iperf3"]),
    )


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
    for t in ("ip", "tc", "ethtool", "sysctl"):
        if not caps.tools.get(t):
            probs.append(
                f"'{t}' not found; install iproute2, ethtool and procps (./dev setup does)"
            )
    if not caps.tools.get("iperf3"):
        probs.append("iperf3 not found; install it (apt-get install iperf3, or ./dev setup)")
    if caps.root and caps.tools.get("ip") and not caps.netns:
        probs.append(
            "'ip netns' does not work here (no network namespace support or not permitted)"
        )
    if not caps.linkem:
        probs.append(
            "tcpfair-linkem not found; build it with `cargo build --release -p tcpfair-linkem` "
            "(./dev setup does) or set TCPFAIR_LINKEM to its path"
        )
    if caps.root and caps.netns:
        for q in ("tbf", "pfifo"):
            if not caps.qdiscs.get(q):
                probs.append(
                    f"the kernel lacks the '{q}' qdisc (sch_{q}), which the bottleneck needs"
                )
    return probs


def scenario_problems(sc: Scenario, caps: Capabilities, gso: bool) -> list[str]:
    """Problems with this scenario on this machine (each names the scenario key)."""
    probs: list[str] = []
    have = set(caps.ccas)
    supported = sorted(n for n, k in KERNEL_CCA.items() if k is not None and k in have)
    for i, f in enumerate(sc.flows):
        k = KERNEL_CCA.get(f.cca)
        if k is None or k not in have:
            hint = ""
            if k is not None and _module_exists(f"tcp_{k}"):
                hint = f" (the module exists: `modprobe tcp_{k}` makes it available)"
            probs.append(
                f"flows.{i}.cca: {f.cca!r} is not available in this kernel{hint}; the "
                "kernel backend "
                f"supports: {', '.join(supported) or 'nothing (no congestion controls listed)'}"
            )
        if f.params():
            probs.append(
                f"flows.{i}: {f.cca} parameters ({', '.join(f.params())}) are module-wide "
                "in Linux and "
                "cannot be set per flow; the kernel backend runs only the defaults"
            )
        if f.rtt < MIN_RTT_NS:
            probs.append(
                f"flows.{i}.rtt: {f.rtt / 1e6:g} ms is below what the namespaces can emulate "
                f"accurately ({MIN_RTT_NS / 1e6:g} ms minimum)"
            )
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
