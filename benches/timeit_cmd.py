"""Median of 5 runs of a command: wall time and the child's CPU (user + sys).

Usage: ``python benches/timeit_cmd.py tcpfair --version`` (docs/performance.md, Start-up).
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time


def child_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(cmd: list[str], repeats: int = 5) -> tuple[float, float]:
    """(median wall s, median CPU s) of ``repeats`` runs of ``cmd``."""
    walls, cpus = [], []
    for _ in range(repeats):
        cpu0, t0 = child_cpu_s(), time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
        cpus.append(child_cpu_s() - cpu0)
    return statistics.median(walls), statistics.median(cpus)


if __name__ == "__main__":
    wall, cpu = measure(sys.argv[1:])
    print(f"wall median {wall:.3f} s, CPU median {cpu:.3f} s")
