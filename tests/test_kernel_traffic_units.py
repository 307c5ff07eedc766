"""Kernel backend's reverse direction and short flows, without root (issue 10 §1, §3):
topology, commands, linkem's reverse queue, the generator's schedule and the matching of
its client and server records. Nothing here touches the system."""

from __future__ import annotations

import math

import pandas as pd

from tcpfair import registry
from tcpfair.kernel import commands as C
from tcpfair.kernel import shortflows as SF
from tcpfair.kernel import topology as T
from tcpfair.kernel import validate as V
from tcpfair.kernel.capabilities import Capabilities, traffic_missing
from tcpfair.kernel.runner import KernelOptions, reverse_queue, setup_commands
from tcpfair.shortflows import SHORT_COLUMNS
from tcpfair.spec import from_dict

KCCA = {k: v for k, v in registry.kernel_modules().items() if v is not None}


def mixed(**bottleneck: object) -> dict:
    return {
        "name": "t",
        "duration": "4s",
        "bottleneck": {"rate": "50Mbit", "buffer": "100pkt", **bottleneck},
        "flows": [
            {"cca": "cubic", "rtt": "20ms"},
            {"cca": "reno", "rtt": "40ms", "direction": "reverse", "cwnd_clamp": 30},
            {
                "cca": "cubic",
                "rtt": "10ms",
                "size": "20KB",
                "arrivals": {"process": "fixed", "rate": "10/s"},
                "start": "1s",
                "stop": "2s",
            },
        ],
    }


def topo(d: dict) -> T.Topology:
    return T.build(from_dict(d).resolved(), "abc123", KCCA)


def test_topology_has_a_group_per_entry_with_direction_and_kind() -> None:
    t = topo(mixed())
    g0, g1, g2 = t.groups
    assert (g0.direction, g0.short, g0.streams) == ("forward", False, 1)
    assert (g1.direction, g1.short, g1.rtt_ns) == ("reverse", False, 40_000_000)
    assert (g2.short, g2.streams, g2.rtt_ns, g2.cca) == (True, 0, 10_000_000, "cubic")
    assert g1.data_sender == ("tf-abc123-r1", "10.2.1.2")
    assert g1.data_receiver == ("tf-abc123-s1", "10.1.1.2")
    assert g0.data_sender == ("tf-abc123-s0", "10.1.0.2")
    assert g2.traffic_port == 6203 and g2.server_port == 5203
    assert t.as_dict()["groups"][2]["traffic"] == "tcpfair-traffic"


def test_reverse_iperf3_client_runs_with_R_and_the_clamp_sits_on_the_data_sender() -> None:
    t = topo(mixed())
    fwd = C.iperf3_client(t.groups[0], [], 4, None, 1.0, None)
    rev = C.iperf3_client(t.groups[1], [], 4, None, 1.0, None)
    assert "-R" not in fwd and rev[-1] == "-R"
    assert rev[:4] == ["ip", "netns", "exec", "tf-abc123-s1"]  # the client stays in s1
    assert rev[rev.index("-C") + 1] == "reno"
    clamp = C.cwnd_clamp_route(t.groups[1], 30)
    assert clamp[:3] == ["ip", "-n", "tf-abc123-r1"] and "10.2.1.1" in clamp
    cmds = setup_commands(t, from_dict(mixed()), KernelOptions())
    assert clamp in cmds


def test_generator_commands_and_schedule() -> None:
    g = topo(mixed()).groups[2]
    assert C.traffic_server(g, "/t/tcpfair-traffic") == [
        "ip", "netns", "exec", "tf-abc123-r2", "/t/tcpfair-traffic", "server", "10.2.2.2:6203",
    ]  # fmt: skip
    assert C.traffic_client(g, "/t/tcpfair-traffic", "/w/s.json")[3:] == [
        "tf-abc123-s2", "/t/tcpfair-traffic", "client", "/w/s.json",
    ]  # fmt: skip
    doc = C.traffic_schedule(g, [1_000_000_000, 1_100_000_000], [20_000, 7], 555)
    assert doc == {
        "t0_mono_ns": 555,
        "flows": [
            {"id": 0, "start_ns": 1_000_000_000, "size": 20_000, "cca": "cubic",
             "src": "10.1.2.2", "dst": "10.2.2.2:6203"},
            {"id": 1, "start_ns": 1_100_000_000, "size": 7, "cca": "cubic",
             "src": "10.1.2.2", "dst": "10.2.2.2:6203"},
        ],
    }  # fmt: skip


