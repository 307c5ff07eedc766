"""Read packet captures (pcap, pcapng) into the ``RunResult`` tables: one flow per TCP
connection.

``load_capture(paths, labels=None, align=True, interval_s=1.0, include_all=False)``
    Reads each file once, packet by packet (dpkt's streaming readers: memory grows with the
    number of connections × intervals, never with the number of packets), and returns a
    ``RunResult`` (``meta["backend"] == "capture"``).

What is measured, per connection (docs/fairness.md, "Packet captures"):

* the **data direction** is the direction that carried more payload; the other one only
  acknowledges (a connection with payload both ways keeps the larger one);
* **throughput** is the receiver's cumulative ACK advance (bytes acknowledged, SYN and
  FIN not counted) whenever the capture holds the ACKs: that is the goodput whether the
  capture was taken at the sender, at the receiver or in between (at the sender, payload
  bytes would count what was sent, lost or not). A capture that only holds the data
  direction falls back to new payload bytes (the highest sequence number's advance,
  retransmitted bytes counted once); ``flows.throughput_from`` says which;
* payload length is taken from the IP header (total length − headers), so a capture cut
  at a small snap length (``tcpdump -s 128``) measures the same bytes;
* **retransmissions seen**: data segments whose payload starts below the highest sequence
  number already seen in that direction (a reordered segment counts too);
* **RTT samples** at the capture point: one data segment at a time is timed until the ACK
  that covers it (Karn: a retransmission cancels the sample). That is the whole RTT only
  where the capture is at the data sender; the handshake tells where it is (at the client,
  SYN → SYN/ACK is the long gap), so per-interval ``srtt_s`` is given there only, and
  ``mean_rtt_s`` is the handshake's RTT (SYN → ACK of the SYN/ACK) otherwise;
* samples: one per interval of ``interval_s`` on a grid from the first packet of the
  capture; a flow's first and last interval are cut to its active span (first payload
  byte to last counted byte), so a flow that ran 4.3 s is not averaged over 5 s;
* connections that delivered fewer than ``MIN_FLOW_BYTES`` (iperf3's control connection,
  a stray HTTP request) are listed in ``meta["small_connections"]`` and left out unless
  ``include_all``;
* flows are grouped as iperf3 files are: one group per (client address, server address,
  server port) — the parallel streams of one iperf3 test — labelled ``client→server:port``;
  a flow is labelled ``client:port→server:port`` (or ``label[k]`` with ``labels``).

Link types: Ethernet (with VLAN tags), Linux cooked (SLL, SLL2), raw IP, BSD loopback.
IPv4 and IPv6. pcapng files with several interfaces are read with the first interface's
link type and time resolution (what dpkt supports).
"""

from __future__ import annotations

import ipaddress
import math
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from ..result import FLOW_COLUMNS, SAMPLE_COLUMNS, RunResult

__all__ = ["CaptureError", "load_capture", "read_connections", "is_capture", "MIN_FLOW_BYTES"]

#: connections that delivered fewer bytes are "small": listed, not in the index by default
MIN_FLOW_BYTES = 64 * 1024
#: magic numbers of pcap (both byte orders, µs and ns) and of a pcapng section header
PCAP_MAGICS = {
    b"\xa1\xb2\xc3\xd4",
    b"\xd4\xc3\xb2\xa1",
    b"\xa1\xb2\x3c\x4d",
    b"\x4d\x3c\xb2\xa1",
}
PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"
_M32 = 1 << 32
_FIN, _SYN, _RST, _ACK = 0x01, 0x02, 0x04, 0x10
#: link types read (the libpcap LINKTYPE_ numbers)
LINKTYPES = {
    0: "null",
    1: "ethernet",
    12: "raw",
    14: "raw",
    101: "raw",
    108: "null",
    113: "sll",
    228: "ipv4",
    229: "ipv6",
    276: "sll2",
}

#: flows columns this importer adds to the RunResult layout
CAPTURE_FLOW_COLUMNS = [*FLOW_COLUMNS, "throughput_from", "capture_at", "connection"]


