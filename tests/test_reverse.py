"""The reverse direction (issue 10 §1): ``direction = "reverse"`` and ``[bottleneck.reverse]``.

Spec: which link is in effect and what it resolves to. Simulator: reverse traffic loads the
reverse queue and delays the forward flows' ACKs; bytes are conserved per direction; the
reverse link's overrides take effect."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

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
