"""Write the simulator's profile-guided-optimisation training runs (crates/sim/pgo/*.json).

The release build of the native module is optimised with a profile of the simulator running
these configurations (build_backend/tcpfair_build.py ``pgo``; docs/performance.md "Profile-
guided build"). They are engine configurations (``Scenario.sim_json()``), generated here
from the scenarios users run, shortened so that the whole set takes a few CPU-seconds:

- the bench cases of ``tcpfair bench`` (two to 1,000 flows: 10,000 runs the same code, 1 and 10 Gbit/s, loss recovery
  at 10 Gbit/s, short-flow arrivals),
- a point of seed 001's study per algorithm (the sweep users run most: 1,600 such runs),
- every congestion control of the registry, both stacks (Linux, ns-2), with random loss,
- the shipped scenarios with RED, random loss, GSO, netem at the root and reverse traffic.

Every code path that users reach should be in the profile: a function the training never
runs is laid out as cold. tests/test_pgo.py checks that these files are what this script
writes (``--check``) and that the profiled build gives the same results as the plain one.

Usage: ``python benches/pgo_training.py [--check]``
"""

from __future__ import annotations

import copy
import sys
import tomllib
from pathlib import Path
from typing import Any

from tcpfair import registry
from tcpfair.bench import scenarios
from tcpfair.spec import from_dict

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "crates" / "sim" / "pgo"

#: bench case → simulated duration in the training (seconds)
BENCH = {
    "N2": 5,
    "A1-sack": 60,
    "N100": 5,
    "N1000": 3,
    "A1-sack-10g": 3,
    "N2-10g": 1,
    "N1000-10g": 1,
    "N200-S1000": 3,
}

#: shipped scenario → simulated duration (seconds)
SHIPPED = {
    "scenarios/lab10-reno-vs-bbr.toml": 20,
    "scenarios/lab11-loss.toml": 20,
    "scenarios/lab11-1bdp-10g-gso.toml": 2,
    "scenarios/lab10-reno-vs-bbr-10g-gso.toml": 2,
    "scenarios/validation/vegas-table3-ns2.toml": 60,
    "scenarios/validation/vegas-table3.toml": 60,
    "scenarios/validation/ns2-sack1-loss.toml": 30,
    "scenarios/validation/bbr-vs-cubic.toml": 10,
}


def shortened(data: dict[str, Any], seconds: float) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out["duration"] = f"{seconds}s"
    out["measure"] = {"interval": "1s"}
    return out


def configs() -> dict[str, str]:
    """Training name → engine JSON."""
    out: dict[str, str] = {}
    bench = scenarios()
    for name, seconds in BENCH.items():
        out[f"bench-{name}"] = from_dict(shortened(bench[name], seconds)).sim_json()
    # One point of seed 001's study per algorithm of flow 2 (each as heavy as the others: a
    # function the profile sees rarely is optimised as cold, i.e. for size).
    for cca in ("reno", "bic", "cubic", "compound"):
        seed001 = {
            "name": f"seed001-{cca}",
            "seed": 1,
            "duration": "40s",
            "bottleneck": {"rate": "100Mbit", "buffer": "1bdp", "mtu": "1500B"},
            "flows": [
                {"label": "flow1", "cca": "reno", "rtt": "200ms", "start": "0s"},
                {"label": "flow2", "cca": cca, "rtt": "200ms", "start": "5s"},
            ],
        }
        out[f"seed001-{cca}"] = from_dict(seed001).sim_json()
    # Every congestion control of both stacks, with random loss for the recovery paths.
    for stack in registry.STACKS:
        for cca in registry.names():
            spec = {
                "name": f"cca-{stack}-{cca}",
                "seed": 1,
                # ns-2's agents keep small windows (20 packets): a longer run, as much work
                "duration": "40s" if stack == "linux" else "400s",
                "bottleneck": {"rate": "100Mbit", "buffer": "0.5bdp", "loss": 0.0002},
                "flows": [
                    {"label": "a", "cca": cca, "stack": stack, "rtt": "40ms"},
                    {"label": "b", "cca": cca, "stack": stack, "rtt": "80ms", "start": "2s"},
                ],
            }
            try:
                out[f"cca-{stack}-{cca}"] = from_dict(spec).sim_json()
            except Exception as e:  # a CCA that one stack does not have
                if "stack" not in str(e):
                    raise
    for rel, seconds in SHIPPED.items():
        with open(ROOT / rel, "rb") as f:
            data = tomllib.load(f)
        out[Path(rel).stem] = from_dict(shortened(data, seconds)).sim_json()
    reverse = {
        "name": "reverse",
        "seed": 1,
        "duration": "10s",
        "bottleneck": {"rate": "50Mbit", "buffer": "1bdp"},
        "flows": [
            {"label": "fwd", "cca": "cubic", "rtt": "30ms"},
            {"label": "rev", "cca": "reno", "rtt": "30ms", "direction": "reverse"},
        ],
    }
    out["reverse"] = from_dict(reverse).sim_json()
    return out


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print("usage: python benches/pgo_training.py [--check]", file=sys.stderr)
        return 2
    want = {f"{name}.json": text + "\n" for name, text in sorted(configs().items())}
    have = {p.name: p.read_text() for p in OUT.glob("*.json")} if OUT.is_dir() else {}
    if check:
        stale = sorted(n for n in want.keys() | have.keys() if want.get(n) != have.get(n))
        if stale:
            print(
                f"crates/sim/pgo is stale ({', '.join(stale)}): run python benches/pgo_training.py"
            )
            return 1
        return 0
    OUT.mkdir(exist_ok=True)
    for name in have.keys() - want.keys():
        (OUT / name).unlink()
    for name, text in want.items():
        (OUT / name).write_text(text)
    print(f"wrote {len(want)} training runs to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