class CaptureError(ValueError):
    """A capture file that cannot be used; the message names the file and the reason."""


def is_capture(head: bytes) -> bool:
    """Whether the first bytes of a file are a pcap or pcapng header."""
    return head[:4] in PCAP_MAGICS or head[:4] == PCAPNG_MAGIC


# ---------------------------------------------------------------------------- reading
#: largest record read (a packet of the largest snap length, 256 KiB, with room to spare):
#: a damaged length field must not make the reader allocate gigabytes
MAX_RECORD_BYTES = 1 << 20


class _ReadWatch:
    """A file wrapper that notices a short read (a capture cut inside a record) and
    refuses a record length no capture has (a damaged length field)."""

    def __init__(self, f: IO[bytes], src: str):
        self._f = f
        self._src = src
        self.short_reads = 0
        self.last_short_empty = False
        self.name = getattr(f, "name", "<capture>")

    def read(self, n: int = -1) -> bytes:
        if n < 0 or n > MAX_RECORD_BYTES:
            raise CaptureError(
                f"{self._src}: a record of {n} bytes at byte {self._f.tell()}; a damaged "
                f"file (records are 0 to {MAX_RECORD_BYTES} bytes)"
            )
        data = self._f.read(n)
        if n > 0 and len(data) < n:
            self.short_reads += 1
            self.last_short_empty = not data
        else:
            self.last_short_empty = False
        return data

    def seek(self, *a: Any) -> int:
        return self._f.seek(*a)

    def tell(self) -> int:
        return self._f.tell()

    def fileno(self) -> int:
        return self._f.fileno()

    @property
    def truncated(self) -> bool:
        """A short read other than the empty read that ends a complete file."""
        clean_end = 1 if self.last_short_empty else 0
        return self.short_reads - clean_end > 0


def _packets(f: IO[bytes], src: str) -> Iterator[tuple[float, Any]]:
    """(time, IP or IP6 packet) for every IP packet of the capture, in file order."""
    import dpkt

    head = f.read(4)
    f.seek(0)
    if not head:
        raise CaptureError(f"{src}: the file is empty; expected a pcap or pcapng capture")
    watch = _ReadWatch(f, src)
    try:
        if head == PCAPNG_MAGIC:
            reader: Any = dpkt.pcapng.Reader(watch)
        elif head in PCAP_MAGICS:
            reader = dpkt.pcap.Reader(watch)
        else:
            raise CaptureError(
                f"{src}: not a packet capture (starts with {head!r}); expected pcap or pcapng"
            )
    except (ValueError, dpkt.UnpackError, struct.error) as e:
        if isinstance(e, CaptureError):
            raise
        raise CaptureError(f"{src}: unreadable capture header ({e})") from None
    linktype = int(reader.datalink())
    kind = LINKTYPES.get(linktype)
    if kind is None:
        known = ", ".join(sorted({f"{k} ({v})" for k, v in LINKTYPES.items()}))
        raise CaptureError(f"{src}: link type {linktype} is not read; readable: {known}")
    decode = _decoder(kind)
    try:
        for ts, buf in reader:
            pkt = decode(buf)
            if pkt is not None:
                yield float(ts) if isinstance(ts, Decimal) else ts, pkt
    except CaptureError:
        raise
    except (dpkt.UnpackError, struct.error, ValueError) as e:
        if watch.truncated:
            raise _truncated(src) from None
        raise CaptureError(f"{src}: a packet record is damaged ({e or type(e).__name__})") from None
    if watch.truncated:
        raise _truncated(src)


def _truncated(src: str) -> CaptureError:
    return CaptureError(
        f"{src}: the file ends inside a packet record (truncated; was the capture "
        "interrupted or is the copy incomplete?)"
    )


