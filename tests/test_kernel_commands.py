"""Kernel backend, without root: topology, command builders, capability messages, checks,
and the conversion of a captured iperf3 report. Nothing here touches the system."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tcpfair.backends import BackendError
from tcpfair.backends.kernel import KernelBackend, parse_group
from tcpfair.kernel import commands as C
from tcpfair.kernel import topology as T
from tcpfair.kernel import validate as V
from tcpfair.kernel.capabilities import Capabilities, machine_problems, scenario_problems
from tcpfair.kernel.runner import KernelOptions, client_seconds, setup_commands, user_queue
from tcpfair.spec import from_dict

FIXTURES = Path(__file__).parent / "fixtures" / "kernel"


def scenario(**over: object) -> dict:
    d: dict = {
        "name": "t",
        "duration": "10s",
        "bottleneck": {"rate": "100Mbit", "buffer": "1bdp"},
        "flows": [
            {"cca": "reno", "rtt": "20ms"},
            {
                "cca": "bbr",
                "rtt": "41ms",
                "start": "2s",
                "streams": 2,
                "rmem": "1MB",
                "wmem": "2MB",
            },
        ],
        "measure": {"interval": "1s"},
    }
    d.update(over)
    return d


def caps(**over: object) -> Capabilities:
    c = Capabilities(
        os_ok=True,
        root=True,
        tools={t: f"/usr/bin/{t}" for t in ("ip", "tc", "iperf3", "ethtool", "sysctl", "cat")},
        netns=True,
        ccas=["reno", "cubic", "bbr"],
        qdiscs={"tbf": True, "pfifo": True, "bfifo": True, "netem": False},
        linkem="/x/tcpfair-linkem",
        kernel="6.1",
        iperf3_version="3.12",
    )
    for k, v in over.items():
        setattr(c, k, v)
    return c


# ----------------------------------------------------------------------------- topology
def test_topology_names_addresses_and_delays() -> None:
    sc = from_dict(scenario())
    topo = T.build(sc.resolved(), "0a1b2c", {"reno": "reno", "bbr": "bbr"})
    assert topo.namespaces == [
        "tf-0a1b2c-rt",
        "tf-0a1b2c-em",
        "tf-0a1b2c-rx",
        "tf-0a1b2c-s0",
        "tf-0a1b2c-s1",
        "tf-0a1b2c-r0",
        "tf-0a1b2c-r1",
    ]
    g0, g1 = topo.groups
    assert (g0.sender_ip, g0.receiver_ip, g1.sender_ip, g1.receiver_ip) == (
        "10.1.0.2",
        "10.2.0.2",
        "10.1.1.2",
        "10.2.1.2",
    )
    # one-way delays add up to the configured RTT exactly (odd ns go to the ACK direction)
    assert (g0.fwd_delay_ns, g0.rev_delay_ns) == (10_000_000, 10_000_000)
    assert (g1.fwd_delay_ns, g1.rev_delay_ns) == (20_500_000, 20_500_000)
    assert (g1.streams, g1.first_flow, g1.server_port, g1.cport) == (2, 1, 5202, 21024)
    assert all(len(v.if_a) <= 15 and len(v.if_b) <= 15 for v in topo.links)
    macs = [m for v in topo.links for m in (v.mac_a, v.mac_b)]
    assert len(set(macs)) == len(macs)


def test_names_are_validated() -> None:
    with pytest.raises(ValueError):
        T.check_run_id("ABCDEF")
    with pytest.raises(ValueError):
        T.check_name("tf-x; rm -rf /")
    with pytest.raises(ValueError):
        T.check_ifname("a-very-long-interface-name")
    assert T.split_delay(5) == (2, 3)


# ----------------------------------------------------------------------------- commands
def test_veth_is_created_inside_both_namespaces() -> None:
    v = T.Veth(
        "tf-000000-s0",
        "eth0",
        "02:00:00:00:00:01",
        "10.1.0.2/24",
        "tf-000000-rt",
        "s0",
        "02:00:00:00:00:02",
        None,
    )
    cmds = C.veth(v, 1500)
    assert cmds[0] == [
        "ip",
        "-n",
        "tf-000000-s0",
        "link",
        "add",
        "name",
        "eth0",
        "address",
        "02:00:00:00:00:01",
        "mtu",
        "1500",
        "type",
        "veth",
        "peer",
        "name",
        "s0",
        "address",
        "02:00:00:00:00:02",
        "mtu",
        "1500",
        "netns",
        "tf-000000-rt",
    ]
    assert ["ip", "-n", "tf-000000-s0", "addr", "add", "10.1.0.2/24", "dev", "eth0"] in cmds
    assert not any(c[3:5] == ["addr", "add"] and c[2] == "tf-000000-rt" for c in cmds)


def test_tcp_mem_triples_follow_the_labs() -> None:
    # Lab 10: sysctl -w net.ipv4.tcp_rmem='10240 87380 52428800'
    assert C.tcp_mem_triple(10240, 87380, 52428800) == "10240 87380 52428800"
    # a maximum below Linux's default pulls default and min down (min <= default <= max)
    assert C.tcp_mem_triple(4096, 131072, 65536) == "4096 65536 65536"
    assert C.tcp_mem_triple(4096, 131072, 2000) == "2000 2000 2000"
    cmds = C.host_sysctls("tf-000000-s0", 1_000_000, 2_000_000, sack=False)
    # an unpaced, never-restricted default before iperf3 -C switches the socket (D5)
    assert cmds[0] == [
        "ip",
        "netns",
        "exec",
        "tf-000000-s0",
        "sysctl",
        "-q",
        "-w",
        "net.ipv4.tcp_congestion_control=reno",
    ]
    assert [
        "ip",
        "netns",
        "exec",
        "tf-000000-s0",
        "sysctl",
        "-q",
        "-w",
        "net.ipv4.tcp_rmem=4096 131072 1000000",
    ] in cmds
    assert [
        "ip",
        "netns",
        "exec",
        "tf-000000-s0",
        "sysctl",
        "-q",
        "-w",
        "net.ipv4.tcp_wmem=4096 16384 2000000",
    ] in cmds
    assert [
        "ip",
        "netns",
        "exec",
        "tf-000000-s0",
        "sysctl",
        "-q",
        "-w",
        "net.ipv4.tcp_sack=0",
    ] in cmds


def test_tbf_parameters() -> None:
    # 1 BDP at 100 Mbit/s × 20 ms = 250 000 B; burst = max(2 frames, 100 µs × rate) = 3028 B
    p = C.tbf_params(100_000_000, 250_000, None, 1500, gso=False)
    assert (p.burst_bytes, p.limit_bytes, p.child_pfifo_pkts) == (3028, 250_000, None)
    assert C.tbf("tf-000000-rt", "em", p) == [
        [
            "tc",
            "-n",
            "tf-000000-rt",
            "qdisc",
            "replace",
            "dev",
            "em",
            "root",
            "handle",
            "1:",
            "tbf",
            "rate",
            "100000000bit",
            "burst",
            "3028",
            "limit",
            "250000",
        ]
    ]
    # 10 Gbit/s: 100 µs is 125 000 B
    assert C.tbf_params(10_000_000_000, 10**7, None, 1500, gso=False).burst_bytes == 125_000
    # a buffer in packets becomes a pfifo child; the byte limit must not bind first
    q = C.tbf_params(100_000_000, None, 100, 1500, gso=False)
    assert q.child_pfifo_pkts == 100 and q.limit_bytes >= 100 * 1514
    assert C.tbf("tf-000000-rt", "em", q)[1][-4:] == ["handle", "10:", "pfifo", "limit", "100"][-4:]
    # GSO on: tbf must accept 64 KiB aggregates
    assert C.tbf_params(100_000_000, 250_000, None, 1500, gso=True).burst_bytes > 65536
    # a scenario's bottleneck.burst is used as given (the labs' `burst 5000000`)
    lab = C.tbf_params(10_000_000_000, 160_000, None, 1600, True, burst_bytes=5_000_000)
    assert (lab.burst_bytes, lab.limit_bytes) == (5_000_000, 160_000)


def test_parse_qdisc_stats_from_tc_json() -> None:
    out = [
        {
            "kind": "tbf",
            "handle": "1:",
            "root": True,
            "refcnt": 2,
            "bytes": 1234,
            "packets": 9,
            "drops": 3,
            "overlimits": 40,
            "requeues": 0,
            "backlog": 4542,
            "qlen": 3,
        },
        {
            "kind": "pfifo",
            "handle": "10:",
            "parent": "1:1",
            "bytes": 1234,
            "packets": 9,
            "drops": 3,
            "backlog": 4542,
            "qlen": 3,
        },
    ]
    assert C.parse_qdisc_stats(out) == {
        "bytes": 1234,
        "packets": 9,
        "drops": 3,
        "backlog_bytes": 4542,
        "backlog_pkts": 3,
        "overlimits": 40,
    }


def test_iperf3_argv() -> None:
    sc = from_dict(scenario())
    topo = T.build(sc.resolved(), "0a1b2c", {"reno": "reno", "bbr": "bbr"})
    g1 = topo.groups[1]
    argv = C.iperf3_client(g1, ["/l", "exec"], 8, None, 0.5, None)
    assert argv[:4] == ["ip", "netns", "exec", "tf-0a1b2c-s1"]
    assert argv[4:] == [
        "/l",
        "exec",
        "iperf3",
        "-c",
        "10.2.1.2",
        "-B",
        "10.1.1.2",
        "-p",
        "5202",
        "--cport",
        "21024",
        "-C",
        "bbr",
        "-P",
        "2",
        "-J",
        "-i",
        "0.5",
        "--get-server-output",
        "-t",
        "8",
    ]
    srv = C.iperf3_server(g1, [], 0.5)
    assert srv == [
        "ip",
        "netns",
        "exec",
        "tf-0a1b2c-r1",
        "iperf3",
        "-s",
        "-1",
        "-B",
        "10.2.1.2",
        "-p",
        "5202",
        "-J",
        "-i",  # the server reports on the client's interval grid
        "0.5",
    ]
    assert C.iperf3_client(g1, [], None, 10**6, 1.0, 5_000_000)[-4:] == [
        "-n",
        "1000000",
        "-b",
        "5000000",
    ]
    # flow 1 starts at 2 s in a 10 s run: 8 s of traffic
    assert client_seconds(2_000_000_000, None, 10_000_000_000) == 8
    assert client_seconds(0, 500_000_000, 10_000_000_000) == 1


def test_setup_commands_order_and_content() -> None:
    sc = from_dict(scenario())
    topo = T.build(sc.resolved(), "0a1b2c", {"reno": "reno", "bbr": "bbr"})
    cmds = setup_commands(topo, sc, KernelOptions())
    adds = [i for i, c in enumerate(cmds) if c[:3] == ["ip", "netns", "add"]]
    assert adds == list(range(7)), "namespaces first"
    # nothing is ever created or routed in the root namespace
    for c in cmds:
        assert c[:3] in (["ip", "netns", "add"], ["ip", "netns", "exec"]) or c[1] == "-n", c
    ethtool = [c for c in cmds if "ethtool" in c]
    assert len(ethtool) == 2 * len(topo.links) and all(
        c[-6:] == ["gso", "off", "tso", "off", "gro", "off"] for c in ethtool
    )
    assert any(c[-2:] == ["nud", "permanent"] for c in cmds), "static neighbours on the relay link"
    tbf = [c for c in cmds if c[0] == "tc"]
    assert tbf[0][2] == "tf-0a1b2c-rt" and "tbf" in tbf[0]
    # per-host buffers of group 1 on both of its hosts
    for ns in ("tf-0a1b2c-s1", "tf-0a1b2c-r1"):
        assert [
            "ip",
            "netns",
            "exec",
            ns,
            "sysctl",
            "-q",
            "-w",
            "net.ipv4.tcp_rmem=4096 131072 1000000",
        ] in cmds
    on = setup_commands(topo, sc, KernelOptions(gso=True))
    assert all(c[-6:] == ["gso", "on", "tso", "on", "gro", "on"] for c in on if "ethtool" in c)


def test_red_moves_the_bottleneck_into_linkem() -> None:
    sc = from_dict(
        scenario(
            bottleneck={
                "rate": "10Mbit",
                "buffer": "100pkt",
                "aqm": {"kind": "red", "min_th": "15pkt", "max_th": "45pkt", "max_p": 0.1},
            }
        )
    )
    q = user_queue(sc)
    assert q is not None
    assert q["rate_bps"] == 10_000_000 and q["limit_pkts"] == 100 and q["limit_bytes"] is None
    assert q["red"] == {
        "min_th": 15.0,
        "max_th": 45.0,
        "max_p": 0.1,
        "wq": 0.002,
        "bytes": False,
        "gentle": False,
    }
    topo = T.build(sc.resolved(), "0a1b2c", {"reno": "reno", "bbr": "bbr"})
    assert not [c for c in setup_commands(topo, sc, KernelOptions()) if c[0] == "tc"], (
        "no tbf when linkem shapes"
    )
    cfg = C.relay_config(topo, 0.0, 1, q, False, 1500, 10)
    assert cfg["classes"][1] == {
        "net": "10.1.1.0",
        "prefix": 24,
        "fwd_delay_ns": 20_500_000,
        "rev_delay_ns": 20_500_000,
    }
    assert cfg["queue"] is q and cfg["max_frame"] == 2048


# ----------------------------------------------------------------------------- capabilities
def test_capability_messages() -> None:
    assert machine_problems(caps()) == []
    msgs = machine_problems(
        caps(
            root=False,
            tools={
                "ip": "/ip",
                "tc": "/tc",
                "iperf3": None,
                "ethtool": "/e",
                "sysctl": "/s",
                "cat": "/c",
            },
            linkem=None,
        )
    )
    assert any("needs root" in m for m in msgs)
    assert any("iperf3 not found" in m for m in msgs)
    assert any("tcpfair-linkem not found" in m for m in msgs)
    assert any(
        "'tbf' qdisc" in m for m in machine_problems(caps(qdiscs={"tbf": False, "pfifo": True}))
    )
    assert any("'ip netns' does not work" in m for m in machine_problems(caps(netns=False)))


def test_scenario_messages_name_the_key() -> None:
    sc = from_dict(
        scenario(
            flows=[
                {"cca": "reno", "rtt": "20ms"},
                {"cca": "vegas", "rtt": "20ms"},
                {"cca": "compound", "rtt": "0.5ms"},
            ]
        )
    )
    msgs = scenario_problems(sc, caps(), gso=False)
    assert any(
        m.startswith("flows.1.cca: 'vegas' is not available")
        and "supports: bbr, cubic, newreno, reno" in m
        for m in msgs
    ), msgs
    assert any(m.startswith("flows.2.cca: 'compound'") for m in msgs)
    assert any(m.startswith("flows.2.rtt:") for m in msgs)
    fast = from_dict(scenario(bottleneck={"rate": "10Gbit", "buffer": "1bdp"}))
    from tcpfair.kernel.capabilities import max_rate_bps

    assert max_rate_bps(False, 2, {}) == 300_000_000 and max_rate_bps(True, 2, {}) == 500_000_000
    assert max_rate_bps(False, 2, {"TCPFAIR_KERNEL_MAX_RATE": "2Gbit"}) == 2_000_000_000
    with pytest.raises(ValueError, match="TCPFAIR_KERNEL_MAX_RATE='fast'"):
        max_rate_bps(False, 2, {"TCPFAIR_KERNEL_MAX_RATE": "fast"})
    assert any(m.startswith("bottleneck.rate:") for m in scenario_problems(fast, caps(), gso=False))
    tiny = from_dict(scenario(bottleneck={"rate": "100Mbit", "buffer": "1000B"}))
    assert any(
        m.startswith("bottleneck.buffer:") for m in scenario_problems(tiny, caps(), gso=False)
    )


def test_check_raises_one_clear_error() -> None:
    be = KernelBackend()
    be._caps = caps()
    be.check(from_dict(scenario()))
    with pytest.raises(BackendError, match=r"flows\.0\.cca: 'vegas' is not available.*supports"):
        be.check(from_dict(scenario(flows=[{"cca": "vegas", "rtt": "20ms"}])))
    be._caps = caps(root=False)
    with pytest.raises(BackendError, match="needs root"):
        be.check(from_dict(scenario()))


# ----------------------------------------------------------------------------- validation
def test_goodput_capacity_is_mss_over_frame() -> None:
    # 1448 B of payload in every 1514 B frame
    assert V.goodput_capacity_bps(100e6, 1500) == pytest.approx(100e6 * 1448 / 1514)


def _late(mean_us: float, max_ms: float, over: int, n: int = 100_000, errors: int = 0) -> dict:
    return {
        "late": {
            "mean_ns": mean_us * 1e3,
            "max_ns": int(max_ms * 1e6),
            "n": n,
            "over_1ms": over,
            "p99_us": 64,
        },
        "send_errors": errors,
    }


def _grades(final: dict | None, drain_s: float | None = 0.020, rtt_s: float | None = 0.020):
    return {c["name"]: c["grade"] for c in V.lateness_checks(final, drain_s, rtt_s)}


def test_checks_pass_and_fail_at_their_limits() -> None:
    ok = V.rtt_checks({0: 0.020}, {0: {"median_ns": 20_400_000}})
    bad = V.rtt_checks({0: 0.020}, {0: {"median_ns": 20_600_000}})
    assert ok[0]["ok"] and not bad[0]["ok"] and "+0.600 ms" in bad[0]["message"]
    assert (ok[0]["grade"], bad[0]["grade"]) == ("ok", "invalid")
    assert not V.lateness_checks(None)[0]["ok"]
    assert V.goodput_check(97.5e6, 95.64e6)["ok"] and not V.goodput_check(99e6, 95e6)["ok"]
    # 1 % loss, 100 000 packets: sd = 31.5 packets; 1100 lost is 3.2 sd off, 1200 is 6.3 sd
    assert V.loss_check(0.01, 1100, 100_000)["ok"] and not V.loss_check(0.01, 1200, 100_000)["ok"]
    # a saturated CPU is a warning (its effect, lateness, is graded by itself); "ok" is
    # false only for invalid checks
    cpu = {c["name"]: (c["grade"], c["ok"]) for c in V.cpu_checks(0.95, 0.5, 2)}
    assert cpu == {"cpu.emulator": ("warning", True), "cpu.machine": ("ok", True)}


def test_rate_check_counts_intervals_the_backlog_alone_keeps_busy() -> None:
    # 100 ms samples at 40 Mbit/s: an interval's worth is 500 000 B. The queue at t = 0.3
    # holds less, so the interval 0.3–0.4 does not count, whatever it sent (the link may
    # have idled inside it); all others start with 600 000 B queued.
    t = [round(0.1 * i, 1) for i in range(16)]
    q = [600_000] * 16
    q[3] = 499_000
    tx = [0] + [500_000] * 15
    tx[4] = 20_000
    c = V.rate_check(t, q, tx, 40e6)
    assert c is not None and c["name"] == "rate.bottleneck"
    assert c["value"] == pytest.approx(40e6) and c["grade"] == "ok"
    # 14 intervals = 1.4 s; 2 % short → warning, 4 % short → invalid, 4 % over → invalid
    for f, grade in ((0.98, "warning"), (0.96, "invalid"), (1.04, "invalid"), (1.005, "ok")):
        got = V.rate_check(t, q, [round(x * f) for x in tx], 40e6)
        assert got is not None and got["grade"] == grade, (f, got)
    # under 1 s that qualifies: nothing to measure
    assert V.rate_check(t[:10], q[:10], tx[:10], 40e6) is None
    assert V.rate_check(t, [400_000] * 16, tx, 40e6) is None


def test_lateness_is_graded_by_what_it_can_do() -> None:
    # the VM's usual run: 50 of 100 000 frames (0.05 %) over 1 ms, longest 1.2 ms, at a
    # 20 ms buffer and RTT: ok
    assert _grades(_late(30, 1.2, 50)) == {
        "emulator.lateness_mean": "ok",
        "emulator.late_share": "ok",
        "emulator.lateness_max": "ok",
        "emulator.send_errors": "ok",
    }
    # the longest stall: invalid beyond the drain time (3 frames at 100 Mbit/s drain in
    # 0.363 ms), a warning beyond half of it or beyond the shortest RTT
    short = {c["name"]: c for c in V.lateness_checks(_late(30, 1.2, 50), 3 * 1514 * 8 / 100e6)}
    assert short["emulator.lateness_max"]["grade"] == "invalid"
    assert "0.363 ms a full buffer takes to drain" in short["emulator.lateness_max"]["message"]
    # the message says what the grade means: 1.2 ms past the 1 ms target is still ok at a
    # 20 ms drain time (it read "ok below 1 ms" beside an ok grade)
    usual = {c["name"]: c for c in V.lateness_checks(_late(30, 1.2, 50), 0.020)}
    assert usual["emulator.lateness_max"]["grade"] == "ok"
    assert usual["emulator.lateness_max"]["message"] == (
        "emulator lateness max 1.200 ms (design target 1 ms; a warning above 10 ms, "
        "invalid above the 20 ms a full buffer takes to drain)"
    )
    stalls = [_grades(_late(30, ms, 50))["emulator.lateness_max"] for ms in (9.9, 10.1, 20.1)]
    assert stalls == ["ok", "warning", "invalid"]
    assert _grades(_late(30, 2.5, 50), 0.020, 0.002)["emulator.lateness_max"] == "warning"
    # below the 1 ms design target, even a drain time of 0.5 ms is not graded down
    assert _grades(_late(30, 0.9, 0), 0.0005)["emulator.lateness_max"] == "ok"
    # share of frames over 1 ms: ok below 0.1 %, invalid from 1 %
    share = [_grades(_late(30, 2, k))["emulator.late_share"] for k in (99, 100, 999, 1000)]
    assert share == ["ok", "warning", "warning", "invalid"]
    # mean: ok below 50 µs, invalid from the RTT tolerance (0.5 ms)
    mean = [_grades(_late(us, 2, 0))["emulator.lateness_mean"] for us in (49, 50, 499, 500)]
    assert mean == ["ok", "warning", "warning", "invalid"]
    # frames lost to failed sends: a warning below 0.1 % of the frames
    errs = [_grades(_late(30, 0.5, 0, errors=e))["emulator.send_errors"] for e in (0, 99, 100)]
    assert errs == ["ok", "warning", "invalid"]


def test_a_run_takes_its_worst_grade() -> None:
    def c(grade: str) -> dict:
        return V.graded("x", grade, 0, 0, "")

    assert V.overall([]) == "ok"
    assert V.overall([c("ok"), c("warning")]) == "warning"
    assert V.overall([c("warning"), c("invalid"), c("ok")]) == "invalid"
    # results saved before grades existed: the grade follows "ok"
    assert V.overall([{"name": "old", "ok": False}]) == "invalid"
    assert V.grade_of({"name": "old", "ok": True}) == "ok"
    with pytest.raises(ValueError, match="grade must be one of"):
        V.graded("x", "bad", 0, 0, "")


# ----------------------------------------------------------------------------- conversion
def test_parse_group_takes_goodput_from_the_receiver_and_tcp_info_from_the_sender() -> None:
    text = (FIXTURES / "iperf3-3.12-client-P2-get-server-output.json").read_text()
    obj = json.loads(text)
    tables, samples = parse_group(text, "0:cubic", 0, 5, 1.5)
    assert list(tables.flows["flow"]) == [5, 6]
    # flow bytes: the receiver's totals from the end summary, per stream in cport order
    recv = {s["receiver"]["socket"]: s["receiver"]["bytes"] for s in obj["end"]["streams"]}
    by_port = {c["local_port"]: recv[c["socket"]] for c in obj["start"]["connected"]}
    assert list(tables.flows["bytes"]) == [by_port[20000], by_port[20001]]
    # interval bytes come from the server's report, cwnd from the client's
    srv = obj["server_output_json"]
    sock_of_port = {c["remote_port"]: c["socket"] for c in srv["start"]["connected"]}
    first = [s for s in srv["intervals"][0]["streams"] if s["socket"] == sock_of_port[20001]][0]
    row = samples[(samples["flow"] == 6)].iloc[0]
    assert row["bytes"] == first["bytes"]
    assert row["t_s"] == pytest.approx(1.5 + first["end"])
    cli_sock = {c["local_port"]: c["socket"] for c in obj["start"]["connected"]}[20001]
    cli_first = [s for s in obj["intervals"][0]["streams"] if s["socket"] == cli_sock][0]
    assert row["cwnd_bytes"] == cli_first["snd_cwnd"]
    # per-stream sum of receiver intervals equals the receiver's total
    for port, fid in ((20000, 5), (20001, 6)):
        assert samples[samples["flow"] == fid]["bytes"].sum() == by_port[port]
    # the server's closing 17 ms sliver is folded into the last full interval
    last_srv = [s for s in srv["intervals"][-1]["streams"] if s["socket"] == sock_of_port[20001]][0]
    assert last_srv["seconds"] < 0.05 and len(srv["intervals"]) == 4
    f6 = samples[samples["flow"] == 6]
    assert len(f6) == 3
    assert f6["dt_s"].iloc[-1] == pytest.approx(1.0 + last_srv["seconds"], abs=0.01)
    assert f6["throughput_bps"].iloc[-1] == pytest.approx(
        f6["bytes"].iloc[-1] * 8 / f6["dt_s"].iloc[-1]
    )


def test_options_from_the_environment() -> None:
    o = KernelOptions.from_env({})
    assert (o.gso, o.rt_priority, o.keep_workdir) == (False, 10, False)
    o = KernelOptions.from_env(
        {"TCPFAIR_KERNEL_GSO": "on", "TCPFAIR_KERNEL_RT_PRIORITY": "0", "TCPFAIR_KERNEL_KEEP": "1"}
    )
    assert (o.gso, o.rt_priority, o.keep_workdir) == (True, 0, True)
    with pytest.raises(ValueError, match="TCPFAIR_KERNEL_GSO='maybe'"):
        KernelOptions.from_env({"TCPFAIR_KERNEL_GSO": "maybe"})
    assert KernelOptions.from_env({"TCPFAIR_KERNEL_BOTTLENECK": "linkem"}).bottleneck == "linkem"
    with pytest.raises(ValueError, match="TCPFAIR_KERNEL_BOTTLENECK='fq'"):
        KernelOptions.from_env({"TCPFAIR_KERNEL_BOTTLENECK": "fq"})
    with pytest.raises(ValueError, match="TCPFAIR_KERNEL_RT_PRIORITY='120'"):
        KernelOptions.from_env({"TCPFAIR_KERNEL_RT_PRIORITY": "120"})
    # the tbf burst as a time at the rate: 2 ms at 100 Mbit/s = 25 000 B
    o = KernelOptions.from_env({"TCPFAIR_KERNEL_BURST": "2ms"})
    assert C.tbf_params(100_000_000, 250_000, None, 1500, False, o.burst_s).burst_bytes == 25_000
    with pytest.raises(ValueError, match="TCPFAIR_KERNEL_BURST='fast'.*expected a time"):
        KernelOptions.from_env({"TCPFAIR_KERNEL_BURST": "fast"})
    with pytest.raises(ValueError, match="TCPFAIR_KERNEL_BURST='1s'.*at most 100ms"):
        KernelOptions.from_env({"TCPFAIR_KERNEL_BURST": "1s"})


def test_user_space_drop_tail_when_asked() -> None:
    sc = from_dict(scenario(bottleneck={"rate": "10Mbit", "buffer": "30KB"}))
    assert user_queue(sc) is None
    q = user_queue(sc, KernelOptions(bottleneck="linkem"))
    assert q == {
        "rate_bps": 10_000_000,
        "limit_bytes": 30_000,
        "limit_pkts": None,
        "red": None,
        "mean_pkt_bytes": 1514,
    }
    topo = T.build(sc.resolved(), "0a1b2c", {"reno": "reno", "bbr": "bbr"})
    assert not [
        c for c in setup_commands(topo, sc, KernelOptions(bottleneck="linkem")) if c[0] == "tc"
    ]


def test_one_kernel_run_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    from tcpfair.kernel import procs

    monkeypatch.setattr(procs, "STATE_DIR", tmp_path)
    probe = (
        "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR)\n"
        "try:\n fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "except BlockingIOError:\n sys.exit(3)"
    )
    with procs.machine_lock():
        lock = tmp_path / "kernel.lock"
        assert lock.read_text() == str(os.getpid())
        assert subprocess.run([sys.executable, "-c", probe, str(lock)]).returncode == 3
    assert subprocess.run([sys.executable, "-c", probe, str(lock)]).returncode == 0


def test_parse_group_says_so_when_sender_and_receiver_intervals_differ() -> None:
    # A server left at iperf3's default -i 1 under a client at -i 0.1 reported 10× fewer
    # intervals, and matching by interval number put 0.1 s cwnd values on 1 s rows.
    obj = json.loads((FIXTURES / "iperf3-3.12-client-P2-get-server-output.json").read_text())
    same, _ = parse_group(json.dumps(obj), "0:cubic", 0, 5, 1.5)
    assert not any("interval counts" in n for n in same.info.get("notes", []))
    obj["server_output_json"]["intervals"] = obj["server_output_json"]["intervals"][:1]
    tables, _samples = parse_group(json.dumps(obj), "0:cubic", 0, 5, 1.5)
    assert any("different interval counts" in n for n in tables.info["notes"])


def test_proc_net_counters_are_read_per_namespace() -> None:
    assert C.proc_net_counters("tf-000000-s0") == [
        "ip",
        "netns",
        "exec",
        "tf-000000-s0",
        "cat",
        "/proc/net/snmp",
        "/proc/net/netstat",
    ]
    text = (
        "Ip: Forwarding DefaultTTL InReceives\n"
        "Ip: 2 64 977\n"
        "Tcp: RtoMin MaxConn ActiveOpens RetransSegs EstabResets\n"
        "Tcp: 200 -1 3 18 0\n"
        "Udp: InDatagrams\n"
        "Udp: 5\n"
        "TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes DelayedACKs\n"
        "TcpExt: 0 2 7 0\n"
        "IpExt: InNoRoutes\n"
        "IpExt: 1\n"
    )
    # Tcp and TcpExt only, zeros left out, negative values kept
    assert C.parse_proc_net_counters(text) == {
        "Tcp.RtoMin": 200,
        "Tcp.MaxConn": -1,
        "Tcp.ActiveOpens": 3,
        "Tcp.RetransSegs": 18,
        "TcpExt.TCPTimeouts": 2,
        "TcpExt.TCPLossProbes": 7,
    }
    assert C.parse_proc_net_counters("") == {}


def test_run_output_lists_checks_notes_and_the_verdict() -> None:
    import io

    import pandas as pd
    from rich.console import Console

    from tcpfair.kernel.display import print_checks
    from tcpfair.result import RunResult

    def shown(final: dict, drain_s: float) -> str:
        checks = V.lateness_checks(final, drain_s, 0.020)
        meta = {
            "checks": checks,
            "grade": V.overall(checks),
            "kernel": {"notes": ["flows.0.ack_jitter: a simulator model of host ACK noise"]},
        }
        r = RunResult(flows=pd.DataFrame(), samples=pd.DataFrame(), link=pd.DataFrame(), meta=meta)
        buf = io.StringIO()
        print_checks(r, Console(file=buf, width=300))
        return buf.getvalue()

    warned = shown(_late(30, 1.2, 50), 0.002)
    assert "warn emulator lateness max 1.200 ms" in warned
    assert "note flows.0.ack_jitter: a simulator model" in warned
    assert "run valid, with warnings: emulator.lateness_max" in warned
    bad = shown(_late(30, 1.2, 50), 0.0005)
    assert "FAIL emulator lateness max 1.200 ms" in bad
    assert "run INVALID: failed emulator.lateness_max" in bad


def test_an_entry_whose_connections_differ_gets_an_address_class_and_iperf3_pair_each() -> None:
    flows = [
        {"cca": "reno", "rtt": "20ms"},
        {"cca": "bbr", "rtt": ["10ms", "41ms"], "streams": 2, "start": ["1s", "3s"]},
    ]
    sc = from_dict(scenario(flows=flows))
    topo = T.build(sc.resolved(), "0a1b2c", {"reno": "reno", "bbr": "bbr"})
    g0, g1 = topo.groups
    assert g0.conns == ()  # one connection: one -P 1 client as before
    c0, c1 = g1.conns
    assert (c0.ip, c0.port, c0.cport, c0.flow, c0.unit) == ("10.1.1.10", 30064, 21024, 1, "1.0")
    assert (c1.ip, c1.port, c1.cport, c1.flow, c1.unit) == ("10.1.1.11", 30065, 21025, 2, "1.1")
    assert (c1.fwd_delay_ns, c1.rev_delay_ns, c1.start_ns) == (20_500_000, 20_500_000, 3 * 10**9)
    # the entry's /24 class and idle probe take connection 0's RTT
    assert g1.rtt_ns == 10_000_000
    assert topo.rtts_ns() == [20_000_000, 10_000_000, 10_000_000, 41_000_000]
    cmds = setup_commands(topo, sc, KernelOptions())
    assert ["ip", "-n", "tf-0a1b2c-s1", "addr", "add", "10.1.1.11/32", "dev", "eth0"] in cmds
    cfg = C.relay_config(topo, 0.0, 1, None, False, 1500, 0)
    # linkem takes the first matching class: the /32s come before the entries' /24s
    assert [(c["net"], c["prefix"], c["fwd_delay_ns"]) for c in cfg["classes"]] == [
        ("10.1.1.10", 32, 5_000_000),
        ("10.1.1.11", 32, 20_500_000),
        ("10.1.0.0", 24, 10_000_000),
        ("10.1.1.0", 24, 5_000_000),
    ]
    cli = C.iperf3_client(g1, [], 7, None, 1.0, None, c1)
    assert cli[cli.index("-B") + 1] == "10.1.1.11" and cli[cli.index("-p") + 1] == "30065"
    assert cli[cli.index("--cport") + 1] == "21025" and cli[cli.index("-P") + 1] == "1"
    srv = C.iperf3_server(g1, [], 1.0, c1)
    assert srv[srv.index("-B") + 1] == "10.2.1.2" and srv[srv.index("-p") + 1] == "30065"


def test_identical_connections_keep_their_commands() -> None:
    # a list whose values are all equal runs as before: one -P client, no extra address
    same = scenario(flows=[{"cca": "bbr", "rtt": ["41ms", "41ms"], "streams": 2}])
    plain = scenario(flows=[{"cca": "bbr", "rtt": "41ms", "streams": 2}])
    kc = {"bbr": "bbr"}
    ta = T.build(from_dict(same).resolved(), "0a1b2c", kc)
    tb = T.build(from_dict(plain).resolved(), "0a1b2c", kc)
    assert ta.groups[0].conns == ()
    assert setup_commands(ta, from_dict(same), KernelOptions()) == setup_commands(
        tb, from_dict(plain), KernelOptions()
    )
    assert C.relay_config(ta, 0.0, 1, None, False, 1500, 0) == C.relay_config(
        tb, 0.0, 1, None, False, 1500, 0
    )


def test_sized_connections_of_one_entry_run_apart() -> None:
    # iperf3 -n with -P 2 would stop when both streams together sent 1 MB; the scenario's
    # size is each connection's, so each gets its own -P 1 client with -n 1000000
    sc = from_dict(scenario(flows=[{"cca": "bbr", "rtt": "41ms", "streams": 2, "size": "1MB"}]))
    g = T.build(sc.resolved(), "0a1b2c", {"bbr": "bbr"}).groups[0]
    assert [(c.flow, c.size_bytes, c.rtt_ns) for c in g.conns] == [
        (0, 1_000_000, 41_000_000),
        (1, 1_000_000, 41_000_000),
    ]
    for c in g.conns:
        cli = C.iperf3_client(g, [], 7, 1_000_000, 1.0, None, c)
        assert cli[cli.index("-P") + 1] == "1" and cli[cli.index("-n") + 1] == "1000000"
    # one sized connection: its -n is its own already
    one = from_dict(scenario(flows=[{"cca": "bbr", "rtt": "41ms", "size": "1MB"}]))
    assert T.build(one.resolved(), "0a1b2c", {"bbr": "bbr"}).groups[0].conns == ()


def test_children_of_split_connections_are_named_in_messages() -> None:
    from tcpfair.kernel.runner import describe_child

    assert describe_child("client3") == "the iperf3 client of flows.3"
    assert describe_child("server2.5") == "the iperf3 server of flows.2 (connection 5)"
    assert describe_child("tclient1") == (
        "the short-flow generator's client (tcpfair-traffic) of flows.1"
    )
    assert describe_child("server2.x") == "server2.x"


def test_short_flows_with_an_rtt_list_bind_to_their_rtts_address() -> None:
    flows = [
        {"cca": "reno", "rtt": ["10ms", "60ms", "10ms"], "size": "100KB",
         "arrivals": {"process": "fixed", "rate": "2/s"}},
    ]  # fmt: skip
    sc = from_dict(scenario(flows=flows))
    topo = T.build(sc.resolved(), "0a1b2c", {"reno": "reno"})
    (g,) = topo.groups
    assert [(c.ip, c.rtt_ns) for c in g.conns] == [
        ("10.1.0.10", 10_000_000),
        ("10.1.0.11", 60_000_000),
    ]
    assert g.rtt_ns == 10_000_000
    doc = C.traffic_schedule(g, [0, 1, 2, 3], [5, 6, 7, 8], 100, [10**7, 6 * 10**7, 10**7, 10**7])
    assert [f["src"] for f in doc["flows"]] == ["10.1.0.10", "10.1.0.11", "10.1.0.10", "10.1.0.10"]
    assert {f["dst"] for f in doc["flows"]} == {"10.2.0.2:6201"}
    cfg = C.relay_config(topo, 0.0, 1, None, False, 1500, 0)
    assert [(c["net"], c["prefix"]) for c in cfg["classes"]] == [
        ("10.1.0.10", 32),
        ("10.1.0.11", 32),
        ("10.1.0.0", 24),
    ]
    # a list of one distinct value is a plain value: the entry's own address
    one = from_dict(scenario(flows=[{**flows[0], "rtt": ["20ms", "20ms"]}]))
    assert T.build(one.resolved(), "0a1b2c", {"reno": "reno"}).groups[0].conns == ()


def test_short_flows_with_a_drawn_rtt_get_a_source_port_and_port_delay_each() -> None:
    flows = [
        {"cca": "reno", "rtt": {"dist": "uniform", "min": "10ms", "max": "80ms"},
         "size": "100KB", "start": "1s", "stop": "3s",
         "arrivals": {"process": "fixed", "rate": "2/s"}},
    ]  # fmt: skip
    sc = from_dict(scenario(flows=flows))
    draws = sc.short_flow_schedule(0).rtt_ns.tolist()
    assert len(draws) == 4  # 1, 1.5, 2, 2.5 s
    drawn = T.drawn_rtts(sc)
    assert drawn == {0: (45_000_000, tuple(draws))}  # uniform(10, 80) ms: mean 45 ms
    topo = T.build(sc.resolved(), "0a1b2c", {"reno": "reno"}, drawn)
    (g,) = topo.groups
    # no address per flow: the entry's own, whose /24 class (and the idle probe) take the mean
    assert g.conns == () and g.rtt_ns == 45_000_000 and g.port_rtts_ns == tuple(draws)
    assert topo.rtts_ns() == [45_000_000, *draws]
    doc = C.traffic_schedule(g, [0, 1, 2, 3], [5, 6, 7, 8], 100)
    assert [f["sport"] for f in doc["flows"]] == [20000, 20001, 20002, 20003]
    assert {f["src"] for f in doc["flows"]} == {"10.1.0.2"}
    (cls,) = C.relay_config(topo, 0.0, 1, None, False, 1500, 0)["classes"]
    assert (cls["net"], cls["prefix"], cls["fwd_delay_ns"]) == ("10.1.0.0", 24, 22_500_000)
    ports = cls["ports"]
    assert ports["base"] == 20000
    # each draw split as every RTT: the floor half forward, the rest on the ACK direction
    assert [f + r for f, r in zip(ports["fwd_delay_ns"], ports["rev_delay_ns"], strict=True)] == (
        draws
    )
    assert ports["fwd_delay_ns"] == [d // 2 for d in draws]
    assert topo.as_dict()["groups"][0]["port_rtts"] == {"sport_base": 20000, "flows": 4}
    # a plain or listed RTT keeps its schedule and classes without ports
    plain = from_dict(scenario(flows=[{**flows[0], "rtt": "20ms"}]))
    assert T.drawn_rtts(plain) == {}
    tp = T.build(plain.resolved(), "0a1b2c", {"reno": "reno"}, {})
    assert "sport" not in C.traffic_schedule(tp.groups[0], [0], [5], 100)["flows"][0]
    assert "ports" not in C.relay_config(tp, 0.0, 1, None, False, 1500, 0)["classes"][0]
    assert "far" not in ports  # the forward entry's ports are its own side's


def test_reverse_short_flows_with_rtts_of_their_own_go_by_the_far_ends_port() -> None:
    # a reverse entry's list: every flow connects to the sender host's one server, so each
    # binds port 20000 + k in the receiver host and linkem keys on that far-end port
    flows = [
        {"cca": "reno", "rtt": ["10ms", "60ms"], "size": "100KB", "start": "1s", "stop": "3s",
         "direction": "reverse", "arrivals": {"process": "fixed", "rate": "2/s"}},
    ]  # fmt: skip
    sc = from_dict(scenario(flows=flows))
    assert T.drawn_rtts(sc) == {0: (10_000_000, (10_000_000, 60_000_000) * 2)}
    topo = T.build(sc.resolved(), "0a1b2c", {"reno": "reno"}, T.drawn_rtts(sc))
    (g,) = topo.groups
    assert g.conns == () and g.reverse
    doc = C.traffic_schedule(g, [0, 1, 2, 3], [5, 6, 7, 8], 100)
    assert [f["sport"] for f in doc["flows"]] == [20000, 20001, 20002, 20003]
    assert {f["src"] for f in doc["flows"]} == {"10.2.0.2"}  # from the receiver host
    (cls,) = C.relay_config(topo, 0.0, 1, None, False, 1500, 0)["classes"]
    assert cls["ports"]["far"] is True
    assert cls["ports"]["fwd_delay_ns"] == [5_000_000, 30_000_000] * 2


def test_the_short_transfer_note_prints_one_number_for_one_value() -> None:
    """The note for sized connections that iperf3 ended early gives a range only where the
    values differ (it printed "902,104–902,104 of their 1,000,000–1,000,000 bytes")."""
    import pandas as pd

    from tcpfair.backends.kernel import _short_transfer_notes

    res = {
        "flows": [
            {"group": 0, "size_bytes": None},
            {"group": 1, "size_bytes": 1_000_000},
            {"group": 2, "size_bytes": 1_000_000},
            {"group": 2, "size_bytes": 2_000_000},
        ]
    }
    parts = [pd.DataFrame({"flow": [0, 1, 2, 3], "bytes": [5, 902_104, 700_000, 1_500_000]})]
    one, two = _short_transfer_notes(res, parts)
    assert one.startswith(
        "flows.1: 1 sized connection(s) delivered 902,104 of their 1,000,000 bytes "
    )
    assert two.startswith(
        "flows.2: 2 sized connection(s) delivered 700,000–1,500,000 of their "
        "1,000,000–2,000,000 bytes "
    )


def test_a_finished_transfer_is_padded_to_the_run_end_as_the_simulator_does() -> None:
    """A sized connection's iperf3 samples end with its transfer; the simulator's go on with
    empty intervals. Padded, its throughput is its bytes over the same time on both
    backends: 1,000,000 B from a sample ending at 1.5 s to the end at 4 s is 2 Mbit/s over
    1–4 s, not 16 Mbit/s over its one sample (the headline sum passed the link)."""
    import numpy as np
    import pandas as pd

    from tcpfair.backends.kernel import pad_to_run_end

    s = pd.DataFrame(
        {
            "flow": [1],
            "t_s": [1.5],
            "dt_s": [0.5],
            "bytes": [1_000_000],
            "throughput_bps": [16e6],
            "cwnd_bytes": [6e4],
            "srtt_s": [0.02],
            "retransmits": [3.0],
        }
    )
    out = pad_to_run_end(s, end_s=4.0, interval_s=0.5)
    assert out["t_s"].tolist() == [1.5, 2.0, 2.5, 3.0, 3.5, 4.0]
    assert out["dt_s"].sum() == pytest.approx(3.0)
    assert out["bytes"].sum() == 1_000_000 and out["retransmits"].sum() == 3
    assert out.dtypes.to_dict() == s.dtypes.to_dict()
    assert np.isnan(out["cwnd_bytes"].iloc[1:]).all()  # closed: no window, no RTT
    assert out["bytes"].sum() * 8 / out["dt_s"].sum() == pytest.approx(1_000_000 * 8 / 3.0)
    # an off-grid end: a last short interval of at least half a one; less stays unsampled
    assert pad_to_run_end(s, 3.8, 0.5)["t_s"].tolist() == [1.5, 2.0, 2.5, 3.0, 3.5, 3.8]
    assert pad_to_run_end(s, 3.7, 0.5)["t_s"].tolist() == [1.5, 2.0, 2.5, 3.0, 3.5]
    # a transfer that ran to the end is left as it is
    assert pad_to_run_end(s, 1.7, 0.5).equals(s)
