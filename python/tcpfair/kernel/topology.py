"""The emulated dumbbell as data, built from a ``Scenario`` without touching the system.

::

    s0 ─┐                                                        ┌─ r0
    s1 ─┤ rt ══[tbf: rate, burst, limit]══ a ·em· b ══ rx ├─ r1
    …  ─┘   (bottleneck router)         (linkem relay)   (router) └─ …

One namespace per sender host ``s<g>`` and receiver host ``r<g>`` (one pair per
``[[flows]]`` group, so each group has its own ``tcp_rmem``/``tcp_wmem`` and congestion
control), the bottleneck router ``rt`` (tbf on its egress towards the receivers), the
emulator namespace ``em`` (no addresses: linkem relays frames between its two veths,
adding each group's one-way delays, loss and, when asked, a user-space RED/drop-tail
bottleneck) and the receivers' router ``rx``. Every namespace is named
``tf-<run id>-<role>``; veth ends are created directly inside their namespaces, so nothing
ever appears in (or routes out of) the root namespace.

Addresses (private, only inside these namespaces): sender g ``10.1.g.2/24`` (gateway
``10.1.g.1`` on rt), receiver g ``10.2.g.2/24`` (gateway ``10.2.g.1`` on rx), the relay
link ``10.3.0.1/30`` (rt) – ``10.3.0.2/30`` (rx).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..distributions import Varied

if TYPE_CHECKING:
    from ..spec import Scenario

PREFIX = "tf-"
MAX_GROUPS = 250
_RID_RE = re.compile(r"^[0-9a-f]{6}$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_IFNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")

#: port of the iperf3 server of group g is IPERF_BASE_PORT + g; client data streams of
#: group g use CPORT_BASE + CPORT_STRIDE·g + k for stream k
IPERF_BASE_PORT = 5201
CPORT_BASE = 20000
CPORT_STRIDE = 1024
#: nobody listens here: the RTT probe's SYN is answered by a RST
PROBE_PORT = 9
#: port of the short-flow generator's server (tcpfair-traffic) of group g: TRAFFIC_BASE_PORT + g
TRAFFIC_BASE_PORT = 6201
#: an entry whose connections differ (rtt, start or size): connection k of group g has the
#: address 10.1.g.(CONN_HOST_BASE + k) and an iperf3 server on CONN_PORT_BASE + 64·g + k
CONN_HOST_BASE = 10
CONN_PORT_BASE = 30000
CONN_PORT_STRIDE = 64
#: at most this many such connections per run (each is an address, a delay class and two
#: iperf3 processes: 128 processes on a machine with few cores is already a lot)
MAX_SPLIT_CONNS = 64
#: a forward short-flow entry whose ``rtt`` is a distribution: flow k binds the source port
#: SPORT_BASE + k, and linkem gives that port the flow's drawn RTT (a port table in the
#: entry's delay class); below Linux's ephemeral range, so no kernel-chosen port (the RTT
#: probe's) falls into the table
SPORT_BASE = 20000
SPORT_END = 32768
MAX_PORT_FLOWS = SPORT_END - SPORT_BASE


def new_run_id() -> str:
    return secrets.token_hex(3)


def check_run_id(rid: str) -> str:
    if not _RID_RE.match(rid):
        raise ValueError(f"run id {rid!r} is not 6 lowercase hex digits")
    return rid


def check_name(name: str) -> str:
    """Validate a namespace name before it reaches ``ip`` (STYLE: every name is checked)."""
    if not _NAME_RE.match(name):
        raise ValueError(f"invalid namespace name {name!r}")
    return name


def check_ifname(name: str) -> str:
    if not _IFNAME_RE.match(name):
        raise ValueError(
            f"invalid interface name {name!r} (at most 15 characters: letters, digits, _ . -)"
        )
    return name


def mac(ns_index: int, if_index: int) -> str:
    """Locally administered, deterministic MAC address for an interface."""
    return f"02:74:66:{ns_index & 0xFF:02x}:{(if_index >> 8) & 0xFF:02x}:{if_index & 0xFF:02x}"


@dataclass(frozen=True)
class Veth:
    """A veth pair: end ``a`` in namespace ``ns_a`` with ``addr_a`` (CIDR or None), etc."""

    ns_a: str
    if_a: str
    mac_a: str
    addr_a: str | None
    ns_b: str
    if_b: str
    mac_b: str
    addr_b: str | None


@dataclass(frozen=True)
class Conn:
    """One connection of an entry whose connections differ in ``rtt``, ``start`` or
    ``size``: its own address on the sender host's veth (and so its own delay class in
    linkem), its own iperf3 server port and its own ``-P 1`` client."""

    group: int
    k: int
    flow: int
    ip: str
    rtt_ns: int
    fwd_delay_ns: int
    rev_delay_ns: int
    port: int
    cport: int
    start_ns: int
    size_bytes: int | None

    @property
    def unit(self) -> str:
        """Key of its iperf3 client in the run's records (``"<group>.<k>"``)."""
        return f"{self.group}.{self.k}"


