"""Peak memory and time of ``tcpfair fairness`` on packet captures of growing size.

    python benches/capture_memory.py [SIZE_MB …]     (default: 25 100 400 1000)

For each size, writes a pcap of four bulk TCP connections with full 1514-byte frames
(1448 B of payload each, one ACK per two segments, 100 µs apart) to a temporary folder,
then runs ``tcpfair fairness FILE --format json`` in a child process and reports its peak
resident memory (``getrusage(RUSAGE_CHILDREN).ru_maxrss``, one child per size) and wall
time. The reader streams, so the peak should stay flat while the file grows.
Numbers in docs/fairness.md ("Large captures") come from this script.
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

FLOWS = 4
MSS = 1448
GAP_NS = 100_000  # one data segment every 100 µs (~116 Mbit/s in all)


def _frame(src: str, dst: str, sport: int, dport: int, flags: int, payload: int) -> bytearray:
    tcp = struct.pack(">HHIIBBHHH", sport, dport, 0, 0, 5 << 4, flags, 65535, 0, 0)
    ip = struct.pack(
        ">BBHHHBBH4s4s",
        0x45,
        0,
        20 + 20 + payload,
        0,
        0x4000,
        64,
        6,
        0,
        socket.inet_aton(src),
        socket.inet_aton(dst),
    )
    eth = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"
    return bytearray(eth + ip + tcp + bytes(payload))


def write(path: Path, size_bytes: int) -> int:
    """A pcap of about ``size_bytes``; returns the number of packets."""
    data = [_frame(f"10.0.0.{i + 1}", "10.0.1.1", 40000 + i, 5201, 0x10, MSS) for i in range(FLOWS)]
    acks = [_frame("10.0.1.1", f"10.0.0.{i + 1}", 5201, 40000 + i, 0x10, 0) for i in range(FLOWS)]
    seq_off = 14 + 20 + 4  # Ethernet + IP, then ports
    n = 0
    t_ns = 1_700_000_000 * 10**9
    sent = [0] * FLOWS
    with path.open("wb") as f:
        f.write(struct.pack("=IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        written = 24
        while written < size_bytes:
            for i in range(FLOWS):
                t_ns += GAP_NS
                fr = data[i]
                struct.pack_into(">I", fr, seq_off, (1 + sent[i]) % 2**32)
                sent[i] += MSS
                rec = struct.pack("=IIII", t_ns // 10**9, t_ns % 10**9, len(fr), len(fr))
                f.write(rec)
                f.write(fr)
                written += 16 + len(fr)
                n += 1
                if sent[i] % (2 * MSS) == 0:
                    a = acks[i]
                    struct.pack_into(">I", a, seq_off + 4, (1 + sent[i]) % 2**32)
                    rec = struct.pack("=IIII", t_ns // 10**9, t_ns % 10**9 + 1, len(a), len(a))
                    f.write(rec)
                    f.write(a)
                    written += 16 + len(a)
                    n += 1
    return n


def measure(size_mb: float, tmp: Path) -> dict[str, float]:
    path = tmp / f"cap-{size_mb:g}MB.pcap"
    packets = write(path, int(size_mb * 2**20))
    tcpfair = Path(sys.executable).with_name("tcpfair")
    # a fresh parent per size, so that RUSAGE_CHILDREN's peak is this run's alone
    probe = (
        "import resource, subprocess, sys, json, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "w = time.perf_counter() - t\n"
        "r = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(json.dumps([p.returncode, p.stdout, p.stderr, r, w]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tcpfair), "fairness", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    code, stdout, stderr, peak_kib, wall = json.loads(out.stdout)
    if code != 0:
        raise SystemExit(stderr)
    rep = json.loads(stdout)
    size = path.stat().st_size
    path.unlink()
    return {
        "file_mb": size / 2**20,
        "packets": packets,
        "peak_rss_mb": peak_kib / 1024,
        "wall_s": wall,
        "packets_per_s": packets / wall,
        "jfi": rep["jfi"],
    }


def main() -> None:
    sizes = [float(a) for a in sys.argv[1:]] or [25.0, 100.0, 400.0, 1000.0]
    with tempfile.TemporaryDirectory() as d:
        for size in sizes:
            print(json.dumps(measure(size, Path(d))), flush=True)


if __name__ == "__main__":
    main()