def _decoder(kind: str) -> Any:
    import dpkt

    def ip_of(layer: Any) -> Any:
        data = getattr(layer, "data", None)
        return data if isinstance(data, (dpkt.ip.IP, dpkt.ip6.IP6)) else None

    def raw(buf: bytes) -> Any:
        if not buf:
            return None
        version = buf[0] >> 4
        try:
            if version == 4:
                return dpkt.ip.IP(buf)
            if version == 6:
                return dpkt.ip6.IP6(buf)
        except (dpkt.UnpackError, struct.error):
            return None
        return None

    def layered(cls: Any) -> Any:
        def decode(buf: bytes) -> Any:
            try:
                return ip_of(cls(buf))
            except (dpkt.UnpackError, struct.error):
                return None

        return decode

    if kind in ("raw", "ipv4", "ipv6"):
        return raw
    return layered(
        {
            "ethernet": dpkt.ethernet.Ethernet,
            "sll": dpkt.sll.SLL,
            "sll2": dpkt.sll2.SLL2,
            "null": dpkt.loopback.Loopback,
        }[kind]
    )


# ---------------------------------------------------------------------------- state
class _SeqSpace:
    """32-bit sequence numbers of one direction unwrapped onto one line (RFC 793 §3.3)."""

    def __init__(self, first: int):
        self.last = first

    def unwrap(self, v: int) -> int:
        diff = (v - self.last) % _M32
        if diff >= 1 << 31:
            diff -= _M32
        u = self.last + diff
        if diff > 0:
            self.last = u
        return u


@dataclass
class _Direction:
    """One direction of a connection: its segments, and the ACKs the other side sent."""

    space: _SeqSpace | None = None
    start: int | None = None  # first payload byte's sequence number
    high: int | None = None  # end of the highest payload seen
    new_bytes: int = 0
    payload_bytes: int = 0
    retransmits: int = 0
    acked: int | None = None  # highest acknowledged sequence number (within payload)
    acked_bytes: int = 0
    t_first_data: float | None = None
    t_last_new: float | None = None
    t_last_ack: float | None = None
    timed: tuple[int, float] | None = None  # (segment end, send time) being timed
    bins_new: dict[int, int] = field(default_factory=dict)
    bins_acked: dict[int, int] = field(default_factory=dict)
    bins_retx: dict[int, int] = field(default_factory=dict)
    bins_rtt: dict[int, list[float]] = field(default_factory=dict)  # [sum, count]

    def unwrap(self, v: int) -> int:
        if self.space is None:
            self.space = _SeqSpace(v)
        return self.space.unwrap(v)


@dataclass
class Connection:
    """What the capture shows of one TCP connection (``read_connections``)."""

    a: tuple[bytes, int]  # endpoint that sent the first packet seen (the SYN when captured)
    b: tuple[bytes, int]
    t_first: float
    t_last: float = 0.0
    ab: _Direction = field(default_factory=_Direction)
    ba: _Direction = field(default_factory=_Direction)
    client: tuple[bytes, int] | None = None  # sender of the SYN without ACK
    t_syn: float | None = None
    t_synack: float | None = None
    t_hs_ack: float | None = None
    packets: int = 0


def _add(bins: dict[int, int], k: int, v: int) -> None:
    bins[k] = bins.get(k, 0) + v