@dataclass(frozen=True)
class Group:
    """One ``[[flows]]`` entry: its hosts, addresses and emulated one-way delays."""

    index: int
    sender_ns: str
    receiver_ns: str
    sender_ip: str
    receiver_ip: str
    rtt_ns: int
    fwd_delay_ns: int
    rev_delay_ns: int
    cca: str
    streams: int
    first_flow: int
    #: "reverse": the data goes from the receiver host r<g> to the sender host s<g>
    #: (iperf3 -R; the generator's client in r<g>), so it crosses the b → a direction
    direction: str = "forward"
    #: an entry with ``arrivals``: short flows from tcpfair-traffic, not iperf3
    short: bool = False
    #: an entry whose connections differ: one address, delay class and iperf3 client each
    #: (empty: one ``-P streams`` client for the whole entry, as before)
    conns: tuple[Conn, ...] = ()
    #: a short-flow entry with a drawn ``rtt``: flow k's RTT, its source port SPORT_BASE + k
    #: (empty: no port table)
    port_rtts_ns: tuple[int, ...] = ()

    @property
    def server_port(self) -> int:
        return IPERF_BASE_PORT + self.index

    @property
    def traffic_port(self) -> int:
        return TRAFFIC_BASE_PORT + self.index

    @property
    def reverse(self) -> bool:
        return self.direction == "reverse"

    @property
    def data_sender(self) -> tuple[str, str]:
        """(namespace, address) of the host whose sockets send the data."""
        return (
            (self.receiver_ns, self.receiver_ip)
            if self.reverse
            else (self.sender_ns, self.sender_ip)
        )

    @property
    def data_receiver(self) -> tuple[str, str]:
        """(namespace, address) of the host that receives the data."""
        return (
            (self.sender_ns, self.sender_ip)
            if self.reverse
            else (self.receiver_ns, self.receiver_ip)
        )

    @property
    def cport(self) -> int:
        return CPORT_BASE + CPORT_STRIDE * self.index


@dataclass
class Topology:
    run_id: str
    groups: list[Group]
    links: list[Veth]
    router_ns: str
    emu_ns: str
    rx_ns: str
    bottleneck_if: str = "em"  # on router_ns, towards the relay (and the receivers)
    relay_a: str = "a"  # in emu_ns, facing the router
    relay_b: str = "b"  # in emu_ns, facing rx
    relay_gw_rt: str = "10.3.0.1"
    relay_gw_rx: str = "10.3.0.2"
    static_neigh: list[tuple[str, str, str, str]] = field(
        default_factory=list
    )  # (ns, dev, ip, mac)

    @property
    def namespaces(self) -> list[str]:
        hosts = [g.sender_ns for g in self.groups] + [g.receiver_ns for g in self.groups]
        return [self.router_ns, self.emu_ns, self.rx_ns, *hosts]

    def rtts_ns(self) -> list[int]:
        """Every emulated base RTT: each entry's, each split connection's, each drawn one."""
        return (
            [g.rtt_ns for g in self.groups]
            + [c.rtt_ns for g in self.groups for c in g.conns]
            + [r for g in self.groups for r in g.port_rtts_ns]
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "namespaces": self.namespaces,
            "groups": [
                {
                    "group": g.index,
                    "sender": f"{g.sender_ns} {g.sender_ip}",
                    "receiver": f"{g.receiver_ns} {g.receiver_ip}",
                    "fwd_delay_ns": g.fwd_delay_ns,
                    "rev_delay_ns": g.rev_delay_ns,
                    "port": g.traffic_port if g.short else g.server_port,
                    "cport": g.cport,
                    "direction": g.direction,
                    "traffic": "tcpfair-traffic" if g.short else "iperf3",
                    **(
                        {"port_rtts": {"sport_base": SPORT_BASE, "flows": len(g.port_rtts_ns)}}
                        if g.port_rtts_ns
                        else {}
                    ),
                    **(
                        {
                            "connections": [
                                {
                                    # a short-flow entry's pool: an address per RTT, no flow
                                    **({"flow": c.flow} if c.flow >= 0 else {}),
                                    "sender": c.ip,
                                    "port": c.port,
                                    "rtt_ns": c.rtt_ns,
                                }
                                for c in g.conns
                            ]
                        }
                        if g.conns
                        else {}
                    ),
                }
                for g in self.groups
            ],
        }


