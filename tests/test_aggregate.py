"""Aggregation over repeats against hand-computed means, standard deviations and t-based
confidence intervals; pivots in numeric axis order."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tcpfair.aggregate import aggregate, axis_numeric, mean_std_ci, pivot


def test_mean_std_ci_by_hand() -> None:
    # x = 0.9 0.8 0.7 1.0 0.6: mean 0.8, Σ(x−x̄)² = 0.1, s = √(0.1/4) = 0.158114,
    # t(0.975, 4) = 2.776 (t table), half-width = 2.776 · 0.158114 / √5 = 0.19632
    n, mean, std, half = mean_std_ci([0.9, 0.8, 0.7, 1.0, 0.6])
    assert n == 5 and mean == pytest.approx(0.8, abs=1e-15)
    assert std == pytest.approx(math.sqrt(0.025), rel=1e-12)
    assert half == pytest.approx(2.776 * math.sqrt(0.025) / math.sqrt(5), rel=2e-4)
    # two repeats: t(0.975, 1) = 12.706; s = |a−b|/√2
    n, mean, std, half = mean_std_ci([1.0, 3.0])
    assert (n, mean) == (2, 2.0) and std == pytest.approx(math.sqrt(2), rel=1e-12)
    assert half == pytest.approx(12.706 * math.sqrt(2) / math.sqrt(2), rel=1e-4)
    # 90 % with three repeats: t(0.95, 2) = 2.920
    _, _, std, half = mean_std_ci([2.0, 4.0, 9.0], level=0.90)
    assert half == pytest.approx(2.920 * std / math.sqrt(3), rel=2e-4)


def test_mean_std_ci_edge_cases() -> None:
    assert mean_std_ci([0.7])[:2] == (1, 0.7) and all(math.isnan(v) for v in mean_std_ci([0.7])[2:])
    n, mean, _, _ = mean_std_ci([0.5, float("nan"), float("inf"), 0.7])
    assert n == 2 and mean == pytest.approx(0.6)
    assert mean_std_ci([])[0] == 0


def tidy() -> pd.DataFrame:
    rows = []
    jfi = {
        ("25ms", "0.2bdp"): [0.9, 0.8, 0.7],
        ("100ms", "0.2bdp"): [0.6, 0.6, 0.9],
        ("25ms", "1bdp"): [1.0, 0.98, 0.99],
        ("100ms", "1bdp"): [0.5, 0.7, 0.6],
    }
    for (rtt, buf), vals in jfi.items():
        for r, v in enumerate(vals):
            rows.append(
                {
                    "flows.1.rtt": rtt,
                    "bottleneck.buffer": buf,
                    "repeat": r,
                    "status": "done",
                    "jfi": v,
                    "ratio": 2 * v,
                    "utilization": 0.9,
                    "thr_g0_bps": 1e6 * (r + 1),
                }
            )
    rows.append(
        {
            "flows.1.rtt": "25ms",
            "bottleneck.buffer": "0.2bdp",
            "repeat": 3,
            "status": "failed",
            "jfi": np.nan,
            "ratio": np.nan,
            "utilization": np.nan,
            "thr_g0_bps": np.nan,
        }
    )
    return pd.DataFrame(rows)


def test_aggregate_per_point() -> None:
    agg = aggregate(tidy(), ["flows.1.rtt", "bottleneck.buffer"])
    assert set(agg["metric"]) == {"jfi", "ratio", "utilization", "thr_g0_bps"}
    row = agg[
        (agg["metric"] == "jfi")
        & (agg["flows.1.rtt"] == "100ms")
        & (agg["bottleneck.buffer"] == "0.2bdp")
    ]
    row = row.iloc[0]
    # 0.6 0.6 0.9: mean 0.7, s = √((0.01+0.01+0.04)/2) = √0.03, t(0.975, 2) = 4.303
    assert row["n"] == 3 and row["mean"] == pytest.approx(0.7)
    assert row["std"] == pytest.approx(math.sqrt(0.03))
    assert row["ci"] == pytest.approx(4.303 * math.sqrt(0.03) / math.sqrt(3), rel=1e-4)
    assert row["lo"] == pytest.approx(0.7 - row["ci"]) and row["hi"] == pytest.approx(
        0.7 + row["ci"]
    )
    # the failed fourth run does not count
    first = agg[
        (agg["metric"] == "jfi")
        & (agg["flows.1.rtt"] == "25ms")
        & (agg["bottleneck.buffer"] == "0.2bdp")
    ]
    assert first.iloc[0]["n"] == 3 and first.iloc[0]["mean"] == pytest.approx(0.8)
    thr = agg[agg["metric"] == "thr_g0_bps"]
    assert (thr["mean"] == 2e6).all() and thr["std"].to_numpy() == pytest.approx([1e6] * 4)
    assert (agg[agg["metric"] == "utilization"]["std"] == 0).all()


def test_pivot_orders_quantities_numerically_and_filters_other_axes() -> None:
    t = tidy()
    t2 = pd.concat([t.assign(cca="reno"), t.assign(cca="cubic", jfi=t["jfi"] / 2)])
    agg = aggregate(t2, ["cca", "flows.1.rtt", "bottleneck.buffer"], ["jfi"])
    with pytest.raises(ValueError, match="several points per"):
        pivot(agg, "jfi", "flows.1.rtt", "bottleneck.buffer")
    p = pivot(agg, "jfi", "flows.1.rtt", "bottleneck.buffer", where={"cca": "cubic"})
    assert list(p.columns) == ["25ms", "100ms"]  # not string order ("100ms" < "25ms")
    assert list(p.index) == ["0.2bdp", "1bdp"]
    assert p.loc["1bdp", "100ms"] == pytest.approx(0.6 / 2)
    ci = pivot(agg, "jfi", "flows.1.rtt", "bottleneck.buffer", stat="ci", where={"cca": "reno"})
    assert ci.loc["0.2bdp", "25ms"] == pytest.approx(4.303 * 0.1 / math.sqrt(3), rel=1e-4)


def test_axis_numeric() -> None:
    assert axis_numeric(["25ms", "100ms"]) == ([25.0, 100.0], "ms")
    assert axis_numeric(["0.2bdp", "1bdp"]) == ([0.2, 1.0], "bdp")
    assert axis_numeric([1, 2.5]) == ([1.0, 2.5], "")
    assert axis_numeric(["25ms", "1s"]) == (None, "")  # mixed units: categorical
    assert axis_numeric(["reno", "cubic"]) == (None, "")
