"""A packet capture of one interface inside a network namespace, written as pcap.

The kernel backend's ``--capture`` and the loopback test use it. No external tool: this
machine's images have no tcpdump, and a capture needs nothing more than a Linux packet
socket (``AF_PACKET``, ``packet(7)``). The socket is opened by a short-lived thread that
first joins the namespace (``setns(2)`` changes the calling thread's namespace only);
a socket keeps the namespace it was made in, so the process itself never moves. A reader
thread then writes every frame cut to ``snaplen`` bytes (headers: Ethernet 14 + IP ≤ 60
+ TCP ≤ 60), with its kernel receive time (``SO_TIMESTAMPNS``) and its full length, as a
pcap file with nanosecond times (link type Ethernet; the loopback device's frames carry a
zeroed Ethernet header too). On ``lo`` each packet passes the tap twice (sent, then
received): the sent copy is skipped, as libpcap does.

``stop()`` returns the count of packets written and the kernel's count of packets it
dropped because the reader fell behind (``PACKET_STATISTICS``); a capture with drops
undercounts, and callers say so.
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ETH_P_ALL = 0x0003
CLONE_NEWNET = 0x40000000
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_STATISTICS = 6
SO_TIMESTAMPNS = 35  # asm-generic (x86-64, arm64); SCM_TIMESTAMPNS has the same value
SO_RCVBUFFORCE = 33
#: the pcap file header: nanosecond magic, version 2.4, snap length, link type Ethernet
PCAP_MAGIC_NS = 0xA1B23C4D
LINKTYPE_ETHERNET = 1
DEFAULT_SNAPLEN = 160
NETNS_DIR = Path("/run/netns")


class CaptureSetupError(RuntimeError):
    """The capture could not start (no namespace, no interface, no permission)."""


@dataclass
class CaptureStats:
    path: str
    interface: str
    namespace: str | None
    packets: int
    bytes_on_wire: int
    kernel_drops: int


def _setns(ns: str) -> None:
    path = NETNS_DIR / ns
    fd = os.open(path, os.O_RDONLY)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


def packet_socket(namespace: str | None, interface: str) -> socket.socket:
    """An ``AF_PACKET`` socket bound to ``interface`` inside ``namespace`` (None: this one)."""
    out: dict[str, object] = {}

    def work() -> None:
        try:
            if namespace is not None:
                _setns(namespace)
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            try:
                s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
            except OSError:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            s.bind((interface, 0))
            out["sock"] = s
        except OSError as e:
            out["error"] = e

    # a thread of its own: setns changes the namespace of the calling thread only
    t = threading.Thread(target=work, name="capture-setns")
    t.start()
    t.join()
    if "error" in out:
        where = f"namespace {namespace}" if namespace else "this namespace"
        raise CaptureSetupError(f"cannot capture on {interface} in {where}: {out['error']}")
    sock = out["sock"]
    assert isinstance(sock, socket.socket)
    return sock


class PacketCapture:
    """``start()`` → traffic → ``stop()``: every frame of ``interface`` into ``path``."""

    def __init__(
        self,
        path: str | Path,
        interface: str,
        namespace: str | None = None,
        snaplen: int = DEFAULT_SNAPLEN,
    ):
        self.path = Path(path)
        self.interface = interface
        self.namespace = namespace
        self.snaplen = snaplen
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self._file: IO[bytes] | None = None
        self.packets = 0
        self.bytes_on_wire = 0
        self.error: BaseException | None = None

    def start(self) -> PacketCapture:
        self._sock = packet_socket(self.namespace, self.interface)
        self._sock.settimeout(0.1)
        self._file = self.path.open("wb")
        self._file.write(
            struct.pack("=IHHiIII", PCAP_MAGIC_NS, 2, 4, 0, 0, self.snaplen, LINKTYPE_ETHERNET)
        )
        self._thread = threading.Thread(target=self._run, name="capture", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        assert self._sock is not None and self._file is not None
        sock, f = self._sock, self._file
        buf = bytearray(self.snaplen)
        view = memoryview(buf)
        anc = socket.CMSG_SPACE(16)
        skip_sent = self.interface == "lo"
        try:
            while not self._stop.is_set():
                try:
                    n, ancdata, _flags, addr = sock.recvmsg_into([buf], anc, socket.MSG_TRUNC)
                except TimeoutError:
                    continue
                if skip_sent and addr[2] == PACKET_OUTGOING:
                    continue
                sec, nsec = _stamp(ancdata)
                cap = min(n, self.snaplen)
                f.write(struct.pack("=IIII", sec, nsec, cap, n))
                f.write(view[:cap])
                self.packets += 1
                self.bytes_on_wire += n
        except BaseException as e:  # reported by stop(): a capture never fails silently
            self.error = e

    def stop(self) -> CaptureStats:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        drops = 0
        if self._sock is not None:
            try:
                raw = self._sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
                drops = struct.unpack("=II", raw)[1]
            except OSError:
                drops = 0
            self._sock.close()
        if self._file is not None:
            self._file.close()
        if self.error is not None:
            raise CaptureSetupError(f"the capture on {self.interface} failed: {self.error}")
        return CaptureStats(
            str(self.path), self.interface, self.namespace, self.packets, self.bytes_on_wire, drops
        )

    def __enter__(self) -> PacketCapture:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _stamp(ancdata: list[tuple[int, int, bytes]]) -> tuple[int, int]:
    """(seconds, nanoseconds) of the kernel's receive time; the clock now if absent."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack("=qq", data[:16])
            return sec, nsec
    import time

    ns = time.time_ns()
    return ns // 1_000_000_000, ns % 1_000_000_000