def drawn_rtts(sc: Scenario) -> dict[int, tuple[int, tuple[int, ...]]]:
    """Each short-flow entry whose flows get their RTTs by source port → (the entry
    address's RTT: a distribution's mean, rounded, or a list's first value; each flow's
    RTT, ``Scenario.short_flow_schedule``, the simulator's draws). Those are the entries
    with a distribution, and reverse entries with a list: their flows all connect to the
    one server address on the sender side, so only their own ports tell them apart."""
    out: dict[int, tuple[int, tuple[int, ...]]] = {}
    for g in sc.short_flow_entries():
        f = sc.flows[g]
        rtt = f.rtt
        if isinstance(rtt, Varied) and (rtt.kind != "list" or f.direction == "reverse"):
            draws = tuple(int(v) for v in sc.short_flow_schedule(g).rtt_ns.tolist())
            own = int(rtt.values[0]) if rtt.kind == "list" else round(rtt.mean())
            out[g] = (own, draws)
    return out


def ns_name(run_id: str, role: str) -> str:
    return check_name(f"{PREFIX}{check_run_id(run_id)}-{role}")


def split_delay(rtt_ns: int) -> tuple[int, int]:
    """One-way delays (data direction, ACK direction) that add up to the base RTT."""
    fwd = rtt_ns // 2
    return fwd, rtt_ns - fwd


def entry_differs(mine: list[dict[str, Any]]) -> bool:
    """Whether an entry's connections (resolved records) need a client each: they differ
    in rtt, start or size, or there are several with a size — iperf3's ``-n`` with ``-P N``
    counts the bytes of all N streams together, and a scenario's ``size`` is each
    connection's."""
    if len(mine) > 1 and any(c["size_bytes"] is not None for c in mine):
        return True
    return len({(c["rtt_ns"], c["start_ns"], c["size_bytes"]) for c in mine}) > 1


def split_conns(g: int, mine: list[dict[str, Any]]) -> tuple[Conn, ...]:
    """One ``Conn`` per connection of entry ``g`` when they differ, else ()."""
    if not entry_differs(mine):
        return ()
    out = []
    for k, c in enumerate(mine):
        fwd, rev = split_delay(int(c["rtt_ns"]))
        out.append(
            Conn(
                group=g,
                k=k,
                flow=int(c["id"]),
                ip=f"10.1.{g}.{CONN_HOST_BASE + k}",
                rtt_ns=int(c["rtt_ns"]),
                fwd_delay_ns=fwd,
                rev_delay_ns=rev,
                port=CONN_PORT_BASE + CONN_PORT_STRIDE * g + k,
                cport=CPORT_BASE + CPORT_STRIDE * g + k,
                start_ns=int(c["start_ns"]),
                size_bytes=None if c["size_bytes"] is None else int(c["size_bytes"]),
            )
        )
    return tuple(out)


def first_rtt_ns(rtt: Any) -> int:
    """A short-flow entry's (first) RTT: its value, or its list's first."""
    return int(rtt["list"][0]) if isinstance(rtt, dict) else int(rtt)


def short_rtt_pool(g: int, rtt: Any, port: int) -> tuple[Conn, ...]:
    """A short-flow entry whose ``rtt`` is a list: one address and delay class per distinct
    value (in the list's order); each flow binds to the address of its own RTT. Empty for
    one value. (A distribution is refused before: every draw would need its own.)"""
    if not isinstance(rtt, dict):
        return ()
    distinct = list(dict.fromkeys(int(v) for v in rtt["list"]))
    if len(distinct) == 1:
        return ()  # one RTT: the entry's own address, as with a plain value
    out = []
    for k, v in enumerate(distinct):
        fwd, rev = split_delay(v)
        out.append(
            Conn(
                group=g,
                k=k,
                flow=-1,
                ip=f"10.1.{g}.{CONN_HOST_BASE + k}",
                rtt_ns=v,
                fwd_delay_ns=fwd,
                rev_delay_ns=rev,
                port=port,
                cport=0,
                start_ns=0,
                size_bytes=None,
            )
        )
    return tuple(out)