def test_the_schedule_is_the_simulators_draws() -> None:
    sc = from_dict(mixed())
    s = sc.short_flow_schedule(2)
    # fixed process at 10/s between 1 s and 2 s: 1.0, 1.1, …, 1.9 s
    assert s.start_ns.tolist() == [1_000_000_000 + k * 100_000_000 for k in range(10)]
    assert set(s.size_bytes.tolist()) == {20_000}


def test_reverse_queue_defaults_to_the_forward_link_and_takes_overrides() -> None:
    assert reverse_queue(from_dict({**mixed(), "flows": mixed()["flows"][:1]})) is None
    q, loss = reverse_queue(from_dict(mixed(loss=0.01)))  # type: ignore[misc]
    assert q == {
        "rate_bps": 50_000_000,
        "limit_bytes": None,
        "limit_pkts": 100,
        "red": None,
        "mean_pkt_bytes": 1514,
    }
    assert loss == 0.01
    rev = {"rate": "10Mbit", "buffer": "30000B", "loss": 0.0}
    q, loss = reverse_queue(from_dict(mixed(reverse=rev)))  # type: ignore[misc]
    assert (q["rate_bps"], q["limit_bytes"], q["limit_pkts"], loss) == (10_000_000, 30_000, None, 0)
    red = {"kind": "red", "min_th": "5pkt", "max_th": "15pkt", "max_p": 0.1}
    q, _ = reverse_queue(from_dict(mixed(reverse={"aqm": red})))  # type: ignore[misc]
    assert q["red"] is not None and (q["red"]["min_th"], q["red"]["max_th"]) == (5, 15)


def test_relay_config_has_the_reverse_keys_only_with_a_reverse_link() -> None:
    t = topo(mixed())
    plain = C.relay_config(t, 0.0, 1, None, False, 1500, 10)
    assert "rev_queue" not in plain and "rev_loss" not in plain
    q = {"rate_bps": 1}
    cfg = C.relay_config(t, 0.0, 1, None, False, 1500, 10, rev_queue=q, rev_loss=0.02)
    assert (cfg["rev_queue"], cfg["rev_loss"]) == (q, 0.02)


def client_rec(i: int, port: int | None, connect: int | None, size: int = 100) -> dict:
    return {
        "id": i, "start_ns": 1000 * i, "size": size, "connect_ns": connect, "local_port": port,
        "bytes_sent": size, "done_ns": None, "cca": "cubic", "total_retrans": 2, "timeouts": 1,
        "error": None,
    }  # fmt: skip


def server_rec(port: int, accept: int, last: int, nbytes: int = 100, eof: bool = True) -> dict:
    return {
        "peer_ip": "10.1.2.2", "peer_port": port, "accept_ns": accept, "first_byte_ns": accept,
        "last_byte_ns": last, "bytes": nbytes, "eof": eof, "error": None,
    }  # fmt: skip


def test_client_and_server_records_match_by_port_then_time() -> None:
    # port 4000 is used twice: the first connection accepted after each connect is its own
    client = [client_rec(0, 4000, 10_000), client_rec(1, 4001, 20_000), client_rec(2, 4000, 50_000)]
    server = [server_rec(4000, 60_000, 90_000), server_rec(4000, 15_000, 30_000),
              server_rec(4001, 25_000, 45_000)]  # fmt: skip
    m = SF.match(client, server)
    assert [c["accept_ns"] if c else None for c in m] == [15_000, 25_000, 60_000]


