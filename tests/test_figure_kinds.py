"""Sweep figure kinds of issue 12 §1: box plots per point, per-flow bars, CDFs, CI bands on
per-run values, one colour per algorithm, and the CSV beside every figure.

Values are checked against hand-computed numbers on small made-up tables (the CI of two
values is x̄ ± t₀.₉₇₅,₁·s/√2 with t₀.₉₇₅,₁ = 12.706204736174698) and, for the CLI, against
the runs' own files."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tcpfair import surfaces as sf
from tcpfair.aggregate import aggregate
from tcpfair.cli import cli
from tcpfair.result import RunResult

T975_1 = 12.706204736174698  # Student t, 97.5 % quantile, 1 degree of freedom


def _table() -> pd.DataFrame:
    """Two points (rtt 20ms, 40ms) × two repeats, made up; ratio = thr_g1 / thr_g0 per run."""
    thr0 = [10e6, 1e6, 10e6, 12e6]
    thr1 = [1e6, 10e6, 5e6, 5e6]
    return pd.DataFrame(
        {
            "status": "done",
            "run_hash": ["a", "b", "c", "d"],
            "repeat": [0, 1, 0, 1],
            "flows.1.rtt": ["20ms", "20ms", "40ms", "40ms"],
            "thr_g0_bps": thr0,
            "thr_g1_bps": thr1,
            "ratio": [b / a for a, b in zip(thr0, thr1, strict=True)],
            "utilization": [0.5, 0.6, 0.7, 0.8],
        }
    )


def test_ratio_ci_comes_from_the_per_run_ratios(tmp_path: Path) -> None:
    """At 20 ms the runs' ratios are 0.1 and 10: the plotted mean is 5.05 with half-width
    t·s/√2 = 12.706… × 4.95, not the ratio of the mean throughputs (11/11 = 1)."""
    t = _table()
    agg = aggregate(t, ["flows.1.rtt"], ["ratio"])
    sf.line_figure(agg, "ratio", "flows.1.rtt", tmp_path, formats=["png"])
    csv = pd.read_csv(tmp_path / "ratio-vs-flows.1.rtt.csv").set_index("flows.1.rtt")
    half = T975_1 * 4.95
    assert csv.loc["20ms", "mean"] == pytest.approx(5.05, rel=1e-12)
    assert csv.loc["20ms", "lo"] == pytest.approx(5.05 - half, rel=1e-12)
    assert csv.loc["20ms", "hi"] == pytest.approx(5.05 + half, rel=1e-12)
    assert csv.loc["40ms", "mean"] == pytest.approx((0.5 + 5 / 12) / 2, rel=1e-12)


def test_box_data_is_the_per_run_values_in_display_units(tmp_path: Path) -> None:
    t = _table()
    paths = sf.box_figure(
        t, ["flows.1.rtt"], "utilization", "flows.1.rtt", tmp_path, formats=["png"]
    )
    assert sorted(p.name for p in paths) == [
        "utilization-box-flows.1.rtt.csv",
        "utilization-box-flows.1.rtt.png",
    ]
    csv = pd.read_csv(tmp_path / "utilization-box-flows.1.rtt.csv")
    assert list(csv.columns) == ["flows.1.rtt", "repeat", "utilization (%)"]
    assert csv["utilization (%)"].tolist() == pytest.approx([50.0, 60.0, 70.0, 80.0])


def test_box_data_leaves_out_unfinished_runs_and_non_finite_values() -> None:
    t = _table()
    t.loc[0, "status"] = "failed"
    t.loc[3, "ratio"] = math.inf
    d = sf.box_data(t, ["flows.1.rtt"], "ratio", "flows.1.rtt")
    assert d["value"].tolist() == pytest.approx([10.0, 0.5])


def test_bars_are_mean_and_ci_of_each_flow_over_the_repeats(tmp_path: Path) -> None:
    t = _table()
    d = sf.bars_data(t, ["flows.1.rtt"], "flows.1.rtt", labels={0: "reno", 1: "cubic"})
    row = d[(d["flows.1.rtt"] == "40ms") & (d["flow"] == "reno")].iloc[0]
    # thr_g0 at 40 ms: 10 and 12 Mbit/s -> mean 11, s = √2, half-width t·s/√2 = t
    assert row["mean"] == pytest.approx(11.0, rel=1e-12)
    assert row["hi"] - row["mean"] == pytest.approx(T975_1, rel=1e-12)
    assert row["n"] == 2
    sf.bars_figure(t, ["flows.1.rtt"], "flows.1.rtt", tmp_path, formats=["png"])
    csv = pd.read_csv(tmp_path / "throughput-bars-flows.1.rtt.csv")
    assert set(csv["flow"]) == {"flow 1", "flow 2"}
    assert "mean (Mbit/s)" in csv.columns


def test_ecdf_by_hand() -> None:
    v, f = sf.ecdf([3.0, 1.0, float("nan"), 2.0])
    assert v.tolist() == [1.0, 2.0, 3.0]
    assert f.tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])
    d = sf.cdf_data(pd.DataFrame({"curve": ["a", "b", "a"], "value": [5.0, 1.0, 4.0]}))
    assert d[d["curve"] == "a"]["F"].tolist() == [0.5, 1.0]


def test_flow_bars_take_the_algorithms_colour_unless_two_flows_share_one() -> None:
    c = sf.flow_colours(["flow 1 (reno)", "flow 2 (cubic)"])
    assert c == {"flow 1 (reno)": "#1f77b4", "flow 2 (cubic)": "#ff7f0e"}
    c = sf.flow_colours(["flow 1 (reno)", "flow 2 (reno)"])
    assert len(set(c.values())) == 2


def test_an_algorithm_keeps_its_colour_and_others_do_not_take_it() -> None:
    c = sf.series_colours(["cubic", "flow 1", "reno", "flow 2"])
    assert c["cubic"] == sf.CCA_COLOURS["cubic"] and c["reno"] == sf.CCA_COLOURS["reno"]
    assert len(set(c.values())) == 4


SWEEP = """
name = "kinds"
repeats = 2

