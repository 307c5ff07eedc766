"""A deterministic fake backend for sweep, store and executor tests (no simulator needed).

Each flow gets a share of the bottleneck proportional to 1/RTT (×1.5 for cubic) times a
seed-dependent factor, and noisy per-interval samples drawn from ``numpy``'s generator
seeded with the scenario's seed — so the same scenario and seed give identical results in
any process. ``TCPFAIR_FAKE_SLEEP`` (seconds) slows each run down, ``TCPFAIR_FAKE_LOG`` names a file
that gets one line (the run hash) per execution, ``TCPFAIR_FAKE_NOISY=1`` makes every
execution differ (like a testbed); a flow with
``cca = "bbr"`` makes the run fail (to test failure handling).
"""

from __future__ import annotations

import os
import time

import numpy as np
import pandas as pd

from tcpfair.result import RunResult
from tcpfair.spec import Scenario


def fake_run(scenario: Scenario, backend: str) -> RunResult:
    log = os.environ.get("TCPFAIR_FAKE_LOG")
    if log:  # one line per execution, to count how often each run was executed
        with open(log, "a") as f:
            f.write(scenario.hash() + "\n")
    delay = float(os.environ.get("TCPFAIR_FAKE_SLEEP", "0"))
    if delay:
        time.sleep(delay)
    if any(f.cca == "bbr" for f in scenario.flows):
        raise RuntimeError("fake backend: bbr is not available")
    res = scenario.resolved()
    # TCPFAIR_FAKE_NOISY=1: a different result on every execution (like a testbed)
    rng = np.random.default_rng(None if os.environ.get("TCPFAIR_FAKE_NOISY") else scenario.seed)
    conns = res["flows"]
    cap = res["bottleneck"]["rate_bps"]
    w = np.array([(1.5 if c["cca"] == "cubic" else 1.0) / c["rtt_ns"] for c in conns])
    w = w * rng.uniform(0.8, 1.2, len(conns))
    share = 0.9 * cap * w / w.sum()
    interval = res["measure"]["interval_ns"] / 1e9
    n = int(res["duration_ns"] / 1e9 / interval)
    rows = []
    for c, x in zip(conns, share, strict=True):
        start = c["start_ns"] / 1e9
        for k in range(1, n + 1):
            t = k * interval
            if t - interval < start:
                continue
            thr = max(0.0, x * (1 + 0.05 * rng.standard_normal()))
            nbytes = int(thr * interval / 8)
            rows.append(
                (c["id"], t, interval, nbytes, nbytes * 8 / interval, 1e5, c["rtt_ns"] / 1e9, 0.0)
            )
    samples = pd.DataFrame(
        rows,
        columns=[
            "flow",
            "t_s",
            "dt_s",
            "bytes",
            "throughput_bps",
            "cwnd_bytes",
            "srtt_s",
            "retransmits",
        ],
    )
    flows = pd.DataFrame(
        {
            "flow": [c["id"] for c in conns],
            "group": [c["group"] for c in conns],
            "label": [scenario.group_label(c["group"]) for c in conns],
            "cca": [c["cca"] for c in conns],
            "rtt_s": [c["rtt_ns"] / 1e9 for c in conns],
            "start_s": [c["start_ns"] / 1e9 for c in conns],
            "bytes": [int(samples.loc[samples["flow"] == c["id"], "bytes"].sum()) for c in conns],
            "retransmits": [0 for _ in conns],
            "mean_rtt_s": [np.nan for _ in conns],
        }
    )
    link = pd.DataFrame(
        {
            "t_s": np.arange(1, n + 1) * interval,
            "queue_bytes": 0,
            "queue_pkts": 0,
            "drops": 0,
            "tx_bytes": 0,
        }
    )
    meta = {
        "backend": backend,
        "versions": {},
        "scenario_hash": scenario.hash(),
        "seed": scenario.seed,
        "wall_time_s": 0.0,
        "capacity_bps": cap,
        "window": [res["measure"]["from_ns"] / 1e9, res["measure"]["to_ns"] / 1e9],
        "valid": True,
        "checks": [],
    }
    return RunResult(flows=flows, samples=samples, link=link, meta=meta, scenario=res)


BASE = {
    "name": "fake",
    "duration": "20s",
    "seed": 7,
    "bottleneck": {"rate": "100Mbit", "buffer": "1bdp"},
    "flows": [{"cca": "newreno", "rtt": "50ms"}, {"cca": "newreno", "rtt": "50ms", "start": "2s"}],
    "measure": {"interval": "1s", "from": "5s", "to": "20s"},
}


def test_fake_backend_is_deterministic() -> None:
    from tcpfair.spec import from_dict

    sc = from_dict(BASE)
    a, b = fake_run(sc, "sim"), fake_run(sc, "sim")
    pd.testing.assert_frame_equal(a.samples, b.samples)
    c = fake_run(sc.with_seed(8), "sim")
    assert not a.samples["bytes"].equals(c.samples["bytes"])
