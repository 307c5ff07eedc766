"""Hand-built packet captures for the capture importer's tests.

``Seg`` is one TCP segment; ``write_capture`` writes segments as a pcap or pcapng file
(dpkt's writers), each packet cut to its headers the way ``tcpdump -s 128`` stores it: the
IP header still says how long the packet was, so the payload length is known without its
bytes. ``bulk`` builds a connection with a handshake and evenly spaced data segments,
each acknowledged a fixed delay later (binary fractions of a second, so that every
expected number in the tests is exact).
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from pathlib import Path

import dpkt

SYN, ACK, FIN = dpkt.tcp.TH_SYN, dpkt.tcp.TH_ACK, dpkt.tcp.TH_FIN


@dataclass(frozen=True)
class Seg:
    t: float
    src: str
    sport: int
    dst: str
    dport: int
    flags: int
    seq: int
    ack: int = 0
    payload: int = 0


def packet(s: Seg, link: str = "ethernet") -> bytes:
    """The frame of a segment with ``payload`` bytes announced in the IP header only."""
    tcp = dpkt.tcp.TCP(
        sport=s.sport, dport=s.dport, seq=s.seq % 2**32, ack=s.ack % 2**32, flags=s.flags
    )
    v6 = ":" in s.src
    if v6:
        ip: dpkt.Packet = dpkt.ip6.IP6(
            src=socket.inet_pton(socket.AF_INET6, s.src),
            dst=socket.inet_pton(socket.AF_INET6, s.dst),
            nxt=6,
            hlim=64,
            data=tcp,
        )
        raw = bytearray(bytes(ip))
        raw[4:6] = struct.pack(">H", 20 + s.payload)  # payload length
    else:
        ip = dpkt.ip.IP(
            src=socket.inet_aton(s.src), dst=socket.inet_aton(s.dst), p=6, ttl=64, data=tcp
        )
        raw = bytearray(bytes(ip))
        raw[2:4] = struct.pack(">H", 40 + s.payload)  # total length
    if link == "raw":
        return bytes(raw)
    ethtype = dpkt.ethernet.ETH_TYPE_IP6 if v6 else dpkt.ethernet.ETH_TYPE_IP
    if link == "sll":  # tcpdump -i any (Linux cooked capture v1)
        return bytes(dpkt.sll.SLL(ethtype=ethtype, hdr=b"\x02\0\0\0\0\x01\0\0")) + bytes(raw)
    if link == "sll2":
        return bytes(dpkt.sll2.SLL2(ethtype=ethtype, intindex=1, hdr=b"\x02" + bytes(7))) + bytes(
            raw
        )
    eth = dpkt.ethernet.Ethernet(
        src=b"\x02\x00\x00\x00\x00\x01",
        dst=b"\x02\x00\x00\x00\x00\x02",
        type=dpkt.ethernet.ETH_TYPE_IP6 if v6 else dpkt.ethernet.ETH_TYPE_IP,
    )
    return bytes(eth) + bytes(raw)


def write_capture(
    path: Path, segs: list[Seg], fmt: str = "pcap", link: str = "ethernet", t0: float = 1.7e9
) -> Path:
    """Write the segments in time order; times are ``t0`` + ``Seg.t``."""
    linktype = {"ethernet": dpkt.pcap.DLT_EN10MB, "raw": 101, "sll": 113, "sll2": 276}[link]
    with path.open("wb") as f:
        w: dpkt.pcap.Writer | dpkt.pcapng.Writer
        if fmt == "pcapng":
            w = dpkt.pcapng.Writer(f, snaplen=128, linktype=linktype)
        else:
            w = dpkt.pcap.Writer(f, snaplen=128, linktype=linktype, nano=True)
        for s in sorted(segs, key=lambda s: s.t):
            w.writepkt(packet(s, link), ts=t0 + s.t)
    return path


def bulk(
    client: tuple[str, int],
    server: tuple[str, int],
    n: int,
    size: int,
    start: float,
    every: float,
    ack_after: float,
    isn: int = 1000,
    handshake: tuple[float, float, float] | None = (0.0, 0.125, 0.125 + 2**-10),
    drop_acks: bool = False,
) -> list[Seg]:
    """A client→server bulk transfer: handshake (SYN, SYN/ACK, ACK times), then ``n``
    segments of ``size`` bytes every ``every`` s from ``start``, each ACKed ``ack_after``
    later (a capture at the sender); ``drop_acks`` leaves the ACKs out."""
    (c, cp), (s, sp) = client, server
    srv_isn = 7000
    out = []
    if handshake:
        t_syn, t_synack, t_ack = handshake
        out += [
            Seg(t_syn, c, cp, s, sp, SYN, isn),
            Seg(t_synack, s, sp, c, cp, SYN | ACK, srv_isn, isn + 1),
            Seg(t_ack, c, cp, s, sp, ACK, isn + 1, srv_isn + 1),
        ]
    for i in range(n):
        seq = isn + 1 + i * size
        t = start + i * every
        out.append(Seg(t, c, cp, s, sp, ACK, seq, srv_isn + 1, size))
        if not drop_acks:
            out.append(Seg(t + ack_after, s, sp, c, cp, ACK, srv_isn + 1, seq + size))
    return out
