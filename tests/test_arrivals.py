"""Short flows (issue 10 §3): the arrival schedule drawn from the scenario's seed, its
resolved form and hash, and (below) the simulator's short flows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tcpfair.spec import from_dict


def scenario(arrivals: dict, duration: str = "100s", **short: object) -> dict:
    entry = {"cca": "reno", "rtt": "20ms", "size": "10KB", "arrivals": arrivals, **short}
    return {
        "duration": duration,
        "seed": 7,
        "bottleneck": {"rate": "100Mbit", "buffer": "100pkt"},
        "flows": [{"cca": "cubic", "rtt": "20ms"}, entry],
    }


def test_poisson_count_and_exponential_gaps() -> None:
    # λ = 200/s over T = 100 s: N ~ Poisson(20,000), sd √20000 ≈ 141; 4 sd = 566
    sc = from_dict(scenario({"process": "poisson", "rate": "200/s"}))
    t = sc.short_flow_schedule(1).start_ns
    assert abs(len(t) - 20_000) < 4 * math.sqrt(20_000)
    assert t[0] > 0 and t[-1] < 100e9 and np.all(np.diff(t) >= 0)
    gaps = np.diff(t) / 1e9
    # inter-arrivals exponential with mean 1/λ = 5 ms
    assert stats.kstest(gaps, "expon", args=(0, 1 / 200)).pvalue > 0.01
    # and the gaps are not all alike (not the fixed process)
    assert gaps.std() > 0.004


def test_rate_per_minute_is_the_same_process() -> None:
    a = from_dict(scenario({"process": "poisson", "rate": "1200/min"}))
    b = from_dict(scenario({"process": "poisson", "rate": "20/s"}))
    assert a.hash() == b.hash()
    assert a.short_flow_schedule(1).pairs() == b.short_flow_schedule(1).pairs()


def test_fixed_spacing_is_exact_from_start_to_stop() -> None:
    # 3/s: 1/3 s apart, from 2 s until before 5 s: 2, 2.333…, …, 4.666… (9 arrivals)
    sc = from_dict(scenario({"process": "fixed", "rate": "3/s"}, start="2s", stop="5s"))
    t = sc.short_flow_schedule(1).start_ns
    expected = [round(2e9 + k * 1e9 / 3) for k in range(9)]
    assert t.tolist() == expected


def test_sizes_and_rtts_drawn_per_flow_and_deterministic() -> None:
    kw = {
        "size": {"dist": "uniform", "min": "1KB", "max": "1MB"},
        "rtt": {"dist": "uniform", "min": "10ms", "max": "50ms"},
    }
    a = from_dict(scenario({"process": "poisson", "rate": "50/s"}, **kw)).short_flow_schedule(1)
    b = from_dict(scenario({"process": "poisson", "rate": "50/s"}, **kw)).short_flow_schedule(1)
    assert a.pairs() == b.pairs() and a.rtt_ns.tolist() == b.rtt_ns.tolist()
    assert stats.kstest(a.size_bytes, "uniform", args=(1000, 999_000)).pvalue > 0.01
    assert stats.kstest(a.rtt_ns, "uniform", args=(10e6, 40e6)).pvalue > 0.01
    other = from_dict({**scenario({"process": "poisson", "rate": "50/s"}, **kw), "seed": 8})
    assert other.short_flow_schedule(1).pairs() != a.pairs()


def test_resolved_form_has_the_process_not_the_draws() -> None:
    sc = from_dict(scenario({"process": "poisson", "rate": "20/s"}, label="web"))
    r = sc.resolved()
    assert [c["group"] for c in r["flows"]] == [0]  # no connection rows for short flows
    (a,) = r["arrivals"]
    assert (a["group"], a["process"], a["rate_per_s"]) == (1, "poisson", 20.0)
    assert (a["start_ns"], a["stop_ns"], a["size"], a["rtt"]) == (0, 100 * 10**9, 10_000, 20e6)
    faster = from_dict(scenario({"process": "poisson", "rate": "21/s"}, label="web"))
    assert faster.hash() != sc.hash()
    # the written form loads back to the same scenario
    assert from_dict(sc.to_dict()).hash() == sc.hash()


def test_scenario_without_arrivals_has_no_arrivals_key() -> None:
    sc = from_dict(
        {k: v for k, v in scenario({}).items() if k != "flows"}
        | {"flows": [{"cca": "cubic", "rtt": "20ms"}]}
    )
    assert "arrivals" not in sc.resolved() and "short_flows" not in sc.sim_json()


@pytest.mark.parametrize("process", ["poisson", "fixed"])
def test_sim_config_carries_the_schedule_as_arrays(process: str) -> None:
    import json

    sc = from_dict(scenario({"process": process, "rate": "20/s"}, duration="10s"))
    cfg = json.loads(sc.sim_json())
    assert "arrivals" not in cfg
    (sf,) = cfg["short_flows"]
    sch = sc.short_flow_schedule(1)
    assert sf["start_ns"] == sch.start_ns.tolist() and sf["size_bytes"] == [10_000] * len(sch)
    assert sf["rtt_ns"] == [20_000_000] * len(sch) and sf["cca"] == "reno"
