"""The reverse direction (issue 10 §1): ``direction = "reverse"`` and ``[bottleneck.reverse]``.

Spec: which link is in effect and what it resolves to. Simulator: reverse traffic loads the
reverse queue and delays the forward flows' ACKs; bytes are conserved per direction; the
reverse link's overrides take effect."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tcpfair.backends.sim import SimBackend
from tcpfair.result import RunResult
from tcpfair.spec import Red, Scenario, from_dict


def scenario(
    extra_flows: str = "", reverse: str = "", bottleneck: str = "", buffer: str = "1bdp"
) -> Scenario:
    text = f"""
name = "rev"
duration = "4s"
[bottleneck]
rate = "10Mbit"
buffer = "{buffer}"
{bottleneck}
{reverse}
[[flows]]
cca = "reno"
rtt = "40ms"
label = "fwd"
{extra_flows}
"""
    return from_dict(tomllib.loads(text))


REV_FLOW = """
[[flows]]
cca = "reno"
rtt = "40ms"
direction = "reverse"
label = "back"
"""


def test_forward_only_has_no_reverse_link_and_no_new_keys() -> None:
    sc = scenario()
    assert not sc.has_reverse
    assert sc.reverse_link() is None and sc.reverse_bottleneck() is None
    r = sc.resolved()
    assert "reverse" not in r["bottleneck"]
    assert all("direction" not in c for c in r["flows"])
    assert "direction" not in sc.to_dict()["flows"][0]


def test_explicit_forward_direction_keeps_the_hash() -> None:
    plain = scenario()
    data = plain.to_dict()
    data["flows"][0]["direction"] = "forward"
    assert from_dict(data).hash() == plain.hash()


def test_a_reverse_flow_brings_a_symmetric_reverse_link() -> None:
    red = 'aqm = { kind = "red", min_th = "5pkt", max_th = "15pkt" }'
    sc = scenario(REV_FLOW, bottleneck=f"loss = 0.01\n{red}", buffer="30pkt")
    assert sc.has_reverse
    rev = sc.reverse_link()
    assert rev is not None
    assert (rev.rate_bps, rev.buffer_bytes, rev.buffer_pkts, rev.loss) == (
        10_000_000,
        None,
        30,
        0.01,
    )
    assert isinstance(rev.aqm, Red) and rev.aqm.max_th.value == 15
    r = sc.resolved()
    fwd = {k: r["bottleneck"][k] for k in ("rate_bps", "buffer_bytes", "buffer_pkts", "aqm")}
    assert {k: r["bottleneck"]["reverse"][k] for k in fwd} == fwd
    assert [c.get("direction", "forward") for c in r["flows"]] == ["forward", "reverse"]


def test_reverse_table_overrides_only_what_it_names() -> None:
    sc = scenario(reverse='[bottleneck.reverse]\nrate = "2Mbit"')
    assert sc.has_reverse  # the table alone brings the reverse link (ACKs queue there)
    rev = sc.reverse_link()
    assert rev is not None
    # a bdp buffer: the reverse rate × the same mean RTT (40 ms) → 2e6/8 × 0.04 = 10 000 B
    assert (rev.rate_bps, rev.buffer_bytes, rev.buffer_pkts) == (2_000_000, 10_000, None)
    assert sc.buffer_limits() == (50_000, None)  # the forward one: 10e6/8 × 0.04
    assert rev.loss == 0.0 and rev.aqm.kind == "droptail"
    assert sc.reverse_bottleneck().reverse is None  # type: ignore[union-attr]


def test_reverse_table_round_trips_through_to_dict() -> None:
    sc = scenario(REV_FLOW, reverse='[bottleneck.reverse]\nbuffer = "7pkt"\nloss = 0.002')
    again = from_dict(sc.to_dict())
    assert again.hash() == sc.hash()
    assert again.reverse_link() == sc.reverse_link()
    assert again.flows[1].direction == "reverse"


@pytest.mark.parametrize(
    "change",
    [
        {"direction": "reverse"},
        {"reverse": {"rate": "1Mbit"}},
    ],
)
def test_reverse_keys_change_the_hash(change: dict[str, Any]) -> None:
    base = scenario(REV_FLOW.replace('direction = "reverse"', ""))
    data = base.to_dict()
    if "direction" in change:
        data["flows"][1]["direction"] = change["direction"]
    else:
        data["bottleneck"]["reverse"] = change["reverse"]
    assert from_dict(data).hash() != base.hash()


# --------------------------------------------------------------------------- simulator
MSS, HEADER = 1448, 52  # payload and headers of a full segment at the default 1500 B MTU


def run(text: str) -> tuple[Scenario, RunResult]:
    sc = from_dict(tomllib.loads(text))
    return sc, SimBackend().run(sc)


LOADED = """
name = "r"
duration = "30s"
[bottleneck]
rate = "10Mbit"
buffer = "100pkt"
[bottleneck.reverse]
[[flows]]
cca = "reno"
rtt = "40ms"
app_rate = "2Mbit"
label = "fwd"
"""
REVERSE_LOAD = """
[[flows]]
cca = "reno"
rtt = "40ms"
streams = 4
direction = "reverse"
label = "back"
"""


@pytest.fixture(scope="module")
def loaded() -> tuple[RunResult, RunResult]:
    """The same app-limited forward flow (2 of 10 Mbit/s: no forward queue) with its ACKs
    crossing an idle reverse link, and crossing one that 4 reverse Reno flows fill."""
    return run(LOADED)[1], run(LOADED + REVERSE_LOAD)[1]


def test_reverse_traffic_loads_the_reverse_queue(loaded: tuple[RunResult, RunResult]) -> None:
    idle, busy = loaded
    assert idle.reverse_link is not None and busy.reverse_link is not None
    # ACKs alone (one 52-80 B frame per ~2 segments at 2 Mbit/s) never queue on 10 Mbit/s
    assert idle.reverse_link["queue_bytes"].max() == 0
    assert idle.reverse_link["drops"].sum() == 0
    rev = busy.metrics()["reverse"]
    assert rev["connections"] == 4
    assert rev["queue_mean_bytes"] > 0 and rev["drops"] > 0
    # the reverse flows fill their link: their goodput is most of its rate
    assert rev["utilization"] > 0.9
    # every forward ACK crossed it: counted on the reverse link, some lost at the full queue
    totals = busy.meta["reverse_link_totals"]
    assert totals["ack_tx_packets"] > 0 and totals["ack_drops"] > 0
    assert busy.reverse_link["ack_drops"].sum() == totals["ack_drops"]


def test_forward_acks_are_delayed_by_the_reverse_queue(
    loaded: tuple[RunResult, RunResult],
) -> None:
    """The forward flow's RTT grows by the time its ACKs wait in the reverse queue: at
    least half its time-averaged delay (ACKs of an app-limited flow arrive evenly, so they
    see about the time average; half leaves room for the SRTT's smoothing and the 1 s
    sampling) and at most a full reverse buffer's drain time."""
    idle, busy = loaded

    def fwd_rtt(r: RunResult) -> float:
        s = r.samples[(r.samples["flow"] == 0) & (r.samples["t_s"] > 5)]
        return float(s["srtt_s"].mean())

    assert busy.reverse_link is not None
    q = busy.reverse_link[busy.reverse_link["t_s"] > 5]["queue_bytes"]
    mean_wait = float(q.mean()) * 8 / 10e6
    full_buffer = 100 * 1500 * 8 / 10e6  # 120 ms
    rise = fwd_rtt(busy) - fwd_rtt(idle)
    assert mean_wait > 0.02
    assert 0.5 * mean_wait <= rise <= full_buffer
    # the forward flow itself is unaffected in goodput: app-limited at 2 Mbit/s
    thr = busy.flow_throughputs((5.0, 30.0))
    assert thr[0] == pytest.approx(2e6, rel=0.05)


