"""``bottleneck.netem_root`` and ``bottleneck.netem_latency`` (issue 9, Lab 11 §3): the
labs' tree, ``netem delay`` at the root with the tbf as its child. The spec emits the keys
only when set (every earlier scenario keeps its hash), round-trips them, the simulator
receives them and they change what the tbf drops, and the kernel backend — which delays in
linkem after its tbf, with no netem above it — refuses them before touching the machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from badinput import fails_cleanly

from tcpfair.backends import BackendError
from tcpfair.backends.kernel import KernelBackend
from tcpfair.backends.sim import SimBackend
from tcpfair.kernel.runner import KernelOptions
from tcpfair.spec import SpecError, from_dict, load_scenario

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "scenarios/lab11-100mtu.toml"


def lab_tree(**bottleneck: Any) -> dict[str, Any]:
    """One Reno flow at 10 Gbit/s, 20 ms, a 10-frame (16 000 B) tbf limit and a 5 MB
    bucket, no host jitter: a flight leaves and reaches the tbf at one instant."""
    return {
        "name": "t",
        "duration": "2s",
        "bottleneck": {
            "rate": "10Gbit",
            "buffer": "16000B",
            "mtu": "1600B",
            "burst": "5000000B",
            **bottleneck,
        },
        "flows": [{"cca": "reno", "rtt": "20ms", "jitter": "0s"}],
        "measure": {"from": "0s"},
    }


def test_the_keys_resolve_only_when_set_and_are_part_of_the_identity() -> None:
    off = from_dict(lab_tree())
    on = from_dict(lab_tree(netem_root=True))
    late = from_dict(lab_tree(netem_root=True, netem_latency="55us"))
    assert "netem_root" not in off.resolved()["bottleneck"]
    assert "netem_latency_ns" not in on.resolved()["bottleneck"]
    assert on.resolved()["bottleneck"]["netem_root"] is True
    assert late.resolved()["bottleneck"]["netem_latency_ns"] == 55_000
    assert from_dict(lab_tree(netem_root=False)).hash() == off.hash()
    assert len({off.hash(), on.hash(), late.hash()}) == 3


def test_the_keys_round_trip_through_the_scenario_file() -> None:
    late = from_dict(lab_tree(netem_root=True, netem_latency="55us"))
    again = from_dict(late.to_dict())
    assert again.resolved() == late.resolved()


def test_under_netem_the_tbf_cuts_a_flight_it_would_have_passed() -> None:
    # At ≤ 1.2 Gbit/s (the default 3 MB receive window over 20 ms) a 5 MB bucket at
    # 10 Gbit/s never runs dry: without netem every packet passes, nothing is dropped.
    # Under netem a whole flight enters the 16 000 B backlog at once: IW10 (10 × 1600 B)
    # just fits, the next flight (20 frames) does not, so there are drops from the second
    # round trip on, and the flow is held near 10 frames per RTT (≈ 6.4 Mbit/s).
    off = SimBackend().run(from_dict(lab_tree()))
    on = SimBackend().run(from_dict(lab_tree(netem_root=True)))
    assert int(off.link["drops"].sum()) == 0 and int(off.flows["retransmits"].sum()) == 0
    assert int(on.link["drops"].sum()) > 0 and int(on.flows["retransmits"].sum()) > 0
    assert on.flows["bytes"].sum() < off.flows["bytes"].sum() / 10


@pytest.mark.parametrize(
    ("override", "mentions"),
    [
        (["bottleneck.netem_root=true"], ["bottleneck.netem_root", "needs bottleneck.burst"]),
        (
            ["bottleneck.netem_root=maybe"],
            ["bottleneck.netem_root", "not true or false; allowed: true or false", "maybe"],
        ),
        (
            ["bottleneck.burst=5000000B", "bottleneck.netem_latency=50us"],
            ["bottleneck.netem_latency", "netem_root = true"],
        ),
    ],
    ids=["without-burst", "not-a-boolean", "latency-without-netem"],
)
def test_bad_values_fail_with_one_line(override: list[str], mentions: list[str]) -> None:
    sets = [a for o in override for a in ("--set", o)]
    fails_cleanly(["run", str(LAB), *sets, "--no-plot"], mentions=mentions)


def test_kernel_backend_refuses_netem_root_before_touching_the_machine(monkeypatch: Any) -> None:
    def no(*_: Any) -> Any:
        raise AssertionError("the kernel backend looked at the machine first")

    monkeypatch.setattr(KernelBackend, "capabilities", no)
    sc = load_scenario(LAB, ["bottleneck.burst=5000000B", "bottleneck.netem_root=true"])
    with pytest.raises(BackendError) as e:
        KernelBackend(KernelOptions()).check(sc)
    msg = str(e.value)
    assert "bottleneck.netem_root" in msg and "--backend sim" in msg and "\n" not in msg


def test_kernel_refusal_on_the_command_line(tmp_path: Path) -> None:
    fails_cleanly(
        ["run", str(LAB), "--backend", "kernel", "--set", "bottleneck.burst=5000000B"]
        + ["--set", "bottleneck.netem_root=true", "-o", str(tmp_path / "out")],
        mentions=["bottleneck.netem_root", "--backend sim"],
        unchanged=[tmp_path],
        code=None,
    )


def test_a_refused_netem_root_is_the_only_problem_reported() -> None:
    """netem_latency is checked against netem_root only when netem_root itself was valid:
    a bad netem_root with a latency set is one problem, not two."""
    with pytest.raises(SpecError) as e:
        from_dict(lab_tree(netem_root="maybe", netem_latency="55us"))
    assert "bottleneck.netem_root" in str(e.value)
    assert "netem_latency" not in str(e.value)
