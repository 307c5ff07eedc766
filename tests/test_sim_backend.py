"""The simulator backend through Python: conservation, determinism, errors naming keys."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import tcpfair
from tcpfair import _core
from tcpfair.backends import BackendError
from tcpfair.spec import SpecError, from_dict


def scenario(**over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": "t",
        "duration": "12s",
        "seed": 3,
        "bottleneck": {"rate": "20Mbit", "buffer": "1bdp", "loss": 0.0005},
        "flows": [
            {"cca": "reno", "rtt": "20ms"},
            {"cca": "reno", "rtt": "40ms", "sack": False, "start": "2s"},
        ],
        "measure": {"interval": "1s", "from": "4s"},
    }
    d.update(over)
    return d


def test_bytes_in_samples_add_up_to_the_flows_table() -> None:
    r = tcpfair.run(scenario())
    per_flow = r.samples.groupby("flow")["bytes"].sum()
    for _, row in r.flows.iterrows():
        assert per_flow[row["flow"]] == row["bytes"]
        assert row["bytes"] > 0
    # Each flow has one sample per interval after its start; the late flow's first covers
    # [2 s, 3 s).
    late = r.samples[r.samples["flow"] == 1]
    assert late["t_s"].min() == 3.0 and len(late) == 10
    # Delivered payload never exceeds what crossed the bottleneck, nor its capacity.
    total = int(r.flows["bytes"].sum())
    assert total <= r.meta["link_totals"]["tx_bytes"] <= 20e6 / 8 * 12
    # SRTT: at least the base RTT, and measured.
    assert (r.flows["mean_rtt_s"] >= r.flows["rtt_s"]).all()
    sim = r.meta["sim_flows"]
    assert all(d <= s for d, s in zip(r.flows["bytes"], sim["bytes_sent"], strict=True))


def test_same_seed_same_result_and_seed_matters_with_loss() -> None:
    a = tcpfair.run(scenario())
    b = tcpfair.run(scenario())
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.samples, b.samples)
    pd.testing.assert_frame_equal(a.link, b.link)
    c = tcpfair.run(scenario(seed=4))
    assert not np.array_equal(a.samples["bytes"].to_numpy(), c.samples["bytes"].to_numpy())


def test_what_the_seed_changes() -> None:
    """docs/simulator.md "What the seed changes": random loss, RED, BBR's PROBE_BW phase and
    the host jitter draw from the seed; a drop-tail loss-free Reno/CUBIC run with jitter off
    has no random input at all, so every seed gives the same bytes — and with the default
    jitter the seed moves the run."""
    d = scenario(bottleneck={"rate": "20Mbit", "buffer": "1bdp"}, duration="6s")
    d["flows"][1] = {"cca": "cubic", "rtt": "40ms", "start": "2s"}
    d["measure"] = {"interval": "1s", "from": "3s"}
    quiet = copy.deepcopy(d)
    for f in quiet["flows"]:
        f["jitter"] = "0s"
    a, b = tcpfair.run(quiet), tcpfair.run({**quiet, "seed": 99})
    pd.testing.assert_frame_equal(a.samples, b.samples)
    c, e = tcpfair.run(d), tcpfair.run({**d, "seed": 99})
    assert not np.array_equal(c.samples["bytes"].to_numpy(), e.samples["bytes"].to_numpy())


def test_finite_flow_completes_with_exactly_its_size() -> None:
    d = scenario()
    d["flows"][0]["size"] = "1000001B"
    r = tcpfair.run(d)
    assert r.flows.loc[0, "bytes"] == 1_000_001
    done = r.meta["sim_flows"]["completion_s"]
    assert done[0] is not None and 0.4 < done[0] < 12
    assert done[1] is None  # bulk


def test_unknown_cca_names_the_key() -> None:
    d = scenario()
    d["flows"][1]["cca"] = "tahoe"
    with pytest.raises(SpecError, match=r"flows\.1\.cca"):
        tcpfair.run(d)


def test_native_error_names_the_key() -> None:
    sc = from_dict(scenario())
    res = sc.resolved()
    res["flows"][1]["cca"] = "tahoe"
    with pytest.raises(ValueError, match=r"^flows\.1\.cca: unknown congestion control") as ei:
        _core.simulate(json.dumps(res))
    assert ei.value.key == "flows.1.cca"  # type: ignore[attr-defined]
    bad = copy.deepcopy(sc.resolved())
    bad["bottleneck"]["colour"] = "red"
    with pytest.raises(ValueError, match="unknown field `colour`"):
        _core.simulate(json.dumps(bad))


def test_impossible_buffer_is_a_backend_error_naming_the_key() -> None:
    d = scenario()
    d["flows"][0]["rmem"] = "2KB"
    with pytest.raises((BackendError, SpecError), match=r"flows\.0\.rmem"):
        tcpfair.run(d)


def test_chunked_run_with_progress_equals_one_call() -> None:
    sc = from_dict(scenario())
    whole = tcpfair.run(sc)
    chunked = tcpfair.run(sc, progress=True)
    pd.testing.assert_frame_equal(whole.samples, chunked.samples)
    pd.testing.assert_frame_equal(whole.flows, chunked.flows)
    sim = _core.Simulation(sc.to_json())
    assert sim.advance(3_000_000_000) is False
    now, end = sim.progress()  # time of the last event processed, and the end of the run
    assert 2_900_000_000 < now <= 3_000_000_000 and end == 12_000_000_000
    raw = sim.finish()
    assert int(raw["stats"]["simulated_ns"]) == 12_000_000_000
    with pytest.raises(ValueError, match="already finished"):
        sim.finish()


def test_the_simulator_refuses_a_scenario_that_would_fill_the_memory() -> None:
    # from_dict refuses it; a scenario changed afterwards (model_copy) is checked again
    from tcpfair.backends.sim import SimBackend
    from tcpfair.spec import Measure

    sc = from_dict(
        {
            "duration": "120s",
            "bottleneck": {"rate": "10Mbit"},
            "flows": [{"cca": "reno", "rtt": "20ms"}, {"cca": "reno", "rtt": "20ms"}],
        }
    )
    tiny = sc.model_copy(update={"measure": Measure(interval="1ns")})
    # 120 s / 1 ns = 1.2e11 intervals × (2 connections + the link)
    with pytest.raises(BackendError, match=r"would record 360,000,000,000 samples"):
        SimBackend().run(tiny)


def test_labels_are_printed_as_written_not_as_markup(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tcpfair.cli import cli

    f = tmp_path / "s.toml"
    f.write_text(
        'name = "m"\nduration = "3s"\n[bottleneck]\nrate = "10Mbit"\nbuffer = "1bdp"\n'
        '[[flows]]\ncca = "reno"\nrtt = "20ms"\nlabel = "[bold]x[/bold]"\n'
        '[[flows]]\ncca = "cubic"\nrtt = "20ms"\nlabel = "[red]"\n'
        '[measure]\ninterval = "0.5s"\nfrom = "1s"\n'
    )
    r = CliRunner().invoke(cli, ["run", str(f), "-o", str(tmp_path / "out"), "--no-plot"])
    assert r.exit_code == 0, r.output
    assert "[bold]x[/bold]" in r.output and "[red]" in r.output
