"""The panels of a run figure (``tcpfair.plots`` draws them). Apart from plots so that
checking ``--panels`` does not load matplotlib."""

from __future__ import annotations

#: the panels of a run figure, top to bottom: name -> y-axis label
PANELS: dict[str, str] = {
    "throughput": "throughput (Mbit/s)",
    "cwnd": "cwnd (kB)",
    "rtt": "RTT (ms)",
    "queue": "queue (kB)",
    "queue_pkts": "queue (packets)",
    "jfi": "JFI per interval",
}

#: the panels drawn when none are named (the queue in bytes, not also in packets)
DEFAULT_PANELS = ("throughput", "cwnd", "rtt", "queue", "jfi")
