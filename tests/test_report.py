"""``tcpfair report`` (issue 12 §2) without a browser: what the HTML holds (numbers checked
against the run's own files), that it names no external URL, the PDF, the output rules and
the bad-input cases. tests/test_report_browser.py opens the same reports in Chromium."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from badinput import fails_cleanly, snapshot
from report_support import invoke, make_run, make_store

from tcpfair import htmlreport as hr


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("report")
    return {"run": make_run(d), "store": make_store(d), "store2": make_store(d, "store2", 2)}


def charts_of(text: str) -> list[dict]:
    m = re.search(r"<script>const CHARTS=(.*?);const CONFIG", text, re.S)
    assert m, "no chart data in the report"
    return json.loads(m.group(1).replace("<\\/", "</"))


class _Refs(HTMLParser):
    """Every URL-valued attribute of the page's elements (script text is not markup)."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for k, v in attrs:
            if k in ("src", "href", "action", "srcset", "poster", "data") and v is not None:
                self.refs.append(v)


def external_refs(text: str) -> list[str]:
    """src/href (…) attributes that point anywhere but into the page or to a data: URI, and
    URLs the page's scripts and styles load literally (fetch/import/XHR/src=/url(…))."""
    p = _Refs()
    p.feed(text)
    refs = [r for r in p.refs if not (r.startswith("#") or r.startswith("data:"))]
    loads = re.findall(
        r"""(?:fetch|import|url|importScripts)\s*\(\s*["']?(https?://[^"')\s]+)"""
        r"""|\.open\s*\(\s*["'][A-Z]+["']\s*,\s*["'](https?://[^"']+)"""  # XHR, not window.open
        r"""|\.src\s*=\s*["'](https?://[^"']+)""",
        text,
    )
    return refs + ["".join(m) for m in loads]


def without_library(text: str) -> str:
    """The page with the inlined plotly.js taken out: what tcpfair itself wrote."""
    js = hr.plotly_js()
    assert text.count(js) == 1, "plotly.js must be inlined exactly once"
    return text.replace(js, "")


