"""``tcpfair repro``: verdict logic on hand-made inputs, the reference files, one quick study
end to end, and its bad inputs (tcpfair/repro.py, tcpfair/commands/repro.py)."""

from __future__ import annotations

import csv
import math
import tomllib
from pathlib import Path

import pytest
from badinput import fails_cleanly
from click.testing import CliRunner

from tcpfair import repro as rp
from tcpfair.cli import cli

ROOT = Path(__file__).resolve().parents[1] / "scenarios" / "repro"
STUDIES = ("cubic-fig8", "cubic-fig9", "lab10", "lab11", "ns2-testbed", "vegas")


# --------------------------------------------------------------------------- verdicts
@pytest.mark.parametrize(
    "source, mean, ci, allowed, trend, expressible, expected",
    [
        pytest.param(0.99595, 0.990, 0.0, 0.02, None, True, "reproduced", id="within-tolerance"),
        pytest.param(1.0, 1.05, 0.0, 0.05, None, True, "reproduced", id="on-the-edge"),
        pytest.param(1.0, 1.06, 0.0, 0.05, True, True, "trend", id="just-outside-trend"),
        pytest.param(0.86, 0.83, 0.015, 0.02, False, True, "reproduced", id="ci-overlaps"),
        pytest.param(0.86, 0.83, 0.005, 0.02, False, True, "differs", id="ci-too-narrow"),
        # two repeats: a CI of 0.15 would cover anything; it counts for at most the tolerance
        pytest.param(0.86, 0.70, 0.15, 0.02, False, True, "differs", id="wide-ci-capped"),
        pytest.param(0.86, 0.83, 0.15, 0.02, False, True, "reproduced", id="wide-ci-within-2x"),
        pytest.param(0.86, 0.70, math.nan, 0.0, None, True, "differs", id="one-run-no-ci"),
        pytest.param(1.53, 0.80, 0.0, 0.05, True, True, "trend", id="side-holds"),
        pytest.param(1.53, 0.80, 0.0, 0.05, False, True, "differs", id="side-flipped"),
        pytest.param(9e5, math.nan, math.nan, 0.0, None, False, "not expressible", id="noexpr"),
        pytest.param(0.9, math.nan, math.nan, 0.1, None, True, "not run", id="no-runs"),
    ],
)
def test_verdict(source, mean, ci, allowed, trend, expressible, expected):
    assert rp.verdict(source, mean, ci, allowed, trend, expressible) == expected


def test_same_side_and_order():
    assert rp.same_side(1.53, 1.2, 1.0)
    assert not rp.same_side(1.53, 0.8, 1.0)
    assert rp.same_side(1.0, 1.0, 1.0) and not rp.same_side(1.0, 1.01, 1.0)
    # Lab 11 section 4 h1: cubic 4.57, reno 2.74, bbr 5.64 -> ranks 1, 0, 2
    assert [rp.same_order([4.57, 2.74, 5.64], [3.4, 6.4, 7.6], i) for i in range(3)] == [
        False,
        False,
        True,
    ]


def _study(refs: list[rp.Reference]) -> rp.Study:
    return rp.Study("t", "t", "t", Path("."), (), {}, "", tuple(refs))


def _ref(id: str, value: float, **kw) -> rp.Reference:
    base = dict(table="T", row=id, unit="u", measured="m", location="here", explanation="e")
    return rp.Reference(id=id, value=value, **{**base, **kw})


def test_compare_aggregates_per_run_values_and_uses_order_groups():
    refs = [
        _ref("a", 10.0, rel_tolerance=0.1, order_group="g"),
        _ref("b", 20.0, rel_tolerance=0.1, order_group="g"),
        _ref("c", 0.77, compute="jain", inputs=(5, 3, 1), tolerance=0.005),
        _ref("d", 5.0, expressible=False),
        _ref("e", 5.0),
    ]
    rows = {r.ref.id: r for r in rp.compare(_study(refs), {"a": [10.4, 10.6], "b": [30.0, 30.0]})}
    assert rows["a"].n == 2 and rows["a"].mean == pytest.approx(10.5)
    # t(0.975, 1) = 12.706 times the standard error 0.1
    assert rows["a"].ci == pytest.approx(12.706 * 0.1, rel=1e-3)
    assert rows["a"].verdict == "reproduced"
    assert rows["b"].verdict == "trend"  # 30 vs 20 is 50 % off, but b > a as in the source
    assert rows["c"].mean == pytest.approx(81 / 105) and rows["c"].verdict == "reproduced"
    assert rows["d"].verdict == "not expressible"
    assert rows["e"].verdict == "not run"


