"""Measured groups (issue 10 §4): per-group results on a hand-built RunResult equal the
hand-computed values; ``[measure] flows`` restricts the headline metrics to its labels."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tcpfair.aggregate import metric_columns
from tcpfair.result import SAMPLE_COLUMNS, RunResult
from tcpfair.store import group_columns

MBIT = 1e6


def hand_built(measured: list[str] | None = None) -> RunResult:
    """Three connections over 0–10 s in two 5 s intervals: A at 10 and 30 Mbit/s, B at 10
    Mbit/s, on a 100 Mbit/s link."""
    rates = {0: 10 * MBIT, 1: 30 * MBIT, 2: 10 * MBIT}
    flows = pd.DataFrame(
        {
            "flow": [0, 1, 2],
            "group": [0, 0, 1],
            "label": ["A", "A", "B"],
            "cca": ["cubic", "cubic", "reno"],
            "rtt_s": [0.02] * 3,
            "start_s": [0.0] * 3,
            "bytes": [int(r * 10 / 8) for r in rates.values()],
            "retransmits": [0, 0, 0],
            "mean_rtt_s": [0.02] * 3,
        }
    )
    rows = [
        (f, t, 5.0, int(r * 5 / 8), r, 1e5, 0.02, 0.0)
        for f, r in rates.items()
        for t in (5.0, 10.0)
    ]
    samples = pd.DataFrame(rows, columns=SAMPLE_COLUMNS)
    scenario: dict[str, Any] = {"measure": {"from_ns": 0, "to_ns": 10**10}}
    if measured is not None:
        scenario["measure"]["flows"] = measured
    meta = {"capacity_bps": 100 * MBIT, "window": [0.0, 10.0]}
    return RunResult(flows=flows, samples=samples, meta=meta, scenario=scenario)


def test_group_metrics_equal_hand_computed_values() -> None:
    g = hand_built().groups()
    a, b = g["groups"]["A"], g["groups"]["B"]
    assert a["connections"] == 2 and b["connections"] == 1
    assert a["sum_bps"] == pytest.approx(40 * MBIT) and b["sum_bps"] == pytest.approx(10 * MBIT)
    assert a["mean_bps"] == pytest.approx(20 * MBIT) and b["mean_bps"] == pytest.approx(10 * MBIT)
    assert a["share"] == pytest.approx(0.4) and b["share"] == pytest.approx(0.1)
    # Jain within A: (10 + 30)² / (2 · (10² + 30²)) = 1600 / 2000
    assert a["jfi"] == pytest.approx(0.8) and b["jfi"] == pytest.approx(1.0)
    assert g["ratios"] == {"A/B": pytest.approx(2.0)}


def test_without_measure_flows_the_headline_covers_every_connection() -> None:
    met = hand_built().metrics()
    # (10 + 30 + 10)² / (3 · (100 + 900 + 100)) = 2500 / 3300
    assert met["jfi"] == pytest.approx(2500 / 3300)
    assert met["n_flows"] == 3 and "utilization_measured" not in met
    assert met["utilization"] == pytest.approx(0.5)


def test_measure_flows_restricts_the_headline_metrics() -> None:
    met = hand_built(["A"]).metrics()
    assert met["measured_flows"] == ["A"]
    assert met["n_flows"] == 2
    assert met["jfi"] == pytest.approx(0.8)
    assert met["min_max_ratio"] == pytest.approx(1 / 3)
    assert met["sum_bps"] == pytest.approx(40 * MBIT)
    assert met["jfi_per_interval_mean"] == pytest.approx(0.8)
    assert met["utilization"] == pytest.approx(0.5)  # the whole link
    assert met["utilization_measured"] == pytest.approx(0.4)
    # every connection's throughput is still reported
    assert set(met["throughput_bps"]) == {"0", "1", "2"}


def test_groups_survive_summary_json(tmp_path: Path) -> None:
    r = hand_built(["B"])
    d = r.save(tmp_path / "run")
    met = json.loads((d / "summary.json").read_text())["metrics"]
    assert met["groups"]["A"]["mean_bps"] == pytest.approx(20 * MBIT)
    assert met["group_ratios"]["A/B"] == pytest.approx(2.0)
    assert met["jfi"] == pytest.approx(1.0) and met["n_flows"] == 1
    assert RunResult.load(d).metrics()["utilization_measured"] == pytest.approx(0.1)


def test_tidy_columns_name_group_metrics() -> None:
    mets = [hand_built().metrics(), {"jfi": 1.0}]  # the second: a run stored before groups
    cols = group_columns(json.loads(json.dumps(mets)), pd.RangeIndex(2))
    assert cols.loc[0, "mean:A"] == pytest.approx(20 * MBIT)
    assert cols.loc[0, "connections:B"] == 1
    assert cols.loc[0, "ratio:A/B"] == pytest.approx(2.0)
    assert cols.loc[0, "share:A"] == pytest.approx(0.4)
    assert np.isnan(cols.loc[1, "mean:A"])
    # a group column is a default sweep metric only where every run has the group
    assert "mean:A" not in metric_columns(cols)
    assert "ratio:A/B" in metric_columns(cols.iloc[:1])
    measured = group_columns([hand_built(["A"]).metrics()], pd.RangeIndex(1))
    assert measured.loc[0, "utilization_measured"] == pytest.approx(0.4)
    assert "utilization_measured" in metric_columns(measured)
    assert "utilization_measured" not in cols.columns


def test_measure_flows_on_a_simulator_run_changes_jfi_to_the_subsets() -> None:
    from tcpfair.backends.sim import SimBackend
    from tcpfair.metrics import jain
    from tcpfair.spec import from_dict

    data: dict[str, Any] = {
        "name": "m",
        "duration": "6s",
        "seed": 1,
        "bottleneck": {"rate": "20Mbit", "buffer": "1bdp"},
        "flows": [
            {"cca": "reno", "rtt": "10ms", "label": "short"},
            {"cca": "reno", "rtt": "80ms", "label": "long"},
            {"cca": "cubic", "rtt": "20ms", "streams": 2, "label": "bg"},
        ],
        "measure": {"interval": "1s", "from": "2s"},
    }
    everyone = SimBackend().run(from_dict(data))
    data["measure"]["flows"] = ["short", "long"]
    subset = SimBackend().run(from_dict(data))
    thr = subset.flow_throughputs()
    met = subset.metrics()
    assert met["jfi"] == pytest.approx(jain(thr.loc[[0, 1]].to_numpy()))
    assert met["n_flows"] == 2
    assert met["jfi"] != pytest.approx(everyone.metrics()["jfi"])
    # the run is the same (measure.flows does not change the simulation)
    assert (thr.to_numpy() == everyone.flow_throughputs().to_numpy()).all()
    assert met["utilization"] == pytest.approx(everyone.metrics()["utilization"])


SWEEP = Path(__file__).parent / "fixtures" / "sweep-groups.toml"


@pytest.fixture(scope="module")
def group_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-point × 2-repeat simulator sweep of 'vegas' and 'reno' groups (with drawn RTTs)
    whose [[plots]] names a group ratio."""
    from click.testing import CliRunner

    from tcpfair.cli import cli

    out = tmp_path_factory.mktemp("sweep") / "mixg"
    r = CliRunner().invoke(cli, ["sweep", str(SWEEP), "-o", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_a_sweep_aggregates_and_plots_group_metrics(group_sweep: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tcpfair.cli import cli
    from tcpfair.store import Store

    table = Store(group_sweep, readonly=True).table()
    assert len(table) == 4
    # the tidy column is the runs' own per-connection means' ratio
    for _, row in table.iterrows():
        assert row["ratio:vegas/reno"] == pytest.approx(row["mean:vegas"] / row["mean:reno"])
        assert row["connections:vegas"] == row["flows.0.streams"]
    # start_jitter moved the vegas entry's single start and left reno's list as written
    for run_hash in table["run_hash"]:
        flows = Store(group_sweep, readonly=True).load_run("sim", run_hash).flows
        assert list(flows[flows["label"] == "reno"]["start_s"]) == [0.0, 1.0, 0.0]
        vegas = flows[flows["label"] == "vegas"]["start_s"]
        assert 0 < vegas.iloc[0] < 0.5 and (vegas == vegas.iloc[0]).all()
    # the [[plots]] entry's figure (and its data): a file name without the label's '/'
    figs = sorted(p.name for p in (group_sweep / "figures" / "mixg").iterdir())
    assert figs == [
        "ratio_vegas_reno-vs-flows.0.streams.csv",
        "ratio_vegas_reno-vs-flows.0.streams.png",
        "ratio_vegas_reno-vs-flows.0.streams.svg",
    ]
    r = CliRunner().invoke(
        cli, ["results", str(group_sweep), "--export", str(tmp_path / "a.csv"), "--aggregate"]
    )
    assert r.exit_code == 0, r.output
    agg = pd.read_csv(tmp_path / "a.csv")
    rows = agg[agg["metric"] == "mean:vegas"]
    assert list(rows["n"]) == [2, 2]
    one = table[table["flows.0.streams"] == 1]["mean:vegas"]
    assert rows[rows["flows.0.streams"] == 1]["mean"].iloc[0] == pytest.approx(one.mean())


# ------------------------------------------------- the sweep's ratio and thr_g<i>_bps
def _summary(flows: list[tuple[int, str, str, float]], measured: list[str] | None) -> dict:
    """A run's summary.json with connections (entry, label, direction, bit/s)."""
    met: dict = {"throughput_bps": {str(i): bps for i, (_, _, _, bps) in enumerate(flows)}}
    if measured is not None:
        met["measured_flows"] = measured
    rows = [
        {"flow": i, "group": g, "label": lab, "direction": d}
        for i, (g, lab, d, _) in enumerate(flows)
    ]
    return {"metrics": met, "flows": rows, "meta": {}}


def test_sweep_ratio_follows_the_measured_set_not_the_entry_index() -> None:
    from tcpfair.store import summarize

    # entry 0 forward (two connections), entry 1 reverse, entry 2 forward, entry 3 short
    # flows only (no connection in the flows table)
    flows = [
        (0, "a", "forward", 10e6),
        (0, "a", "forward", 30e6),
        (1, "back", "reverse", 90e6),
        (2, "b", "forward", 20e6),
    ]
    out = summarize(_summary(flows, None))
    # default measured set: the forward entries 0 and 2 -> 20 / (10 + 30); the reverse
    # entry 1 (index order's "group 1") never enters it
    assert out["ratio"] == pytest.approx(0.5)
    # per entry, by entry index, in each entry's own direction
    assert out["metrics"]["group_throughput_bps"] == [40e6, 90e6, 20e6]
    # [measure] flows picks the entries, taken in entry order whatever the order of the
    # labels (entry 0 "a" first): 20 / 40 again; naming only one entry leaves no ratio
    assert summarize(_summary(flows, ["b", "a"]))["ratio"] == pytest.approx(0.5)
    assert math.isnan(summarize(_summary(flows, ["a"]))["ratio"])
    # an entry of short flows only between two long-lived ones: its thr_g is missing
    # (NaN in the tidy table), and the ratio is between the two long-lived entries
    gap = [(0, "a", "forward", 10e6), (2, "b", "forward", 25e6)]
    out = summarize(_summary(gap, None))
    assert out["metrics"]["group_throughput_bps"] == [10e6, None, 25e6]
    assert out["ratio"] == pytest.approx(2.5)


def test_two_forward_entries_keep_their_old_ratio() -> None:
    from tcpfair.store import summarize

    # what every stored sweep has: entry 1 over entry 0, no direction column
    s = _summary([(0, "x", "forward", 8e6), (1, "y", "forward", 2e6)], None)
    for f in s["flows"]:
        del f["direction"]
    out = summarize(s)
    assert out["ratio"] == pytest.approx(0.25)
    assert out["metrics"]["group_throughput_bps"] == [8e6, 2e6]
