"""Pins the simulator's output on scenarios with SACK losses, bit for bit.

Loss detection and the receiver's out-of-order store were rewritten for speed (issue 13);
the algorithm is unchanged, so every output column must stay identical. Each case hashes
every column of the flows, samples and link tables and the link totals. A change here is a
behaviour change: explain it (a bug fix with its own test) before updating a digest.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tcpfair._core import simulate
from tcpfair.bench import scenarios as bench_scenarios
from tcpfair.spec import Scenario, from_dict, load_scenario

ROOT = Path(__file__).resolve().parent.parent


def _shipped(name: str, duration: str) -> Scenario:
    return load_scenario(
        ROOT / "scenarios" / f"{name}.toml", [f"duration={duration}", "measure.from=0s"]
    )


def _bench(name: str, **changes: Any) -> Scenario:
    return from_dict({**bench_scenarios(quick=True)[name], **changes})


#: name -> (scenario builder, pinned digest)
CASES: dict[str, tuple[Any, str]] = {
    # 10 Gbit/s, 1 BDP, 20 ms: the start-up overshoot's SACK losses.
    "lab11-1bdp-10g": (
        lambda: _shipped("lab11-1bdp-10g", "4s"),
        "c28f45220516bf0e521239ed8f897637",
    ),
    # 0.01 % random loss at 10 Gbit/s.
    "lab11-loss-10g": (
        lambda: _shipped("lab11-loss-10g", "5s"),
        "4cf96d561afa3f4da38c77c0e9b01174",
    ),
    # Reno against BBR at 10 Gbit/s.
    "lab10-reno-vs-bbr-10g": (
        lambda: _shipped("lab10-reno-vs-bbr-10g", "4s"),
        "ef693accbf43b6f04e2543a7ce6db6a0",
    ),
    # Small MTU: four times the segments for the same window.
    "lab11-100mtu-10g": (
        lambda: _shipped("lab11-100mtu-10g", "3s"),
        "7af0cceeb543634583d74917e935423c",
    ),
    # 100 SACK flows sharing 1 Gbit/s.
    "N100": (lambda: _bench("N100", duration="3s"), "d1f8fc3779b48ad5957ede8c70d68da8"),
    # Reno without SACK (dupACK recovery) and with SACK, 100 ms, 100 Mbit/s.
    "A1": (lambda: _bench("A1", duration="20s"), "9b2c36affef6f59101d9ed4fff53bafe"),
    "A1-sack": (lambda: _bench("A1-sack", duration="20s"), "9541be2ecc08e20a7ebcaaaac152ba3d"),
    # 10 Gbit/s, 100 ms: ~78,000 start-up losses in windows of ~100,000 segments.
    "A1-sack-10g": (
        lambda: _bench("A1-sack-10g", duration="2s"),
        "eccd4038d3a9d1460037ddca685f61b0",
    ),
}


def digest(out: dict[str, Any]) -> str:
    h = hashlib.sha256()
    for table in ("flows", "samples", "link", "link_totals", "stats"):
        cols = out[table]
        for key in sorted(cols):
            h.update(f"{table}.{key}".encode())
            h.update(np.ascontiguousarray(np.asarray(cols[key])).tobytes())
    return h.hexdigest()[:32]


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_is_unchanged(name: str) -> None:
    build, pinned = CASES[name]
    out = simulate(build().sim_json())
    assert out["link_totals"]["tx_packets"] > 0
    assert digest(out) == pinned
