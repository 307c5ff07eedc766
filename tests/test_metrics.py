"""tcpfair.metrics against hand-computed values, published examples and invariants."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tcpfair import metrics as m
from tcpfair.result import RunResult, WindowError

# ---------------------------------------------------------------------------- Jain's index


def test_jain_lab10_worked_example() -> None:
    # Lab 10 §1.2: 5, 3 and 1 Gbit/s on a 9 Gbit/s bottleneck → (9)² / (3·35) = 0.7714
    assert m.jain([5e9, 3e9, 1e9]) == pytest.approx(81 / 105, abs=1e-12)
    assert round(m.jain([5, 3, 1]), 4) == 0.7714


@pytest.mark.parametrize("r", [1.0, 1.5, 2.0, 10.0, 0.1, 1000.0])
def test_jain_two_flows_with_ratio_r(r: float) -> None:
    expected = (1 + r) ** 2 / (2 * (1 + r * r))
    assert m.jain([1.0, r]) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("k", "n"), [(1, 1), (1, 2), (1, 8), (3, 4), (5, 10), (8, 8)])
def test_jain_k_equal_of_n_is_k_over_n(k: int, n: int) -> None:
    x = [7.5] * k + [0.0] * (n - k)
    assert m.jain(x) == pytest.approx(k / n, rel=1e-12)


@pytest.mark.parametrize("c", [1e-6, 8.0, 1e9, 123.456])
def test_jain_scale_invariant(c: float) -> None:
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
    assert m.jain(c * x) == pytest.approx(m.jain(x), rel=1e-12)


def test_jain_bounds_and_relation_to_cov() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 20))
        x = rng.exponential(1.0, n)
        j = m.jain(x)
        assert 1 / n - 1e-12 <= j <= 1 + 1e-12
        # J = 1 / (1 + c²) with the population coefficient of variation (Jain et al. 1984)
        assert j == pytest.approx(1 / (1 + m.cov(x) ** 2), rel=1e-9)


def test_jain_one_flow_all_zero_and_zero_among_nonzero() -> None:
    assert m.jain([42.0]) == 1.0
    assert math.isnan(m.jain([0.0, 0.0, 0.0]))
    assert m.jain([1.0, 0.0]) == pytest.approx(0.5)
    assert m.jain([2.0, 2.0, 0.0]) == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ([1.0, float("nan")], "value 1 is NaN"),
        ([1.0, -2.0], "non-negative; value 1 is -2"),
        ([float("inf"), 1.0], "finite; value 0 is inf"),
        ([], "no flows"),
        ([[1.0, 2.0]], "1-D"),
        (["a", "b"], "must be numbers"),
    ],
)
def test_bad_input_raises_value_error_with_clear_message(bad: object, message: str) -> None:
    for fn in (m.jain, m.cov, m.min_max_ratio, m.max_min_ratio, m.proportional_fairness_utility):
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            fn(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- ratios etc.


def test_ratios() -> None:
    x = [5.0, 3.0, 1.0]
    assert m.min_max_ratio(x) == pytest.approx(0.2)
    assert m.max_min_ratio(x) == pytest.approx(5.0)
    assert m.flow_ratio(x, 0, 1) == pytest.approx(5 / 3)
    assert m.flow_ratio(x, 2, 0) == pytest.approx(0.2)
    assert m.flow_ratio(x, -1, 0) == pytest.approx(0.2)  # Python indexing from the end
    # edge cases
    assert m.min_max_ratio([4.0]) == 1.0 and m.max_min_ratio([4.0]) == 1.0
    assert m.min_max_ratio([3.0, 0.0]) == 0.0
    assert m.max_min_ratio([3.0, 0.0]) == math.inf
    assert math.isnan(m.min_max_ratio([0.0, 0.0])) and math.isnan(m.max_min_ratio([0.0, 0.0]))
    assert m.flow_ratio([3.0, 0.0], 0, 1) == math.inf
    assert math.isnan(m.flow_ratio([0.0, 0.0], 0, 1))
    with pytest.raises(ValueError, match="flow index 3 out of range for 3 flows"):
        m.flow_ratio(x, 3, 0)


def test_utilization() -> None:
    assert m.utilization([40e6, 50e6], 100e6) == pytest.approx(0.9)
    assert m.utilization([0.0, 0.0], 100e6) == 0.0
    for cap in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="capacity must be a positive finite rate"):
            m.utilization([1.0], cap)


def test_cov() -> None:
    # population std of (1, 3) is 1, mean 2 → 0.5
    assert m.cov([1.0, 3.0]) == pytest.approx(0.5)
    assert m.cov([9.0]) == 0.0
    assert math.isnan(m.cov([0.0, 0.0]))


def test_proportional_fairness_utility() -> None:
    assert m.proportional_fairness_utility([1.0, math.e, math.e**2]) == pytest.approx(3.0)
    assert m.proportional_fairness_utility([5.0, 0.0]) == -math.inf
    # for a fixed sum, the equal split maximizes Σ log x (Kelly 1997)
    assert m.proportional_fairness_utility([5.0, 5.0]) > m.proportional_fairness_utility([6.0, 4.0])


def test_max_min_fair_share_water_filling() -> None:
    # C = 10, demands 2, 4, ∞, ∞: flow 0 gets 2, flow 1 gets min(4, 8/3)=8/3 … → 2, 8/3, 8/3, 8/3
    a = m.max_min_fair_share(10.0, [2.0, 4.0, math.inf, math.inf])
    assert a == pytest.approx([2.0, 8 / 3, 8 / 3, 8 / 3])
    # demands 1, 2, ∞ on 10: 1, 2, 7
    assert m.max_min_fair_share(10.0, [1.0, 2.0, math.inf]) == pytest.approx([1.0, 2.0, 7.0])
    # all demands satisfied when they fit
    assert m.max_min_fair_share(10.0, [1.0, 2.0]) == pytest.approx([1.0, 2.0])
    # greedy flows: equal split
    assert m.max_min_fair_share(9.0, [math.inf] * 3) == pytest.approx([3.0, 3.0, 3.0])


def test_is_max_min_fair() -> None:
    assert m.is_max_min_fair([50e6, 50e6], 100e6)
    assert m.is_max_min_fair([48e6, 51e6], 100e6, rel_tol=0.05)
    assert not m.is_max_min_fair([70e6, 30e6], 100e6)
    # a demand-limited flow may get less; the other then gets the rest
    assert m.is_max_min_fair([10e6, 90e6], 100e6, demands=[10e6, math.inf])
    assert not m.is_max_min_fair([10e6, 50e6], 100e6, demands=[10e6, math.inf])  # link not filled
    with pytest.raises(ValueError, match="1 demands for 2 flows"):
        m.is_max_min_fair([1.0, 1.0], 2.0, demands=[1.0])


# ---------------------------------------------------------------------------- per interval


def test_jain_series_rows_and_inactive_flows() -> None:
    mat = np.array(
        [
            [5.0, 3.0, 1.0],
            [1.0, 1.0, 1.0],
            [2.0, np.nan, 2.0],  # flow 1 not active: J over the two others
            [0.0, 0.0, 0.0],  # nothing delivered: undefined
            [np.nan, np.nan, np.nan],
        ]
    )
    out = m.jain_series(mat)
    assert out[0] == pytest.approx(81 / 105)
    assert out[1] == pytest.approx(1.0)
    assert out[2] == pytest.approx(1.0)
    assert math.isnan(out[3]) and math.isnan(out[4])
    with pytest.raises(ValueError, match="2-D"):
        m.jain_series([1.0, 2.0])
    with pytest.raises(ValueError, match="non-negative"):
        m.jain_series([[1.0, -1.0]])


# ---------------------------------------------------------------------------- repeats


@pytest.mark.parametrize(
    ("df", "t975"),
    # two-sided 95 % critical values of Student's t (standard tables, e.g. NIST/SEMATECH 1.3.6.7.2)
    [
        (1, 12.706204736),
        (2, 4.302652730),
        (3, 3.182446305),
        (4, 2.776445105),
        (5, 2.570581836),
        (9, 2.262157163),
        (10, 2.228138852),
        (30, 2.042272456),
        (100, 1.983971519),
    ],
)
def test_t_quantile_matches_tables(df: int, t975: float) -> None:
    assert m.t_quantile(0.975, df) == pytest.approx(t975, abs=1e-8)
    assert m.t_quantile(0.025, df) == pytest.approx(-t975, abs=1e-8)
    assert m.t_cdf(t975, df) == pytest.approx(0.975, abs=1e-10)


def test_t_quantile_other_levels_and_limits() -> None:
    assert m.t_quantile(0.995, 5) == pytest.approx(4.032142984, abs=1e-8)
    assert m.t_quantile(0.95, 10) == pytest.approx(1.812461123, abs=1e-8)
    assert m.t_quantile(0.5, 3) == 0.0
    # large df tends to the normal quantile 1.959964
    assert m.t_quantile(0.975, 100000) == pytest.approx(1.959963985, abs=1e-4)
    with pytest.raises(ValueError, match="positive integer"):
        m.t_cdf(1.0, 0)
    with pytest.raises(ValueError, match=r"in \(0, 1\)"):
        m.t_quantile(1.0, 3)


def test_repeat_stats_by_hand() -> None:
    # values 1..5: mean 3, s = sqrt(2.5), half width t(0.975,4)·s/√5
    st = m.repeat_stats([1.0, 2.0, 3.0, 4.0, 5.0])
    s = math.sqrt(2.5)
    half = 2.776445105 * s / math.sqrt(5)
    assert st.n == 5 and st.mean == pytest.approx(3.0) and st.std == pytest.approx(s)
    assert st.half_width == pytest.approx(half, rel=1e-9)
    assert (st.ci_low, st.ci_high) == pytest.approx((3 - half, 3 + half), rel=1e-9)


def test_repeat_stats_edge_cases() -> None:
    one = m.repeat_stats([0.8])
    assert one.n == 1 and one.mean == 0.8 and math.isnan(one.std) and math.isnan(one.half_width)
    same = m.repeat_stats([0.9, 0.9, 0.9])
    assert same.std == 0.0 and same.ci_low == same.ci_high == pytest.approx(0.9)
    with pytest.raises(ValueError, match="repeat value 1 is nan; drop failed runs"):
        m.repeat_stats([0.9, float("nan")])
    with pytest.raises(ValueError, match="non-empty"):
        m.repeat_stats([])
    with pytest.raises(ValueError, match="confidence"):
        m.repeat_stats([1.0, 2.0], confidence=95)


def test_repeat_stats_coverage_of_normal_samples() -> None:
    # the 95 % t interval covers the true mean in ~95 % of samples of n = 5 (binomial check:
    # 2000 trials, expected 1900, σ ≈ 9.7 → [1860, 1940] is a ±4σ band)
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(2000):
        st = m.repeat_stats(rng.normal(10.0, 2.0, 5))
        covered += st.ci_low <= 10.0 <= st.ci_high
    assert 1860 <= covered <= 1940


# ---------------------------------------------------------------------------- RunResult


def _result(rows: list[tuple[int, float, float, int]]) -> RunResult:
    flows = pd.DataFrame(
        {
            "flow": [0, 1],
            "group": [0, 1],
            "label": ["a", "b"],
            "cca": ["reno", "cubic"],
            "rtt_s": [np.nan] * 2,
            "start_s": [0.0] * 2,
            "bytes": [0, 0],
            "retransmits": [0.0, np.nan],
            "mean_rtt_s": [np.nan] * 2,
        }
    )
    samples = pd.DataFrame(rows, columns=["flow", "t_s", "dt_s", "bytes"])
    samples["throughput_bps"] = samples["bytes"] * 8 / samples["dt_s"]
    for c in ("cwnd_bytes", "srtt_s", "retransmits"):
        samples[c] = np.nan
    return RunResult(
        flows=flows, samples=samples, meta={"window": [0.0, 4.0], "capacity_bps": 1000.0}
    )


def test_runresult_metrics_agree_with_the_metric_functions() -> None:
    # flow 0 on the exact 1 s grid; flow 1 reports 3 ms late (like a second iperf3 stream)
    rows = [
        (0, 1.0, 1.0, 50),
        (0, 2.0, 1.0, 50),
        (0, 3.0, 1.0, 40),
        (0, 4.0, 1.0, 40),
        (1, 1.003, 1.003, 10),
        (1, 2.003, 1.0, 30),
        (1, 3.003, 1.0, 40),
        (1, 4.003, 1.0, 20),
    ]
    res = _result(rows)
    # window 1–3 s keeps the intervals (1, 2] and (2, 3] (midpoints 1.5 and 2.5) of both flows
    met = res.metrics((1.0, 3.0))
    x0, x1 = (50 + 40) * 8 / 2.0, (30 + 40) * 8 / 2.0
    assert met["throughput_bps"] == {"0": pytest.approx(x0), "1": pytest.approx(x1)}
    assert met["jfi"] == pytest.approx(m.jain([x0, x1]))
    assert met["min_max_ratio"] == pytest.approx(x1 / x0)
    assert met["utilization"] == pytest.approx((x0 + x1) / 1000.0)
    assert met["retransmits"] == 0
    mat = res.interval_throughputs((1.0, 3.0))
    assert list(mat.index) == [2.0, 3.0]
    assert mat.to_numpy() == pytest.approx(np.array([[400.0, 240.0], [320.0, 320.0]]))
    per = [m.jain([400.0, 240.0]), m.jain([320.0, 320.0])]
    assert met["jfi_per_interval_mean"] == pytest.approx(sum(per) / 2)
    # whole run by default (meta window 0–4 s)
    assert res.metrics()["n_flows"] == 2 and len(res.interval_throughputs()) == 4


def test_runresult_metrics_when_nothing_was_delivered() -> None:
    res = _result([(0, 1.0, 1.0, 0), (1, 1.0, 1.0, 0)])
    met = res.metrics()
    assert math.isnan(met["jfi"]) and math.isnan(met["min_max_ratio"]) and met["sum_bps"] == 0.0
    assert math.isnan(met["jfi_per_interval_mean"])


def _with_retransmits(per_interval: list[float], run_totals: list[float]) -> RunResult:
    """Two flows on a 1 s grid over 0–4 s; flow k retransmits per_interval[k]·t in (t-1, t]."""
    rows = [(f, float(t), 1.0, 100) for t in (1, 2, 3, 4) for f in (0, 1)]
    res = _result(rows)
    res.samples["retransmits"] = [per_interval[f] * t for t in (1, 2, 3, 4) for f in (0, 1)]
    res.flows["retransmits"] = run_totals
    return res


def test_retransmits_are_counted_inside_the_window() -> None:
    # flow 0: 1, 2, 3, 4 per interval; flow 1: 10, 20, 30, 40; window 2–4 s keeps (2,3], (3,4]
    res = _with_retransmits([1.0, 10.0], [10.0, 100.0])
    met = res.metrics((2.0, 4.0))
    assert met["retransmits"] == (3 + 4) + (30 + 40)
    assert met["retransmits_run"] == 110
    assert met["retransmits_whole_run_flows"] == []
    table = res.flow_retransmits((2.0, 4.0))
    assert list(table["retransmits"]) == [7.0, 70.0]
    assert not table["whole_run"].any()


def test_a_flow_without_per_interval_counts_shows_its_whole_run_total_labelled() -> None:
    res = _with_retransmits([1.0, 10.0], [10.0, 100.0])
    res.samples.loc[res.samples["flow"] == 1, "retransmits"] = np.nan
    table = res.flow_retransmits((2.0, 4.0))
    assert list(table["retransmits"]) == [7.0, 100.0]
    assert list(table["whole_run"]) == [False, True]
    assert res.metrics((2.0, 4.0))["retransmits_whole_run_flows"] == [1]


@pytest.mark.parametrize(
    ("window", "message"),
    [
        ((120.0, 300.0), "window 120–300 s starts after the data ends (the samples cover 0–4 s)"),
        ((1.0, 30.0), "window 1–30 s ends after the data (the samples cover 0–4 s)"),
        ((1.2, 1.4), "window 1.2–1.4 s holds no sampling interval"),
        ((3.0, 2.0), "window 3–2 s: its start must be before its end"),
        ((float("nan"), 2.0), "the ends are finite seconds >= 0"),
        ((-1.0, 2.0), "the ends are finite seconds >= 0"),
    ],
)
def test_a_window_outside_the_data_is_an_error_not_nan(
    window: tuple[float, float], message: str
) -> None:
    res = _with_retransmits([1.0, 10.0], [10.0, 100.0])
    for call in (res.metrics, res.flow_throughputs, res.window_samples, res.flow_retransmits):
        with pytest.raises(WindowError) as e:
            call(window)
        assert message in str(e.value)


def test_a_window_may_pass_the_data_by_half_an_interval() -> None:
    # real tools' intervals end a few ms late; up to half an interval keeps the same samples
    res = _with_retransmits([1.0, 10.0], [10.0, 100.0])
    assert res.metrics((0.0, 4.5))["throughput_bps"] == res.metrics((0.0, 4.0))["throughput_bps"]
    with pytest.raises(WindowError):
        res.metrics((0.0, 4.51))


def test_the_run_table_counts_retransmits_inside_its_window() -> None:
    from rich.console import Console

    from tcpfair.report import print_run_summary

    res = _with_retransmits([1.0, 10.0], [10.0, 100.0])
    res.meta["window"] = [2.0, 4.0]
    console = Console(record=True, width=120)
    print_run_summary(res, title="t", console=console)
    text = console.export_text()
    assert "window 2–4 s" in text
    rows = [ln.split("│") for ln in text.splitlines() if ln.startswith("│")]
    assert [r[-2].strip() for r in rows] == ["7", "70"]  # (3+4)·1 and (3+4)·10
    assert "whole run (0–4 s): 110 retransmits" in text
    # a flow without per-interval counts shows its run total, and the column says so
    res.samples.loc[res.samples["flow"] == 1, "retransmits"] = np.nan
    console = Console(record=True, width=120)
    print_run_summary(res, title="t", console=console)
    text = console.export_text()
    assert "retransmits (run)" in text
    rows = [ln.split("│") for ln in text.splitlines() if ln.startswith("│")]
    assert [r[-2].strip() for r in rows] == ["7", "100"]


def test_a_flow_with_no_sample_in_the_window_retransmitted_nothing_there() -> None:
    res = _with_retransmits([1.0, 10.0], [10.0, 100.0])
    res.samples = res.samples[~((res.samples["flow"] == 1) & (res.samples["t_s"] > 2))]
    table = res.flow_retransmits((2.0, 4.0))  # flow 1 stopped reporting at 2 s
    assert list(table["retransmits"]) == [7.0, 0.0] and not table["whole_run"].any()


@pytest.mark.parametrize(
    ("rate", "duration", "note"),
    [("1kbit", "20s", True), ("100kbit", "20s", True), ("1Mbit", "20s", False)],
)
def test_the_run_table_says_when_its_window_is_a_few_packets_long(
    rate: str, duration: str, note: bool
) -> None:
    """Bytes count when a packet is delivered: a 10 s window at 1 kbit/s holds 10 kbit of
    capacity and one 1500 B packet is 12 kbit — 120 % of the link, and the table would say
    so without a word. The note appears below 100 packet times (one packet > 1 % of the
    capacity): 1 kbit/s × 10 s = 0.833 of them, 100 kbit/s 83.3, 1 Mbit/s 833."""
    from rich.console import Console

    from tcpfair.backends.sim import SimBackend
    from tcpfair.report import print_run_summary
    from tcpfair.spec import from_dict

    data = {
        "name": "coarse",
        "duration": duration,
        "bottleneck": {"rate": rate, "buffer": "3000B"},
        "flows": [{"cca": "reno", "rtt": "20ms"}, {"cca": "reno", "rtt": "20ms"}],
        "measure": {"from": "10s"},
    }
    res = SimBackend().run(from_dict(data))
    console = Console(record=True, width=300)
    print_run_summary(res, title="t", console=console)
    lines = [ln for ln in console.export_text().splitlines() if ln.startswith("note: the window")]
    if not note:
        assert lines == []
        return
    packets = 10 * res.meta["capacity_bps"] / (8 * 1500)
    step = 8 * 1500 / 10
    assert len(lines) == 1 and f"holds {packets:.3g} packet times" in lines[0]
    assert f"{100 * step / res.meta['capacity_bps']:.3g} % of the link" in lines[0]