def _segment(conn: Connection, forward: bool, t: float, k: int, tcp: Any, payload: int) -> None:
    """Account one segment sent a→b (``forward``) or b→a at time t in interval k."""
    d, o = (conn.ab, conn.ba) if forward else (conn.ba, conn.ab)
    sender = conn.a if forward else conn.b
    flags = tcp.flags
    seq = d.unwrap(tcp.seq)
    if flags & _SYN:
        seq += 1  # the SYN takes one sequence number; data (if any) follows it
        if flags & _ACK:
            if conn.t_synack is None:
                conn.t_synack = t
        elif conn.t_syn is None:
            conn.t_syn, conn.client = t, sender
    elif (
        flags & _ACK
        and conn.t_synack is not None
        and conn.t_hs_ack is None
        and sender == conn.client
    ):
        conn.t_hs_ack = t
    if payload > 0:
        end = seq + payload
        d.payload_bytes += payload
        if d.start is None:
            d.start = seq
            d.high = seq
            d.t_first_data = t
        assert d.high is not None
        if seq < d.high:  # (partly) below what was already sent: a retransmission
            d.retransmits += 1
            _add(d.bins_retx, k, 1)
            if d.timed is not None and seq < d.timed[0]:
                d.timed = None  # Karn: no RTT sample across a retransmission
        if end > d.high:
            old_high = d.high
            fresh = end - old_high  # sequence space advanced (a hole is filled later)
            d.new_bytes += fresh
            d.high = end
            d.t_last_new = t
            _add(d.bins_new, k, fresh)
            if d.timed is None and seq >= old_high:
                d.timed = (end, t)
    if flags & _ACK and tcp.ack is not None:
        _ack(o, o.unwrap(tcp.ack), t, k)


def _ack(o: _Direction, ack: int, t: float, k: int) -> None:
    """The other direction's bytes acknowledged up to ``ack``."""
    if o.start is None:
        return  # nothing of that direction's payload seen yet
    assert o.high is not None
    pos = min(ack, o.high)  # a FIN's sequence number is not payload
    if o.acked is None:
        o.acked = o.start
    if pos > o.acked:
        o.acked_bytes += pos - o.acked
        _add(o.bins_acked, k, pos - o.acked)
        o.acked = pos
        o.t_last_ack = t
    if o.timed is not None and ack >= o.timed[0]:
        acc = o.bins_rtt.setdefault(k, [0.0, 0.0])
        acc[0] += t - o.timed[1]
        acc[1] += 1
        o.timed = None


def _payload_len(ip: Any, tcp: Any) -> int:
    """TCP payload bytes from the IP header's length fields (not from the captured bytes)."""
    import dpkt

    hdr = int(tcp.off) * 4
    if isinstance(ip, dpkt.ip.IP):
        if ip.len == 0:  # TSO super-packet with no length: only the captured bytes
            return len(tcp.data)
        return max(0, int(ip.len) - int(ip.hl) * 4 - hdr)
    ext = sum(len(bytes(h)) for h in getattr(ip, "all_extension_headers", []))
    return max(0, int(ip.plen) - ext - hdr)


def _host(raw: bytes) -> str:
    return str(ipaddress.ip_address(raw))


@dataclass
class CaptureScan:
    """``read_connections``' answer: connections by first appearance, and counts."""

    connections: list[Connection]
    t0: float
    t_end: float
    packets: int
    non_tcp: int
    interval_s: float


