"""``stack = "ns2"`` (issue 9 §1): the spec accepts it where ns-2 has the algorithm, refuses
it with one line elsewhere, keeps every existing scenario's resolved form and hash, and
the kernel backend refuses it before creating anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from badinput import fails_cleanly

from tcpfair.backends import BackendError
from tcpfair.backends.kernel import KernelBackend
from tcpfair.backends.sim import SimBackend
from tcpfair.spec import apply_overrides, from_dict, load_scenario

ROOT = Path(__file__).resolve().parent.parent
NS2 = ROOT / "scenarios/validation/vegas-table3-ns2.toml"
NS2_T4 = ROOT / "scenarios/validation/vegas-table4-ns2.toml"
SACK1 = ROOT / "scenarios/validation/ns2-sack1-loss.toml"

#: Content hashes of the shipped scenarios computed with the spec before ``stack`` existed
#: (main at 838bd2f). A linux flow must resolve exactly as before, so these stay.
HASHES_BEFORE = {
    "scenarios/lab10-reno-vs-bbr-10g.toml": "630395b29a1f4a98",
    "scenarios/lab10-reno-vs-bbr.toml": "3ab24e048afe557a",
    "scenarios/lab10-reno-vs-reno-10g.toml": "d44c92d610d88689",
    "scenarios/lab10-reno-vs-reno.toml": "8fd9dcbd2d07dedc",
    "scenarios/lab11-100mtu-10g.toml": "11f78e5e5a1cf0c3",
    "scenarios/lab11-100mtu.toml": "86b5bdccddbdde87",
    "scenarios/lab11-1bdp-10g.toml": "03beb75b3bd29cb3",
    "scenarios/lab11-1bdp.toml": "a005b375ff2e0376",
    "scenarios/lab11-loss-10g.toml": "52348259addcd7aa",
    "scenarios/lab11-loss.toml": "24e84d7764dfd9ed",
    "scenarios/validation/bbr-vs-cubic.toml": "d8d1a02115de093f",
    "scenarios/validation/mathis.toml": "3700fff773a1586c",
    "scenarios/validation/rtt-20-80.toml": "6d70cf6eb965b397",
    "scenarios/validation/single-reno-buffer.toml": "ecc670f88efc2447",
    "scenarios/validation/vegas-table3.toml": "014b7f371ee18f82",
}


@pytest.mark.parametrize("path", sorted(HASHES_BEFORE), ids=lambda p: Path(p).name)
def test_existing_scenarios_keep_their_hash(path: str) -> None:
    sc = load_scenario(ROOT / path)
    assert sc.hash() == HASHES_BEFORE[path]
    assert all("stack" not in c for c in sc.resolved()["flows"])


def base(**flow: Any) -> dict[str, Any]:
    f = {"cca": "vegas", "rtt": "10ms", "stack": "ns2", **flow}
    return {
        "name": "t",
        "duration": "20s",
        "bottleneck": {"rate": "1.5Mbit", "buffer": "100pkt", "mtu": "1040B"},
        "flows": [f, {"cca": "reno", "rtt": "30ms"}],
        "measure": {"from": "5s"},
    }


def test_ns2_flow_resolves_with_its_stack_and_params() -> None:
    sc = from_dict(base(delta=2, exact_base_rtt=True, delack=True))
    ns2, linux = sc.resolved()["flows"]
    assert ns2["stack"] == "ns2" and ns2["delack"] is True
    assert ns2["cca_params"] == {"delta": 2.0, "exact_base_rtt": 1.0}
    assert "stack" not in linux and "delack" not in linux
    assert "delack" not in from_dict(base()).resolved()["flows"][0]
    # the written form round-trips
    assert from_dict(sc.to_dict()).hash() == sc.hash()
    # and the stack is part of the identity of the run
    plain = from_dict(apply_overrides(base(), ["flows.0.stack=linux"]))
    assert plain.hash() != from_dict(base()).hash()


@pytest.mark.parametrize(
    ("override", "mentions"),
    [
        ("flows.0.stack=bsd", ["flows.0.stack", "unknown stack", "linux, ns2"]),
        ("flows.0.cca=cubic", ["flows.0.stack", "'cubic'", "reno, newreno, sack, vegas"]),
        ("flows.0.cca=bbr", ["flows.0.stack", "'bbr'", "reno, newreno, sack, vegas"]),
        ("flows.0.size=10MB", ["flows.0.stack", "size is not supported", 'stack = "linux"']),
        ("flows.0.app_rate=1Mbit", ["flows.0.stack", "app_rate is not supported"]),
        ("flows.0.delta=2", ["flows.0.delta", "replaces alpha and beta"]),
        ("flows.0.delta=0", ["flows.0.delta", "a whole number from 1 to 1000000"]),
        ("flows.0.stack=7", ["flows.0.stack"]),
        ("flows.0.cwnd_clamp=2000000", ["flows.0.stack", "at most 1048576", "got 2000000"]),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_stack_settings_fail_with_one_line(override: str, mentions: list[str]) -> None:
    fails_cleanly(["run", str(NS2), "--set", override, "--no-plot"], mentions=mentions)


@pytest.mark.parametrize(
    ("override", "mentions"),
    [
        ("flows.1.delta=2", ["flows.1.delta", 'a parameter of vegas under stack = "ns2"']),
        (
            "flows.1.exact_base_rtt=true",
            ["flows.1.exact_base_rtt", 'a parameter of vegas under stack = "ns2"'],
        ),
        ("flows.1.delack=true", ["flows.1.delack", 'stack = "ns2" only']),
        # stack left at its default: the line names cca, not params (it said
        # "flows.1.params: sack parameter : congestion control ... does not exist")
        ("flows.1.cca=sack", ["flows.1.cca", "'sack'", 'only under stack = "ns2"', "got 'sack'"]),
        ("flows.1.stack=ns2", []),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_ns2_only_keys_on_a_linux_flow(override: str, mentions: list[str]) -> None:
    linux = ROOT / "scenarios/validation/vegas-table3.toml"
    if override == "flows.1.stack=ns2":
        # the linux scenario becomes valid under ns2 (vegas exists there): no error
        assert load_scenario(linux, [override]).flows[1].stack == "ns2"
        return
    fails_cleanly(["run", str(linux), "--set", override, "--no-plot"], mentions=mentions)


def test_delta_on_reno_under_ns2_is_refused(tmp_path: Path) -> None:
    # a scenario file (not an override): the line names the file's key
    p = tmp_path / "s.toml"
    p.write_text(
        NS2_T4.read_text().replace('cca = "vegas"', 'cca = "reno"', 1),
    )
    fails_cleanly(["run", str(p), "--no-plot"], mentions=["flows.0.delta", "vegas"])


def test_kernel_backend_refuses_ns2_before_touching_the_machine(monkeypatch: Any) -> None:
    def no(*_: Any) -> Any:
        raise AssertionError("the kernel backend looked at the machine first")

    monkeypatch.setattr(KernelBackend, "capabilities", no)
    sc = load_scenario(NS2)
    with pytest.raises(BackendError) as e:
        KernelBackend().check(sc)
    msg = str(e.value)
    assert "flows.0.stack" in msg and "ns2" in msg and "\n" not in msg


def test_kernel_backend_refusal_on_the_command_line(tmp_path: Path) -> None:
    fails_cleanly(
        ["run", str(NS2), "--backend", "kernel", "-o", str(tmp_path / "out")],
        mentions=["flows.0.stack", "simulator"],
        unchanged=[tmp_path],
        code=None,
    )


def test_ns2_vegas_runs_and_differs_from_linux_vegas() -> None:
    over = ["duration=20s", "measure.from=5s"]
    ns2 = SimBackend().run(load_scenario(NS2, over))
    linux = SimBackend().run(
        load_scenario(NS2, [*over, "flows.0.stack=linux", "flows.1.stack=linux"])
    )

    def rates(r: Any) -> list[float]:
        s = r.samples[r.samples["t_s"] > 5]
        return list(s.groupby("flow")["throughput_bps"].mean())

    # Agent/TCP/Vegas puts packetSize_ bytes on the wire with no headers added (its own
    # output() in tcp-vegas.cc), so all 1.5 Mbit/s is payload; Vegas keeps the link full
    assert sum(rates(ns2)) == pytest.approx(1.5e6, rel=0.01)
    assert ns2.flows["retransmits"].sum() == 0
    assert rates(ns2) != rates(linux)


def sack_vs_reno(cca: str) -> tuple[int, int, float]:
    """scenarios/validation/ns2-sack1-loss.toml (one ns-2 flow, 10 Mbit/s, 50 ms, 2 %
    random loss, window_ 100, 30 s) with ``cca``: (timeouts, retransmits, throughput)."""
    r = SimBackend().run(load_scenario(SACK1, [f"flows.0.cca={cca}"]))
    timeouts = r.meta["sim_flows"]["timeouts"][0]
    return timeouts, int(r.flows["retransmits"].iloc[0]), float(r.samples["throughput_bps"].mean())


def test_ns2_sack1_recovers_where_reno_times_out() -> None:
    reno_to, reno_rtx, reno_thr = sack_vs_reno("reno")
    sack_to, sack_rtx, sack_thr = sack_vs_reno("sack")
    # Reno leaves recovery at the first new ACK, so a second loss in the window waits for
    # the timer; Sack1 retransmits every hole the scoreboard shows in the same recovery
    assert reno_to >= 3
    assert sack_to == 0
    assert sack_rtx > 0
    # ... and so carries more: no RTO idles (each ≥ 200 ms, minrto_) and no cwnd of 1
    assert sack_thr > reno_thr


def test_sack_is_an_ns2_agent_only() -> None:
    fails_cleanly(
        ["run", str(NS2), "--set", "flows.0.stack=linux", "--set", "flows.0.cca=sack"],
        mentions=["flows.0.stack", "'sack'", "reno"],
    )
