"""Pure builders of the commands the kernel backend runs (argv lists, never shell strings).

Nothing here executes anything, so every command is unit-tested without root. The
runner executes them in order with ``procs.run_cmd``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .topology import (
    PROBE_PORT,
    SPORT_BASE,
    Conn,
    Group,
    Topology,
    Veth,
    check_ifname,
    check_name,
    split_delay,
)

Cmd = list[str]

#: Linux's defaults for the min/default fields of tcp_rmem / tcp_wmem (bytes).
RMEM_MIN, RMEM_DEFAULT = 4096, 131072
WMEM_MIN, WMEM_DEFAULT = 4096, 16384
#: Ethernet header: tbf and linkem count it (qdisc_pkt_len on an Ethernet device).
ETH_HDR = 14


def in_ns(ns: str, argv: Cmd) -> Cmd:
    return ["ip", "netns", "exec", check_name(ns), *argv]


def netns_add(ns: str) -> Cmd:
    return ["ip", "netns", "add", check_name(ns)]


def netns_del(ns: str) -> Cmd:
    return ["ip", "netns", "delete", check_name(ns)]


def sysctl(ns: str, key: str, value: str | int) -> Cmd:
    if not all(p.replace("_", "").isalnum() for p in key.split(".")):
        raise ValueError(f"invalid sysctl key {key!r}")
    return in_ns(ns, ["sysctl", "-q", "-w", f"{key}={value}"])


def namespace_sysctls(ns: str, forwarding: bool) -> list[Cmd]:
    """Every namespace: no IPv6 (no router solicitations or DAD through the relay), loopback up."""
    cmds = [
        ["ip", "-n", check_name(ns), "link", "set", "dev", "lo", "up"],
        sysctl(ns, "net.ipv6.conf.all.disable_ipv6", 1),
        sysctl(ns, "net.ipv6.conf.default.disable_ipv6", 1),
    ]
    if forwarding:
        cmds.append(sysctl(ns, "net.ipv4.ip_forward", 1))
    return cmds


def tcp_mem_triple(minimum: int, default: int, maximum: int) -> str:
    """``min default max`` with min ≤ default ≤ max, as the kernel requires."""
    lo = min(minimum, maximum)
    return f"{lo} {max(lo, min(default, maximum))} {maximum}"


def host_sysctls(ns: str, rmem: int, wmem: int, sack: bool) -> list[Cmd]:
    """The labs' ``sysctl -w net.ipv4.tcp_rmem/tcp_wmem`` for one host.

    The flow's congestion control is chosen per socket with ``iperf3 -C`` (TCP_CONGESTION,
    allowed for CAP_NET_ADMIN): outside the initial namespace Linux lets
    ``net.ipv4.tcp_congestion_control`` name only the algorithms listed in
    ``tcp_allowed_congestion_control`` (EPERM otherwise). The namespace *default* is still
    set, to ``reno`` (never restricted): a new namespace inherits the machine's default, and
    iperf3 3.12 sets ``-C`` only after ``connect()``, so with a ``bbr`` default every socket
    starts as BBR, which switches on the stack's internal pacing, and Linux keeps pacing
    after the switch to CUBIC/Reno. Paced CUBIC keeps HyStart's ACK-train threshold at
    full length and overshoots slow start by ~200 segments (docs/validation.md, D5)."""
    return [
        sysctl(ns, "net.ipv4.tcp_congestion_control", "reno"),
        sysctl(ns, "net.ipv4.tcp_rmem", tcp_mem_triple(RMEM_MIN, RMEM_DEFAULT, rmem)),
        sysctl(ns, "net.ipv4.tcp_wmem", tcp_mem_triple(WMEM_MIN, WMEM_DEFAULT, wmem)),
        sysctl(ns, "net.ipv4.tcp_sack", 1 if sack else 0),
        # Fresh namespaces have no cached metrics, but keep runs independent anyway.
        sysctl(ns, "net.ipv4.tcp_no_metrics_save", 1),
    ]


def veth(v: Veth, mtu: int) -> list[Cmd]:
    """Create a veth pair with both ends directly in their namespaces, address, bring up."""
    cmds: list[Cmd] = [
        [
            "ip",
            "-n",
            check_name(v.ns_a),
            "link",
            "add",
            "name",
            check_ifname(v.if_a),
            "address",
            v.mac_a,
            "mtu",
            str(mtu),
            "type",
            "veth",
            "peer",
            "name",
            check_ifname(v.if_b),
            "address",
            v.mac_b,
            "mtu",
            str(mtu),
            "netns",
            check_name(v.ns_b),
        ]
    ]
    for ns, dev, addr in ((v.ns_a, v.if_a, v.addr_a), (v.ns_b, v.if_b, v.addr_b)):
        if addr:
            cmds.append(["ip", "-n", ns, "addr", "add", addr, "dev", dev])
        cmds.append(["ip", "-n", ns, "link", "set", "dev", dev, "up"])
    return cmds


def offloads(ns: str, dev: str, on: bool) -> Cmd:
    """GSO/TSO/GRO on or off. Off by default: with them on a drop removes a whole
    multi-segment frame, which changes the competition between flows."""
    state = "on" if on else "off"
    return in_ns(ns, ["ethtool", "-K", check_ifname(dev), "gso", state, "tso", state, "gro", state])


def promisc(ns: str, dev: str) -> Cmd:
    return ["ip", "-n", check_name(ns), "link", "set", "dev", check_ifname(dev), "promisc", "on"]


def routes(topo: Topology) -> list[Cmd]:
    cmds: list[Cmd] = []
    for g in topo.groups:
        cmds.append(
            ["ip", "-n", g.sender_ns, "route", "add", "default", "via", f"10.1.{g.index}.1"]
        )
        cmds.append(
            ["ip", "-n", g.receiver_ns, "route", "add", "default", "via", f"10.2.{g.index}.1"]
        )
    cmds.append(
        ["ip", "-n", topo.router_ns, "route", "add", "10.2.0.0/16", "via", topo.relay_gw_rx]
    )
    cmds.append(["ip", "-n", topo.rx_ns, "route", "add", "10.1.0.0/16", "via", topo.relay_gw_rt])
    for ns, dev, ip, mac in topo.static_neigh:
        cmds.append(
            ["ip", "-n", ns, "neigh", "replace", ip, "lladdr", mac, "dev", dev, "nud", "permanent"]
        )
    return cmds


def conn_addresses(g: Group) -> list[Cmd]:
    """The extra addresses (/32) of an entry whose connections differ, on its sender host's
    veth: each connection's iperf3 client binds to its own, so linkem can delay it alone."""
    return [["ip", "-n", g.sender_ns, "addr", "add", f"{c.ip}/32", "dev", "eth0"] for c in g.conns]