def test_order_groups_rank_in_one_unit():
    """Lab 11 section 3 prints h1 CUBIC in Mbit/s and h1 BBR in Gbit/s: 86.4 Mbit/s < 3.48
    Gbit/s, so ours must rank BBR first too (raw numbers would rank it last)."""
    refs = [
        _ref("cubic", 86.4, scale=1e-6, rel_tolerance=0.1, order_group="s3"),
        _ref("bbr", 3.48, scale=1e-9, rel_tolerance=0.1, order_group="s3"),
    ]
    # ours in the rows' units: CUBIC 434 Mbit/s, BBR 0.2 Gbit/s -> BBR below CUBIC: flipped
    rows = rp.compare(_study(refs), {"cubic": [434.0], "bbr": [0.2]})
    assert [r.verdict for r in rows] == ["differs", "differs"]
    rows = rp.compare(_study(refs), {"cubic": [434.0], "bbr": [9.1]})
    assert [r.verdict for r in rows] == ["trend", "trend"]


def test_metric_paths_on_a_summary():
    summary = {
        "metrics": {"jfi": 0.9, "throughput_bps": {"0": 4e9, "1": 1e9}, "group_ratios": {"a/b": 2}},
        "flows": [{"retransmits": 7}, {"retransmits": 3}],
    }
    assert rp.metric_value(summary, "metrics.jfi") == 0.9
    assert rp.metric_value(summary, "metrics.throughput_bps.0") == 4e9
    assert rp.metric_value(summary, "flows.1.retransmits") == 3
    assert rp.metric_value(summary, "metrics.group_ratios.a/b") == 2
    assert rp.metric_value(summary, "metrics.throughput_bps.0 / metrics.throughput_bps.1") == 4
    assert math.isnan(rp.metric_value(summary, "metrics.nothing"))


@pytest.mark.parametrize(
    "claim, threshold, mean, ci, expected",
    [
        pytest.param("below", 0.9, 0.70, 0.10, "reproduced", id="below-whole-ci"),
        pytest.param("below", 0.9, 0.85, 0.10, "trend", id="below-ci-crosses"),
        pytest.param("below", 0.9, 0.95, 0.01, "differs", id="below-wrong-side"),
        pytest.param("above", 0.0, 0.20, 0.15, "reproduced", id="above-diff"),
        pytest.param("above", 0.0, 0.20, math.nan, "trend", id="above-no-ci"),
        pytest.param("above", 0.5, 0.50, 0.0, "differs", id="above-on-threshold"),
        pytest.param("within", 0.05, -0.02, 0.02, "reproduced", id="within"),
        pytest.param("within", 0.05, -0.02, 0.04, "trend", id="within-ci-out"),
        pytest.param("within", 0.05, -0.10, 0.01, "differs", id="within-far"),
        pytest.param("below", 0.9, math.nan, math.nan, "not run", id="no-cells"),
    ],
)
def test_claim_verdict(claim, threshold, mean, ci, expected):
    assert rp.claim_verdict(claim, threshold, mean, ci) == expected


def test_claim_stats_mean_over_cells_and_differences():
    n, mean, ci = rp.claim_stats([0.6, 0.8], None)
    # two cells: mean 0.7, s = 0.1414, t(0.975, 1) = 12.706 -> 12.706 * 0.1414 / sqrt 2 = 1.2706
    assert (n, mean) == (2, pytest.approx(0.7)) and ci == pytest.approx(1.2706, rel=1e-3)
    n, mean, ci = rp.claim_stats([0.6, 0.8], [1.0, 1.0])
    # versus has no spread: the difference's CI is the region's
    assert (n, mean) == (2, pytest.approx(-0.3)) and ci == pytest.approx(1.2706, rel=1e-3)
    assert math.isnan(rp.claim_stats([], [1.0])[1])


