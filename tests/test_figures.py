"""The run panel (issue 12 §1): what it draws, the data written next to it, smoothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from badinput import fails_cleanly
from click.testing import CliRunner

from tcpfair.cli import cli
from tcpfair.plots import DEFAULT_PANELS, PANELS, run_panel, run_panel_data, smooth_throughput
from tcpfair.result import RunResult

SCENARIO = """
name = "fig"
duration = "8s"
seed = 3

[bottleneck]
rate = "10Mbit"

[[flows]]
cca = "reno"
rtt = "20ms"
label = "short"

[[flows]]
cca = "cubic"
rtt = "60ms"
label = "long"
"""

MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "svg": b"<svg", "pdf": b"%PDF-"}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fig")
    (d / "s.toml").write_text(SCENARIO)
    r = CliRunner().invoke(cli, ["run", str(d / "s.toml"), "-o", str(d / "r"), "--smooth", "1s"])
    assert r.exit_code == 0, r.output
    return d / "r"


def test_panel_and_csv_are_written(run_dir: Path) -> None:
    assert (run_dir / "run.png").read_bytes().startswith(MAGIC["png"])
    data = pd.read_csv(run_dir / "run.csv")
    assert list(data.columns) == ["panel", "series", "t_s", "value"]
    # the simulator knows every panel's data
    assert list(dict.fromkeys(data["panel"])) == list(DEFAULT_PANELS)
    # smoothed to 1 s: 8 one-second bins per flow
    thr = data[data["panel"] == "throughput"]
    assert sorted(thr.groupby("series").size().tolist()) == [8, 8]
    assert np.allclose(sorted(set(thr["t_s"])), np.arange(1.0, 9.0))


def test_figure_axes_and_csv_match_the_plotted_lines(run_dir: Path, tmp_path: Path) -> None:
    result = RunResult.load(run_dir)
    data = run_panel_data(result, smooth_s=1.0)
    # run.csv (written by `tcpfair run --smooth 1s`) is that data
    csv = pd.read_csv(run_dir / "run.csv", float_precision="round_trip")
    assert csv[["panel", "series"]].astype(str).equals(data[["panel", "series"]].astype(str))
    assert np.array_equal(csv[["t_s", "value"]].to_numpy(), data[["t_s", "value"]].to_numpy())
    fig = run_panel(result, tmp_path / "p.png", data)
    axes = fig.get_axes()
    assert [ax.get_ylabel() for ax in axes] == [PANELS[p] for p in DEFAULT_PANELS]
    assert all(ax.get_shared_x_axes().joined(axes[0], ax) for ax in axes)
    legend = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert legend == ["short (reno, 20 ms)", "long (cubic, 60 ms)"]
    # every plotted point is a row of the CSV, and every row is plotted
    for ax, panel in zip(axes, DEFAULT_PANELS, strict=True):
        plotted = sorted(
            (float(x), float(y))
            for line in ax.get_lines()
            for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True)
        )
        rows = data[data["panel"] == panel]
        assert plotted == sorted(zip(rows["t_s"], rows["value"], strict=True))
    # the drops are marked on the queue panel: one marker per interval with a drop
    drops = [ln for ln in axes[3].get_lines() if ln.get_label() == "drops"]
    assert len(drops) == 1
    assert len(drops[0].get_xdata()) == int((result.link["drops"] > 0).sum()) > 0


def test_smoothing_keeps_the_bytes() -> None:
    rng = np.random.default_rng(1)
    n = 40  # 40 intervals of 0.25 s = 10 s, two flows
    rows = []
    for flow in (0, 1):
        b = rng.integers(0, 50_000, n).astype(float)
        for i in range(n):
            rows.append({"flow": flow, "t_s": (i + 1) * 0.25, "dt_s": 0.25, "bytes": b[i]})
    s = pd.DataFrame(rows)
    out = smooth_throughput(s, 1.0)
    assert len(out) == 2 * 10
    for flow in (0, 1):
        part = s[s["flow"] == flow]
        mean_bps = part["bytes"].sum() * 8 / 10.0
        sm = out[out["flow"] == flow]["throughput_bps"]
        assert sm.mean() == pytest.approx(mean_bps, rel=1e-12)
        # the first bin is the first four intervals
        assert sm.iloc[0] == pytest.approx(part["bytes"].iloc[:4].sum() * 8 / 1.0, rel=1e-12)


def test_panels_without_data_are_left_out(run_dir: Path, tmp_path: Path) -> None:
    full = RunResult.load(run_dir)
    # as from iperf3 files: no link samples, no cwnd
    bare = RunResult(full.flows, full.samples.assign(cwnd_bytes=np.nan), meta=full.meta)
    data = run_panel_data(bare)
    assert set(data["panel"]) == {"throughput", "rtt", "jfi"}
    fig = run_panel(bare, tmp_path / "p.png", data)
    assert [ax.get_ylabel() for ax in fig.get_axes()] == [
        PANELS["throughput"],
        PANELS["rtt"],
        PANELS["jfi"],
    ]


@pytest.mark.parametrize("fmt", ["svg", "pdf"])
def test_panel_formats_and_single_panel(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "s.toml").write_text(SCENARIO)
    args = ["run", str(tmp_path / "s.toml"), "-o", str(tmp_path / "r")]
    r = CliRunner().invoke(cli, [*args, "--plot-format", fmt, "--panels", "cwnd"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "r" / f"run.{fmt}").read_bytes()[:200].find(MAGIC[fmt]) >= 0
    assert set(pd.read_csv(tmp_path / "r" / "run.csv")["panel"]) == {"cwnd"}


def test_invalid_run_is_stamped(run_dir: Path, tmp_path: Path) -> None:
    result = RunResult.load(run_dir)
    fig = run_panel(result, tmp_path / "p.svg", run_panel_data(result), stamp="INVALID")
    assert [t.get_text() for t in fig.texts] == ["INVALID"]
    assert "INVALID" in (tmp_path / "p.svg").read_text()


@pytest.mark.parametrize(
    "option,value,mentions",
    [
        ("--smooth", "0s", ["--smooth", "0s", "> 0"]),
        ("--smooth", "fast", ["--smooth", "fast", "allowed"]),
        ("--panels", "throughput,bogus", ["--panels", "bogus", "cwnd"]),
        ("--panels", ",", ["--panels", "allowed"]),
    ],
    ids=["smooth-zero", "smooth-no-unit", "panels-unknown", "panels-empty"],
)
def test_bad_figure_options(tmp_path: Path, option: str, value: str, mentions: list[str]) -> None:
    (tmp_path / "s.toml").write_text(SCENARIO)
    fails_cleanly(
        ["run", "s.toml", "-o", "out", option, value],
        mentions=mentions,
        unchanged=[tmp_path],
        cwd=tmp_path,
    )
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- sweep figures
SWEEP = """
name = "figsweep"
repeats = 2

