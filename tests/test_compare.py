"""``compare``: D = A − B, C95 = 2σ(B), W = |D| − C95 on constructed result sets with known
values, and ``tcpfair compare`` on two stores."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_sweep_support import BASE, fake_run

from tcpfair.cli import main
from tcpfair.compare import compare, summary_lines
from tcpfair.orchestrate import run_sweep
from tcpfair.store import Store
from tcpfair.sweep import sweep_from_dict

AXES = ["cca", "rtt", "buffer"]


def table(points: dict[tuple[str, str, str], list[float]]) -> pd.DataFrame:
    rows = [
        {"cca": c, "rtt": r, "buffer": b, "repeat": i, "status": "done", "jfi": v}
        for (c, r, b), vals in points.items()
        for i, v in enumerate(vals)
    ]
    return pd.DataFrame(rows)


def test_known_d_c95_w() -> None:
    a = table(
        {
            ("reno", "25ms", "0.2bdp"): [0.5, 0.5, 0.5],  # D = −0.4, C95 = 0.2, W = +0.2
            ("reno", "25ms", "1bdp"): [0.75, 0.85],  # D = +0.1, C95 = 2·√0.02, W < 0
            ("cubic", "25ms", "1bdp"): [0.9, 0.9],  # B has one repeat: W undefined
            ("cubic", "50ms", "1bdp"): [0.9],  # only in A
        }
    )
    b = table(
        {
            ("reno", "25ms", "0.2bdp"): [0.8, 0.9, 1.0],
            ("reno", "25ms", "1.0bdp"): [0.6, 0.8],  # written "1.0bdp": matches "1bdp"
            ("cubic", "25ms", "1bdp"): [0.7],
            ("cubic", "75ms", "1bdp"): [0.9, 0.8],  # only in B
        }
    )
    c = compare(a, b, "jfi", AXES)
    t = c.table.set_index(["cca", "rtt", "buffer"])
    p1 = t.loc[("reno", "25ms", "0.2bdp")]
    assert (
        p1["D"] == pytest.approx(-0.4)
        and p1["C95"] == pytest.approx(0.2)
        and p1["W"] == pytest.approx(0.2)
    )
    assert bool(p1["differs_w"])
    p2 = t.loc[("reno", "25ms", "1bdp")]
    assert p2["D"] == pytest.approx(0.1) and p2["C95"] == pytest.approx(2 * math.sqrt(0.02))
    assert p2["W"] == pytest.approx(0.1 - 2 * math.sqrt(0.02)) and not bool(p2["differs_w"])
    p3 = t.loc[("cubic", "25ms", "1bdp")]
    assert p3["D"] == pytest.approx(0.2) and math.isnan(p3["W"])
    assert (c.n_points, c.n_defined, c.n_differ) == (3, 2, 1)
    assert c.share() == 0.5
    assert (c.only_a, c.only_b) == (1, 1)
    by = c.by("cca")
    assert by.loc["reno", "share"] == 0.5 and by.loc["reno", "differ"] == 1
    assert by.loc["cubic", "defined"] == 0 and math.isnan(by.loc["cubic", "share"])


def test_different_axes_are_refused() -> None:
    a = table({("reno", "25ms", "1bdp"): [0.9]})
    with pytest.raises(ValueError, match="different axes"):
        compare(a, a, "jfi", AXES, ["cca", "rtt"])
    with pytest.raises(ValueError, match="metric 'ratio': A has no such metric; allowed: jfi"):
        compare(a, a, "ratio", AXES)


def _store(path: Path, seed: int, rtts: list[str]) -> None:
    sw = sweep_from_dict(
        {
            "name": f"s{seed}",
            "base": BASE,
            "repeats": 3,
            "seed": seed,
            "axes": {
                "flows.1.cca": ["newreno", "cubic"],
                "flows.1.rtt": rtts,
                "bottleneck.buffer": ["0.5bdp", "1bdp"],
            },
        }
    )
    run_sweep(sw, run_fn=fake_run, output=path, jobs=1)


def test_compare_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _store(tmp_path / "A", 1, ["25ms", "50ms", "100ms"])
    _store(tmp_path / "B", 2, ["25ms", "50ms", "100ms", "200ms"])
    with pytest.raises(SystemExit) as e:
        main(
            [
                "compare",
                str(tmp_path / "A"),
                str(tmp_path / "B"),
                "--metric",
                "jfi",
                "--export",
                str(tmp_path / "w.csv"),
                "--format",
                "png,pdf",
            ]
        )
    assert e.value.code == 0
    out = capsys.readouterr().out
    # the expected share, computed here from the two catalogs with numpy
    ta, tb = Store(tmp_path / "A").table(), Store(tmp_path / "B").table()
    keys = ["flows.1.cca", "flows.1.rtt", "bottleneck.buffer"]
    ga = ta.groupby(keys)["jfi"].agg(lambda x: float(np.mean(x)))
    gb = tb.groupby(keys)["jfi"].agg(
        [lambda x: float(np.mean(x)), lambda x: float(np.std(x, ddof=1))]
    )
    gb.columns = ["mean", "std"]
    j = gb.join(ga.rename("a"), how="inner")
    w = (j["a"] - j["mean"]).abs() - 2 * j["std"]
    assert len(w) == 12
    n = int((w >= 0).sum())
    assert f"W = |D| − 2·σ(s2/sim) ≥ 0 at {n} of 12 points: {100 * n / 12:.1f} %" in out
    # Welch's test, from the two catalogs with the textbook formulas
    from scipy.stats import t as student

    sa = ta.groupby(keys)["jfi"].agg(["mean", "std", "count"])
    k = sa.join(gb, rsuffix="_b", how="inner").join(tb.groupby(keys)["jfi"].count().rename("nb"))
    va, vb = k["std"] ** 2 / k["count"], k["std_b"] ** 2 / k["nb"]
    tt = (k["mean"] - k["mean_b"]) / np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (k["count"] - 1) + vb**2 / (k["nb"] - 1))
    sig = int((2 * student.sf(tt.abs(), df) < 0.05).sum())
    assert f"significant difference (Welch p < 0.05) at {sig} of 12 tested points" in out
    assert "repeats per point: s1/sim 3, s2/sim 3" in out
    assert (
        "matched points: 12 (only in A:s1/sim: 0, only in B:s2/sim: 4)" not in out
    )  # labels differ
    assert "matched points: 12 (only in s1/sim: 0, only in s2/sim: 4)" in out
    assert "flows.1.cca=newreno: significant at" in out and "flows.1.cca=cubic: significant" in out
    exported = pd.read_csv(tmp_path / "w.csv")
    assert np.allclose(np.sort(exported["W"]), np.sort(w.to_numpy()))
    fig_dir = tmp_path / "A" / "figures" / "compare-s1-vs-s2"
    figs = sorted(p.name for p in fig_dir.iterdir())
    assert figs == [
        "jfi-difference-flows.1.cca=cubic.csv",
        "jfi-difference-flows.1.cca=cubic.pdf",
        "jfi-difference-flows.1.cca=cubic.png",
        "jfi-difference-flows.1.cca=newreno.csv",
        "jfi-difference-flows.1.cca=newreno.pdf",
        "jfi-difference-flows.1.cca=newreno.png",
    ]
    # each figure's CSV is its grid of W: together, the exported W values
    drawn = pd.concat(pd.read_csv(p) for p in sorted(fig_dir.glob("*.csv")))["W"].dropna()
    assert np.allclose(np.sort(drawn), np.sort(exported["W"].dropna()))


def test_compare_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _store(tmp_path / "A", 1, ["25ms"])
    sw = sweep_from_dict({"name": "other", "base": BASE, "axes": {"flows.1.rtt": ["25ms"]}})
    run_sweep(sw, run_fn=fake_run, output=tmp_path / "A", jobs=1)
    with pytest.raises(SystemExit) as e:
        main(["compare", str(tmp_path / "A"), str(tmp_path / "A")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "holds several sweeps (other (sim), s1 (sim))" in err
    with pytest.raises(SystemExit) as e:
        main(
            [
                "compare",
                str(tmp_path / "A"),
                str(tmp_path / "A"),
                "--a-sweep",
                "s1",
                "--b-sweep",
                "other",
            ]
        )
    err = capsys.readouterr().err
    assert e.value.code == 2 and "different axes" in err and err.count("\n") == 1


def test_welch_test_per_point_against_hand_computed_values() -> None:
    """Welch's t-test with values worked out by hand: t = D/√(σa²/na + σb²/nb), the
    Welch–Satterthwaite df, and for df = 2 the closed form p = 1 − |t|/√(t² + 2)."""
    a = table(
        {
            ("reno", "25ms", "0.2bdp"): [0.5, 0.5, 0.5],
            ("reno", "25ms", "1bdp"): [0.75, 0.85],
            ("cubic", "25ms", "1bdp"): [0.9, 0.9],
            ("cubic", "50ms", "1bdp"): [0.6000001, 0.6000001, 0.6000001],  # issue 8's case
            ("cubic", "75ms", "1bdp"): [0.6, 0.6],
        }
    )
    b = table(
        {
            ("reno", "25ms", "0.2bdp"): [0.8, 0.9, 1.0],
            ("reno", "25ms", "1bdp"): [0.6, 0.8],
            ("cubic", "25ms", "1bdp"): [0.7],
            ("cubic", "50ms", "1bdp"): [0.6, 0.6, 0.6],
            ("cubic", "75ms", "1bdp"): [0.6, 0.6],
        }
    )
    c = compare(a, b, "jfi", AXES)
    t = c.table.set_index(["cca", "rtt", "buffer"])
    p1 = t.loc[("reno", "25ms", "0.2bdp")]  # σa = 0, σb = 0.1, n = 3: t = −0.4/√(0.01/3)
    t1 = -0.4 / math.sqrt(0.01 / 3)
    assert p1["t"] == pytest.approx(t1) and p1["df"] == pytest.approx(2.0)
    assert p1["p"] == pytest.approx(1 - abs(t1) / math.sqrt(t1**2 + 2))  # 0.0202
    assert bool(p1["significant"]) and bool(p1["tested"])
    p2 = t.loc[("reno", "25ms", "1bdp")]  # va/na = 0.0025, vb/nb = 0.01
    assert p2["t"] == pytest.approx(0.1 / math.sqrt(0.0125))
    assert p2["df"] == pytest.approx(0.0125**2 / (0.0025**2 + 0.01**2))
    assert 0.3 < p2["p"] < 0.6 and not bool(p2["significant"])
    p3 = t.loc[("cubic", "25ms", "1bdp")]  # B has one repeat
    assert not bool(p3["tested"]) and p3["untested"] == "fewer than 2 repeats"
    # σ = 0 on both sides and D = 1e-7: W = |D| − 0 ≥ 0 calls it different; the test
    # cannot tell (no spread), so it is not counted as a difference
    p4 = t.loc[("cubic", "50ms", "1bdp")]
    assert bool(p4["differs_w"]) and not bool(p4["significant"]) and not bool(p4["tested"])
    assert p4["untested"] == "no spread on either side"
    p5 = t.loc[("cubic", "75ms", "1bdp")]  # identical: W = 0 "differs", the test does not
    assert bool(p5["differs_w"]) and not bool(p5["significant"])
    assert (c.n_tested, c.n_significant, c.n_differ) == (2, 1, 3)
    lines = "\n".join(summary_lines(c))
    assert "repeats per point: A 2–3 (median 2), B 1–3 (median 2)" in lines
    assert "significant difference (Welch p < 0.05) at 1 of 2 tested points: 50.0 %" in lines
    assert "not tested: 1 point with fewer than 2 repeats" in lines
    assert "not tested: 2 points with no spread on either side (|D| up to 1e-07)" in lines
    strict = compare(a, b, "jfi", AXES, alpha=0.01)
    assert strict.n_significant == 0  # p1's p = 0.0202
    with pytest.raises(ValueError, match="alpha"):
        compare(a, b, "jfi", AXES, alpha=1.5)