def test_region_bounds_are_inclusive_and_numeric():
    region = {"flows.1.rtt": ("300ms", "400ms"), "bottleneck.buffer": ("0.2bdp", "0.4bdp")}
    assert rp._in_region({"flows.1.rtt": "400ms", "bottleneck.buffer": "0.2bdp"}, region)
    # "1000ms" sorts before "300ms" as text: the bounds are numbers
    assert not rp._in_region({"flows.1.rtt": "1000ms", "bottleneck.buffer": "0.2bdp"}, region)
    assert not rp._in_region({"flows.1.rtt": "350ms", "bottleneck.buffer": "1bdp"}, region)
    assert rp._in_region({"anything": 1}, {})


def test_claim_rows_of_a_small_grid_end_to_end(tmp_path):
    """A claim row's value is the mean over its region's cells of the per-cell mean JFI:
    checked against the store's own JFI column (a different code path)."""
    from tcpfair.store import Store

    d = tmp_path / "mini"
    d.mkdir()
    (d / "grid.toml").write_text(
        'name = "mini"\nseed = 1\nrepeats = 2\nstart_jitter = "1s"\n'
        'zip = [["flows.0.rtt", "flows.1.rtt"]]\n[base]\nname = "mini"\nduration = "6s"\n'
        '[base.bottleneck]\nrate = "10Mbit"\nbuffer = "1bdp"\n'
        '[[base.flows]]\ncca = "reno"\nrtt = "20ms"\n[[base.flows]]\ncca = "cubic"\n'
        'rtt = "20ms"\n[base.measure]\ninterval = "1s"\nfrom = "2s"\n[axes]\n'
        '"flows.0.rtt" = ["20ms", "40ms", "80ms"]\n"flows.1.rtt" = ["20ms", "40ms", "80ms"]\n'
        '"bottleneck.buffer" = ["0.5bdp", "1bdp"]\n'
    )
    (d / "reference.toml").write_text(
        '[study]\nname = "mini"\ntitle = "t"\nsource = "s"\n'
        '[study.sweeps.g]\nfull = "grid.toml"\nquick = "grid.toml"\n'
        '[[value]]\nid = "hi"\ntable = "t"\nrow = "r"\nvalue = 0.5\nunit = "JFI"\n'
        'measured = "m"\nlocation = "l"\nexplanation = "e"\nclaim = "above"\nsweep = "g"\n'
        'metric = "metrics.jfi"\nregion = { "flows.1.rtt" = ["40ms", "80ms"] }\n'
        '[[value]]\nid = "diff"\ntable = "t"\nrow = "r"\nvalue = 0.0\nunit = "JFI"\n'
        'measured = "m"\nlocation = "l"\nexplanation = "e"\nclaim = "within"\nsweep = "g"\n'
        'metric = "metrics.jfi"\nregion = { "bottleneck.buffer" = ["1bdp", "1bdp"] }\n'
        'versus = { region = { "bottleneck.buffer" = ["0.5bdp", "0.5bdp"] } }\n'
    )
    st = rp.load_study("mini", tmp_path)
    ran = rp.run_study(st, "sim", True, tmp_path / "store", jobs=1)
    t = Store(tmp_path / "store").table(sweep="mini", backend="sim")
    cell = t.groupby(["flows.1.rtt", "bottleneck.buffer"])["jfi"].mean()
    rows = {r.ref.id: r for r in ran.rows}
    want = cell[cell.index.get_level_values(0).isin(["40ms", "80ms"])]
    assert rows["hi"].n == 4 and rows["hi"].mean == pytest.approx(want.mean())
    by_buf = cell.groupby(level=1).mean()
    assert rows["diff"].n == 3
    assert rows["diff"].mean == pytest.approx(by_buf["1bdp"] - by_buf["0.5bdp"])
    assert rows["hi"].verdict == rp.claim_verdict("above", 0.5, rows["hi"].mean, rows["hi"].ci)


