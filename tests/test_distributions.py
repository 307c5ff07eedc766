"""rtt/start/size as lists and distributions (issue 10 §2): the draws follow the stated
parameters (Kolmogorov–Smirnov against scipy's distributions), a seed gives the same draws,
entries draw independently, and the hash covers the distribution, not the draws."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from tcpfair.spec import SpecError, from_dict

N = 1000  # connections drawn (streams of one entry; at most 1024)
MS = 1_000_000


def scenario(rtt: Any, *, streams: int = N, seed: int = 7, **extra: Any) -> dict[str, Any]:
    return {
        "name": "d",
        "duration": "10s",
        "seed": seed,
        "bottleneck": {"rate": "100Mbit", "buffer": "100pkt"},
        "flows": [{"cca": "reno", "rtt": rtt, "streams": streams, **extra}],
        "measure": {"interval": "10s"},
    }


def rtts(data: dict[str, Any], entry: int = 0) -> np.ndarray:
    sc = from_dict(data)
    return np.array(sc.entry_values(entry)["rtt"], dtype=float)


def test_plain_value_resolves_as_before() -> None:
    sc = from_dict(scenario("20ms", streams=3))
    assert [c["rtt_ns"] for c in sc.resolved()["flows"]] == [20 * MS] * 3
    assert "distributions" not in sc.resolved()


def test_list_is_one_value_per_connection_cycled() -> None:
    sc = from_dict(scenario(["10ms", "20ms", "30ms"], streams=5))
    assert [c["rtt_ns"] for c in sc.resolved()["flows"]] == [v * MS for v in (10, 20, 30, 10, 20)]


def test_uniform_matches_its_parameters() -> None:
    x = rtts(scenario({"dist": "uniform", "min": "10ms", "max": "50ms"}))
    assert x.min() >= 10 * MS and x.max() <= 50 * MS
    assert stats.kstest(x, stats.uniform(10 * MS, 40 * MS).cdf).pvalue > 0.001


def test_normal_matches_its_parameters() -> None:
    x = rtts(scenario({"dist": "normal", "mean": "100ms", "sd": "10ms", "min": "1ms"}))
    assert stats.kstest(x, stats.norm(100 * MS, 10 * MS).cdf).pvalue > 0.001


def test_normal_is_clipped_at_min() -> None:
    x = rtts(scenario({"dist": "normal", "mean": "20ms", "sd": "20ms", "min": "10ms"}))
    assert x.min() == 10 * MS
    # P(X < 10 ms) = Φ(−0.5) = 0.3085 of the draws sit at min
    share = float((x == 10 * MS).mean())
    assert abs(share - stats.norm.cdf(-0.5)) < 4 * math.sqrt(0.31 * 0.69 / N)


def test_lognormal_mean_and_sd_are_those_of_the_value() -> None:
    x = rtts(scenario({"dist": "lognormal", "mean": "100ms", "sd": "50ms"}))
    s2 = math.log(1 + 0.25)
    dist = stats.lognorm(s=math.sqrt(s2), scale=100 * MS * math.exp(-s2 / 2))
    assert dist.mean() == pytest.approx(100 * MS) and dist.std() == pytest.approx(50 * MS)
    assert stats.kstest(x, dist.cdf).pvalue > 0.001


def test_pareto_has_the_stated_mean_and_shape() -> None:
    x = rtts(scenario({"dist": "pareto", "mean": "30ms", "shape": 3}))
    xm = 30 * MS * 2 / 3
    assert x.min() >= round(xm)
    assert stats.kstest(x, stats.pareto(b=3, scale=xm).cdf).pvalue > 0.001


def test_sizes_and_starts_draw_too() -> None:
    data = scenario(
        "20ms",
        streams=500,
        size={"dist": "uniform", "min": "1MB", "max": "2MB"},
        start={"dist": "uniform", "min": "0s", "max": "5s"},
    )
    sc = from_dict(data)
    conns = sc.resolved()["flows"]
    sizes = np.array([c["size_bytes"] for c in conns], dtype=float)
    starts = np.array([c["start_ns"] for c in conns], dtype=float)
    assert stats.kstest(sizes, stats.uniform(1e6, 1e6).cdf).pvalue > 0.001
    assert stats.kstest(starts, stats.uniform(0, 5e9).cdf).pvalue > 0.001
    # rtt, start and size of one entry draw from separate streams: not correlated
    assert abs(np.corrcoef(sizes, starts)[0, 1]) < 4 / math.sqrt(500)


def test_fixed_seed_same_draws_other_seed_other_draws() -> None:
    d = {"dist": "uniform", "min": "10ms", "max": "50ms"}
    a, b = rtts(scenario(d, streams=50)), rtts(scenario(d, streams=50))
    assert (a == b).all()
    c = rtts(scenario(d, streams=50, seed=8))
    assert (a != c).mean() > 0.9


def test_entries_draw_independently() -> None:
    d = {"dist": "uniform", "min": "10ms", "max": "50ms"}
    data = scenario(d, streams=500)
    data["flows"].append(dict(data["flows"][0]))
    x0, x1 = rtts(data, 0), rtts(data, 1)
    assert (x0 != x1).mean() > 0.9
    assert abs(np.corrcoef(x0, x1)[0, 1]) < 4 / math.sqrt(500)
    assert stats.ks_2samp(x0, x1).pvalue > 0.001  # same distribution


def test_hash_covers_the_distribution_not_the_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    from tcpfair import distributions

    d = {"dist": "normal", "mean": "40ms", "sd": "5ms"}
    sc = from_dict(scenario(d, streams=4))
    h = sc.hash()
    assert sc.resolved()["distributions"] == {
        "0": {"rtt": {"dist": "normal", "mean": 40 * MS, "sd": 5 * MS, "min": 1, "max": 60 * 10**9}}
    }
    drawn = sc.entry_values(0)["rtt"]
    # other draws from the same distribution (another generator): the same hash
    monkeypatch.setattr(
        distributions, "rng_for", lambda seed, entry, key: np.random.default_rng(12345)
    )
    monkeypatch.setattr("tcpfair.spec.rng_for", distributions.rng_for)
    assert from_dict(scenario(d, streams=4)).entry_values(0)["rtt"] != drawn
    assert from_dict(scenario(d, streams=4)).hash() == h
    monkeypatch.undo()
    assert from_dict(scenario({**d, "sd": "6ms"}, streams=4)).hash() != h


def test_written_form_reloads_to_the_same_scenario() -> None:
    from tcpfair.spec import Scenario

    data = scenario(
        {"dist": "pareto", "mean": "30ms", "shape": 2.5},
        streams=3,
        size=["1MB", "2MB"],
    )
    sc = from_dict(data)
    again = from_dict(sc.to_dict())
    assert isinstance(again, Scenario) and again.hash() == sc.hash()
    assert again.resolved() == sc.resolved()


def test_sim_config_leaves_out_what_the_simulator_does_not_read() -> None:
    import json

    sc = from_dict(scenario({"dist": "uniform", "min": "10ms", "max": "30ms"}, streams=2))
    cfg = json.loads(sc.sim_json())
    assert "distributions" not in cfg and "flows" not in cfg["measure"]
    assert [c["rtt_ns"] for c in cfg["flows"]] == sc.entry_values(0)["rtt"]


def test_a_drawn_start_after_the_run_is_an_error_naming_the_entry() -> None:
    data = scenario("20ms", streams=20, start={"dist": "uniform", "min": "5s", "max": "30s"})
    with pytest.raises(SpecError, match=r"flows\.0\.start: .*drawn.*not before the end"):
        from_dict(data)


def test_sim_run_records_each_connections_drawn_values() -> None:
    from tcpfair.backends.sim import SimBackend

    data = scenario(["10ms", "30ms"], streams=2, size=["200KB", "400KB"])
    data["duration"] = "3s"
    data["measure"] = {"interval": "1s"}
    res = SimBackend().run(from_dict(data))
    assert list(res.flows["rtt_s"]) == [0.01, 0.03]
    assert list(res.flows["size_bytes"]) == [200_000.0, 400_000.0]
    # a finite transfer delivers its size
    assert list(res.flows["bytes"]) == [200_000, 400_000]


CDF = [["10KB", 0.0], ["100KB", 0.5], ["1MB", 1.0]]


def test_empirical_cdf_draws_follow_the_table() -> None:
    sc = from_dict(scenario("20ms", size={"cdf": CDF}))
    x = np.array(sc.entry_values(0)["size"], dtype=float)
    xs, ps = [1e4, 1e5, 1e6], [0.0, 0.5, 1.0]
    assert x.min() >= 1e4 and x.max() <= 1e6
    assert stats.kstest(x, lambda v: np.interp(v, xs, ps)).pvalue > 0.001
    assert sc.resolved()["distributions"]["0"]["size"] == {
        "cdf": [[10_000, 0.0], [100_000, 0.5], [1_000_000, 1.0]]
    }


def test_cdf_file_is_read_beside_the_scenario_and_hashed_by_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tcpfair.spec import load_scenario

    (tmp_path / "web.csv").write_text("# size, P(X <= size)\n10KB, 0\n100KB, 0.5\n1MB, 1\n")
    data = scenario("20ms", streams=4, size={"cdf": "web.csv"})
    lines = [
        'name = "d"',
        'duration = "10s"',
        "seed = 7",
        "[bottleneck]",
        'rate = "100Mbit"',
        'buffer = "100pkt"',
        "[[flows]]",
        'cca = "reno"',
        'rtt = "20ms"',
        "streams = 4",
        'size = { cdf = "web.csv" }',
        "[measure]",
        'interval = "10s"',
    ]
    (tmp_path / "s.toml").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(Path(__file__).parent)  # not the scenario's folder
    from_file = load_scenario(tmp_path / "s.toml")
    inline = from_dict({**data, "flows": [{**data["flows"][0], "size": {"cdf": CDF}}]})
    assert from_file.hash() == inline.hash()
    assert from_file.entry_values(0)["size"] == inline.entry_values(0)["size"]
    # the written form carries the table, so it reloads without the file
    assert from_dict(from_file.to_dict()).hash() == inline.hash()