[base]
name = "figsweep"
duration = "6s"
[base.bottleneck]
rate = "10Mbit"
[[base.flows]]
cca = "reno"
rtt = "20ms"
[[base.flows]]
cca = "reno"
rtt = "20ms"

[axes]
"flows.1.rtt" = ["20ms", "80ms"]
"flows.1.cca" = ["reno", "cubic"]

[[plots]]
kind = "line"
metric = "thr_g1_bps"
x = "flows.1.rtt"
by = "flows.1.cca"
{extra}
"""


@pytest.mark.parametrize(
    "axis,values,label",
    [
        ("flows.1.rtt", ["20ms", "40ms"], "RTT of flow 2 (ms)"),
        ("flows.0.cca", ["reno", "cubic"], "algorithm of flow 1"),
        ("bottleneck.buffer", ["0.5bdp", "2bdp"], "buffer (× BDP)"),
        ("bottleneck.buffer", ["10pkt", "20pkt"], "buffer (packets)"),
        ("bottleneck.rate", ["10Mbit", "100Mbit"], "bottleneck rate (Mbit/s)"),
        ("something.new", [1, 2], "something.new"),
    ],
)
def test_axis_labels_in_words(axis: str, values: list[object], label: str) -> None:
    from tcpfair.surfaces import axis_label

    assert axis_label(axis, values) == label


def test_metric_labels_name_the_flow_as_users_do() -> None:
    from tcpfair.surfaces import metric_label

    assert metric_label("thr_g1_bps") == "throughput of flow 2 (Mbit/s)"
    assert metric_label("utilization") == "link utilization (%)"
    # [measure] flows' share of the link, in % as utilization (seed 004's high-speed pair)
    assert metric_label("utilization_measured") == "measured connections' share of the link (%)"
    from tcpfair.surfaces import metric_scale

    assert metric_scale("utilization_measured") == (100.0, "%")
    assert metric_label("mean:vegas") == "mean throughput of vegas (Mbit/s)"


def test_sweep_line_plot_style_colours_and_csv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tcpfair.surfaces as surfaces

    figs: list[object] = []
    save = surfaces._save

    def keep(fig: object, *args: object, **kw: object) -> list[Path]:
        figs.append(fig)
        return save(fig, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(surfaces, "_save", keep)
    extra = 'title = "My title"\nylabel = "goodput (Mbit/s)"\nlog_x = true'
    (tmp_path / "sw.toml").write_text(SWEEP.format(extra=extra))
    store = tmp_path / "store"
    args = ["sweep", str(tmp_path / "sw.toml"), "-o", str(store), "-j", "1", "--no-progress"]
    r = CliRunner().invoke(cli, [*args, "--format", "png"])
    assert r.exit_code == 0, r.output
    (fig,) = figs
    (ax,) = fig.get_axes()  # type: ignore[attr-defined]
    assert ax.get_title() == "My title"
    assert ax.get_ylabel() == "goodput (Mbit/s)"
    assert ax.get_xlabel() == "RTT of flow 2 (ms)"
    assert ax.get_xscale() == "log"
    colours = {ln.get_label(): ln.get_color() for ln in ax.get_lines()}
    assert colours == {"reno": "#1f77b4", "cubic": "#ff7f0e"}
    # the CSV beside the figure is what is plotted, in Mbit/s, and equals the store's means
    out = store / "figures" / "figsweep"
    assert (out / "thr_g1_bps-vs-flows.1.rtt.png").read_bytes().startswith(MAGIC["png"])
    csv = pd.read_csv(out / "thr_g1_bps-vs-flows.1.rtt.csv", float_precision="round_trip")
    for ln in ax.get_lines():
        rows = csv[csv["flows.1.cca"] == ln.get_label()]
        assert list(ln.get_ydata()) == list(rows["mean (Mbit/s)"])
    agg = tmp_path / "agg.csv"
    r = CliRunner().invoke(cli, ["results", str(store), "--export", str(agg), "--aggregate"])
    assert r.exit_code == 0, r.output
    a = pd.read_csv(agg)
    a = a[a["metric"] == "thr_g1_bps"].set_index(["flows.1.cca", "flows.1.rtt"])["mean"]
    for _, row in csv.iterrows():
        bps = a[(row["flows.1.cca"], row["flows.1.rtt"])]
        assert row["mean (Mbit/s)"] == pytest.approx(bps / 1e6, rel=1e-12)


@pytest.mark.parametrize(
    "extra,mentions",
    [
        ('log_x = "yes"', ["plots.0.log_x", "'yes'", "true or false"]),
        ("title = 3", ["plots.0.title", "3", "one line of text"]),
        ('xlabel = "a\\nb"', ["plots.0.xlabel", "one line of text"]),
        ('x2label = "a"', ["plots.0", "x2label", "ylabel"]),
        ('by = "flows.1.rtt"\nx = "flows.1.cca"\nlog_x = true', ["plots.0.log_x", "positive"]),
    ],
    ids=["log-not-bool", "title-not-text", "label-two-lines", "unknown-key", "log-of-names"],
)
def test_bad_plot_style_keys(tmp_path: Path, extra: str, mentions: list[str]) -> None:
    text = SWEEP.format(extra=extra)
    if "\nx = " in extra:  # replace x and by rather than repeat them
        text = text.replace('x = "flows.1.rtt"\nby = "flows.1.cca"\n', "")
    (tmp_path / "sw.toml").write_text(text)
    fails_cleanly(
        ["sweep", "sw.toml", "--dry-run"], mentions=mentions, unchanged=[tmp_path], cwd=tmp_path
    )


def test_log_scale_on_a_surface_is_refused(tmp_path: Path) -> None:
    text = SWEEP.format(extra="").replace('kind = "line"', 'kind = "surface"')
    text = text.replace('by = "flows.1.cca"', 'y = "flows.1.cca"\nlog_y = true')
    (tmp_path / "sw.toml").write_text(text)
    fails_cleanly(
        ["sweep", "sw.toml", "--dry-run"],
        mentions=["plots.0.log_y", "line plots only"],
        unchanged=[tmp_path],
        cwd=tmp_path,
    )


def test_fairness_plot_as_a_panel(tmp_path: Path) -> None:
    src = Path(__file__).parent.parent / "examples" / "lab10-parallel-P4.json"
    out = tmp_path / "f.svg"
    args = ["fairness", str(src), "--plot", str(out), "--panels", "throughput,queue,jfi"]
    r = CliRunner().invoke(cli, [*args, "--smooth", "2s"])
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:200].find(MAGIC["svg"]) >= 0
    data = pd.read_csv(tmp_path / "f.csv")
    # iperf3 reports have no bottleneck queue: that panel is left out, not drawn empty
    assert set(data["panel"]) == {"throughput", "jfi"}
    # four streams, 20 s re-binned to 2 s
    assert data[data["panel"] == "throughput"].groupby("series").size().tolist() == [10] * 4
    fails_cleanly(["fairness", str(src), "--smooth", "1s"], mentions=["--plot"])


def test_results_help_shows_a_plain_percent() -> None:
    r = CliRunner().invoke(cli, ["results", "--help"], terminal_width=200)
    assert r.exit_code == 0
    assert "%%" not in r.output and "95 % CI" in r.output


def test_heatmap_cells_in_readable_units(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tcpfair.surfaces as surfaces

    figs: list[object] = []
    save = surfaces._save
    monkeypatch.setattr(
        surfaces, "_save", lambda fig, *a, **k: (figs.append(fig), save(fig, *a, **k))[1]
    )
    text = SWEEP.format(extra="").replace('kind = "line"', 'kind = "surface"')
    text = text.replace('by = "flows.1.cca"', 'y = "flows.1.cca"')
    (tmp_path / "sw.toml").write_text(text)
    store = tmp_path / "store"
    args = ["sweep", str(tmp_path / "sw.toml"), "-o", str(store), "-j", "1", "--no-progress"]
    assert CliRunner().invoke(cli, [*args, "--format", "png"]).exit_code == 0
    (fig,) = figs
    heat = fig.get_axes()[0]  # type: ignore[attr-defined]
    cells = sorted(float(t.get_text()) for t in heat.texts)
    grid = pd.read_csv(store / "figures" / "figsweep" / "thr_g1_bps-surface.csv")
    col = "mean throughput of flow 2 (Mbit/s)"
    assert list(grid.columns) == ["flows.1.cca", "flows.1.rtt", col]
    # a cell shows Mbit/s to one decimal (10 Mbit/s link: a flow gets between 0 and 10)
    assert cells == sorted(round(v, 1) for v in grid[col])
    assert all(0 < c <= 10 for c in cells)


@pytest.mark.parametrize("by", ["flow", "group"])
def test_throughput_figure_legend_names_the_algorithm(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by: str
) -> None:
    import tcpfair.plots as plots

    figs: list[object] = []
    close = plots.plt.close
    monkeypatch.setattr(plots.plt, "close", lambda fig: (figs.append(fig), close(fig))[1])
    plots.throughput_over_time(RunResult.load(run_dir), tmp_path / "t.png", by=by)
    (fig,) = figs
    texts = [t.get_text() for t in fig.get_axes()[0].get_legend().get_texts()]  # type: ignore[attr-defined]
    assert texts == ["short (reno, 20 ms)", "long (cubic, 60 ms)", "measurement window"]


def test_queue_in_packets_on_request(run_dir: Path, tmp_path: Path) -> None:
    result = RunResult.load(run_dir)
    data = run_panel_data(result, panels=["queue_pkts", "throughput"])
    assert list(dict.fromkeys(data["panel"])) == ["queue_pkts", "throughput"]
    q = data[(data["panel"] == "queue_pkts") & (data["series"] == "queue")]
    assert list(q["value"]) == list(result.link["queue_pkts"].astype(float))
    fig = run_panel(result, tmp_path / "q.png", data, panels=["queue_pkts", "throughput"])
    assert [ax.get_ylabel() for ax in fig.get_axes()] == ["queue (packets)", PANELS["throughput"]]