# --------------------------------------------------------------------------- reference files
@pytest.mark.parametrize("name", STUDIES)
def test_reference_file_parses_and_every_number_has_a_source_location(name):
    st = rp.load_study(name)
    assert st.references, name
    seed = {
        "cubic-fig8": "seed 004",
        "cubic-fig9": "seed 004",
        "lab10": "seed 000",
        "lab11": "seed 002",
        "ns2-testbed": "seed 001",
        "vegas": "seed 003",
    }[name]
    for ref in st.references:
        assert ref.location.startswith(seed) and "line" in ref.location, ref.id
        assert math.isfinite(ref.value) and ref.unit and ref.measured, ref.id
    raw = tomllib.loads((ROOT / name / "reference.toml").read_text())
    assert len(raw["value"]) == len(st.references)


@pytest.mark.parametrize("name", STUDIES)
@pytest.mark.parametrize("quick", [False, True])
def test_every_point_names_axis_values_of_its_sweep(name, quick):
    """A row whose point is not in its sweep's grid would silently never get a value."""
    from tcpfair.sweep import load_sweep

    st = rp.load_study(name)
    for ref in st.references:
        if ref.sweep is None:
            continue
        sw = load_sweep(st.sweep_file(ref.sweep, quick))
        for key, val in ref.point.items():
            assert key in sw.axes, (ref.id, key)
            assert str(val) in [str(v) for v in sw.axes[key]], (ref.id, key, val)
        # a claim's region (and its versus) must hold grid values on every axis it bounds
        regions = [ref.region] + ([ref.versus["region"]] if ref.versus else [])
        for region in regions:
            for key in region:
                assert any(rp._in_region({key: v}, {key: region[key]}) for v in sw.axes[key]), (
                    ref.id,
                    key,
                )


def test_seed_numbers_are_transcribed_whole():
    """The counts the issue names: Lab 10's five results plus the worked example, Lab 11's
    nine pairs, seed 003 Table 3 (13 rows x 6 cells), Table 4 (13 x 4) and Tables 6a-d
    (4 tables x 9 cells x JFI and the two mean goodputs)."""
    counts = {n: len(rp.load_study(n).references) for n in STUDIES}
    assert counts == {
        "cubic-fig8": 10,  # seed 004's findings on Figs. 4/5 (its figures are images)
        "cubic-fig9": 5,  # and on Figs. 6/7
        "lab10": 6,
        "lab11": 18,
        "ns2-testbed": 40,
        "vegas": 13 * 6 + 13 * 4 + 4 * 9 * 3,
    }


def test_table6_sweeps_are_the_shipped_vegas_mix_sweep():
    """scenarios/repro/vegas/table6*.toml run the set-up of scenarios/sweeps/vegas-mix.toml
    (issue 10's shipped sweep): same base scenario, grid and zips; the quick one only shorter
    and with fewer repeats."""
    from tcpfair.sweep import load_sweep

    shipped = load_sweep(ROOT.parent / "sweeps" / "vegas-mix.toml")
    st = rp.load_study("vegas")
    full, quick = (load_sweep(st.sweep_file("t6", q)) for q in (False, True))
    for sw in (full, quick):
        assert sw.axes == shipped.axes and sw.groups == shipped.groups
        assert sw.seed == shipped.seed
    assert full.repeats == shipped.repeats == 7 and quick.repeats == 2
    assert full.base == shipped.base
    assert quick.base == {**shipped.base, "duration": "30s"}