def test_fct_is_the_servers_last_byte_minus_the_clients_connect() -> None:
    t0 = 1_000_000_000
    client = [
        client_rec(0, 4000, t0 + 5_000_000),
        client_rec(1, 4001, t0 + 6_000_000),  # the server saw only part of it
        client_rec(2, None, None),  # never connected
    ]
    server = [
        server_rec(4000, t0 + 6_000_000, t0 + 35_000_000),
        server_rec(4001, t0 + 7_000_000, t0 + 9_000_000, nbytes=60, eof=False),
    ]
    df = SF.table(3, "web", client, server, t0, 0.02, 10e6)
    assert list(df.columns) == [*SHORT_COLUMNS, "start_late_s", "error"]
    assert df["fct_s"].iloc[0] == 0.030
    assert bool(df["completed"].iloc[0]) and df["label"].iloc[0] == "web"
    # the ideal FCT at the link rate: 1.5 RTT + size at 10 Mbit/s = 0.03 + 0.00008 s
    assert df["ideal_s"].iloc[0] == 1.5 * 0.02 + 100 * 8 / 10e6
    assert df["slowdown"].iloc[0] == 0.030 / df["ideal_s"].iloc[0]
    assert df["start_s"].iloc[0] == 0.005
    assert df["start_late_s"].iloc[0] == (5_000_000 - 0) / 1e9
    assert math.isnan(df["fct_s"].iloc[1]) and df["bytes"].iloc[1] == 60
    assert not df["completed"].iloc[1] and not df["completed"].iloc[2]
    assert df["error"].iloc[1] == "not completed"
    assert math.isnan(df["fct_s"].iloc[2]) and df["start_s"].iloc[2] == 2000 / 1e9
    assert (df["retransmits"].iloc[0], df["timeouts"].iloc[0]) == (2.0, 1.0)
    checks = V.short_flow_checks(3, df)
    assert (
        checks[0]["grade"] == "invalid" and "1 of 3 short flows completed" in checks[0]["message"]
    )


def test_unreadable_generator_output_is_one_clear_error() -> None:
    for text, needle in (("", "printed nothing"), ("{", "unreadable"), ('{"x": 1}', "unreadable")):
        try:
            SF.load(text, "flows", "the generator client of flows.2")
        except SF.TrafficOutputError as e:
            assert needle in str(e) and str(e).startswith("the generator client of flows.2")
        else:
            raise AssertionError(text)


def test_short_flow_checks_grade_late_starts_as_a_warning() -> None:
    df = pd.DataFrame({"flow": range(100), "error": [None] * 100, "start_late_s": [0.02] * 100})
    ok, late = V.short_flow_checks(0, df)
    assert ok["grade"] == "ok" and late["grade"] == "warning"


def test_missing_generator_names_how_to_build_it() -> None:
    c = Capabilities(
        os_ok=True, root=True, tools={}, netns=True, ccas=[], qdiscs={}, linkem="/x",
        kernel="6", iperf3_version="3.12",
    )  # fmt: skip
    msg = traffic_missing(c) or ""
    assert "cargo build --release -p tcpfair-traffic" in msg and "TCPFAIR_TRAFFIC" in msg
    c.traffic = "/x/tcpfair-traffic"
    assert traffic_missing(c) is None


def test_reverse_lateness_is_graded_on_its_own() -> None:
    late = {"n": 100, "mean_ns": 10_000, "max_ns": 5_000_000, "over_1ms": 0, "p99_us": 16}
    bad = {**late, "mean_ns": 900_000}
    final = {
        "late_a2b": late,
        "late_b2a": bad,
        "a2b": {"send_errors": 0},
        "b2a": {"send_errors": 0},
    }
    fwd = V.lateness_checks(V.direction_final(final, "a2b"))
    rev = V.lateness_checks(V.direction_final(final, "b2a"), prefix="emulator.reverse")
    assert [c["name"] for c in rev][0] == "emulator.reverse.lateness_mean"
    assert fwd[0]["grade"] == "ok" and rev[0]["grade"] == "invalid"