def read_connections(
    path: str | Path, interval_s: float = 1.0, origin: float | None = None
) -> CaptureScan:
    """One streaming pass over a capture: every TCP connection's counts per interval of
    ``interval_s`` on a grid from ``origin`` (Unix seconds; default: the first packet)."""
    import dpkt

    p = Path(path)
    src = str(p)
    try:
        f = p.open("rb")
    except FileNotFoundError:
        raise CaptureError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise CaptureError(f"{p}: is a directory, expected a pcap or pcapng file") from None
    except OSError as e:
        raise CaptureError(f"{p}: cannot read ({e.strerror})") from None
    conns: dict[tuple[Any, ...], Connection] = {}
    order: list[Connection] = []
    t0: float | None = None
    first = 0.0
    t_end = 0.0
    n = non_tcp = 0
    with f:
        for t, ip in _packets(f, src):
            n += 1
            if t0 is None:
                t0 = t if origin is None else origin
                first = t
            if not math.isfinite(t) or t < first - 3600:
                raise CaptureError(
                    f"{src}: packet {n} has time {t!r}, long before the first packet ({first:.6f})"
                )
            t_end = max(t_end, t)
            tcp = ip.data
            if not isinstance(tcp, dpkt.tcp.TCP) or (isinstance(ip, dpkt.ip.IP) and ip.offset != 0):
                non_tcp += 1
                continue
            s = (ip.src, tcp.sport)
            d = (ip.dst, tcp.dport)
            key = (s, d) if s <= d else (d, s)
            conn = conns.get(key)
            if conn is None or (tcp.flags & _SYN and not tcp.flags & _ACK and conn.t_syn):
                if conn is not None and _finished(conn):
                    conn = None  # the 4-tuple was reused by a new connection
                if conn is None:
                    conn = Connection(a=s, b=d, t_first=t)
                    conns[key] = conn
                    order.append(conn)
            conn.packets += 1
            conn.t_last = max(conn.t_last, t)
            k = int((t - t0) // interval_s)  # < 0 only for packets before the origin
            _segment(conn, s == conn.a, t, k, tcp, _payload_len(ip, tcp))
    if t0 is None:
        raise CaptureError(f"{src}: the capture holds no IP packet")
    if not order:
        raise CaptureError(f"{src}: the capture holds no TCP packet ({n} IP packets)")
    return CaptureScan(order, t0, t_end, n, non_tcp, interval_s)


def _first_packet_time(path: Path) -> float:
    """The time of a capture's first IP packet (reads no further)."""
    try:
        with path.open("rb") as f:
            for t, _ in _packets(f, str(path)):
                return t
    except OSError:
        pass  # read_connections says what is wrong with the file
    return math.inf


def _finished(conn: Connection) -> bool:
    return conn.t_syn is not None and conn.t_hs_ack is not None


# ---------------------------------------------------------------------------- tables
@dataclass
class _FlowOut:
    conn: Connection
    data: _Direction
    sender: tuple[bytes, int]
    receiver: tuple[bytes, int]
    delivered: int
    mode: str  # "acked" or "payload"
    at: str  # where the capture is: "sender", "receiver" or "unknown"


def _flow_view(conn: Connection) -> _FlowOut:
    forward = conn.ab.new_bytes >= conn.ba.new_bytes
    data = conn.ab if forward else conn.ba
    sender, receiver = (conn.a, conn.b) if forward else (conn.b, conn.a)
    mode = "acked" if data.acked is not None else "payload"
    delivered = data.acked_bytes if mode == "acked" else data.new_bytes
    at = "unknown"
    if conn.t_syn is not None and conn.t_synack is not None and conn.t_hs_ack is not None:
        near_client = (conn.t_synack - conn.t_syn) > (conn.t_hs_ack - conn.t_synack)
        at = "sender" if near_client == (sender == conn.client) else "receiver"
    return _FlowOut(conn, data, sender, receiver, delivered, mode, at)


def _endpoint(e: tuple[bytes, int]) -> str:
    host = _host(e[0])
    return f"[{host}]:{e[1]}" if ":" in host else f"{host}:{e[1]}"


def _server(f: _FlowOut) -> tuple[tuple[bytes, int], tuple[bytes, int]]:
    """(client, server) of a flow: the SYN's sender is the client; without the handshake,
    the side with the lower port is taken as the server (iperf3's 5201 vs an ephemeral)."""
    c = f.conn
    if c.client is not None:
        return c.client, (c.b if c.client == c.a else c.a)
    return (c.a, c.b) if c.a[1] > c.b[1] else (c.b, c.a)


def _flow_samples(f: _FlowOut, fid: int, scan: CaptureScan, offset: float) -> list[dict[str, Any]]:
    d = f.data
    bins = d.bins_acked if f.mode == "acked" else d.bins_new
    t_last = d.t_last_ack if f.mode == "acked" else d.t_last_new
    if not bins or d.t_first_data is None or t_last is None:
        return []
    step = scan.interval_s
    start = d.t_first_data - scan.t0
    end = t_last - scan.t0
    k0, k1 = int(start // step), int(end // step)
    rtt_known = f.at == "sender"
    rows: list[dict[str, Any]] = []
    for k in range(k0, k1 + 1):
        lo, hi = max(k * step, start), min((k + 1) * step, end)
        dt = hi - lo
        nbytes = bins.get(k, 0)
        if dt <= 0:
            if not nbytes or not rows:
                continue
            rows[-1]["bytes"] += nbytes  # bytes at the very end instant: the last interval
            rows[-1]["throughput_bps"] = rows[-1]["bytes"] * 8 / rows[-1]["dt_s"]
            continue
        rtt = d.bins_rtt.get(k)
        rows.append(
            {
                "flow": fid,
                "t_s": hi + offset,
                "dt_s": dt,
                "bytes": nbytes,
                "throughput_bps": nbytes * 8 / dt,
                "cwnd_bytes": math.nan,
                "srtt_s": rtt[0] / rtt[1] if rtt and rtt_known else math.nan,
                "retransmits": float(d.bins_retx.get(k, 0)),
            }
        )
    return rows


def _mean_rtt(f: _FlowOut) -> float:
    c = f.conn
    if f.at == "sender":
        acc = [v for v in f.data.bins_rtt.values()]
        if acc:
            return sum(a[0] for a in acc) / sum(a[1] for a in acc)
    if c.t_syn is not None and c.t_hs_ack is not None:
        return c.t_hs_ack - c.t_syn
    return math.nan


@dataclass
class _FileTables:
    flows: list[dict[str, Any]]
    samples: list[dict[str, Any]]
    small: list[dict[str, Any]]
    groups: dict[int, str]
    scan: CaptureScan


def _tables(
    scan: CaptureScan,
    src: str,
    label: str | None,
    flow_offset: int,
    group_offset: int,
    include_all: bool,
) -> _FileTables:
    views = [_flow_view(c) for c in scan.connections]
    kept: list[_FlowOut] = []
    small: list[_FlowOut] = []
    for v in views:
        (kept if include_all or v.delivered >= MIN_FLOW_BYTES else small).append(v)
    group_ids: dict[tuple[bytes, bytes, int], int] = {}
    group_labels: dict[int, str] = {}
    flows, samples = [], []
    for i, v in enumerate(kept):
        client, server = _server(v)
        gkey = (client[0], server[0], server[1])
        if gkey not in group_ids:
            gid = group_offset + len(group_ids)
            group_ids[gkey] = gid
            host = _host(client[0])
            host = f"[{host}]" if ":" in host else host
            group_labels[gid] = label or f"{host}→{_endpoint(server)}"
        fid = flow_offset + i
        name = f"{_endpoint(client)}→{_endpoint(server)}"
        flows.append(
            {
                "flow": fid,
                "group": group_ids[gkey],
                "label": name if label is None else f"{label}[{i + 1}]",
                "cca": "unknown",
                "rtt_s": math.nan,
                "start_s": (v.conn.t_first - scan.t0),
                "bytes": int(v.delivered),
                "retransmits": float(v.data.retransmits),
                "mean_rtt_s": _mean_rtt(v),
                "throughput_from": "acked bytes" if v.mode == "acked" else "payload bytes",
                "capture_at": v.at,
                "connection": name,
            }
        )
        samples.extend(_flow_samples(v, fid, scan, 0.0))
    if label is not None and len(kept) == 1:
        flows[0]["label"] = label
    small_rows = [
        {
            "source": src,
            "connection": f"{_endpoint(_server(v)[0])}→{_endpoint(_server(v)[1])}",
            "bytes": int(v.delivered),
            "packets": v.conn.packets,
        }
        for v in small
    ]
    return _FileTables(flows, samples, small_rows, group_labels, scan)


def load_capture(
    paths: str | Path | Sequence[str | Path],
    labels: Sequence[str] | None = None,
    align: bool = True,
    interval_s: float = 1.0,
    include_all: bool = False,
    t_zero: float | None = None,
) -> RunResult:
    """Read pcap/pcapng files into one ``RunResult`` (see the module docstring).

    With ``labels``, file i's flows are labelled ``labels[i][k]`` (``labels[i]`` when it has
    one flow) and its groups share that label. With ``align`` (default) files are placed on
    one clock by their packets' absolute times (the earliest first packet is t = 0);
    without, each file starts at 0. ``t_zero`` (Unix seconds) sets t = 0 instead: a
    kernel run's ``meta["capture"]["t0_unix_s"]`` puts its capture on the run's clock.
    """
    from .. import __version__

    plist = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    if not plist:
        raise CaptureError("no capture files given")
    if labels is not None and len(labels) != len(plist):
        raise CaptureError(f"{len(labels)} labels for {len(plist)} files; give one per file")
    if not (math.isfinite(interval_s) and interval_s > 0):
        raise CaptureError(f"interval {interval_s!r} s: expected a time > 0")
    origin = t_zero
    if origin is None and align and len(plist) > 1:
        # one grid for every file, from the earliest first packet: their intervals line up
        origin = min(_first_packet_time(p) for p in plist)
    scans = [read_connections(p, interval_s, origin=origin) for p in plist]
    t_ref = origin
    flows: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []
    small: list[dict[str, Any]] = []
    group_labels: dict[str, str] = {}
    notes: list[str] = []
    files = []
    for i, (p, scan) in enumerate(zip(plist, scans, strict=True)):
        off = (scan.t0 - t_ref) if t_ref is not None else 0.0
        tab = _tables(
            scan,
            str(p),
            labels[i] if labels is not None else None,
            len(flows),
            len({r["group"] for r in flows}),
            include_all,
        )
        for r in tab.flows:
            r["start_s"] += off
        for r in tab.samples:
            r["t_s"] += off
        if not tab.flows:
            notes.append(
                f"{p}: no connection delivered {MIN_FLOW_BYTES // 1024} KiB or more "
                "(use --all to include the small ones)"
            )
        flows += tab.flows
        samples += tab.samples
        small += tab.small
        group_labels.update({str(g): lab for g, lab in tab.groups.items()})
        files.append(
            {
                "source": str(p),
                "packets": scan.packets,
                "non_tcp_packets": scan.non_tcp,
                "connections": len(scan.connections),
                "first_packet_unix_s": scan.t0,
                "duration_s": scan.t_end - scan.t0,
                "time_offset_s": off,
            }
        )
    if not flows:
        raise CaptureError(
            f"{', '.join(map(str, plist))}: no TCP connection delivered payload "
            f"(small connections: {len(small)}; --all includes them)"
        )
    if small:
        names = ", ".join(f"{s['connection']} ({s['bytes']} B)" for s in small[:5])
        more = f" and {len(small) - 5} more" if len(small) > 5 else ""
        notes.append(
            f"left out {len(small)} small connection(s) under {MIN_FLOW_BYTES // 1024} KiB "
            f"(iperf3's control connection, …): {names}{more}; --all includes them"
        )
    flow_df = pd.DataFrame(flows, columns=CAPTURE_FLOW_COLUMNS).astype(
        {"flow": np.int64, "group": np.int64, "bytes": np.int64, "retransmits": np.float64}
    )
    sample_df = pd.DataFrame(samples, columns=SAMPLE_COLUMNS).astype(
        {"flow": np.int64, "bytes": np.int64}
    )
    sample_df = sample_df.sort_values(["flow", "t_s"], kind="stable").reset_index(drop=True)
    t_end = float(sample_df["t_s"].max()) if len(sample_df) else 0.0
    t_start = float((sample_df["t_s"] - sample_df["dt_s"]).min()) if len(sample_df) else 0.0
    meta = {
        "backend": "capture",
        "window": [max(0.0, t_start), t_end],
        "capacity_bps": None,
        "interval_s": interval_s,
        "versions": {"tcpfair": __version__, "dpkt": _dpkt_version()},
        "files": files,
        "notes": notes,
        "group_labels": group_labels,
        "small_connections": small,
    }
    return RunResult(flows=flow_df, samples=sample_df, meta=meta)


def _dpkt_version() -> str:
    import dpkt

    return str(getattr(dpkt, "__version__", "unknown"))
