"""``bottleneck.burst`` (issue 9, the Lab 11 §3 gap): tbf's token bucket. Emitted only when
set (every earlier scenario keeps its hash), part of the identity, taken by the simulator
(the mechanism's hand-computed cases are the Rust tests in crates/sim/src/link.rs), and
bounded as a token bucket bounds what leaves it: at most ``burst`` + rate × time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tcpfair.backends.sim import SimBackend
from tcpfair.spec import from_dict, load_scenario

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "scenarios/lab11-100mtu.toml"


def base(**bottleneck: Any) -> dict[str, Any]:
    return {
        "name": "t",
        "duration": "4s",
        "bottleneck": {"rate": "10Mbit", "buffer": "20pkt", **bottleneck},
        "flows": [{"cca": "cubic", "rtt": "20ms"}],
        "measure": {"from": "1s"},
    }


def test_burst_resolves_only_when_set_and_is_part_of_the_identity() -> None:
    on, off = from_dict(base(burst="5000000B")), from_dict(base())
    assert on.resolved()["bottleneck"]["burst_bytes"] == 5_000_000
    assert "burst_bytes" not in off.resolved()["bottleneck"]
    assert on.hash() != off.hash()
    assert from_dict(on.to_dict()).hash() == on.hash()


def test_what_leaves_a_token_bucket_is_bounded_by_burst_plus_rate_times_time() -> None:
    over = ["duration=3s", "measure.from=1s"]
    plain = SimBackend().run(load_scenario(LAB, over))
    # 100 kB of tokens at 100 Mbit/s: 8 ms of unshaped traffic at most
    burst = 100_000
    tbf = SimBackend().run(load_scenario(LAB, [*over, f"bottleneck.burst={burst}B"]))
    assert list(plain.flows["bytes"]) != list(tbf.flows["bytes"])
    capacity = 100e6 / 8 * 3  # bytes the rate allows in 3 s
    # IP bytes the link sent (flows' bytes are payload, below this)
    sent = tbf.link["tx_bytes"].sum()
    assert sent <= capacity + burst
    assert plain.link["tx_bytes"].sum() <= capacity
