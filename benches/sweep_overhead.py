"""CPU time a sweep spends per run outside the simulator (issue 13 §4: seed 001's study).

Runs a sweep with seed 001's base (``scenarios/sweeps/ns2-testbed-sim.toml``: two flows,
100 Mbit/s, 300 s) through the real sweep path — plan, executor, ``to_result``, metrics,
the run's files, the store — but with the engine replaced by one canned result (a real
``simulate`` output of one point, computed once before the clock runs). So the CPU time
measured is the per-run Python alone, the part the engine benches do not see.

Prints the CPU seconds of this process and its workers per run.

Usage: ``python benches/sweep_overhead.py [-j JOBS] [--repeats N] [--profile FILE] [-o DIR]``
(``--profile``: cProfile of the whole sweep into FILE; with ``-j 1`` it covers the
workers' part too, since the runs happen in this process).
"""

from __future__ import annotations

import argparse
import cProfile
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy  # noqa: F401 — loaded before the clock runs

import tcpfair.backends.sim as sim
from tcpfair._core import simulate
from tcpfair.orchestrate import run_sweep
from tcpfair.sweep import load_sweep

SWEEP = Path(__file__).resolve().parents[1] / "scenarios" / "sweeps" / "ns2-testbed-sim.toml"


def cpu_s() -> float:
    """CPU seconds of this process and of its children that have ended (the workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5, help="repeats of the 24 points")
    ap.add_argument("--profile", metavar="FILE")
    ap.add_argument("-o", "--output", metavar="DIR", help="keep the store here (a new path)")
    a = ap.parse_args()
    sweep = load_sweep(SWEEP).with_axes(
        [
            'flows.1.cca=["reno", "bic", "cubic", "compound"]',
            'flows.0.rtt=["25ms", "200ms", "400ms"]',
            'flows.1.rtt=["25ms", "200ms", "400ms"]',
            'bottleneck.buffer=["0.2bdp", "1bdp"]',
        ]
    )
    sweep.repeats = a.repeats
    runs = sweep.runs()
    canned = simulate(runs[len(runs) // 2].scenario.sim_json())
    sim.simulate = lambda _cfg: canned  # workers are forked: they inherit it
    prof = cProfile.Profile() if a.profile else None
    with tempfile.TemporaryDirectory() as tmp:
        c0, t0 = cpu_s(), time.perf_counter()
        if prof:
            prof.enable()
        rep = run_sweep(sweep, jobs=a.jobs, output=a.output or Path(tmp) / "store")
        if prof:
            prof.disable()
            prof.dump_stats(a.profile)
        cpu, wall = cpu_s() - c0, time.perf_counter() - t0
    if rep.failed:
        sys.exit(f"{rep.failed} runs failed: {next(iter(rep.errors.values()))}")
    n = rep.finished
    print(
        f"{n} runs, -j {a.jobs}: {cpu:.2f} CPU-s ({1e3 * cpu / n:.1f} ms per run), "
        f"{wall:.2f} s wall, store {rep.store_s:.2f} s"
    )


if __name__ == "__main__":
    main()