def cwnd_clamp_route(g: Group, clamp: int) -> Cmd:
    """Clamp the data sender's cwnd with a locked route metric (tcp_init_metrics →
    snd_cwnd_clamp): the sender host's default route, the receiver host's for a reverse
    entry (its data leaves from there)."""
    ns, _ = g.data_sender
    gw = f"10.2.{g.index}.1" if g.reverse else f"10.1.{g.index}.1"
    return [
        "ip",
        "-n",
        ns,
        "route",
        "replace",
        "default",
        "via",
        gw,
        "cwnd",
        str(int(clamp)),
        "lock",
        "cwnd",
    ]


@dataclass(frozen=True)
class TbfParams:
    rate_bps: int
    burst_bytes: int
    limit_bytes: int
    child_pfifo_pkts: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "rate_bps": self.rate_bps,
            "burst_bytes": self.burst_bytes,
            "limit_bytes": self.limit_bytes,
            "child_pfifo_pkts": self.child_pfifo_pkts,
        }


#: tbf's default burst, as time at the rate (``TCPFAIR_KERNEL_BURST`` overrides)
DEFAULT_BURST_S = 100e-6


def tbf_params(
    rate_bps: int,
    buffer_bytes: int | None,
    buffer_pkts: int | None,
    mtu: int,
    gso: bool,
    burst_s: float = DEFAULT_BURST_S,
    burst_bytes: int | None = None,
) -> TbfParams:
    """tbf as the labs use it: ``rate``, ``burst``, ``limit`` = the buffer in bytes.

    The burst is what may leave back to back after the link was idle, or after tbf's
    dequeue timer fired late (tokens beyond the burst are lost). Two full frames or
    ``burst_s`` at the rate (100 µs by default), whichever is larger; 64 KiB + header with
    GSO on, or tbf would drop aggregated frames. A buffer in packets becomes a pfifo child
    with that many packets. (Measured at 40 Mbit/s on this VM: bursts of 100 µs, 1 ms and
    4 ms all sent 99.9–100.0 % of the rate while backlogged; docs/kernel.md.) A scenario's
    ``bottleneck.burst`` (``burst_bytes``) is used as given, as the labs' tc command does.
    """
    frame = mtu + ETH_HDR
    burst = max(2 * frame, math.ceil(rate_bps * burst_s / 8))
    if gso:
        burst = max(burst, 65536 + ETH_HDR + 1000)
    if burst_bytes is not None:
        burst = burst_bytes
    if buffer_pkts is not None:
        # the byte limit must not bind before the packet limit does
        return TbfParams(
            rate_bps, burst, max(buffer_pkts, 1) * (65536 + ETH_HDR if gso else frame), buffer_pkts
        )
    assert buffer_bytes is not None
    return TbfParams(rate_bps, burst, int(buffer_bytes), None)


