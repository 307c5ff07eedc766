"""Sweep specs: ranges, product and zip, repeats, seeds, and the report of every bad point."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_sweep_support import BASE

from tcpfair.spec import from_dict
from tcpfair.sweep import SweepError, expand_range, load_sweep, sweep_from_dict


def sweep(**kw: object) -> dict[str, object]:
    d: dict[str, object] = {"name": "t", "base": BASE}
    d.update(kw)
    return d


# --------------------------------------------------------------------------- ranges
def test_time_range_gives_unit_strings_including_both_ends() -> None:
    vals = expand_range({"from": "25ms", "to": "400ms", "step": "25ms"})
    assert vals == [f"{25 * k}ms" for k in range(1, 17)]


def test_bdp_range_is_decimal_exact() -> None:
    # binary floats would give 0.6000000000000001 and drop 1.0 at the end
    assert expand_range({"from": "0.2bdp", "to": "1.0bdp", "step": "0.2bdp"}) == [
        "0.2bdp",
        "0.4bdp",
        "0.6bdp",
        "0.8bdp",
        "1bdp",
    ]


def test_numeric_ranges() -> None:
    assert expand_range({"from": 1, "to": 7, "step": 3}) == [1, 4, 7]
    assert expand_range({"from": 1, "to": 8, "step": 3}) == [1, 4, 7]  # 'to' off the grid
    assert expand_range({"from": 0.1, "to": 0.3, "step": 0.1}) == [0.1, 0.2, 0.3]


@pytest.mark.parametrize(
    ("rng", "message"),
    [
        ({"from": "25ms", "to": "1s", "step": "25ms"}, "same unit"),
        ({"from": "25ms", "to": "400ms", "step": "0ms"}, "step must be positive"),
        ({"from": "400ms", "to": "25ms", "step": "25ms"}, "below from"),
        ({"from": "25ms", "to": "400ms"}, "missing: step"),
        ({"from": "25ms", "to": "400ms", "step": "25ms", "by": 1}, "unknown key"),
        (
            {"from": "fast", "to": "400ms", "step": "25ms"},
            "expected a number or a value with a unit",
        ),
    ],
)
def test_bad_ranges(rng: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        expand_range(rng)


# --------------------------------------------------------------------------- grid
def test_product_in_written_order_with_nested_or_quoted_keys() -> None:
    sw = sweep_from_dict(
        sweep(
            axes={
                "flows": {
                    "1": {"cca": ["newreno", "cubic"]}
                },  # TOML: flows.1.cca = [...] inside [axes]
                "bottleneck.buffer": ["0.2bdp", "1bdp"],
            }
        )
    )
    pts = list(sw.points())
    assert pts == [
        {"flows.1.cca": "newreno", "bottleneck.buffer": "0.2bdp"},
        {"flows.1.cca": "newreno", "bottleneck.buffer": "1bdp"},
        {"flows.1.cca": "cubic", "bottleneck.buffer": "0.2bdp"},
        {"flows.1.cca": "cubic", "bottleneck.buffer": "1bdp"},
    ]


def test_zip_moves_axes_together() -> None:
    sw = sweep_from_dict(
        sweep(
            axes={
                "flows.0.rtt": ["25ms", "50ms", "75ms"],
                "flows.1.rtt": ["25ms", "50ms", "75ms"],
                "flows.1.cca": ["newreno", "cubic"],
            },
            zip=[["flows.0.rtt", "flows.1.rtt"]],
        )
    )
    pts = list(sw.points())
    assert len(pts) == 6 == sw.n_points()
    assert all(p["flows.0.rtt"] == p["flows.1.rtt"] for p in pts)
    runs = sw.runs()
    assert runs[0].scenario.flows[0].rtt == runs[0].scenario.flows[1].rtt == 25_000_000


def test_zip_needs_equal_lengths_and_known_axes() -> None:
    with pytest.raises(SweepError) as e:
        sweep_from_dict(
            sweep(
                axes={"flows.0.rtt": ["25ms", "50ms"], "flows.1.rtt": ["25ms"]},
                zip=[["flows.0.rtt", "flows.1.rtt", "flows.2.rtt"]],
            )
        )
    text = str(e.value)
    assert "equal lengths" in text and "flows.0.rtt: 2, flows.1.rtt: 1" in text
    assert "'flows.2.rtt' is not an axis" in text


def test_repeats_seeds_and_hashes() -> None:
    sw = sweep_from_dict(sweep(axes={"flows.1.rtt": ["25ms", "50ms"]}, repeats=3, seed=11))
    runs = sw.runs()
    assert [(r.point, r.repeat) for r in runs] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert len({r.run_hash for r in runs}) == 6
    # seed rule, computed independently from the documented formula
    r = runs[4]
    pt_hash = from_dict(
        {**BASE, "seed": 0, "flows": [BASE["flows"][0], {**BASE["flows"][1], "rtt": "50ms"}]}
    ).hash()
    assert r.point_hash == pt_hash
    digest = hashlib.sha256(f"tcpfair-sweep-seed/v1:11:{pt_hash}:1".encode()).digest()
    assert r.seed == int.from_bytes(digest[:8], "big") >> 1
    assert r.run_hash == r.scenario.hash() and r.scenario.seed == r.seed
    # stable: the same sweep gives the same runs; another sweep seed gives other seeds
    assert [
        x.run_hash
        for x in sweep_from_dict(
            sweep(axes={"flows.1.rtt": ["25ms", "50ms"]}, repeats=3, seed=11)
        ).runs()
    ] == [x.run_hash for x in runs]
    other = sweep_from_dict(
        sweep(axes={"flows.1.rtt": ["25ms", "50ms"]}, repeats=3, seed=12)
    ).runs()
    assert not {x.seed for x in other} & {x.seed for x in runs}


def test_point_keeps_its_seeds_when_another_axis_value_is_added() -> None:
    a = sweep_from_dict(sweep(axes={"flows.1.rtt": ["25ms"]}, repeats=2)).runs()
    b = sweep_from_dict(sweep(axes={"flows.1.rtt": ["25ms", "50ms"]}, repeats=2)).runs()
    assert [r.run_hash for r in a] == [r.run_hash for r in b[:2]]


def test_every_bad_point_is_reported_with_its_axis_values() -> None:
    sw = sweep_from_dict(
        sweep(axes={"flows.1.cca": ["newreno", "tahoe"], "flows.1.rtt": ["25ms", "-5ms", "50ms"]})
    )
    with pytest.raises(SweepError) as e:
        sw.runs()
    # tahoe at each of the 3 RTTs, and -5ms with either algorithm: each problem once, for
    # the axis value its points share
    where = dict(e.value.problems)
    assert sorted(where) == ["flows.1.cca=tahoe (3 points)", "flows.1.rtt=-5ms (2 points)"]
    assert "unknown congestion control" in where["flows.1.cca=tahoe (3 points)"]
    assert "'-5ms' is negative" in where["flows.1.rtt=-5ms (2 points)"]


def test_points_with_nothing_in_common_are_each_named() -> None:
    sw = sweep_from_dict(
        sweep(
            axes={"flows.1.cca": ["newreno", "tahoe"], "flows.1.rtt": ["-5ms", "25ms"]},
            zip=[["flows.1.cca", "flows.1.rtt"]],
        )
    )
    with pytest.raises(SweepError) as e:
        sw.runs()
    assert [w for w, _ in e.value.problems] == [
        "flows.1.cca=newreno, flows.1.rtt=-5ms",
        "flows.1.cca=tahoe, flows.1.rtt=25ms",
    ]


def test_a_problem_every_point_shares_is_said_once() -> None:
    """A bad key of the base fails every point the same way: one line, not one per point
    (the mutation checker of session 13 found one printed 20 and 36 times)."""
    base = {**BASE, "bottleneck": {"rate": "fast"}}
    sw = sweep_from_dict(
        {"name": "t", "base": base, "axes": {"flows.1.rtt": ["25ms", "50ms", "100ms"]}}
    )
    with pytest.raises(SweepError) as e:
        sw.runs()
    assert len(e.value.problems) == 1
    where, message = e.value.problems[0]
    assert where == "all 3 points"
    assert message.startswith("bottleneck.rate: cannot read 'fast'; expected a rate")
    assert "\n" not in str(e.value)


def test_an_axis_the_base_has_no_place_for_is_said_once() -> None:
    """An axis naming a flow that does not exist: refused when the sweep is read, naming
    the axis (it was a line per point, each ending in that point's value)."""
    with pytest.raises(SweepError) as e:
        sweep_from_dict(
            sweep(
                axes={
                    "flows.1.cca": ["newreno", "tahoe"],
                    "flows.1.rtt": ["25ms", "-5ms", "50ms"],
                    "flows.7.rtt": ["25ms"],  # no such flow
                }
            )
        )
    assert e.value.problems == [
        ("axes.flows.7.rtt", "'flows.7' is not an existing entry; there are 2 (indices from 0)")
    ]


def test_scenario_rejections_per_point() -> None:
    sw = sweep_from_dict(sweep(axes={"flows.1.rtt": ["25ms", "-5ms", "50ms", "fast"]}))
    with pytest.raises(SweepError) as e:
        sw.runs()
    msgs = {w: m for w, m in e.value.problems}
    assert set(msgs) == {"flows.1.rtt=-5ms", "flows.1.rtt=fast"}
    assert (
        msgs["flows.1.rtt=fast"].startswith("flows.1.rtt:") and "'fast'" in msgs["flows.1.rtt=fast"]
    )


def test_file_level_errors_are_collected() -> None:
    with pytest.raises(SweepError) as e:
        sweep_from_dict(
            {"name": "bad name", "repeats": 0, "axes": {"flows.1.rtt": "25ms"}, "colour": 1}
        )
    keys = [w for w, _ in e.value.problems]
    assert {"colour", "name", "repeats", "base", "axes.flows.1.rtt"} <= set(keys)


def test_base_path_is_relative_to_the_sweep_file(tmp_path: Path) -> None:
    (tmp_path / "scen").mkdir()
    (tmp_path / "scen" / "base.toml").write_text(
        'duration = "10s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "reno"\nrtt = "20ms"\n'
    )
    (tmp_path / "sw").mkdir()
    f = tmp_path / "sw" / "s.toml"
    f.write_text(
        'base = "../scen/base.toml"\nrepeats = 2\n[axes]\nflows.0.rtt = { from = "10ms", to = "30ms", step = "10ms" }\n'
    )
    sw = load_sweep(f)
    assert sw.name == "s" and sw.axes == {"flows.0.rtt": ["10ms", "20ms", "30ms"]}
    assert len(sw.runs()) == 6
    f.write_text('base = "missing.toml"\n')
    with pytest.raises(SweepError, match="base: no such file"):
        load_sweep(f)


def test_axis_override_replaces_values_and_respects_zip() -> None:
    sw = sweep_from_dict(
        sweep(
            axes={
                "flows.0.rtt": ["25ms", "50ms"],
                "flows.1.rtt": ["25ms", "50ms"],
                "flows.1.cca": ["newreno", "cubic"],
            },
            zip=[["flows.0.rtt", "flows.1.rtt"]],
        )
    )
    assert sw.with_axes(['flows.1.cca=["cubic"]']).n_points() == 2
    assert (
        sw.with_axes(['bottleneck.buffer={from="0.5bdp", to="1bdp", step="0.5bdp"}']).n_points()
        == 8
    )
    with pytest.raises(SweepError, match="need equal lengths; got flows.0.rtt: 2, flows.1.rtt: 1"):
        sw.with_axes(['flows.1.rtt=["25ms"]'])
    assert (
        sw.with_axes(['flows.1.rtt=["25ms"]', 'flows.0.rtt=["75ms"]'])
        .runs()[0]
        .scenario.flows[0]
        .rtt
        == 75_000_000
    )
    with pytest.raises(SweepError, match="expected KEY="):
        sw.with_axes(["flows.1.cca=cubic"])


def test_builtin_sweeps_load_and_match_the_study_grid() -> None:
    root = Path(__file__).resolve().parents[1] / "scenarios" / "sweeps"
    sim = load_sweep(root / "ns2-testbed-sim.toml")
    # 4 algorithms for flow 2 (NewReno, BIC, CUBIC, Compound) × 16 RTTs × 5 buffers
    assert sim.repeats == 5 and sim.n_points() == 4 * 16 * 5
    runs = sim.runs()
    sc = runs[0].scenario
    assert (
        sc.duration == 300 * 10**9 and 60 * 10**9 <= sc.flows[1].start < 61 * 10**9
    )  # start_jitter 1 s
    assert (sc.measure.from_, sc.window_end, sc.measure.interval) == (
        120 * 10**9,
        300 * 10**9,
        10**9,
    )
    assert sc.bottleneck.rate == 100_000_000
    # buffer 0.2 BDP at 25 ms: 100 Mbit/s × 25 ms × 0.2 = 62,500 B
    assert sc.buffer_limits() == (62_500, None)
    kern = load_sweep(root / "ns2-testbed-kernel.toml")
    assert kern.backend == "kernel" and len(kern.runs()) == 54
    # the kernel grid is a subset of the simulator grid, so compare can match the points
    sim_pts = {tuple(sorted(p.items())) for p in sim.points()}
    assert all(tuple(sorted(p.items())) in sim_pts for p in kern.points())


def test_builtin_cubic_sweeps_follow_seed_004() -> None:
    root = Path(__file__).resolve().parents[1] / "scenarios" / "sweeps"
    f8 = load_sweep(root / "cubic-fig8.toml")
    pts = list(f8.points())
    # CUBIC, BIC, HSTCP and Reno (seed 004) × 5 RTTs
    assert len(pts) == 4 * 5 and all(p["flows.0.cca"] == p["flows.1.cca"] for p in pts)
    assert all(p["flows.0.rtt"] == p["flows.1.rtt"] for p in pts)
    assert [p["flows.0.rtt"] for p in pts[:5]] == ["16ms", "42ms", "82ms", "162ms", "324ms"]
    # two alike flows: their ratio is oriented per run (min/max), then aggregated
    # and the link's utilization with and without the background (issue 10 §5)
    assert [p.metric for p in f8.plots] == ["min_max_ratio", "utilization", "utilization_measured"]
    f9 = load_sweep(root / "cubic-fig9.toml")
    runs = f9.runs()
    assert len(runs) == 4 * 5 * 5
    assert {r.scenario.flows[0].rtt for r in runs} == {162_000_000}
    assert sorted({r.scenario.flows[1].rtt // 10**6 for r in runs}) == [16, 22, 42, 82, 162]
    sc = runs[0].scenario
    assert sc.bottleneck.rate == 400_000_000 and sc.buffer_limits() == (2_000_000, None)
    assert sc.flows[2].streams == 12
    # seed 004's background in both directions, web traffic, metrics over the two flows
    assert [f.direction for f in sc.flows[2:4]] == ["forward", "reverse"]
    assert sc.flows[3].streams == 12 and sc.flows[4].arrivals is not None
    assert sc.measure.flows == ["fixed", "varied"]
    assert [p.metric for p in f9.plots][0] == "ratio:fixed/varied"


def test_start_jitter_shifts_each_flow_by_a_seeded_offset() -> None:
    import random

    sw = sweep_from_dict(
        sweep(axes={"flows.1.rtt": ["25ms", "50ms"]}, repeats=4, start_jitter="500ms")
    )
    runs = sw.runs()
    base_starts = [0, 2_000_000_000]
    for r in runs:
        rng = random.Random(r.seed)
        expect = [s + int(rng.random() * 500_000_000) for s in base_starts]
        assert [f.start for f in r.scenario.flows] == expect
        assert all(
            0 <= f.start - s < 500_000_000
            for f, s in zip(r.scenario.flows, base_starts, strict=True)
        )
    assert len({r.scenario.flows[1].start for r in runs}) == len(runs)  # repeats differ
    assert [r.run_hash for r in runs] == [r.run_hash for r in sw.runs()]  # and are reproducible
    # a point's identity does not depend on the jitter
    plain = sweep_from_dict(sweep(axes={"flows.1.rtt": ["25ms", "50ms"]}, repeats=4)).runs()
    assert [r.point_hash for r in runs] == [r.point_hash for r in plain]
    assert [r.seed for r in runs] == [r.seed for r in plain]
    with pytest.raises(SweepError, match="start_jitter"):
        sweep_from_dict(sweep(start_jitter="soon"))


def test_start_jitter_that_pushes_a_start_past_the_end_is_a_bad_point() -> None:
    sw = sweep_from_dict(
        sweep(axes={"flows.1.start": ["1s", "19.9s"]}, repeats=2, start_jitter="5s")
    )
    with pytest.raises(SweepError) as e:
        sw.runs()
    # the point, once (not one line per repeat, and not only the repeats whose draw
    # happened to pass the end): 19.9s + up to 5s in a 20 s run; at most 20 - 19.9 = 0.1 s
    assert e.value.problems == [
        (
            "flows.1.start=19.9s",
            "start_jitter: 5s could move flows.1.start (19.9s) past the run's end (20s); "
            "allowed: at most 100ms here",
        )
    ]