def test_run_report_holds_the_run(inputs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    invoke(["report", str(inputs["run"]), "-o", str(out), "--no-progress"])
    text = out.read_text()
    ours = without_library(text)
    assert external_refs(text) == []
    assert "http://" not in ours and "https://" not in ours
    # per-flow throughput over the window, computed here from samples.parquet by hand
    s = pd.read_parquet(inputs["run"] / "samples.parquet")
    summary = json.loads((inputs["run"] / "summary.json").read_text())
    lo, hi = summary["meta"]["window"]
    mid = s["t_s"] - s["dt_s"] / 2
    w = s[(mid >= lo) & (mid <= hi)]
    for _, g in w.groupby("flow"):
        mbit = g["bytes"].sum() * 8 / g["dt_s"].sum() / 1e6
        assert f"<td>{mbit:.3f}</td>" in text
    for section in ("Summary", "Validity checks", "Flows", "Over time", "Scenario (resolved)"):
        assert f"<h2>{section}</h2>" in text
    assert "<td>20ms</td>" in text and "<td>40ms</td>" in text  # rtt_ns of the two flows
    charts = charts_of(text)
    names = re.findall(r'data-chart="([^"]+)"', text)
    assert names == ["run", "flow-bars", "cdf"]
    panel = charts[0]
    # one throughput trace per flow, coloured by algorithm (reno blue, cubic orange)
    thr = [t for t in panel["data"] if t.get("yaxis") == "y" and "legendgroup" in t]
    assert [t["line"]["color"] for t in thr] == ["#1f77b4", "#ff7f0e"]
    assert all(len(t["x"]) == len(t["y"]) > 0 for t in panel["data"] if t["name"] != "drops")
    # every chart has its data as a CSV link
    assert text.count('class="csv"') == len(charts)


def test_invalid_kernel_run_is_stamped_and_checks_listed(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(inputs["run"], run)
    summary = json.loads((run / "summary.json").read_text())
    summary["meta"].update(
        backend="kernel",
        valid=False,
        grade="invalid",
        checks=[
            {"name": "rate", "grade": "invalid", "ok": False, "value": 0.8, "limit": 0.95,
             "message": "bottleneck rate 80 % of the set rate"},
            {"name": "rtt", "grade": "ok", "ok": True, "value": 1, "limit": 2,
             "message": "RTT within 2 ms"},
        ],
    )  # fmt: skip
    (run / "summary.json").write_text(json.dumps(summary))
    text = hr.render_html(hr.build(run))
    assert "run INVALID" in text and "INVALID (see the validity checks)" in text
    assert '<td class="bad">invalid</td>' in text and '<td class="ok">ok</td>' in text
    assert html.escape("bottleneck rate 80 % of the set rate") in text
    panel = charts_of(text)[0]
    assert panel["layout"]["annotations"][0]["text"] == "INVALID"


def test_store_report_has_ci_lines_boxes_surfaces_and_comparison(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "s.html"
    invoke(["report", str(inputs["store"]), "--compare", str(inputs["store2"]), "-o", str(out)])
    text = out.read_text()
    assert external_refs(text) == []
    ours = without_library(text)
    assert "http://" not in ours and "https://" not in ours
    kinds = re.findall(r'data-chart="([^"]+)"', text)
    for kind in ("jfi-line", "jfi-box", "jfi-surface", "flow-bars"):
        assert kind in kinds, kinds
    assert "Comparison: A = store:report-sweep/sim, B = store2:report-sweep/sim" in text
    # the CI band of a line chart is the t interval of the per-run values at that point
    from tcpfair.aggregate import mean_std_ci
    from tcpfair.store import Store

    t = Store(inputs["store"], readonly=True).table()
    charts = dict(zip(kinds, charts_of(text), strict=True))
    line = charts["jfi-line"]
    means = [tr for tr in line["data"] if tr.get("mode") == "lines+markers"]
    # x is the RTT of flow 2, one line per buffer (the other numeric axis with few values)
    assert sorted(tr["name"] for tr in means) == ["0.5bdp", "2bdp"]
    for tr in means:
        assert tr["x"] == [20.0, 80.0]
        for x, mean, (lo, hi) in zip(["20ms", "80ms"], tr["y"], tr["customdata"], strict=True):
            sel = t[(t["flows.1.rtt"] == x) & (t["bottleneck.buffer"] == tr["name"])]
            n, mu, _, half = mean_std_ci(sel["jfi"].to_numpy(float))
            assert n == 2
            assert mean == pytest.approx(mu, rel=1e-12)
            assert (lo, hi) == pytest.approx((mu - half, mu + half), rel=1e-12)


def test_pdf_report(inputs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "r.pdf"
    invoke(["report", str(inputs["store"]), "--pdf", "-o", str(out), "--no-progress"])
    data = out.read_bytes()
    assert data.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page\b", data)) >= 3  # text page + line, box, surface


def test_default_output_is_beside_the_folder_and_not_overwritten(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    run = tmp_path / "myrun"
    shutil.copytree(inputs["run"], run)
    invoke(["report", str(run), "--no-progress"])
    out = tmp_path / "myrun.html"
    assert out.is_file()
    assert sorted(p.name for p in run.iterdir()) == sorted(
        p.name for p in inputs["run"].iterdir()
    )  # nothing written into the run folder
    fails_cleanly(
        ["report", str(run), "--no-progress"],
        mentions=[str(out), "exists", "--force"],
        unchanged=[out],
    )
    invoke(["report", str(run), "--no-progress", "--force"])


def test_report_of_a_run_in_a_store_goes_beside_the_store(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    from tcpfair.store import Store

    store = tmp_path / "st"
    shutil.copytree(inputs["store"], store)
    run_hash = Store(store, readonly=True).table()["run_hash"].iloc[0]
    invoke(["report", str(store / "runs" / "sim" / run_hash), "--no-progress"])
    assert (tmp_path / f"st-{run_hash}.html").is_file()
    assert Store(store, readonly=True).check() == []  # nothing foreign in the store


@pytest.mark.parametrize(
    "case,mentions",
    [
        ("missing", ["nope", "not a folder"]),
        ("file", ["afile", "not a folder"]),
        ("neither", ["empty", "neither a run folder", "results store"]),
        ("suffix", ["-o", "x.txt", ".html"]),
        ("compare-run", ["--compare", "compares results stores"]),
        ("compare-not-store", ["--compare", "not a results store"]),
        ("missing-parent", ["-o", "does not exist"]),
        ("empty-catalog", ["catalog.sqlite", "empty (0 bytes)"]),
    ],
)
def test_bad_report_inputs(
    case: str, mentions: list[str], inputs: dict[str, Path], tmp_path: Path
) -> None:
    (tmp_path / "afile").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / "catalog.sqlite").write_bytes(b"")
    args = {
        "missing": ["report", str(tmp_path / "nope")],
        "file": ["report", str(tmp_path / "afile")],
        "neither": ["report", str(tmp_path / "empty"), "-o", str(tmp_path / "e.html")],
        "suffix": ["report", str(inputs["run"]), "-o", str(tmp_path / "x.txt")],
        "compare-run": [
            "report", str(inputs["run"]), "--compare", str(inputs["store"]),
            "-o", str(tmp_path / "c.html"),
        ],
        "compare-not-store": [
            "report", str(inputs["store"]), "--compare", str(tmp_path / "empty"),
            "-o", str(tmp_path / "c.html"),
        ],
        "missing-parent": ["report", str(inputs["run"]), "-o", str(tmp_path / "no" / "r.html")],
        "empty-catalog": ["report", str(tmp_path / "zero"), "-o", str(tmp_path / "z.html")],
    }[case]  # fmt: skip
    before = snapshot(tmp_path)
    fails_cleanly([*args, "--no-progress"], mentions=mentions)
    assert snapshot(tmp_path) == before


def test_readable_scenario_values() -> None:
    assert hr.readable(20_000_000, "rtt_ns") == "20ms"
    assert hr.readable(30_000_000_000, "duration_ns") == "30s"
    assert hr.readable(100_000_000, "rate_bps") == "100Mbit/s"
    assert hr.readable(150_000, "buffer_bytes") == "150KB"
    assert hr.readable(0.01, "loss") == "0.01"
    assert hr.readable(None, "stop_ns") == "—"


def test_text_in_tables_is_escaped() -> None:
    df = pd.DataFrame({"label": ["<script>alert(1)</script>"]})
    out = hr.table_html(df)
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "</" not in hr.script_json({"t": "</script>"}).replace("<\\/", "")


def test_run_with_short_flows_has_an_fct_cdf(tmp_path: Path) -> None:
    # a real simulator run with short flows: the CDF is of their completion times (ms)
    from tcpfair.backends import get_backend
    from tcpfair.spec import from_dict

    sc = from_dict(
        {
            "name": "web",
            "duration": "4s",
            "bottleneck": {"rate": "20Mbit", "buffer": "1bdp"},
            "flows": [
                {"cca": "cubic", "rtt": "20ms"},
                {
                    "label": "web",
                    "cca": "reno",
                    "rtt": "20ms",
                    "arrivals": {"process": "fixed", "rate": "5/s"},
                    "size": "50KB",
                },
            ],
        }
    )
    res = get_backend("sim").run(sc)
    res.save(tmp_path / "run")
    fcts = res.short_flows["fct_s"].dropna().to_numpy() * 1000
    assert len(fcts) >= 15
    text = hr.render_html(hr.build(tmp_path / "run"))
    assert "CDF of flow completion times" in text
    fct = charts_of(text)[-1]
    assert sorted(fct["data"][0]["x"]) == pytest.approx(sorted(fcts))
    assert fct["data"][0]["line"]["color"] == "#1f77b4"  # reno's colour


def test_csv_links_hold_the_charts_data(inputs: dict[str, Path]) -> None:
    import base64
    import io

    text = hr.render_html(hr.build(inputs["run"]))
    links = re.findall(r'href="data:text/csv;charset=utf-8;base64,([^"]+)"', text)
    assert len(links) == 3
    run_csv = pd.read_csv(io.StringIO(base64.b64decode(links[0]).decode()))
    assert list(run_csv.columns) == ["panel", "series", "t_s", "value"]
    from tcpfair.plots import run_panel_data
    from tcpfair.result import RunResult

    expected = run_panel_data(RunResult.load(inputs["run"]))
    assert len(run_csv) == len(expected)
    assert run_csv["value"].to_numpy() == pytest.approx(expected["value"].to_numpy(float))


def test_progress_lines_name_each_sweep(inputs: dict[str, Path], tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tcpfair.cli import cli

    out = tmp_path / "p.html"
    r = CliRunner().invoke(cli, ["report", str(inputs["store"]), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "report: sweep report-sweep (sim): 1 of 1" in r.stderr
    assert r.stdout.strip() == f"report: {out} ({out.stat().st_size / 1e6:.1f} MB)"
    r = CliRunner().invoke(cli, ["report", str(inputs["store"]), "-o", str(out), "--force",
                                 "--no-progress"])  # fmt: skip
    assert r.exit_code == 0 and r.stderr == ""


def test_default_chart_axes() -> None:
    """x: the first numeric axis; one line per algorithm; y: the next numeric axis; an axis
    that moves with another (a zip partner) or does not vary is not chosen."""
    t = pd.DataFrame(
        {
            "flows.1.cca": ["reno", "cubic"] * 4,
            "flows.1.rtt": ["20ms", "20ms", "80ms", "80ms"] * 2,
            "flows.0.rtt": ["20ms", "20ms", "80ms", "80ms"] * 2,  # zipped with flows.1.rtt
            "bottleneck.buffer": ["1bdp"] * 4 + ["2bdp"] * 4,
            "seed": [1] * 8,
        }
    )
    axes = list(t.columns)
    assert hr.choose_axes(t, axes) == ("flows.1.rtt", "flows.1.cca", "bottleneck.buffer")
    assert hr.choose_axes(t[["seed"]], ["seed"]) == (None, None, None)
