"""CPU time of the simulator on a sample of seed 001's study grid (issue 13 §4).

24 of the 1,600 runs of ``scenarios/sweeps/ns2-testbed-sim.toml`` (flow 2 NewReno, BIC,
CUBIC, Compound × RTT 25/200/400 ms × buffer 0.2/1 BDP, 300 s, seed 1, no start jitter),
each simulated in this process; prints the summed CPU seconds of ``simulate`` and the mean
per run (x 1,600 / 2 cores = the study's engine time on this machine).

Usage: ``python benches/seed001_sample.py``
"""

from __future__ import annotations

import time

import numpy  # noqa: F401 — loaded before the clock runs (simulate returns numpy arrays)

from tcpfair._core import simulate
from tcpfair.spec import from_dict


def point(cca: str, rtt: str, buffer: str) -> str:
    return from_dict(
        {
            "name": "seed001-sample",
            "seed": 1,
            "duration": "300s",
            "bottleneck": {"rate": "100Mbit", "buffer": buffer, "mtu": "1500B"},
            "flows": [
                {"label": "flow1", "cca": "reno", "rtt": rtt, "start": "0s"},
                {"label": "flow2", "cca": cca, "rtt": rtt, "start": "60s"},
            ],
            "measure": {"interval": "1s", "from": "120s", "to": "300s"},
        }
    ).sim_json()


#: (flow 2's algorithm, RTT, buffer) of the 24 points
POINTS = [
    (cca, rtt, buffer)
    for cca in ("reno", "bic", "cubic", "compound")
    for rtt in ("25ms", "200ms", "400ms")
    for buffer in ("0.2bdp", "1bdp")
]


def main() -> None:
    cpu, packets, runs = 0.0, 0, 0
    for cca, rtt, buffer in POINTS:
        cfg = point(cca, rtt, buffer)
        t0 = time.process_time()
        out = simulate(cfg)
        cpu += time.process_time() - t0
        packets += int(out["stats"]["bottleneck_packets"])
        runs += 1
    print(
        f"{runs} seed-001 points: {cpu:.2f} CPU-s, {packets:,} bottleneck packets, "
        f"{packets / cpu / 1e6:.2f} M packets/CPU-s, {cpu / runs:.3f} s per run"
    )


if __name__ == "__main__":
    main()