[base]
name = "kinds"
duration = "6s"
[base.bottleneck]
rate = "10Mbit"
[[base.flows]]
cca = "reno"
rtt = "20ms"
[[base.flows]]
cca = "cubic"
rtt = "20ms"

[axes]
"flows.1.rtt" = ["20ms", "80ms"]

[[plots]]
kind = "box"
metric = "jfi"
x = "flows.1.rtt"

[[plots]]
kind = "bars"
metric = "throughput"
x = "flows.1.rtt"

[[plots]]
kind = "cdf"
metric = "throughput"
by = "flows.1.rtt"
"""


@pytest.fixture(scope="module")
def kinds_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("kinds")
    (d / "sw.toml").write_text(SWEEP)
    args = ["sweep", str(d / "sw.toml"), "-o", str(d / "store"), "-j", "1", "--no-progress"]
    r = CliRunner().invoke(cli, [*args, "--format", "png"])
    assert r.exit_code == 0, r.output
    return d / "store"


def test_sweep_draws_box_bars_and_cdf_with_csv(kinds_store: Path) -> None:
    out = kinds_store / "figures" / "kinds"
    names = {p.name for p in out.iterdir()}
    for base in ("jfi-box-flows.1.rtt", "throughput-bars-flows.1.rtt", "throughput-cdf"):
        assert {f"{base}.png", f"{base}.csv"} <= names, names
    box = pd.read_csv(out / "jfi-box-flows.1.rtt.csv")
    assert len(box) == 4  # 2 points × 2 repeats, one row per run
    bars = pd.read_csv(out / "throughput-bars-flows.1.rtt.csv")
    assert list(dict.fromkeys(bars["flow"])) == ["flow 1 (reno)", "flow 2 (cubic)"]


def test_sweep_cdf_pools_the_per_interval_throughputs_of_the_runs(kinds_store: Path) -> None:
    """Each curve (flow label × rtt) holds every window interval of that flow in both
    repeats: counted here from the runs' samples.parquet directly."""
    from tcpfair.store import Store

    csv = pd.read_csv(kinds_store / "figures" / "kinds" / "throughput-cdf.csv")
    s = Store(kinds_store, readonly=True)
    t = s.table(sweep="kinds", backend="sim")
    expected: dict[str, int] = {}
    for _, rec in t.iterrows():
        r = RunResult.load(s.run_dir("sim", rec["run_hash"]))
        lo, hi = r.default_window()
        mid = r.samples["t_s"] - r.samples["dt_s"] / 2
        inside = r.samples[(mid >= lo) & (mid <= hi)]
        labels = dict(zip(r.flows["flow"], r.flows["label"], strict=True))
        for flow, n in inside.groupby("flow").size().items():
            key = f"{labels[flow]}, RTT of flow 2 = {rec['flows.1.rtt']}"
            expected[key] = expected.get(key, 0) + int(n)
    got = csv.groupby("curve").size().to_dict()
    assert got == expected
    for _, part in csv.groupby("curve"):
        assert part["F"].iloc[-1] == 1.0
        assert np.all(np.diff(part["value"]) >= 0)


