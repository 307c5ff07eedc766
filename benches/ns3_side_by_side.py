"""ns-3 and tcpfair side by side on a matched dumbbell (issue 13).

Builds ``benches/ns3_dumbbell.cc`` with g++ against the system's ns-3 (Debian:
``apt-get install libns3-dev``, ns-3.37), runs it, then runs tcpfair's simulator on the
matching scenario (N SACK Reno flows, same rate, RTT, duration, drop-tail 1 BDP), and prints
one JSON line each: bottleneck packets, drops, events, wall and CPU seconds, packets per
CPU-second. Usage (one line; the first run compiles for ~10 s):

    python benches/ns3_side_by_side.py FLOWS RATE_MBIT RTT_MS DURATION_S

e.g. ``python benches/ns3_side_by_side.py 2 100 100 20`` (A1-sack for 20 s).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from tcpfair._core import simulate
from tcpfair.bench import _flows
from tcpfair.spec import from_dict

HERE = Path(__file__).resolve().parent
#: the program is built into the checkout's own build folder (never a shared, world-writable
#: place such as /tmp, where anyone could plant the binary this runs) by the system's g++
OUT = HERE.parent / "target" / "bench" / "tcpfair-ns3-dumbbell"
GXX = "/usr/bin/g++"
LIBS = ["core", "network", "internet", "point-to-point", "applications", "traffic-control"]


def build(out: Path) -> Path:
    """Compile the ns-3 program unless it is newer than its source."""
    src = HERE / "ns3_dumbbell.cc"
    if out.exists() and out.stat().st_mtime > src.stat().st_mtime:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [GXX, "-O2", "-std=c++17", "-o", str(out), str(src)] + [f"-lns3-{x}" for x in LIBS]
    subprocess.run(cmd, check=True)
    return out


def ours(flows: int, rate_mbit: float, rtt_ms: float, duration_s: float) -> dict[str, object]:
    sc = from_dict(
        {
            "name": f"ns3-match-N{flows}",
            "duration": f"{duration_s}s",
            "bottleneck": {"rate": f"{rate_mbit}Mbit", "buffer": "1bdp"},
            "flows": _flows(flows, f"{rtt_ms}ms", True),
            "measure": {"interval": "1s"},
        }
    )
    cfg = sc.sim_json()
    c0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    t0 = time.perf_counter()
    out = simulate(cfg)
    wall = time.perf_counter() - t0
    cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime - c0
    pkts = int(out["stats"]["bottleneck_packets"])
    return {
        "simulator": "tcpfair",
        "flows": flows,
        "rate_mbit": rate_mbit,
        "rtt_ms": rtt_ms,
        "duration_s": duration_s,
        "bottleneck_packets": pkts,
        "drops": int(out["link_totals"]["drops"]),
        "utilization": round(int(out["link_totals"]["busy_ns"]) / sc.duration, 3),
        "events": int(out["stats"]["events"]),
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "pkts_per_cpu_s": round(pkts / max(cpu, 1e-9)),
    }


def main(argv: list[str]) -> int:
    usage = "usage: ns3_side_by_side.py FLOWS RATE_MBIT RTT_MS DURATION_S (e.g. 2 100 100 20)"
    try:
        flows, rate, rtt, dur = int(argv[0]), float(argv[1]), float(argv[2]), float(argv[3])
    except (ValueError, IndexError):
        print(f"{usage}; got {' '.join(argv)!r}", file=sys.stderr)
        return 2
    if len(argv) != 4 or not (1 <= flows <= 10000 and rate > 0 and rtt > 0 and dur > 0):
        print(f"{usage}: FLOWS 1..10000, the others > 0; got {' '.join(argv)!r}", file=sys.stderr)
        return 2
    exe = build(OUT)
    ns3 = subprocess.run([str(exe), *argv], capture_output=True, text=True, check=True)
    print(ns3.stdout.strip())
    print(json.dumps(ours(flows, rate, rtt, dur)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
