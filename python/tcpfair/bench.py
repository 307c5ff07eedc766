"""Simulator speed on standard scenarios (``tcpfair bench``).

Each scenario runs in a fresh Python process so that its peak resident memory
(``getrusage`` maxrss) is its own. Reported: bottleneck packets per wall-clock second,
events per second, peak RSS, and memory growth per flow.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict, dataclass
from typing import Any

from .spec import from_dict

#: The child process: read the resolved scenario on stdin, run it, print the measurements.
_CHILD = r"""
import json, resource, sys, time
from tcpfair._core import simulate
cfg = sys.stdin.read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
out = simulate(cfg)
wall = time.perf_counter() - t0
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall_s": wall, "rss_before_kb": before, "rss_peak_kb": after,
                  "stats": {k: int(v) for k, v in out["stats"].items()},
                  "link_tx_bytes": int(out["link_totals"]["tx_bytes"]),
                  "short_flows": len(out["short_flows"]["group"]),
                  "short_flow_slots": int(out["short_flows"]["slots"]),
                  "drops": int(out["link_totals"]["drops"]),
                  "busy_ns": int(out["link_totals"]["busy_ns"])}))
"""


@dataclass
class BenchResult:
    name: str
    flows: int
    #: short flows (arrivals) the run opened; not in ``flows`` or ``bytes_per_flow``
    short_flows: int
    #: connection slots the short flows used (the most open at once; sim/short.rs)
    short_flow_slots: int
    #: packets the bottleneck dropped
    drops: int
    simulated_s: float
    wall_s: float
    bottleneck_packets: int
    events: int
    pkts_per_s: float
    events_per_s: float
    utilization: float
    rss_peak_mb: float
    rss_growth_mb: float
    bytes_per_flow: float


def _flows(n: int, rtt: str, sack: bool) -> list[dict[str, Any]]:
    return [{"cca": "reno", "rtt": rtt, "sack": sack, "streams": n}]


def scenarios(duration: str = "60s", quick: bool = False) -> dict[str, dict[str, Any]]:
    """The standard benchmark scenarios, as scenario dicts.

    - ``A1``: 2 NewReno flows (reno without SACK), 100 Mbit/s, RTT 100 ms, drop-tail 1 BDP.
    - ``A1-sack``: the same with SACK (Linux's default), which recovers from the start-up
      overshoot in one round trip instead of one segment per round trip.
    - ``N2``/``N100``/``N1000``: 2, 100 and 1000 SACK Reno flows sharing 1 Gbit/s, RTT
      50 ms, 1 BDP, for the scaling of speed and memory with the number of flows.
    - ``G10``: 2 SACK Reno flows at 10 Gbit/s, RTT 20 ms, 1 BDP (the labs' WAN) with
      50 MB host buffers, for large windows (~17,000 segments per flow) and a deep queue.
    - ``A1-sack-10g``: A1-sack at 10 Gbit/s, RTT 100 ms, 1 BDP, 10 s, with 250 MB host
      buffers (2 x BDP): the start-up overshoot loses ~50,000 segments out of windows of
      ~100,000, so the cost of SACK loss detection per ACK dominates (issue 13).
    - ``N200-S1000``: 200 SACK Reno flows and 1,000 short CUBIC flows per simulated second
      (Poisson arrivals, Pareto sizes of mean 50 KB and shape 1.5, at most 10 MB: ~400
      Mbit/s of offered short-flow load) sharing 1 Gbit/s, RTT 50 ms, 1 BDP (issue 10 §3:
      short flows must not make the per-flow cost grow).
    """
    scale_dur = "5s" if quick else "20s"
    base = {"bottleneck": {"rate": "100Mbit", "buffer": "1bdp"}, "measure": {"interval": "1s"}}
    out: dict[str, dict[str, Any]] = {
        "A1": {**base, "name": "A1", "duration": duration, "flows": _flows(2, "100ms", False)},
        "A1-sack": {
            **base,
            "name": "A1-sack",
            "duration": duration,
            "flows": _flows(2, "100ms", True),
        },
    }
    for n in (2, 100, 1000):
        out[f"N{n}"] = {
            "name": f"N{n}",
            "duration": scale_dur,
            "bottleneck": {"rate": "1Gbit", "buffer": "1bdp"},
            "flows": _flows(n, "50ms", True),
            "measure": {"interval": "1s"},
        }
    out["G10"] = {
        "name": "G10",
        "duration": "2s" if quick else "10s",
        "bottleneck": {"rate": "10Gbit", "buffer": "1bdp"},
        # Host buffers as the labs tune them (Linux's default 6 MB would cap each flow at
        # ~1.2 Gbit/s): 2 x BDP.
        "flows": [{"cca": "reno", "rtt": "20ms", "streams": 2, "rmem": "50MB", "wmem": "50MB"}],
        "measure": {"interval": "1s"},
    }
    out["A1-sack-10g"] = {
        "name": "A1-sack-10g",
        "duration": "2s" if quick else "10s",
        "bottleneck": {"rate": "10Gbit", "buffer": "1bdp"},
        "flows": [
            {
                "cca": "reno",
                "rtt": "100ms",
                "sack": True,
                "streams": 2,
                "rmem": "250MB",
                "wmem": "250MB",
            }
        ],
        "measure": {"interval": "1s"},
    }
    out["N200-S1000"] = {
        "name": "N200-S1000",
        "duration": scale_dur,
        "bottleneck": {"rate": "1Gbit", "buffer": "1bdp"},
        "flows": [
            *_flows(200, "50ms", True),
            {
                "cca": "cubic",
                "rtt": "50ms",
                "arrivals": {"process": "poisson", "rate": "1000/s"},
                "size": {"dist": "pareto", "mean": "50KB", "shape": 1.5, "max": "10MB"},
                "label": "short",
            },
        ],
        "measure": {"interval": "1s"},
    }
    return out


def run_one(name: str, data: dict[str, Any]) -> BenchResult:
    sc = from_dict(data)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=sc.sim_json(),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark {name} failed:\n{proc.stderr}")
    m = json.loads(proc.stdout)
    st = m["stats"]
    n = sum(f.streams for f in sc.flows if f.arrivals is None)
    wall = max(m["wall_s"], 1e-9)
    growth_kb = max(m["rss_peak_kb"] - m["rss_before_kb"], 0)
    return BenchResult(
        name=name,
        flows=n,
        short_flows=m["short_flows"],
        short_flow_slots=m["short_flow_slots"],
        drops=m["drops"],
        simulated_s=sc.duration / 1e9,
        wall_s=wall,
        bottleneck_packets=st["bottleneck_packets"],
        events=st["events"],
        pkts_per_s=st["bottleneck_packets"] / wall,
        events_per_s=st["events"] / wall,
        utilization=m["busy_ns"] / sc.duration,
        rss_peak_mb=m["rss_peak_kb"] / 1024,
        rss_growth_mb=growth_kb / 1024,
        bytes_per_flow=growth_kb * 1024 / n,
    )


def as_dict(r: BenchResult) -> dict[str, Any]:
    return asdict(r)
