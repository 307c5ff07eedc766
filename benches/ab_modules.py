"""CPU time of two builds of the native module on the same engine configurations, alternated.

Each run is a fresh process that loads one build's ``_core.abi3.so`` by path, simulates one
configuration to its end without collecting the output, and reports its CPU seconds
(``time.process_time``). A configuration is a scenario file (``.toml``), an engine
configuration (``.json``, as ``Scenario.sim_json()`` writes it; e.g. ``crates/sim/pgo/``'s
training runs), ``bench:NAME`` (a case of ``tcpfair bench``, e.g. ``bench:N2``), or
``seed001-sample``: the 24 points of benches/seed001_sample.py, all in one
process (their summed CPU time). The builds alternate A, B, B, A, … so that a change in the machine's
load falls on both; prints the fastest and the median of each and the ratio of the medians.
Used for docs/performance.md "Profile-guided build".

Usage: ``python benches/ab_modules.py A.so B.so ROUNDS CONFIG...``
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("_core", sys.argv[1])
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
cpu = 0.0
for path in sys.argv[2:]:
    with open(path) as f:
        text = f.read()
    t0 = time.process_time()
    core.Simulation(text).advance(2**63)
    cpu += time.process_time() - t0
print(cpu)
"""


def cpu_seconds(module: str, configs: list[Path]) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, module, *configs], capture_output=True, text=True, check=True
    )
    return float(out.stdout)


def engine_configs(arg: str, tmp: Path) -> list[Path]:
    """The engine configurations (.json files) of one command-line configuration."""
    if arg == "seed001-sample":
        sys.path.insert(0, str(Path(__file__).parent))
        from seed001_sample import POINTS, point

        texts = [point(*p) for p in POINTS]
    elif arg.startswith("bench:"):
        from tcpfair.bench import scenarios
        from tcpfair.spec import from_dict

        texts = [from_dict(scenarios()[arg.removeprefix("bench:")]).sim_json()]
    elif arg.endswith(".toml"):
        from tcpfair.spec import load_scenario

        texts = [load_scenario(arg).sim_json()]
    else:
        return [Path(arg)]
    paths = []
    for i, text in enumerate(texts):
        path = tmp / f"{Path(arg.replace(':', '-')).stem}-{i}.json"
        path.write_text(text)
        paths.append(path)
    return paths


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
    tmp = Path(tempfile.mkdtemp(prefix="ab_modules-"))
    for config in configs:
        files = engine_configs(config, tmp)
        times: dict[str, list[float]] = {a: [], b: []}
        for r in range(rounds):
            for module in (a, b) if r % 2 == 0 else (b, a):
                times[module].append(cpu_seconds(module, files))
        ta, tb = sorted(times[a]), sorted(times[b])
        ma, mb = ta[len(ta) // 2], tb[len(tb) // 2]
        name = Path(config).stem[:32] if config.endswith((".toml", ".json")) else config
        print(
            f"{name:32s} {ta[0]:7.3f} {ma:7.3f} {tb[0]:7.3f} {mb:7.3f} {mb / ma:6.3f}", flush=True
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
