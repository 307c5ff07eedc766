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
# numpy is imported before the clock starts: `simulate` builds its output columns as numpy
# arrays, and numpy's first import (~0.08 s of wall time here) was counted in the run's wall
# time (40 % of A1-sack's; issue 13).
_CHILD = r"""
import json, resource, sys, time
import numpy
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


#: The most streams one flow entry may have (spec.py); larger cases use several entries.
_MAX_STREAMS = 1000

#: Flow counts of the scaling cases (``N<n>`` at 1 Gbit/s, ``N<n>-10g`` at 10 Gbit/s).
SCALING_FLOWS = (2, 100, 1000, 10000)


def _flows(n: int, rtt: str, sack: bool) -> list[dict[str, Any]]:
    sizes = [_MAX_STREAMS] * (n // _MAX_STREAMS) + ([n % _MAX_STREAMS] if n % _MAX_STREAMS else [])
    return [{"cca": "reno", "rtt": rtt, "sack": sack, "streams": k} for k in sizes]


def scenarios(duration: str = "60s", quick: bool = False) -> dict[str, dict[str, Any]]:
    """The standard benchmark scenarios, as scenario dicts.

    - ``A1``: 2 NewReno flows (reno without SACK), 100 Mbit/s, RTT 100 ms, drop-tail 1 BDP.
    - ``A1-sack``: the same with SACK (Linux's default), which recovers from the start-up
      overshoot in one round trip instead of one segment per round trip.
    - ``N2``/``N100``/``N1000``/``N10000``: 2, 100, 1,000 and 10,000 SACK Reno flows
      sharing 1 Gbit/s, RTT 50 ms, 1 BDP, for the scaling of speed and memory with the
      number of flows; ``N2-10g`` … ``N10000-10g`` the same at 10 Gbit/s (4 s) with host
      buffers of 2 x BDP (125 MB), so that the 2 flows fill the link too.
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
    for n in SCALING_FLOWS:
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
    for n in SCALING_FLOWS:
        out[f"N{n}-10g"] = {
            "name": f"N{n}-10g",
            "duration": "1s" if quick else "4s",
            "bottleneck": {"rate": "10Gbit", "buffer": "1bdp"},
            # Host buffers of 2 x BDP (as G10), so that 2 flows can fill the link too.
            "flows": [{**f, "rmem": "125MB", "wmem": "125MB"} for f in _flows(n, "50ms", True)],
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


@dataclass
class ScalingRow:
    name: str
    flows: int
    ns_per_packet: float
    events_per_packet: float
    #: ns/packet relative to the fewest-flows case of the same rate that ran
    vs_fewest: float


def scaling_rows(results: list[BenchResult]) -> list[ScalingRow]:
    """The per-packet cost of the scaling cases that ran (``N<n>``, ``N<n>-10g``), each
    relative to the case with the fewest flows at the same rate."""
    rows: list[ScalingRow] = []
    for suffix in ("", "-10g"):
        names = {f"N{n}{suffix}" for n in SCALING_FLOWS}
        group = sorted((r for r in results if r.name in names), key=lambda r: r.flows)
        if not group:
            continue
        base = group[0].wall_s * 1e9 / max(group[0].bottleneck_packets, 1)
        for r in group:
            ns = r.wall_s * 1e9 / max(r.bottleneck_packets, 1)
            ev = r.events / max(r.bottleneck_packets, 1)
            rows.append(ScalingRow(r.name, r.flows, ns, ev, ns / base))
    return rows
