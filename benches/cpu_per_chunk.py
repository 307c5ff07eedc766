"""CPU time per chunk of simulated time for a `tcpfair bench` scenario: does the cost of a
simulated second grow as the run goes on (e.g. as short flows accumulate)?

    python benches/cpu_per_chunk.py N200-S1000 [--chunks 4] [--repeats 2] [--long-only]

Prints, per repeat, the CPU seconds (`time.process_time()`) of each equal chunk of the run
(`tcpfair._core.Simulation.advance`), their sum, and the bottleneck packets per CPU
second. `--long-only` drops the scenario's entries with `arrivals` (the same long-lived
flows without the short ones).
"""

from __future__ import annotations

import argparse
import time

from tcpfair._core import Simulation
from tcpfair.bench import scenarios
from tcpfair.spec import from_dict


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--chunks", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--long-only", action="store_true")
    a = ap.parse_args()
    data = scenarios()[a.name]
    if a.long_only:
        data = {**data, "flows": [f for f in data["flows"] if "arrivals" not in f]}
    sc = from_dict(data)
    cfg = sc.sim_json()
    step = sc.duration // a.chunks
    for _ in range(a.repeats):
        sim = Simulation(cfg)
        times = []
        for k in range(1, a.chunks + 1):
            t = time.process_time()
            sim.advance(k * step)
            times.append(time.process_time() - t)
        packets = sim.finish()["stats"]["bottleneck_packets"]
        print(
            f"{a.name}{' (long-only)' if a.long_only else ''}: CPU s per {step / 1e9:g} "
            f"simulated s: {' '.join(f'{x:.3f}' for x in times)}; total {sum(times):.3f} s, "
            f"{packets / sum(times) / 1e6:.2f} M packets per CPU second"
        )


if __name__ == "__main__":
    main()