def test_headline_metrics_cover_the_forward_connections(
    loaded: tuple[RunResult, RunResult],
) -> None:
    _, busy = loaded
    met = busy.metrics()
    thr = busy.flow_throughputs()
    assert met["n_flows"] == 1 and met["sum_bps"] == pytest.approx(thr[0])
    assert met["utilization"] == pytest.approx(thr[0] / 10e6)
    assert met["reverse"]["sum_bps"] == pytest.approx(float(thr[1:].sum()))
    assert list(busy.flows["direction"]) == ["forward"] + ["reverse"] * 4
    # a group's share is of its own direction's link
    assert met["groups"]["back"]["share"] == pytest.approx(float(thr[1:].sum()) / 10e6)
    # retransmissions likewise: the headline counts the forward connection's, the reverse
    # line its own four, and together they are every connection's in the window
    retr = busy.flow_retransmits(met["window"])["retransmits"]
    assert met["retransmits"] == int(retr[0])
    assert met["reverse"]["retransmits"] == int(retr[1:].sum()) > 0
    assert met["retransmits_run"] == int(busy.flows["retransmits"][0])


FINITE = """
name = "c"
duration = "20s"
[bottleneck]
rate = "20Mbit"
buffer = "2000pkt"
[[flows]]
cca = "{cca}"
rtt = "30ms"
{extra}
{fwd_size}
[[flows]]
cca = "reno"
rtt = "50ms"
direction = "reverse"
{extra}
{rev_size}
"""