def test_list_shows_all_six_studies():
    r = CliRunner().invoke(cli, ["repro", "list"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    for name in ("lab10", "lab11", "vegas", "ns2-testbed", "cubic-fig8", "cubic-fig9"):
        assert any(ln.startswith(name + " ") for ln in lines), name
    assert sum("not yet transcribed" in ln for ln in lines) == 0


# --------------------------------------------------------------------------- kernel backend
def test_kernel_rows_scale_refuse_or_skip_with_a_note():
    refs = [
        _ref("thr", 9.38, sweep="s", rel_tolerance=0.1, kernel_scale=200.0, kernel_note="1/200"),
        _ref("retx", 994.0, sweep="s", kernel_expressible=False, kernel_note="counts"),
        _ref("gone", 0.9, sweep="t", tolerance=0.02),
        _ref("jfi", 0.99, sweep="s", tolerance=0.02),
    ]
    vals = {"thr": [9.2, 9.4], "retx": [10.0], "jfi": [0.98]}
    rows = {
        r.ref.id: r for r in rp.compare(_study(refs), vals, None, "kernel", {"t": "Not run: why."})
    }
    assert (
        rows["thr"].verdict == "reproduced" and "ours × 200" in rp.cells(rows["thr"])["explanation"]
    )
    assert rows["retx"].verdict == "not expressible" and "counts" in rows["retx"].note
    assert rows["gone"].verdict == "not run" and rows["gone"].note == "Not run: why."
    assert rows["jfi"].verdict == "reproduced" and rows["jfi"].note == ""
    # the same rows on the simulator: no notes, retx compared
    sim = {r.ref.id: r for r in rp.compare(_study(refs), vals)}
    assert sim["retx"].verdict == "differs" and sim["thr"].note == ""


def test_runs_graded_invalid_are_named_in_the_row():
    import pandas as pd

    t = pd.DataFrame(
        {
            "status": ["done", "done", "done", "failed"],
            "flows.0.cca": ["reno", "reno", "bbr", "reno"],
            "valid": [1, 0, 0, 0],
            "failed_checks": [None, "emulator.lateness_max, rtt.flows.0", "x", None],
        }
    )
    note = rp.invalid_note(t, _ref("a", 1.0, point={"flows.0.cca": "reno"}))
    assert note.startswith("1 of 2 runs graded invalid") and "rtt.flows.0" in note
    assert rp.invalid_note(t, _ref("b", 1.0, point={"flows.0.cca": "cubic"})) == ""
    rows = rp.compare(_study([_ref("a", 1.0, tolerance=0.1)]), {"a": [1.0]}, flags={"a": note})
    assert rows[0].note == note and rp.cells(rows[0])["explanation"].startswith("1 of 2")


@pytest.mark.parametrize("name", STUDIES)
def test_kernel_versions_compare_like_with_like(name):
    """On the kernel backend (scaled rates) a throughput row must be scaled back or marked
    not comparable — never compared raw — and its kernel point must exist in the kernel
    sweep; a sweep without a kernel version says why."""
    from tcpfair.sweep import load_sweep

    st = rp.load_study(name)
    if not st.on_kernel():
        assert st.kernel_note, name  # why the study is refused
        return
    for key, files in st.sweeps.items():
        assert "kernel" in files or files.get("kernel_why"), (name, key)
    for ref in st.references:
        if ref.sweep is None or not ref.expressible or "kernel" not in st.sweeps[ref.sweep]:
            continue
        sw = load_sweep(st.sweep_file(ref.sweep, False, "kernel"))
        rate = str(sw.base["bottleneck"]["rate"])
        full = str(load_sweep(st.sweep_file(ref.sweep, False)).base["bottleneck"]["rate"])
        if ref.unit in ("Gbit/s", "Mbit/s", "bit/s", "segments") and rate != full:
            assert ref.kernel_scale != 1.0 or not ref.kernel_expressible, ref.id
        if not ref.kernel_expressible:
            continue
        for k, v in (ref.kernel_point or ref.point).items():
            assert str(v) in [str(x) for x in sw.axes[k]], (ref.id, k, v)


# --------------------------------------------------------------------------- end to end
def test_quick_vegas_end_to_end(tmp_path, monkeypatch):
    out = tmp_path / "store"
    md = tmp_path / "page.md"
    args = ["repro", "vegas", "--quick", "-o", str(out), "--no-progress", "-j", "2"]
    r = CliRunner().invoke(cli, [*args, "--markdown", str(md)])
    assert r.exit_code == 0, r.output
    rows = {
        row["id"]: row
        for row in csv.DictReader((out / "repro-vegas-quick.csv").read_text().splitlines())
    }
    assert len(rows) == 130 + 108
    assert rows["t3-x110-1-actual"]["verdict"] == "not expressible"
    # ns-2's pre-2001 start (window_init = 1): x2 = 10 ms gives the paper's 2:1 and
    # JFI 0.900 to the printed digits (a real ns-2.35 run gives the same: 1000 / 500 kbit/s)
    assert rows["t3-x10-ratio"]["tcpfair"] == "2.000"
    assert rows["t3-x10-jfi"]["verdict"] == "reproduced"
    ran = [row for row in rows.values() if row["verdict"] != "not expressible"]
    two_conn = [row for row in ran if row["table"] in ("Table 3", "Table 4")]
    assert len(two_conn) == 13 * 2 + 13 * 4 and all(row["n"] == "1" for row in two_conn)
    # Table 6: every cell ran its two quick repeats
    mix = [row for row in ran if row["table"].startswith("Table 6")]
    assert len(mix) == 108 and all(row["n"] == "2" for row in mix)
    assert (
        "## vegas:" in md.read_text() and "| Table 4 | x2 = 5 ms, Vegas-3 | JFI |" in md.read_text()
    )
    # docs/reproductions.md is this command's output: its vegas section must be the same
    # table (the vegas runs are deterministic), else the page is stale — regenerate it with
    # `tcpfair repro all --quick --markdown docs/reproductions.md`
    page = (ROOT.parents[1] / "docs" / "reproductions.md").read_text()
    assert (out / "repro-vegas-quick.md").read_text() in page
    # resumable: the second call runs nothing and gives the same table
    before = (out / "repro-vegas-quick.csv").read_text()
    r2 = CliRunner().invoke(cli, args)
    assert r2.exit_code == 0, r2.output
    assert (out / "repro-vegas-quick.csv").read_text() == before
    assert "explanation" in r2.output  # piped: the full table, 200 columns
    # on an 80-column terminal: the comparison itself, numbers and verdicts whole (it used
    # to print the 200-column table, each line wrapped into three); the rest is named
    import io

    from rich.console import Console

    from tcpfair.commands import repro as repro_cmd

    buf = io.StringIO()
    monkeypatch.setattr(repro_cmd, "table_console", lambda width: Console(file=buf, width=80))
    r3 = CliRunner().invoke(cli, args)
    assert r3.exit_code == 0, r3.output
    text = buf.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    header = next(line for line in text.splitlines() if "verdict" in line)
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "table",
        "row",
        "source",
        "tcpfair",
        "verdict",
    ]
    verdicts = [
        line.strip("│").split("│")[4].strip()
        for line in text.splitlines()
        if line.startswith("│") and line.split("│")[1].strip()
    ]
    assert len(verdicts) == len(rows)  # one first line per row, its verdict whole
    assert sorted(set(verdicts)) == sorted({row["verdict"] for row in rows.values()})
    assert "explanations are in the .md" in " ".join(text.split())


# --------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    "args, mentions",
    [
        pytest.param(["repro", "lab12"], ["lab12", "allowed", "lab10", "all"], id="unknown-study"),
        pytest.param(["repro", "vegas", "-j", "0"], ["-j 0", "≥ 1"], id="jobs-zero"),
        pytest.param(["repro", "vegas", "--backend", "ns3"], ["--backend", "sim"], id="backend"),
        pytest.param(["repro"], ["STUDY"], id="no-study"),
        pytest.param(
            ["repro", "vegas", "--backend", "kernel", "-o", "st"],
            ["'vegas'", "cannot run on the kernel backend", "ns-2", "allowed: --backend sim"],
            id="kernel-refused",
        ),
        pytest.param(
            ["repro", "lab10", "--sweep", "p9", "-o", "st"],
            ["--sweep p9", "'lab10'", "allowed: rr, rb, p8, single"],
            id="unknown-sweep-key",
        ),
        pytest.param(
            ["repro", "vegas", "--quick", "-o", "st", "--against", "nowhere"],
            ["--against nowhere", "not a results store"],
            id="against-not-a-store",
        ),
    ],
)
def test_bad_options_fail_in_one_line(args, mentions, tmp_path):
    fails_cleanly(args, mentions=mentions, cwd=tmp_path, unchanged=[tmp_path])


