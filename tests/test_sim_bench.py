"""``tcpfair bench``: runs a scenario in a child process and reports speed and memory."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tcpfair.cli import cli


def test_bench_reports_packets_events_and_memory() -> None:
    res = CliRunner().invoke(cli, ["bench", "--only", "N2", "--quick", "--format", "json"])
    assert res.exit_code == 0, res.output
    (r,) = json.loads(res.output)
    assert r["name"] == "N2" and r["flows"] == 2 and r["simulated_s"] == 5
    # 1 Gbit/s for 5 s is at most 416,667 full-sized packets; a bulk Reno pair fills most.
    assert 300_000 < r["bottleneck_packets"] <= 416_667
    assert r["events"] > r["bottleneck_packets"]
    assert r["pkts_per_s"] == r["bottleneck_packets"] / r["wall_s"]
    assert 0.8 < r["utilization"] <= 1.0
    assert r["rss_peak_mb"] > 0


def test_bench_unknown_scenario_is_one_clear_error() -> None:
    res = CliRunner().invoke(cli, ["bench", "--only", "B7"])
    assert res.exit_code == 2
    assert "--only: unknown scenario 'B7'; allowed: A1, A1-sack, N2, N100, N1000, G10" in res.output


def test_bench_table_is_not_cut_at_80_columns() -> None:
    """Captured (not a terminal), every column is printed whole: rich's default 80 columns
    folded the headers and cut the numbers with '…'."""
    res = CliRunner().invoke(cli, ["bench", "--only", "N2", "--quick"])
    assert res.exit_code == 0, res.output
    assert "…" not in res.output
    header = next(line for line in res.output.splitlines() if "scenario" in line)
    for col in ("flows", "wall s", "bottleneck pkts", "events/s", "peak RSS MB", "bytes/flow"):
        assert col in header
    assert max(len(line) for line in res.output.splitlines()) > 80


def test_bench_short_flow_case_counts_long_and_short_flows_apart() -> None:
    res = CliRunner().invoke(cli, ["bench", "--only", "N200-S1000", "--quick", "--format", "json"])
    assert res.exit_code == 0, res.output
    (r,) = json.loads(res.output)
    # 200 long-lived flows; Poisson arrivals at 1000/s for 5 s: 5000 ± 4·√5000
    assert r["flows"] == 200 and abs(r["short_flows"] - 5000) < 4 * 5000**0.5
    # 1 Gbit/s for 5 s is at most 416,667 full-sized packets
    assert 300_000 < r["bottleneck_packets"] <= 416_667
    # finished short flows' slots are reused: far fewer slots than short flows
    assert 1 <= r["short_flow_slots"] < r["short_flows"] / 5