def test_cdf_of_a_table_the_runs_do_not_have(kinds_store: Path, tmp_path: Path) -> None:
    from badinput import fails_cleanly

    text = SWEEP.replace('metric = "throughput"\nby', 'metric = "fct"\nby')
    (tmp_path / "sw.toml").write_text(text)
    fails_cleanly(
        ["sweep", "sw.toml", "-o", str(kinds_store), "--no-progress", "--format", "png"],
        mentions=["cdf of 'fct'", "short_flows.parquet"],
        cwd=tmp_path,
        code=None,
    )


def test_a_facet_that_fixes_an_algorithm_names_the_flow_with_it() -> None:
    part = pd.DataFrame({"flow": ["flow 1 (reno)", "flow 2"], "order": [0, 1]})
    named = sf.with_facet_cca(part, {"flows.1.cca": "bbr"})
    assert named["flow"].tolist() == ["flow 1 (reno)", "flow 2 (bbr)"]
    assert sf.flow_colours(named["flow"].tolist())["flow 2 (bbr)"] == sf.CCA_COLOURS["bbr"]


def test_fct_cdf_reads_the_short_flows_table(kinds_store: Path, tmp_path: Path) -> None:
    """A run with a short-flows table (written here, as issue 10's runs write it): the CDF
    values are its completed flows' FCTs in ms; a run without one has none."""
    import shutil

    from tcpfair.store import Store

    s = Store(kinds_store, readonly=True)
    run = tmp_path / "run"
    shutil.copytree(s.run_dir("sim", s.table()["run_hash"].iloc[0]), run)
    assert sf.run_cdf_values(None, "fct", run) is None
    pd.DataFrame(
        {
            "label": ["web", "web", "web"],
            "cca": ["cubic"] * 3,
            "fct_s": [0.030, float("nan"), 0.010],
        }
    ).to_parquet(run / "short_flows.parquet")
    v = sf.run_cdf_values(None, "fct", run)
    assert v is not None
    d = sf.cdf_data(v)
    assert d["value"].tolist() == pytest.approx([10.0, 30.0])
    assert d["F"].tolist() == [0.5, 1.0]
    assert sf.curve_styles(v) == {"web": (sf.CCA_COLOURS["cubic"], 0)}


def test_line_figure_gives_every_algorithm_its_own_colour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # seed 004's four algorithms: cubic and reno have fixed colours; bic and highspeed
    # (no fixed colour) took the cycle's first two, i.e. reno's and cubic's, before
    t = pd.concat(
        [_table().assign(**{"flows.0.cca": c}) for c in ("cubic", "bic", "highspeed", "reno")],
        ignore_index=True,
    )
    figs: list[object] = []
    save = sf._save

    def keep(fig: object, *args: object, **kw: object) -> list[Path]:
        figs.append(fig)
        return save(fig, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sf, "_save", keep)
    agg = aggregate(t, ["flows.1.rtt", "flows.0.cca"], ["ratio"])
    sf.line_figure(agg, "ratio", "flows.1.rtt", tmp_path, by="flows.0.cca", formats=["png"])
    (fig,) = figs
    (ax,) = fig.get_axes()  # type: ignore[attr-defined]
    from matplotlib.colors import to_hex

    colours = {ln.get_label(): to_hex(ln.get_color()) for ln in ax.get_lines()}
    assert set(colours) == {"cubic", "bic", "highspeed", "reno"}
    assert colours["cubic"] == sf.CCA_COLOURS["cubic"] and colours["reno"] == sf.CCA_COLOURS["reno"]
    assert len(set(colours.values())) == 4