def tbf(ns: str, dev: str, p: TbfParams) -> list[Cmd]:
    cmds = [
        [
            "tc",
            "-n",
            check_name(ns),
            "qdisc",
            "replace",
            "dev",
            check_ifname(dev),
            "root",
            "handle",
            "1:",
            "tbf",
            "rate",
            f"{p.rate_bps}bit",
            "burst",
            str(p.burst_bytes),
            "limit",
            str(p.limit_bytes),
        ]
    ]
    if p.child_pfifo_pkts is not None:
        cmds.append(
            [
                "tc",
                "-n",
                ns,
                "qdisc",
                "replace",
                "dev",
                dev,
                "parent",
                "1:1",
                "handle",
                "10:",
                "pfifo",
                "limit",
                str(p.child_pfifo_pkts),
            ]
        )
    return cmds


def qdisc_stats(ns: str, dev: str) -> Cmd:
    return ["tc", "-n", check_name(ns), "-s", "-j", "qdisc", "show", "dev", check_ifname(dev)]


def parse_qdisc_stats(obj: list[dict[str, Any]]) -> dict[str, int]:
    """Root qdisc counters from ``tc -s -j qdisc show``.

    The root's backlog includes its child's."""
    root = next((q for q in obj if q.get("root")), obj[0] if obj else None)
    if root is None:
        raise ValueError("no qdisc in tc output")
    return {
        "bytes": int(root.get("bytes", 0)),
        "packets": int(root.get("packets", 0)),
        "drops": int(root.get("drops", 0)),
        "backlog_bytes": int(root.get("backlog", 0)),
        "backlog_pkts": int(root.get("qlen", 0)),
        "overlimits": int(root.get("overlimits", 0)),
    }


def iperf3_server(g: Group, wrapper: Cmd, interval_s: float, conn: Conn | None = None) -> Cmd:
    """One-off server (``-s -1``) of group g, bound to the receiver's address; with
    ``conn``, connection ``conn`` 's own (iperf3 3.12 serves one test at a time, so
    parallel clients need a server port each).

    ``-i`` as on the client: the server reports with its *own* interval (default 1 s), and
    its intervals are matched one-to-one with the client's (cwnd/srtt from the sender)."""
    return in_ns(
        g.receiver_ns,
        [
            *wrapper,
            "iperf3",
            "-s",
            "-1",
            "-B",
            g.receiver_ip,
            "-p",
            str(conn.port if conn else g.server_port),
            "-J",
            "-i",
            f"{interval_s:g}",
        ],
    )