def segments(size: int) -> int:
    return -(-size // MSS)


@pytest.mark.parametrize(
    "stack",
    ["linux", "gso", "ns2"],
)
def test_bytes_are_conserved_per_direction(stack: str) -> None:
    """Transfers through buffers that never fill: each link serializes exactly its
    direction's segments (payload + headers, no retransmission) plus the other direction's
    ACKs, and what crossed it is what its receivers got. Linux: finite transfers,
    delivered whole; ns-2 (greedy FTP; 1000 B packets with 40 B headers): windows clamped
    to 100 packets so that the 2000-packet buffers never fill."""
    ns2 = stack == "ns2"
    text = FINITE.format(
        cca="reno" if ns2 else "cubic",
        extra={"linux": "", "gso": "gso = true", "ns2": 'stack = "ns2"\ncwnd_clamp = 100'}[stack],
        fwd_size="" if ns2 else 'size = "3MB"',
        rev_size="" if ns2 else 'size = "2MB"',
    )
    if ns2:
        text = text.replace('rate = "20Mbit"', 'rate = "20Mbit"\nmtu = "1040B"')
    _, r = run(text)
    assert r.reverse_link is not None
    assert int(r.flows["retransmits"].sum()) == 0
    assert r.meta["link_totals"]["drops"] == 0 and r.meta["reverse_link_totals"]["drops"] == 0
    for d, link, totals in (
        ("forward", r.link, r.meta["link_totals"]),
        ("reverse", r.reverse_link, r.meta["reverse_link_totals"]),
    ):
        assert int(link["tx_bytes"].sum()) == totals["tx_bytes"]
        data_bytes = totals["tx_bytes"] - totals["ack_tx_bytes"]
        mine = r.flows[r.flows["direction"] == d]
        got = [int(x) for x in mine["bytes"]]
        if ns2:  # a packet is delivered as it leaves the link (in order: nothing lost)
            assert all(x % 1000 == 0 for x in got)
            assert data_bytes == sum(x // 1000 * 1040 for x in got) > 0
        else:
            sizes = [int(x) for x in mine["size_bytes"]]
            assert got == sizes  # delivered whole
            assert data_bytes == sum(x + HEADER * segments(x) for x in sizes)
        # the other direction's ACKs: 52-80 B each (40 B under ns-2)
        acks = totals["ack_tx_packets"]
        low, high = (40, 40) if ns2 else (HEADER, HEADER + 28)
        assert acks > 0 and low * acks <= totals["ack_tx_bytes"] <= high * acks


def test_a_slower_reverse_rate_limits_the_reverse_flow() -> None:
    """[bottleneck.reverse] rate = 2Mbit under a 10 Mbit/s forward link: the reverse Reno
    flow gets at most the payload share of 2 Mbit/s (1448 of every 1500 B) and, with a
    buffer of a BDP (Reno then keeps the link busy), at least 90 % of it."""
    text = """
name = "o"
duration = "30s"
[bottleneck]
rate = "10Mbit"
[bottleneck.reverse]
rate = "2Mbit"
[[flows]]
cca = "reno"
rtt = "40ms"
direction = "reverse"
"""
    sc, r = run(text)
    rev = sc.reverse_link()
    assert rev is not None and rev.buffer_bytes == 10_000  # 1 BDP at 2 Mbit/s × 40 ms
    thr = float(r.flow_throughputs((5.0, 30.0))[0])
    cap = 2e6 * MSS / 1500
    assert 0.9 * cap <= thr <= cap
    assert r.metrics()["reverse"]["utilization"] == pytest.approx(
        float(r.flow_throughputs()[0]) / 2e6
    )
    # the forward link carried only its ACKs
    assert r.meta["link_totals"]["tx_bytes"] == r.meta["link_totals"]["ack_tx_bytes"]


def test_random_loss_on_the_reverse_link_drops_acks() -> None:
    """loss = 0.1 on the reverse link only: the forward flow's ACKs are lost there with
    probability 0.1 each (a binomial count: within 5 standard deviations)."""
    text = """
name = "l"
duration = "10s"
[bottleneck]
rate = "10Mbit"
[bottleneck.reverse]
loss = 0.1
[[flows]]
cca = "cubic"
rtt = "20ms"
"""
    _, r = run(text)
    t = r.meta["reverse_link_totals"]
    n = t["ack_tx_packets"] + t["ack_drops"]
    assert t["random_losses"] == t["ack_drops"]  # only ACKs cross it
    sd = (n * 0.1 * 0.9) ** 0.5
    assert abs(t["ack_drops"] - 0.1 * n) <= 5 * sd
    assert r.meta["link_totals"]["random_losses"] == 0  # the forward loss stays 0


def test_forward_only_run_keeps_its_tables(tmp_path: Path) -> None:
    """No reverse bottleneck: the columns and files of a run are those of before."""
    from tcpfair.result import FLOW_COLUMNS, LINK_COLUMNS

    sc, r = run(
        'name = "f"\nduration = "3s"\n[bottleneck]\nrate = "10Mbit"\n'
        '[[flows]]\ncca = "reno"\nrtt = "20ms"\n'
    )
    assert r.reverse_link is None and "reverse_capacity_bps" not in r.meta
    assert list(r.flows.columns) == [*FLOW_COLUMNS, "size_bytes"]
    assert list(r.link.columns) == LINK_COLUMNS
    assert "ack_drops" not in r.meta["link_totals"]
    assert "reverse" not in r.metrics()
    r.save(tmp_path / "run")
    assert not (tmp_path / "run" / "reverse_link.parquet").exists()


def test_reverse_run_saves_and_loads(tmp_path: Path, loaded: tuple[RunResult, RunResult]) -> None:
    _, busy = loaded
    busy.save(tmp_path / "run")
    back = RunResult.load(tmp_path / "run")
    assert back.reverse_link is not None
    pd.testing.assert_frame_equal(back.reverse_link, busy.reverse_link)
    assert back.metrics()["reverse"] == busy.metrics()["reverse"]


def test_run_panel_draws_both_queues(loaded: tuple[RunResult, RunResult]) -> None:
    from tcpfair.plots import flow_legend, run_panel_data

    _, busy = loaded
    data = run_panel_data(busy)
    queue = data[data["panel"] == "queue"]
    assert {"forward queue", "reverse queue"} <= set(queue["series"])
    rq = queue[queue["series"] == "reverse queue"]["value"].to_numpy()
    assert busy.reverse_link is not None
    assert list(rq) == list(busy.reverse_link["queue_bytes"] * 1e-3)
    legend = flow_legend(busy)
    assert legend[0].endswith("(reno, 40 ms)") and legend[1].endswith("(reno, 40 ms, reverse)")


def test_tidy_export_has_reverse_columns_where_runs_have_them() -> None:
    from tcpfair.store import REVERSE_STATS, group_columns

    rev = {k: float(i + 1) for i, k in enumerate(REVERSE_STATS)}
    cols = group_columns([{"reverse": rev}, {}], pd.RangeIndex(2))
    assert list(cols.columns) == [f"reverse_{k}" for k in REVERSE_STATS]
    assert list(cols.iloc[0]) == list(rev.values())
    assert cols.iloc[1].isna().all()  # a run without a reverse bottleneck


def test_run_command_prints_the_reverse_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tcpfair.cli import cli

    (tmp_path / "s.toml").write_text(
        LOADED.replace('duration = "30s"', 'duration = "5s"') + REVERSE_LOAD
    )
    r = CliRunner().invoke(
        cli, ["run", str(tmp_path / "s.toml"), "--no-plot", "-o", str(tmp_path / "out")]
    )
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "direction" in out and "reverse: 4 connections" in out
    assert "(JFI, min/max, sum and retransmits above: forward connections" in out
    # not a terminal: one record per line, for scripts and grep (at rich's default 80
    # columns the JFI line lost its utilization and the reverse line its retransmits to
    # a second line)
    lines = r.output.splitlines()
    assert any(ln.startswith("JFI ") and " utilization " in ln for ln in lines), lines
    assert any(
        ln.startswith("reverse: 4 connections") and " drops " in ln and " retransmits " in ln
        for ln in lines
    ), lines
    assert (tmp_path / "out" / "reverse_link.parquet").exists()
    # with [measure] flows the line names it (as text, not rich markup)
    r = CliRunner().invoke(
        cli,
        ["run", str(tmp_path / "s.toml"), "--no-plot", "-o", str(tmp_path / "out2")]
        + ["--set", 'measure.flows=["fwd", "back"]'],
    )
    assert r.exit_code == 0, r.output
    assert "retransmits above: [measure] flows;" in " ".join(r.output.split())


def test_a_reverse_run_is_deterministic() -> None:
    """Same scenario and seed: the same output, ACK losses on both links included."""
    from tcpfair._core import simulate

    sc = from_dict(tomllib.loads(LOADED.replace('"30s"', '"5s"') + REVERSE_LOAD))
    a, b = simulate(sc.sim_json()), simulate(sc.sim_json())
    for table in ("flows", "samples", "link", "reverse_link"):
        for col, values in a[table].items():
            assert list(values) == list(b[table][col]), (table, col)
    assert a["reverse_link_totals"] == b["reverse_link_totals"]
    assert a["reverse_link_totals"]["ack_drops"] > 0


@pytest.mark.parametrize(
    "bottleneck",
    ['buffer = "30pkt"\nloss = 0.001', 'aqm = { kind = "red", min_th = "5pkt", max_th = "15pkt" }'],
    ids=["droptail-loss", "red"],
)
def test_a_reverse_flow_is_the_mirror_image_of_a_forward_one(bottleneck: str) -> None:
    """Two symmetric links: one forward connection (ACKs across the reverse link) and the
    same connection reversed (data across the reverse link, ACKs across the forward one)
    are mirror images — the same connection output, bit for bit, with the links' roles
    swapped. Random loss and RED draw from the same stream in the same order."""
    from tcpfair._core import simulate

    if "aqm" in bottleneck:
        bottleneck += '\nbuffer = "30pkt"'
    base = f"""
name = "m"
duration = "8s"
[bottleneck]
rate = "10Mbit"
{bottleneck}
REVERSE
[[flows]]
cca = "cubic"
rtt = "30ms"
DIRECTION
"""
    fwd_text = base.replace("REVERSE", "[bottleneck.reverse]").replace("DIRECTION", "")
    rev_text = base.replace("REVERSE", "").replace("DIRECTION", 'direction = "reverse"')
    fwd, rev = from_dict(tomllib.loads(fwd_text)), from_dict(tomllib.loads(rev_text))
    assert fwd.reverse_link() == rev.reverse_link()
    a, b = simulate(fwd.sim_json()), simulate(rev.sim_json())
    for table in ("flows", "samples"):
        for col, values in a[table].items():
            assert list(values) == list(b[table][col]), (table, col)
    for mine, theirs in (("link", "reverse_link"), ("reverse_link", "link")):
        for col, values in a[mine].items():
            assert list(values) == list(b[theirs][col]), (mine, col)
    assert a["link_totals"] == b["reverse_link_totals"]
    assert a["link_totals"]["drops"] + a["link_totals"]["random_losses"] > 0
