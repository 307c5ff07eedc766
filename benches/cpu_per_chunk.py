"""CPU time per chunk of simulated time for a `tcpfair bench` scenario: does the cost of a
simulated second grow as the run goes on (e.g. as short flows accumulate)?

    python benches/cpu_per_chunk.py N200-S1000 [chunks=4] [repeats=2]

Prints, per repeat, the CPU seconds (`time.process_time()`) of each equal chunk of the
run (`tcpfair._core.Simulation.advance`).
"""

from __future__ import annotations

import sys
import time

from tcpfair._core import Simulation
from tcpfair.bench import scenarios
from tcpfair.spec import from_dict


def main(name: str, chunks: int = 4, repeats: int = 2) -> None:
    sc = from_dict(scenarios()[name])
    cfg = sc.sim_json()
    step = sc.duration // chunks
    for _ in range(repeats):
        sim = Simulation(cfg)
        times = []
        for k in range(1, chunks + 1):
            t = time.process_time()
            sim.advance(k * step)
            times.append(time.process_time() - t)
        print(f"{name}: CPU s per {step / 1e9:g} simulated s:", " ".join(f"{x:.3f}" for x in times))


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
