"""Short flows (issue 10 §3): the arrival schedule drawn from the scenario's seed, its
resolved form and hash, and (below) the simulator's short flows."""

from __future__ import annotations

import math
from pathlib import Path

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


# --------------------------------------------------------------------------- simulator
MSS = 1448  # 1500-byte MTU − 52 bytes of IP, TCP and timestamp headers
HEADER = 52


def run_sim(data: dict):
    from tcpfair.backends.sim import SimBackend

    return SimBackend().run(from_dict(data))


def short_only(arrivals: dict, size: object, rtt: str = "100ms", **kw: object) -> dict:
    """Short flows alone on a lossless 100 Mbit/s link (a buffer far above any window)."""
    return {
        "duration": kw.pop("duration", "10s"),
        "seed": 3,
        "bottleneck": {"rate": "100Mbit", "buffer": "10000pkt"},
        "flows": [
            {"cca": "cubic", "rtt": rtt, "size": size, "arrivals": arrivals, "jitter": "0s", **kw}
        ],
    }


def test_lone_short_flow_takes_the_slow_start_time() -> None:
    # One arrival (1/min from 1 s on, a 10 s run) of 100 KB over a 100 ms path at
    # 100 Mbit/s, nothing else on the link.
    res = run_sim(short_only({"process": "fixed", "rate": "1/min"}, "100KB", start="1s"))
    (row,) = res.short_flows.itertuples()
    # Hand computation: 100,000 B = ⌈100000 / 1448⌉ = 70 segments. Slow start from the
    # initial window of 10 doubles the window each RTT: rounds of 10, 20, 40 segments
    # (10 + 20 + 40 = 70), so the last byte leaves in the 3rd round. The SYN/SYN-ACK take
    # one RTT, rounds 1 and 2 one RTT each, then the 3rd round's data crosses the path
    # (RTT/2 one way) and its 40 packets are serialized at 100 Mbit/s (40 · 1500 B).
    rtt = 0.100
    segments = -(-100_000 // MSS)
    rounds, sent, window = 0, 0, 10
    while sent < segments:
        sent, window, rounds = sent + window, window * 2, rounds + 1
    last_round = segments - (sent - window // 2)
    hand = rtt + (rounds - 1) * rtt + rtt / 2 + last_round * 1500 * 8 / 100e6
    assert (segments, rounds, last_round) == (70, 3, 40)
    assert hand == pytest.approx(0.3548)
    assert row.completed and row.start_s == 1.0 and row.size_bytes == 100_000
    assert abs(row.fct_s - hand) < rtt
    assert (row.retransmits, row.timeouts, row.bytes) == (0, 0, 100_000)
    # the ideal: 1.5 RTT + 100 KB at 100 Mbit/s = 0.15 + 0.008 s
    assert row.ideal_s == pytest.approx(0.158) and row.slowdown == pytest.approx(row.fct_s / 0.158)


def test_short_flow_bytes_are_conserved_and_in_the_link_totals() -> None:
    res = run_sim(
        short_only(
            {"process": "poisson", "rate": "100/s"},
            {"dist": "uniform", "min": "1KB", "max": "200KB"},
            rtt={"dist": "uniform", "min": "10ms", "max": "50ms"},
        )
    )
    t = res.short_flows
    done = t[t["completed"]]
    assert len(t) > 900 and len(done) >= len(t) - 10  # the last few may still run
    # every completed flow delivered exactly its size; unfinished ones less
    assert (done["bytes"] == done["size_bytes"]).all()
    assert (t.loc[~t["completed"], "bytes"] < t.loc[~t["completed"], "size_bytes"]).all()
    # lossless: no drop and no RTO; the link carried each delivered byte at least once
    # (headers: 52 bytes a packet; the SYNs take no link time) and beyond that only
    # retransmitted segments (tail loss probes here, at most one MSS each) and the unsent
    # rest of the unfinished flows
    assert t["timeouts"].sum() == 0 and res.meta["link_totals"]["drops"] == 0
    totals = res.meta["link_totals"]
    on_link = totals["tx_bytes"] - HEADER * totals["tx_packets"]
    payload = int(t["bytes"].sum())
    rest = int((t["size_bytes"] - t["bytes"]).sum())
    assert payload <= on_link <= payload + rest + MSS * int(t["retransmits"].sum())
    assert totals["tx_packets"] >= sum(-(-int(s) // MSS) for s in done["size_bytes"])
    # no FCT below the ideal (a lower bound by construction)
    assert (done["slowdown"] >= 1).all()
    # short flows are not connections of the flows/samples tables; with no long-lived
    # connection the headline metrics are empty (NaN), the short-flow block is not
    assert len(res.flows) == 0 and len(res.samples) == 0
    met = res.metrics()
    assert met["n_flows"] == 0 and math.isnan(met["utilization"])
    assert met["short_flows"]["all"]["flows"] == len(t)


def test_short_flows_deterministic_and_slots_reused() -> None:
    data = short_only({"process": "poisson", "rate": "100/s"}, "20KB", rtt="20ms")
    a, b = run_sim(data), run_sim(data)
    cols = ["start_s", "size_bytes", "fct_s", "bytes", "retransmits", "timeouts"]
    assert a.short_flows[cols].equals(b.short_flows[cols])
    # the simulator opened exactly the drawn schedule, one row per arrival
    sch = from_dict(data).short_flow_schedule(0)
    assert (a.short_flows["start_s"].to_numpy() * 1e9).round().astype(int).tolist() == (
        sch.start_ns.tolist()
    )
    # ~1000 arrivals, each open ~70 ms: about 7 open at once on average (Little's law);
    # the run creates a slot only when none is free
    assert len(a.short_flows) > 900
    assert 1 <= a.meta["short_flow_slots"] <= 40


def test_short_flows_stay_out_of_the_headline_metrics(tmp_path) -> None:
    from tcpfair.result import RunResult

    data = scenario({"process": "poisson", "rate": "50/s"}, duration="5s", label="web")
    res = run_sim(data)
    met = res.metrics()
    assert met["n_flows"] == 1 and list(met["throughput_bps"]) == ["0"]
    sf = met["short_flows"]
    # every 10 KB flow falls in the 10KB-100KB bucket (10 KB is its lower bound)
    assert sf["buckets"]["10KB-100KB"]["flows"] == sf["all"]["flows"] == len(res.short_flows)
    assert sf["buckets"]["0-10KB"]["flows"] == 0
    fct = res.short_flows.loc[res.short_flows["completed"], "fct_s"]
    assert sf["all"]["fct_median_s"] == pytest.approx(float(fct.median()))
    assert sf["all"]["completed"] + sf["all"]["unfinished"] == sf["all"]["flows"]
    assert set(res.short_flows["label"]) == {"web"}
    # saved and loaded back
    res.save(tmp_path / "run")
    back = RunResult.load(tmp_path / "run")
    assert back.short_flows.equals(res.short_flows)


def test_tidy_columns_name_bucket_stats() -> None:
    import pandas as pd

    from tcpfair.store import group_columns

    with_short = run_sim(
        scenario({"process": "poisson", "rate": "50/s"}, duration="5s", label="web")
    ).metrics()
    without = from_dict(scenario({"process": "poisson", "rate": "50/s"}, duration="5s"))
    plain = run_sim({**without.to_dict(), "flows": [without.to_dict()["flows"][0]]}).metrics()
    cols = group_columns([with_short, plain], pd.RangeIndex(2))
    sf = with_short["short_flows"]
    assert cols.at[0, "fct_p99:all"] == sf["all"]["fct_p99_s"]
    assert (
        cols.at[0, "slowdown_median:10KB-100KB"] == sf["buckets"]["10KB-100KB"]["slowdown_median"]
    )
    assert cols.at[0, "short_flows:all"] == sf["all"]["flows"] > 200
    assert cols.at[0, "short_flows:0-10KB"] == 0 and math.isnan(cols.at[0, "fct_mean:0-10KB"])
    # a run without short flows has NaN in every short-flow column
    assert cols.filter(like=":all").iloc[1].isna().all()
    # a column is a sweep metric (--plot, [[plots]], --aggregate) where every run has it
    from tcpfair.aggregate import metric_columns

    names = metric_columns(cols.iloc[[0]])
    assert "fct_p99:all" in names and "slowdown_p99:10KB-100KB" in names
    assert "fct_mean:0-10KB" not in names and "fct_p99:all" not in metric_columns(cols)


@pytest.mark.parametrize("host", [{}, {"gso": True, "ack_jitter": "2ms", "jitter": "1ms"}])
def test_slot_reuse_under_loss_keeps_every_flow_whole(host: dict) -> None:
    # 2 % random loss: retransmissions, RTOs and tail probes leave timers and packets
    # behind when flows finish; a reused slot must not see any of them (also with GSO
    # aggregates and jittered lines)
    data = short_only({"process": "poisson", "rate": "200/s"}, "30KB", rtt="20ms")
    data["flows"][0].update(host)
    data["bottleneck"]["loss"] = 0.02
    res = run_sim(data)
    t = res.short_flows
    done = t[t["completed"]]
    assert t["retransmits"].sum() > 100 and t["timeouts"].sum() > 0
    assert len(done) >= len(t) - 20 and (done["bytes"] == 30_000).all()
    assert (done["slowdown"] >= 1).all()
    assert res.meta["short_flow_slots"] < len(t) / 10


def test_run_table_shows_short_flows_by_bucket_at_80_columns() -> None:
    from rich.console import Console

    from tcpfair.report import print_run_summary

    res = run_sim(scenario({"process": "poisson", "rate": "50/s"}, duration="5s", label="web"))
    con = Console(width=80, record=True)
    print_run_summary(res, console=con)
    text = con.export_text()
    assert "short flows started in 0–5 s" in text and "…" not in text
    row = next(line for line in text.splitlines() if "10KB-100KB" in line)
    sf = res.metrics()["short_flows"]["buckets"]["10KB-100KB"]
    assert f"{sf['fct_mean_s'] * 1e3:.1f}" in row and str(sf["flows"]) in row
    assert "whole run (0–5 s)" in text


def test_run_table_of_short_flows_only_has_no_empty_whole_run_line() -> None:
    from rich.console import Console

    from tcpfair.report import print_run_summary

    res = run_sim(short_only({"process": "fixed", "rate": "5/s"}, "20KB", duration="2s"))
    con = Console(width=80, record=True)
    print_run_summary(res, console=con)
    text = con.export_text()
    # no long-lived connection: no "whole run (0–0 s): 0 retransmits" line; the short
    # flows' table is there
    assert "whole run" not in text and "short flows started in 0–2 s" in text


# ----------------------------------------------------------------- reverse short flows
def _payload(totals: dict) -> int:
    """Data payload bytes a link serialized (its ACKs and every packet's headers out)."""
    data_pkts = totals["tx_packets"] - totals["ack_tx_packets"]
    return totals["tx_bytes"] - totals["ack_tx_bytes"] - HEADER * data_pkts


def test_lone_reverse_short_flow_crosses_the_reverse_link_in_slow_start_time() -> None:
    # The lone 100 KB flow of test_lone_short_flow_takes_the_slow_start_time, sent in the
    # reverse direction over a reverse bottleneck of 10 Mbit/s (the forward one: 100).
    data = short_only(
        {"process": "fixed", "rate": "1/min"}, "100KB", start="1s", direction="reverse"
    )
    data["bottleneck"]["reverse"] = {"rate": "10Mbit"}
    res = run_sim(data)
    (row,) = res.short_flows.itertuples()
    # Hand computation as there: handshake 1 RTT, slow-start rounds of 10 and 20 segments
    # 1 RTT each, the 3rd round's 40 segments cross RTT/2 and are serialized at the
    # REVERSE rate: 40 · 1500 B at 10 Mbit/s = 48 ms.
    rtt = 0.100
    hand = rtt + 2 * rtt + rtt / 2 + 40 * 1500 * 8 / 10e6
    assert hand == pytest.approx(0.398)
    assert row.completed and row.size_bytes == 100_000 and row.bytes == 100_000
    assert abs(row.fct_s - hand) < rtt
    # at 10 Mbit/s the 40-segment round alone takes 48 ms: slower than the forward run's
    # serialization could explain (4.8 ms), so the data did cross the reverse link
    assert row.fct_s > rtt * 3.5 + 0.040
    # the ideal uses the rate of the link the data crosses: 1.5 RTT + 100 KB at 10 Mbit/s
    assert row.ideal_s == pytest.approx(0.15 + 0.08)
    # every payload byte on the reverse link; the forward link carried none, only ACKs
    rev, fwd = res.meta["reverse_link_totals"], res.meta["link_totals"]
    assert _payload(rev) == 100_000 and _payload(fwd) == 0
    assert fwd["ack_tx_packets"] > 0 and rev["ack_tx_packets"] == 0


def test_forward_and_reverse_short_flows_conserve_bytes_per_direction() -> None:
    flows = [
        {
            "cca": "cubic",
            "rtt": {"dist": "uniform", "min": "10ms", "max": "50ms"},
            "size": {"dist": "uniform", "min": "1KB", "max": "200KB"},
            "arrivals": {"process": "poisson", "rate": "50/s"},
            "jitter": "0s",
            "label": label,
            **({"direction": "reverse"} if label == "back" else {}),
        }
        for label in ("ahead", "back")
    ]
    data = {
        "duration": "10s",
        "seed": 5,
        "bottleneck": {"rate": "100Mbit", "buffer": "10000pkt"},
        "flows": flows,
    }
    res = run_sim(data)
    t = res.short_flows
    assert set(t["label"]) == {"ahead", "back"} and t["timeouts"].sum() == 0
    # lossless: each direction's link carried exactly its own short flows' delivered bytes,
    # plus at most their retransmitted segments and the unsent rest of unfinished flows
    for label, totals in (("ahead", "link_totals"), ("back", "reverse_link_totals")):
        part = t[t["label"] == label]
        link = res.meta[totals]
        assert link["drops"] == 0
        payload, rest = int(part["bytes"].sum()), int((part["size_bytes"] - part["bytes"]).sum())
        on_link = _payload(link)
        assert payload <= on_link <= payload + rest + MSS * int(part["retransmits"].sum())
        assert len(part) > 400
    # every completed flow delivered exactly its size, and no FCT beats its ideal
    done = t[t["completed"]]
    assert (done["bytes"] == done["size_bytes"]).all() and (done["slowdown"] >= 1).all()
    # the metrics keep each label's flows apart as well as together
    from tcpfair.shortflows import short_flow_metrics

    sf = short_flow_metrics(t, (0.0, 10.0))
    assert list(sf["labels"]) == ["ahead", "back"]
    for label in ("ahead", "back"):
        part = t[t["label"] == label]
        assert sf["labels"][label]["flows"] == len(part)
        assert sf["labels"][label]["fct_median_s"] == pytest.approx(
            float(part[part["completed"]]["fct_s"].median())
        )
    assert sum(b["flows"] for b in sf["labels"].values()) == sf["all"]["flows"]


def test_a_run_folder_with_short_flows_can_be_replaced_with_force(tmp_path) -> None:
    # short_flows.parquet is a run folder's file: --force replaces such a folder (it was
    # refused as "not a tcpfair run folder")
    import subprocess
    import sys

    from tcpfair.result import RunResult

    (tmp_path / "s.toml").write_text(
        'name = "s"\nduration = "2s"\n[bottleneck]\nrate = "100Mbit"\nbuffer = "100pkt"\n'
        '[[flows]]\ncca = "cubic"\nrtt = "20ms"\nsize = "20KB"\n'
        'arrivals = { process = "fixed", rate = "5/s" }\n'
    )
    tcpfair = str(Path(sys.executable).with_name("tcpfair"))
    cmd = [tcpfair, "run", "s.toml", "--no-plot", "-o", "out"]
    first = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "out" / "short_flows.parquet").is_file()
    again = subprocess.run([*cmd, "--force"], cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert len(RunResult.load(tmp_path / "out").short_flows) == 10