def test_output_that_is_a_file_fails_and_is_left_alone(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("keep me")
    fails_cleanly(["repro", "vegas", "--quick", "-o", str(f)], mentions=[str(f)], unchanged=[f])


@pytest.mark.parametrize(
    "text, mentions",
    [
        pytest.param("[study]\nname = 'x'\n", ["[study] needs 'title'"], id="no-title"),
        pytest.param("[study\n", ["not valid TOML"], id="toml"),
        pytest.param(
            "[study]\nname='x'\ntitle='x'\nsource='s'\nsweeps={}\n[[value]]\nid='a'\nvalue='1'\n"
            "table='t'\nrow='r'\nunit='u'\nmeasured='m'\nlocation='l'\nexplanation='e'\n",
            ["value 'a'", "must be a number"],
            id="value-text",
        ),
        pytest.param(
            "[study]\nname='x'\ntitle='x'\nsource='s'\nsweeps={}\n[[value]]\nid='a'\nvalue=1\n",
            ["value 'a'", "missing", "location"],
            id="no-location",
        ),
        pytest.param(
            "[study]\nname='x'\ntitle='x'\nsource='s'\nsweeps={}\n[[value]]\nid='a'\nvalue=1\n"
            "table='t'\nrow='r'\nunit='u'\nmeasured='m'\nlocation='l'\nexplanation='e'\n"
            "sweep='s1'\nmetric='metrics.jfi'\n",
            ["sweep 's1'", "allowed"],
            id="unknown-sweep",
        ),
        pytest.param(
            "[study]\nname='x'\ntitle='x'\nsource='s'\nsweeps={}\n[[value]]\nid='a'\nvalu=1\n",
            ["unknown key(s) valu", "allowed"],
            id="typo-key",
        ),
        pytest.param(
            "[study]\nname='x'\ntitle='x'\nsource='s'\nsweeps={}\n[[value]]\nid='a'\nvalue=1\n"
            "table='t'\nrow='r'\nunit='u'\nmeasured='m'\nlocation='l'\nexplanation='e'\n"
            "expressible=false\nclaim='under'\n",
            ["value 'a'", "claim 'under'", "allowed: below, above, within"],
            id="claim-word",
        ),
        pytest.param(
            "[study]\nname='x'\ntitle='x'\nsource='s'\nsweeps={}\n[[value]]\nid='a'\nvalue=1\n"
            "table='t'\nrow='r'\nunit='u'\nmeasured='m'\nlocation='l'\nexplanation='e'\n"
            "expressible=false\nclaim='below'\nregion={'flows.1.rtt'=['400ms','300ms']}\n",
            ["region", "flows.1.rtt", "[low, high]"],
            id="region-reversed",
        ),
        pytest.param(
            "[study]\nname='x'\ntitle='x'\nsource='s'\nsweeps={}\n[[value]]\nid='a'\nvalue=1\n"
            "table='t'\nrow='r'\nunit='u'\nmeasured='m'\nlocation='l'\nexplanation='e'\n"
            "expressible=false\nregion={}\n",
            ["region needs a claim"],
            id="region-no-claim",
        ),
    ],
)
def test_bad_reference_files_are_one_line(tmp_path, text, mentions):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "reference.toml").write_text(text)
    with pytest.raises(rp.ReproError) as e:
        rp.load_study("x", tmp_path)
    msg = str(e.value)
    assert "\n" not in msg and "reference.toml" in msg
    for m in mentions:
        assert m in msg, (m, msg)


def test_markdown_in_a_missing_folder_fails_before_running(tmp_path):
    out = tmp_path / "store"
    fails_cleanly(
        ["repro", "vegas", "--quick", "-o", str(out), "--markdown", str(tmp_path / "no/page.md")],
        mentions=["--markdown", "does not exist"],
        unchanged=[tmp_path],
    )
