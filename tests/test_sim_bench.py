"""``tcpfair bench``: runs a scenario in a child process and reports speed and memory."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tcpfair.bench import SCALING_FLOWS, BenchResult, scaling_rows, scenarios
from tcpfair.cli import cli
from tcpfair.spec import from_dict


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
    assert (
        "--only: unknown scenario 'B7'; allowed: A1, A1-sack, N2, N100, N1000, N10000, G10"
        in res.output
    )


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


def test_bench_table_on_an_80_column_terminal_keeps_the_rates_whole(monkeypatch) -> None:
    """On a terminal narrower than the full table (~130 columns) every cell used to be cut
    with '…' ("N10…", "12,…"): it prints a compact table instead, numbers whole, and says
    where the other columns are."""
    import io

    from rich.console import Console

    from tcpfair.commands import bench as bench_cmd

    out = io.StringIO()
    monkeypatch.setattr(bench_cmd, "table_console", lambda: Console(file=out, width=80))
    res = CliRunner().invoke(cli, ["bench", "--only", "N2", "--quick", "--format", "table"])
    assert res.exit_code == 0, res.output
    text = out.getvalue()
    lines = text.splitlines()
    assert "…" not in text
    assert max(len(line) for line in lines) <= 80
    header = next(line for line in lines if "scenario" in line and "M pkts/s" in line)
    assert "wall s" in header and "M events/s" in header
    row = next(line for line in lines if line.startswith("│") and " N2 " in line)
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells[0] == "N2" and cells[1] == "2"
    # the rate in millions, whole: N2's 382,282 packets over the wall time, which the
    # table rounds to the millisecond (and the rate to 0.01 M)
    wall, mpps = float(cells[2]), float(cells[3])
    slowest, fastest = 382_282 / (wall + 0.0005) / 1e6, 382_282 / (wall - 0.0005) / 1e6
    assert slowest - 0.005 <= mpps <= fastest + 0.005
    assert "--format json" in text
    assert "x fewest flows" in text  # the scaling table still follows


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


def test_scaling_cases_split_flows_into_entries_of_at_most_1000_streams() -> None:
    sc = scenarios(quick=True)
    for n in SCALING_FLOWS:
        for name in (f"N{n}", f"N{n}-10g"):
            streams = [f["streams"] for f in sc[name]["flows"]]
            assert sum(streams) == n and max(streams) <= 1000, name
    assert from_dict(sc["N10000-10g"]).flows[0].rmem == 125_000_000


def _result(name: str, flows: int, wall_s: float, packets: int, events: int) -> BenchResult:
    return BenchResult(
        name, flows, 0, 0, 0, 1.0, wall_s, packets, events, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0
    )


def test_scaling_rows_are_relative_to_the_fewest_flows_at_the_same_rate() -> None:
    rows = scaling_rows(
        [
            _result("N1000", 1000, 3.0, 1_000_000, 3_000_000),
            _result("N2", 2, 0.5, 1_000_000, 2_500_000),
            _result("N2-10g", 2, 1.0, 4_000_000, 10_000_000),
            _result("G10", 2, 9.0, 1, 1),
        ]
    )
    got = [
        (r.name, r.flows, round(r.ns_per_packet), r.events_per_packet, r.vs_fewest) for r in rows
    ]
    # 0.5 s / 1e6 packets = 500 ns; 3 s / 1e6 = 3000 ns = 6x; 1 s / 4e6 = 250 ns
    assert got == [
        ("N2", 2, 500, 2.5, 1.0),
        ("N1000", 1000, 3000, 3.0, 6.0),
        ("N2-10g", 2, 250, 2.5, 1.0),
    ]


def test_bench_prints_the_scaling_table() -> None:
    res = CliRunner().invoke(cli, ["bench", "--only", "N2", "--only", "N100", "--quick"])
    assert res.exit_code == 0, res.output
    _, scaling = res.output.split("scaling (wall ns and events per bottleneck packet)")
    rows = [line.split() for line in scaling.splitlines() if " N2 " in line or " N100 " in line]
    # the fewest-flows case is the reference: ratio 1.00
    assert [r[1] for r in rows] == ["N2", "N100"] and rows[0][-2] == "1.00"


def test_bench_clock_starts_after_numpy_is_imported() -> None:
    """`simulate` returns numpy arrays; numpy's first import (~0.08 s) used to fall inside
    the timed call and was 40 % of A1-sack's wall time (issue 13). The child's clock must
    start with numpy already loaded."""
    import subprocess
    import sys

    from tcpfair.bench import _CHILD

    # Record, at each read of the clock, whether numpy is loaded yet.
    prelude = (
        "import sys, time\n"
        "_pc = time.perf_counter\n"
        "def _clock():\n"
        "    sys.stderr.write(f'numpy loaded: {\"numpy\" in sys.modules}\\n')\n"
        "    return _pc()\n"
        "time.perf_counter = _clock\n"
    )
    data = scenarios(quick=True)["N2"]
    sc = from_dict({**data, "duration": "100ms", "measure": {"interval": "50ms"}})
    proc = subprocess.run(
        [sys.executable, "-c", prelude + _CHILD],
        input=sc.sim_json(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stderr.splitlines() == ["numpy loaded: True"] * 2
    assert json.loads(proc.stdout)["stats"]["bottleneck_packets"] > 0