def build(
    resolved: dict[str, Any],
    run_id: str,
    kernel_cca: dict[str, str],
    drawn_rtts: dict[int, tuple[int, tuple[int, ...]]] | None = None,
) -> Topology:
    """Topology for a resolved scenario (``Scenario.resolved()``).

    ``kernel_cca`` maps the scenario's congestion-control names to the kernel's.
    ``drawn_rtts``: for each short-flow entry whose ``rtt`` is a distribution, (the RTT of
    the entry's own address — the RTT probe's —, each flow's drawn RTT): ``drawn_rtts``.
    """
    drawn = drawn_rtts or {}
    conns = resolved["flows"]
    short = {a["group"]: a for a in resolved.get("arrivals", [])}
    n_groups = max([c["group"] for c in conns] + list(short)) + 1
    if n_groups > MAX_GROUPS:
        raise ValueError(
            f"the kernel backend supports at most {MAX_GROUPS} [[flows]] entries, got {n_groups}"
        )
    rt, em, rx = ns_name(run_id, "rt"), ns_name(run_id, "em"), ns_name(run_id, "rx")
    groups: list[Group] = []
    links: list[Veth] = []
    for g in range(n_groups):
        mine = [c for c in conns if c["group"] == g]
        # a short-flow entry has no long-lived connections; its RTT is one value, a list
        # (an address per value) or drawn (a source port per flow)
        c0 = mine[0] if mine else short[g]
        pool = () if mine or g in drawn else short_rtt_pool(g, c0["rtt"], TRAFFIC_BASE_PORT + g)
        if g in drawn:
            rtt_ns = drawn[g][0]
        else:
            rtt_ns = int(c0["rtt_ns"]) if mine else first_rtt_ns(c0["rtt"])
        fwd, rev = split_delay(rtt_ns)
        s_ns, r_ns = ns_name(run_id, f"s{g}"), ns_name(run_id, f"r{g}")
        grp = Group(
            index=g,
            sender_ns=s_ns,
            receiver_ns=r_ns,
            sender_ip=f"10.1.{g}.2",
            receiver_ip=f"10.2.{g}.2",
            rtt_ns=rtt_ns,
            fwd_delay_ns=fwd,
            rev_delay_ns=rev,
            cca=kernel_cca[c0["cca"]],
            streams=len(mine),
            first_flow=int(c0["id"]) if mine else -1,
            direction=str(c0.get("direction", "forward")),
            short=not mine,
            conns=split_conns(g, mine) if mine else pool,
            port_rtts_ns=drawn[g][1] if g in drawn else (),
        )
        groups.append(grp)
        links.append(
            Veth(
                s_ns,
                "eth0",
                mac(10 + g, 0),
                f"10.1.{g}.2/24",
                rt,
                check_ifname(f"s{g}"),
                mac(1, 100 + g),
                f"10.1.{g}.1/24",
            )
        )
        links.append(
            Veth(
                rx,
                check_ifname(f"r{g}"),
                mac(3, 100 + g),
                f"10.2.{g}.1/24",
                r_ns,
                "eth0",
                mac(10 + g, 1),
                f"10.2.{g}.2/24",
            )
        )
    n_split = sum(len(g.conns) for g in groups)
    if n_split > MAX_SPLIT_CONNS:
        raise ValueError(
            f"the kernel backend runs at most {MAX_SPLIT_CONNS} connections with their own "
            f"rtt/start/size (one address and two iperf3 processes each), got {n_split}"
        )
    links.append(Veth(rt, "em", mac(1, 1), "10.3.0.1/30", em, "a", mac(2, 1), None))
    links.append(Veth(em, "b", mac(2, 2), None, rx, "em", mac(3, 1), "10.3.0.2/30"))
    topo = Topology(run_id=run_id, groups=groups, links=links, router_ns=rt, emu_ns=em, rx_ns=rx)
    # The relay link's neighbours are static: no ARP through the delay line.
    topo.static_neigh = [(rt, "em", "10.3.0.2", mac(3, 1)), (rx, "em", "10.3.0.1", mac(1, 1))]
    return topo
