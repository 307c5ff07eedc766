"""``gso = true`` (issue 9 §2): GSO/TSO senders. The spec accepts it on Linux flows only and
emits it only when true (so every earlier scenario keeps its hash, tests/test_stack_ns2.py),
the simulator receives it, the ``*-gso`` lab scenarios set it on every flow, and the kernel
backend maps it to its GSO-on mode — refusing, before touching the machine, flows that
disagree (offloads belong to the hosts' interfaces, which all flows share)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from badinput import fails_cleanly

from tcpfair.backends import BackendError
from tcpfair.backends.kernel import KernelBackend
from tcpfair.backends.sim import SimBackend
from tcpfair.kernel.runner import KernelOptions
from tcpfair.spec import apply_overrides, from_dict, load_scenario

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "scenarios/lab11-100mtu.toml"
GSO_VARIANTS = sorted((ROOT / "scenarios").glob("lab1[01]-*-10g-gso.toml"))


def base(**flow: Any) -> dict[str, Any]:
    return {
        "name": "t",
        "duration": "10s",
        "bottleneck": {"rate": "100Mbit", "buffer": "20pkt"},
        "flows": [{"cca": "cubic", "rtt": "20ms", **flow}, {"cca": "reno", "rtt": "20ms"}],
        "measure": {"from": "2s"},
    }


def test_gso_resolves_only_when_true_and_is_part_of_the_identity() -> None:
    on, off = from_dict(base(gso=True)), from_dict(base())
    assert on.resolved()["flows"][0]["gso"] is True
    assert all("gso" not in f for f in off.resolved()["flows"])
    assert from_dict(base(gso=False)).hash() == off.hash()
    assert on.hash() != off.hash()
    assert from_dict(on.to_dict()).hash() == on.hash()


def test_the_simulator_takes_gso_and_it_changes_the_run() -> None:
    over = ["duration=10s", "measure.from=2s"]
    plain = SimBackend().run(load_scenario(LAB, over))
    gso = SimBackend().run(load_scenario(LAB, [*over, "flows.0.gso=true", "flows.1.gso=true"]))
    assert list(plain.flows["bytes"]) != list(gso.flows["bytes"])


@pytest.mark.parametrize(
    ("override", "mentions"),
    [
        (
            "flows.0.gso=maybe",
            ["flows.0.gso", "not true or false; allowed: true or false", "maybe"],
        ),
        ("flows.0.gso=7", ["flows.0.gso", "not true or false; allowed: true or false", "7"]),
        (
            "flows.1.gso=[1]",
            ["flows.1.gso", "not true or false; allowed: true or false", "(got [1])"],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_gso_values_fail_with_one_line(override: str, mentions: list[str]) -> None:
    fails_cleanly(["run", str(LAB), "--set", override, "--no-plot"], mentions=mentions)


def test_gso_on_an_ns2_flow_is_refused() -> None:
    ns2 = ROOT / "scenarios/validation/vegas-table3-ns2.toml"
    fails_cleanly(
        ["run", str(ns2), "--set", "flows.0.gso=true", "--no-plot"],
        mentions=["flows.0.gso", 'stack = "linux" only'],
    )


@pytest.mark.parametrize("path", GSO_VARIANTS, ids=lambda p: p.name)
def test_gso_variants_are_the_labs_as_run(path: Path) -> None:
    sc = load_scenario(path)
    plain = load_scenario(ROOT / "scenarios" / path.name.replace("-gso", ""))
    assert all(f.gso for f in sc.flows) and not any(f.gso for f in plain.flows)
    assert sc.name == plain.name + "-gso"
    # the labs' full tree: netem at the root above a tbf with a 5 MB bucket, netem's
    # watchdog up to 55 µs late, and host jitter of one frame time at 10 Gbit/s
    b = sc.resolved()["bottleneck"]
    frame_ns = b["mtu_bytes"] * 8 * 10**9 // b["rate_bps"]
    assert {k: b.pop(k) for k in ("burst_bytes", "netem_root", "netem_latency_ns")} == {
        "burst_bytes": 5_000_000,
        "netem_root": True,
        "netem_latency_ns": 55_000,
    }
    assert all(f["jitter_ns"] == frame_ns for f in sc.resolved()["flows"])
    # the same set-up otherwise
    strip = [
        {k: v for k, v in f.items() if k not in ("gso", "jitter_ns")}
        for f in sc.resolved()["flows"]
    ]
    assert strip == [
        {k: v for k, v in f.items() if k != "jitter_ns"} for f in plain.resolved()["flows"]
    ]
    assert b == plain.resolved()["bottleneck"]
    assert "as run" in path.read_text().splitlines()[0]


def test_gso_variants_cover_the_10g_labs() -> None:
    plain = sorted((ROOT / "scenarios").glob("lab1[01]-*-10g.toml"))
    assert [p.name.replace(".toml", "-gso.toml") for p in plain] == [p.name for p in GSO_VARIANTS]


def test_kernel_backend_maps_gso_to_its_gso_on_mode() -> None:
    kb = KernelBackend(KernelOptions())
    every = from_dict(apply_overrides(base(gso=True), ["flows.1.gso=true"]))
    assert kb.options_for(every).gso
    assert not kb.options_for(from_dict(base())).gso
    # TCPFAIR_KERNEL_GSO=on still turns it on for a scenario without gso
    assert KernelBackend(KernelOptions(gso=True)).options_for(from_dict(base())).gso


def test_kernel_backend_refuses_mixed_gso_before_touching_the_machine(monkeypatch: Any) -> None:
    def no(*_: Any) -> Any:
        raise AssertionError("the kernel backend looked at the machine first")

    monkeypatch.setattr(KernelBackend, "capabilities", no)
    with pytest.raises(BackendError) as e:
        KernelBackend(KernelOptions()).check(from_dict(base(gso=True)))
    msg = str(e.value)
    assert "flows.0.gso = true" in msg and "flows.1.gso = false" in msg and "\n" not in msg


def test_mixed_gso_refusal_on_the_command_line(tmp_path: Path) -> None:
    fails_cleanly(
        ["run", str(LAB), "--backend", "kernel", "--set", "flows.0.gso=true"]
        + ["-o", str(tmp_path / "out")],
        mentions=["flows.0.gso", "flows.1.gso", "--backend sim"],
        unchanged=[tmp_path],
        code=None,
    )