def iperf3_client(
    g: Group,
    wrapper: Cmd,
    seconds: int | None,
    nbytes: int | None,
    interval_s: float,
    app_rate_bps: int | None,
    conn: Conn | None = None,
) -> Cmd:
    """The client of group g in its sender host; for a reverse entry with ``-R``: the
    server (in the receiver host) sends, with the congestion control ``-C`` names (iperf3
    3.12 passes it to the server, which sets it on its data sockets: checked with ``ss
    -ti``, docs/kernel.md). With ``conn``: that one connection (``-P 1``) from its own
    address to its own server."""
    argv = [
        "iperf3",
        "-c",
        g.receiver_ip,
        "-B",
        conn.ip if conn else g.sender_ip,
        "-p",
        str(conn.port if conn else g.server_port),
        "--cport",
        str(conn.cport if conn else g.cport),
        "-C",
        g.cca,
        "-P",
        "1" if conn else str(g.streams),
        "-J",
        "-i",
        f"{interval_s:g}",
        "--get-server-output",
    ]
    if nbytes is not None:
        argv += ["-n", str(int(nbytes))]
    else:
        assert seconds is not None
        argv += ["-t", str(int(seconds))]
    if app_rate_bps is not None:
        # iperf3 -b is per stream; the scenario's app_rate is per connection as well
        argv += ["-b", str(int(app_rate_bps))]
    if g.reverse:
        argv.append("-R")
    return in_ns(g.sender_ns, [*wrapper, *argv])


def traffic_server(g: Group, traffic: str) -> Cmd:
    """The short-flow generator's server of group g, in the host that receives the data."""
    ns, ip = g.data_receiver
    return in_ns(ns, [traffic, "server", f"{ip}:{g.traffic_port}"])


def traffic_client(g: Group, traffic: str, schedule_path: str) -> Cmd:
    """The short-flow generator's client of group g, in the host that sends the data."""
    ns, _ = g.data_sender
    return in_ns(ns, [traffic, "client", schedule_path])


def traffic_schedule(
    g: Group,
    starts_ns: list[int],
    sizes: list[int],
    t0_mono_ns: int,
    rtts_ns: list[int] | None = None,
) -> dict[str, Any]:
    """tcpfair-traffic's client input (crates/traffic/src/schedule.rs): flow k of the
    entry opens at ``t0_mono_ns + starts_ns[k]`` (CLOCK_MONOTONIC, shared by every
    namespace) from the data sender to the server, with the entry's congestion control.
    An entry with a list of RTTs (``g.conns``, forward only): each flow from the address
    of its own RTT (``rtts_ns[k]``). Per-flow RTTs by port (``g.port_rtts_ns``: drawn, or
    a reverse entry's list): flow k from the source port ``SPORT_BASE + k``, which linkem
    delays by its RTT."""
    _, src = g.data_sender
    _, dst = g.data_receiver
    srcs = [src] * len(starts_ns)
    if g.conns:
        assert rtts_ns is not None and not g.reverse
        by_rtt = {c.rtt_ns: c.ip for c in g.conns}
        srcs = [by_rtt[int(r)] for r in rtts_ns]
    return {
        "t0_mono_ns": int(t0_mono_ns),
        "flows": [
            {
                "id": k,
                "start_ns": int(t),
                "size": int(n),
                "cca": g.cca,
                "src": a,
                **_sport(g, k),
                "dst": f"{dst}:{g.traffic_port}",
            }
            for k, (t, n, a) in enumerate(zip(starts_ns, sizes, srcs, strict=True))
        ],
    }


def _sport(g: Group, k: int) -> dict[str, int]:
    """Flow k's source port for an entry with drawn RTTs (the port of its own delay)."""
    return {"sport": SPORT_BASE + k} if g.port_rtts_ns else {}


def probe(g: Group, linkem: str, count: int, interval_ms: int) -> Cmd:
    return in_ns(
        g.sender_ns,
        [linkem, "probe", f"{g.receiver_ip}:{PROBE_PORT}", str(count), str(interval_ms)],
    )


