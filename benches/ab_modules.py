"""CPU time of two builds of the native module on the same engine configurations, alternated.

Each run is a fresh process that loads one build's ``_core.abi3.so`` by path, simulates one
configuration (``Scenario.sim_json()``; e.g. ``crates/sim/pgo/*.json`` or one written by
``tcpfair.spec``) to its end without collecting the output, and reports its CPU seconds
(``time.process_time``). The builds alternate A, B, B, A, … so that a change in the machine's
load falls on both; prints the fastest and the median of each and the ratio of the medians.
Used for docs/performance.md "Profile-guided build".

Usage: ``python benches/ab_modules.py A.so B.so ROUNDS config.json...``
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_CHILD = r"""
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("_core", sys.argv[1])
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
with open(sys.argv[2]) as f:
    text = f.read()
t0 = time.process_time()
core.Simulation(text).advance(2**63)
print(time.process_time() - t0)
"""


def cpu_seconds(module: str, config: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, module, config], capture_output=True, text=True, check=True
    )
    return float(out.stdout)


def main(argv: list[str]) -> int:
    if len(argv) < 4 or not argv[2].isdigit():
        print(
            "usage: python benches/ab_modules.py A.so B.so ROUNDS config.json...", file=sys.stderr
        )
        return 2
    a, b, rounds, configs = argv[0], argv[1], int(argv[2]), argv[3:]
    print(f"A = {a}\nB = {b}\n{rounds} runs each, alternated; CPU seconds")
    print(
        f"{'configuration':32s} {'A min':>7s} {'A med':>7s} {'B min':>7s} {'B med':>7s} {'B/A':>6s}"
    )
    for config in configs:
        times: dict[str, list[float]] = {a: [], b: []}
        for r in range(rounds):
            for module in (a, b) if r % 2 == 0 else (b, a):
                times[module].append(cpu_seconds(module, config))
        ta, tb = sorted(times[a]), sorted(times[b])
        ma, mb = ta[len(ta) // 2], tb[len(tb) // 2]
        name = Path(config).stem[:32]
        print(
            f"{name:32s} {ta[0]:7.3f} {ma:7.3f} {tb[0]:7.3f} {mb:7.3f} {mb / ma:6.3f}", flush=True
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