def relay(topo: Topology, linkem: str, config_path: str) -> Cmd:
    return in_ns(topo.emu_ns, [linkem, "relay", config_path])


def relay_config(
    topo: Topology,
    loss: float,
    seed: int,
    queue: dict[str, Any] | None,
    gso: bool,
    mtu: int,
    rt_priority: int,
    stats_interval_ms: int = 100,
    rev_queue: dict[str, Any] | None = None,
    rev_loss: float = 0.0,
) -> dict[str, Any]:
    """linkem's configuration. ``rev_queue``/``rev_loss``: the reverse direction's (b → a)
    bottleneck and loss, present only when the run has a reverse link (the keys are left
    out otherwise, so a forward-only run's configuration is what it was)."""
    extra: dict[str, Any] = {}
    if rev_queue is not None:
        extra = {"rev_queue": rev_queue, "rev_loss": rev_loss}
    return {
        "a": topo.relay_a,
        "b": topo.relay_b,
        # linkem takes the first class that matches: connections' own addresses first
        "classes": [
            {
                "net": c.ip,
                "prefix": 32,
                "fwd_delay_ns": c.fwd_delay_ns,
                "rev_delay_ns": c.rev_delay_ns,
            }
            for g in topo.groups
            for c in g.conns
        ]
        + [
            {
                "net": f"10.1.{g.index}.0",
                "prefix": 24,
                "fwd_delay_ns": g.fwd_delay_ns,
                "rev_delay_ns": g.rev_delay_ns,
                **port_table(g),
            }
            for g in topo.groups
        ],
        "loss": loss,
        "seed": seed,
        "queue": queue,
        "stats_interval_ms": stats_interval_ms,
        "max_frame": 65536 + 1000 if gso else max(2048, mtu + ETH_HDR + 64),
        "rt_priority": rt_priority,
        **extra,
    }


def port_table(g: Group) -> dict[str, Any]:
    """linkem's port table of an entry with per-flow RTTs by port (flow k: port
    ``SPORT_BASE + k``, its RTT split as ``split_delay`` splits every RTT); nothing
    otherwise. A reverse entry's flows bind their ports in the receiver host, on the far
    side of the relay from the entry's sender-side address class: ``far``."""
    if not g.port_rtts_ns:
        return {}
    fwd, rev = zip(*(split_delay(r) for r in g.port_rtts_ns), strict=True)
    table: dict[str, Any] = {
        "base": SPORT_BASE,
        "fwd_delay_ns": list(fwd),
        "rev_delay_ns": list(rev),
    }
    if g.reverse:
        table["far"] = True
    return {"ports": table}


def proc_net_counters(ns: str) -> Cmd:
    """The namespace's own TCP MIB counters (``/proc/net`` is per network namespace, and a
    new namespace starts at zero, so these count exactly the run's connections)."""
    return ["ip", "netns", "exec", check_name(ns), "cat", "/proc/net/snmp", "/proc/net/netstat"]


def parse_proc_net_counters(
    text: str, tables: tuple[str, ...] = ("Tcp", "TcpExt")
) -> dict[str, int]:
    """``Table: name …`` / ``Table: value …`` line pairs of /proc/net/snmp and
    /proc/net/netstat → ``{"Table.name": value}`` for the given tables, non-zero values
    only (``Tcp.MaxConn`` is -1 and is kept)."""
    out: dict[str, int] = {}
    lines = [ln.split() for ln in text.splitlines() if ":" in ln]
    for head, vals in zip(lines, lines[1:], strict=False):  # each line with the next
        if not head or not vals or head[0] != vals[0] or head[0].rstrip(":") not in tables:
            continue
        names_ok = len(head) == len(vals) > 1 and not head[1].lstrip("-").isdigit()
        if names_ok and vals[1].lstrip("-").isdigit():
            for k, v in zip(head[1:], vals[1:], strict=True):
                if int(v) != 0:
                    out[f"{head[0].rstrip(':')}.{k}"] = int(v)
    return out
