"""``tcpfair report``: one self-contained HTML file (or a PDF) about a run folder or a
results store (docs/report.md).

The HTML holds everything it shows: styles and scripts are inlined, the charts are drawn by
plotly.js, whose minified bundle is read from the pinned ``plotly`` package and written into
the page, and each chart's data is attached as a ``data:`` CSV link. Nothing is fetched when
the file is opened. The page is built from ``Section``s of HTML blocks and ``Chart``s
(plotly.js traces and layout as plain JSON — the plotly Python API is not used).
"""

from __future__ import annotations

import base64
import csv
import html
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import surfaces as sf
from .aggregate import aggregate, axis_numeric, pivot
from .plots import DEFAULT_PANELS, PANELS, flow_legend, run_panel_data
from .result import RunResult

Progress = Callable[[str], None]

#: the metrics a store report draws, where the runs have them
STORE_METRICS = ("jfi", "ratio", "utilization")
#: at most this many charts of one kind per metric (one per combination of other axes)
MAX_FACETS = 6


class ReportError(ValueError):
    """A path the report cannot be made from; the message is one line for the user."""


@dataclass
class Chart:
    """One interactive chart: plotly.js ``data`` and ``layout``, and the table it draws."""

    title: str
    data: list[dict[str, Any]]
    layout: dict[str, Any]
    table: pd.DataFrame | None = None
    name: str = "chart"


@dataclass
class Section:
    title: str
    blocks: list[str | Chart] = field(default_factory=list)


@dataclass
class Report:
    title: str
    subtitle: str
    sections: list[Section]
    #: matplotlib figures for the PDF: callables drawing into a folder, returning PNG paths
    figures: list[Callable[[Path], list[Path]]] = field(default_factory=list)


# --------------------------------------------------------------------------- entry point
def build(path: Path, compare_with: Path | None = None, progress: Progress | None = None) -> Report:
    """The report on ``path``: a run folder (``summary.json``) or a results store
    (``catalog.sqlite``); ``compare_with`` (a second store) adds ``tcpfair compare``'s
    results for the store's metrics."""
    say = progress or (lambda _msg: None)
    if (path / "summary.json").is_file():
        if compare_with is not None:
            raise ReportError(f"--compare {compare_with}: compares results stores, {path} is a run")
        return run_report(path, say)
    if (path / "catalog.sqlite").is_file():
        return store_report(path, compare_with, say)
    raise ReportError(
        f"{path}: neither a run folder (summary.json) nor a results store (catalog.sqlite)"
    )


# --------------------------------------------------------------------------- tables
def table_html(df: pd.DataFrame, caption: str = "", classes: dict[str, str] | None = None) -> str:
    """A DataFrame as an HTML table, every cell escaped; ``classes`` maps a cell text to a
    CSS class (verdicts, grades)."""
    cls = classes or {}
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = []
    for rec in df.itertuples(index=False):
        cells = []
        for v in rec:
            text = _cell(v)
            c = cls.get(text) or ("long" if len(text) > 150 else None)
            cells.append(f'<td class="{c}">' if c else "<td>")
            cells.append(html.escape(text) + "</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _cell(v: Any) -> str:
    if isinstance(v, float):
        if not math.isfinite(v):
            return "–"
        return f"{v:.4g}"
    return str(v)


def _para(text: str) -> str:
    return f"<p>{html.escape(text)}</p>"


def _mbit(bps: float) -> float:
    return float(bps) * 1e-6


# --------------------------------------------------------------------------- scenario
def readable(value: Any, key: str = "") -> str:
    """A resolved scenario value in words: ``rtt_ns`` 20000000 -> "20ms" (units.format_*)."""
    from .units import format_rate, format_size, format_time

    if isinstance(value, int | float) and not isinstance(value, bool):
        if key.endswith("_ns"):
            return format_time(value)
        if key.endswith("_bps"):
            return format_rate(value) + "/s"
        if key.endswith("_bytes"):
            return format_size(value)
    if value is None:
        return "—"
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


def scenario_html(sc: dict[str, Any]) -> str:
    """The resolved scenario as nested tables: scalars as "key: value" in units, the flows as
    one row each."""
    scalars = [(k, v) for k, v in sc.items() if not isinstance(v, dict | list)]
    parts = [_kv_table(scalars)]
    for k, v in sc.items():
        if isinstance(v, dict):
            flat = [(f"{k2}", v2) for k2, v2 in _flatten(v)]
            parts.append(f"<h4>{html.escape(k)}</h4>" + _kv_table(flat))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            rows = [{k2: readable(v2, k2) for k2, v2 in _flatten(x)} for x in v]
            parts.append(f"<h4>{html.escape(k)}</h4>" + table_html(pd.DataFrame(rows)))
    return "".join(parts)


def _flatten(d: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out += _flatten(v, f"{prefix}{k}.")
        else:
            out.append((f"{prefix}{k}", v))
    return out


def _kv_table(items: Sequence[tuple[str, Any]]) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(readable(v, k))}</td></tr>"
        for k, v in items
    )
    return f'<table class="kv"><tbody>{rows}</tbody></table>'


# --------------------------------------------------------------------------- run report
def run_report(d: Path, say: Progress) -> Report:
    try:
        r = RunResult.load(d)
    except Exception as e:  # a damaged folder: one line (the error's), not a traceback
        # ValueError: RunResult.load's own words (which file, what is wrong with it)
        why = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
        raise ReportError(f"{d}: cannot read the run: {why}") from None
    say(f"read {d}")
    sc = r.scenario or {}
    name = str(sc.get("name") or d.name)
    backend = str(r.meta.get("backend", "?"))
    invalid = r.meta.get("valid") is False
    sections = [
        Section("Summary", [summary_table(r)]),
        Section("Validity checks", [checks_html(r)]),
        Section("Flows", flow_tables(r)),
        Section("Over time", run_charts(r, invalid)),
        Section("Per flow", [bars_chart_run(r), cdf_chart(r), *fct_chart(r, d)]),
        Section("Scenario (resolved)", [scenario_html(sc)] if sc else [_para("not recorded")]),
    ]
    lo, hi = r.default_window()
    sub = f"run on {backend}, measurement window {lo:g}–{hi:g} s" + (
        " — INVALID (see the validity checks)" if invalid else ""
    )

    def panel_png(out: Path) -> list[Path]:
        from .plots import run_panel

        p = out / "run.png"
        run_panel(r, p, run_panel_data(r), stamp="INVALID" if invalid else None)
        return [p]

    return Report(f"tcpfair report: {name}", sub, sections, [panel_png])


def summary_table(r: RunResult) -> str:
    m = r.metrics()
    rows = [
        ("JFI", f"{m['jfi']:.4f}"),
        ("min/max throughput ratio", f"{m['min_max_ratio']:.3f}"),
        ("total throughput", f"{_mbit(m['sum_bps']):.3f} Mbit/s"),
        ("link utilization", _pct(m["utilization"])),
        ("mean per-interval JFI", f"{m['jfi_per_interval_mean']:.4f}"),
        ("retransmissions in the window", str(m["retransmits"])),
        ("flows", str(m["n_flows"])),
        ("backend", str(r.meta.get("backend", "?"))),
        ("seed", str(r.meta.get("seed", "?"))),
    ]
    return _kv_table(rows)


def _pct(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{100 * x:.1f} %"


def checks_html(r: RunResult) -> str:
    checks = r.meta.get("checks") or []
    if not checks:
        return _para(
            "No validity checks: the simulator's runs are exact by construction; the kernel "
            "backend grades every run (docs/kernel.md)."
            if r.meta.get("backend") == "sim"
            else "No validity checks were recorded for this run."
        )
    from .kernel.validate import grade_of, overall

    df = pd.DataFrame(
        [
            {
                "grade": grade_of(c),
                "check": c.get("name", ""),
                "value": c.get("value", ""),
                "limit": c.get("limit", ""),
                "message": c.get("message", ""),
            }
            for c in checks
        ]
    )
    grade = overall(checks)
    verdict = {
        "ok": "run valid: every check passed",
        "warning": "run valid, with warnings",
        "invalid": "run INVALID: the numbers are not trustworthy",
    }[grade]
    notes = (r.meta.get("kernel") or {}).get("notes") or []
    return (
        f'<p class="grade-{grade}">{html.escape(verdict)}</p>'
        + table_html(df, classes={"ok": "ok", "warning": "warn", "invalid": "bad"})
        + "".join(_para(f"note: {n}") for n in notes)
    )


def flow_tables(r: RunResult) -> list[str | Chart]:
    thr = r.flow_throughputs()
    retr = r.flow_retransmits()
    total = float(thr.sum()) or 1.0
    rows = []
    for _, f in r.flows.iterrows():
        x = float(thr.get(f["flow"], 0.0))
        rtt = f["rtt_s"]
        rows.append(
            {
                "flow": f["flow"],
                "label": f["label"],
                "cca": f["cca"],
                "rtt (ms)": "" if rtt != rtt else f"{rtt * 1e3:g}",
                "throughput (Mbit/s)": f"{_mbit(x):.3f}",
                "share": f"{100 * x / total:.1f} %",
                "retransmits": _cell(float(retr.at[f["flow"], "retransmits"])),
            }
        )
    g = r.groups()
    groups = pd.DataFrame(
        [
            {
                "label": k,
                "connections": v["connections"],
                "sum (Mbit/s)": f"{_mbit(v['sum_bps']):.3f}",
                "mean per connection (Mbit/s)": f"{_mbit(v['mean_bps']):.3f}",
                "share of the link": _pct(v["share"]),
                "JFI within": f"{v['jfi']:.4f}",
            }
            for k, v in g["groups"].items()
        ]
    )
    out: list[str | Chart] = [
        table_html(pd.DataFrame(rows), "per flow, over the measurement window"),
        table_html(groups, "per group (connections sharing a label)"),
    ]
    if g["ratios"]:
        ratios = pd.DataFrame(
            {"groups": list(g["ratios"]), "ratio of means": list(g["ratios"].values())}
        )
        out.append(table_html(ratios, "mean throughput per connection, A / B"))
    return out


def flow_styles(r: RunResult) -> dict[Any, dict[str, Any]]:
    """Colour and dash of each flow: its algorithm's colour (the same in every figure), a
    second flow of the same algorithm dashed, a third dotted (``surfaces.curve_styles``)."""
    styles = sf.curve_styles(pd.DataFrame({"curve": r.flows["flow"], "cca": r.flows["cca"]}))
    return {f: {"color": c, "dash": sf.DASHES[k][0]} for f, (c, k) in styles.items()}


def run_charts(r: RunResult, invalid: bool) -> list[str | Chart]:
    data = run_panel_data(r)
    wanted = [p for p in DEFAULT_PANELS if (data["panel"] == p).any()]
    if not wanted:
        return [_para("no samples to draw")]
    legend = flow_legend(r)
    style = flow_styles(r)
    traces: list[dict[str, Any]] = []
    n = len(wanted)
    layout: dict[str, Any] = {
        "height": 190 * n + 120,
        "grid": {"rows": n, "columns": 1, "pattern": "coupled", "roworder": "top to bottom"},
        "hovermode": "x unified",
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom"},
        "margin": {"t": 60, "l": 70, "r": 20, "b": 50},
    }
    shown: set[Any] = set()
    for i, panel in enumerate(wanted, start=1):
        ya = "y" if i == 1 else f"y{i}"
        d = data[data["panel"] == panel]
        for series, part in d.groupby("series", sort=False):
            t: dict[str, Any] = {
                "type": "scatter",  # SVG: WebGL (scattergl) needs a GPU context
                "x": part["t_s"].to_numpy(float),
                "y": part["value"].to_numpy(float),
                "xaxis": "x",
                "yaxis": ya,
                "mode": "lines",
            }
            if series == "drops":
                t.update(mode="markers", name="drops", marker={"color": "red", "symbol": "x"})
            elif series in ("queue", "jfi"):
                t.update(name=str(series), line={"color": "#444"})
                t["showlegend"] = False
            else:
                t.update(name=legend.get(series, str(series)), legendgroup=str(series))
                t["line"] = {"width": 1.3, **style.get(series, {})}
                t["showlegend"] = series not in shown
                shown.add(series)
            traces.append(t)
        layout["yaxis" if i == 1 else f"yaxis{i}"] = {
            "title": {"text": PANELS[panel]},
            "rangemode": "tozero",
        }
    layout["xaxis"] = {"title": {"text": "time (s) — shaded: measurement window"}}
    lo, hi = r.default_window()
    layout["shapes"] = [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": lo,
            "x1": hi,
            "y0": 0,
            "y1": 1,
            "fillcolor": "rgba(0,0,0,0.06)",
            "line": {"width": 0},
            "layer": "below",
        }
    ]
    if invalid:
        layout["annotations"] = [_stamp("INVALID")]
    return [Chart("run panel", traces, layout, data, "run")]


def _stamp(text: str) -> dict[str, Any]:
    return {
        "text": text,
        "xref": "paper",
        "yref": "paper",
        "x": 0.5,
        "y": 0.5,
        "showarrow": False,
        "font": {"size": 64, "color": "rgba(220,0,0,0.3)"},
        "textangle": -25,
    }


def bars_chart_run(r: RunResult) -> Chart:
    thr = r.flow_throughputs()
    legend = flow_legend(r)
    style = flow_styles(r)
    names = [legend[f] for f in r.flows["flow"]]
    vals = [_mbit(thr.get(f, 0.0)) for f in r.flows["flow"]]
    table = pd.DataFrame({"flow": r.flows["flow"], "name": names, "throughput (Mbit/s)": vals})
    trace = {
        "type": "bar",
        "x": names,
        "y": vals,
        "marker": {"color": [style[f]["color"] for f in r.flows["flow"]]},
        "hovertemplate": "%{x}: %{y:.3f} Mbit/s<extra></extra>",
    }
    layout = {
        "yaxis": {"title": {"text": "throughput over the window (Mbit/s)"}, "rangemode": "tozero"},
        "height": 380,
    }
    return Chart("throughput per flow", [trace], layout, table, "flow-bars")


def cdf_chart(r: RunResult) -> Chart:
    values = sf.run_cdf_values(r, "throughput")
    assert values is not None
    return cdf_from_values(values, sf.cdf_xlabel("throughput"), "CDF of per-interval throughput")


def fct_chart(r: RunResult, d: Path) -> list[str | Chart]:
    """The CDF of the short flows' completion times, when the run has a short-flows table."""
    values = sf.run_cdf_values(r, "fct", d)
    if values is None or not np.isfinite(values["value"]).any():
        return []
    return [cdf_from_values(values, sf.cdf_xlabel("fct"), "CDF of flow completion times")]


def cdf_from_values(values: pd.DataFrame, xlabel: str, title: str) -> Chart:
    data = sf.cdf_data(values)
    traces = []
    for c, (colour, dash) in sf.curve_styles(values).items():
        part = data[data["curve"] == c]
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "line": {"shape": "hv", "color": colour, "dash": sf.DASHES[dash][0]},
                "name": str(c),
                "x": part["value"].to_numpy(float),
                "y": part["F"].to_numpy(float),
            }
        )
    layout = {
        "xaxis": {"title": {"text": xlabel}},
        "yaxis": {"title": {"text": "fraction ≤ x"}, "range": [0, 1.02]},
        "height": 400,
    }
    return Chart(title, traces, layout, data, "cdf")


# --------------------------------------------------------------------------- store report
def store_report(root: Path, compare_with: Path | None, say: Progress) -> Report:
    from .store import Store, StoreError

    try:
        s = Store(root, readonly=True)
    except StoreError as e:
        raise ReportError(str(e)) from None
    other = None
    if compare_with is not None:
        if not (compare_with / "catalog.sqlite").is_file():
            raise ReportError(f"--compare {compare_with}: not a results store (no catalog.sqlite)")
        try:
            other = Store(compare_with, readonly=True)
        except StoreError as e:
            raise ReportError(f"--compare {compare_with}: {e}") from None
    pairs = s.sweeps()
    if not pairs:
        raise ReportError(f"{root}: the store holds no sweep yet")
    sections: list[Section] = []
    figures: list[Callable[[Path], list[Path]]] = []
    repro = repro_section(root)
    if repro is not None:
        sections.append(repro)
    for i, (name, be) in enumerate(pairs, start=1):
        say(f"sweep {name} ({be}): {i} of {len(pairs)}")
        sec, figs = sweep_section(s, name, be)
        sections.append(sec)
        figures += figs
    if other is not None and compare_with is not None:
        say(f"comparing with {compare_with}")
        sections += compare_section(s, other, root, compare_with)
    total = sum(len(s.table(sweep=n, backend=b)) for n, b in pairs)
    sub = f"results store {root.name}: {len(pairs)} sweep(s), {total} runs"
    return Report(f"tcpfair report: {root.name}", sub, sections, figures)


def repro_tables(root: Path) -> list[Path]:
    """The tables ``tcpfair repro`` wrote into a store: ``repro-<study>[-quick].csv``."""
    return sorted(p for p in root.glob("repro-*.csv") if p.is_file())


def repro_section(root: Path) -> Section | None:
    from .repro import SHOWN

    files = repro_tables(root)
    if not files:
        return None
    blocks: list[str | Chart] = []
    for f in files:
        with f.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        df = pd.DataFrame(rows, columns=list(SHOWN)) if rows else pd.DataFrame(columns=list(SHOWN))
        counts = df["verdict"].value_counts().to_dict() if len(df) else {}
        blocks.append(f"<h3>{html.escape(f.stem)}</h3>")
        blocks.append(_para("verdicts: " + ", ".join(f"{v} {n}" for v, n in counts.items())))
        blocks.append(
            table_html(
                df.fillna(""),
                "the source's published numbers beside ours (mean ± 95 % CI over repeats)",
                classes={"reproduced": "ok", "trend": "warn", "differs": "bad"},
            )
        )
    return Section("Reproduction", blocks)


def _varying(t: pd.DataFrame, axes: list[str]) -> list[str]:
    """Axes that vary and do not move with an earlier one (zip partners are shown once)."""
    out: list[str] = []
    for a in axes:
        if t[a].nunique(dropna=False) <= 1:
            continue
        if any((t.groupby(b, dropna=False)[a].nunique(dropna=False) <= 1).all() for b in out):
            continue
        out.append(a)
    return out


def choose_axes(t: pd.DataFrame, axes: list[str]) -> tuple[str | None, str | None, str | None]:
    """(x, by, y) of a store's default charts: x the first numeric varying axis (else the first
    varying one), by an algorithm axis or else another varying axis of ≤ 8 values, y a second
    numeric axis (for surfaces)."""
    var = _varying(t, axes)
    if not var:
        return None, None, None
    numeric = [a for a in var if axis_numeric(list(t[a].dropna().unique()))[0] is not None]
    x = numeric[0] if numeric else var[0]
    rest = [a for a in var if a != x]
    cca = [a for a in rest if a.endswith("cca")]
    small = [a for a in rest if t[a].nunique() <= 8]
    by: str | None = (cca or small)[0] if (cca or small) else None
    ys = [a for a in numeric if a != x]
    return x, by, (ys[0] if ys else None)


def sweep_section(s: Any, name: str, be: str) -> tuple[Section, list[Callable[[Path], list[Path]]]]:
    t = s.table(sweep=name, backend=be)
    axes = s.sweep_axes(name, be)
    counts = t["status"].value_counts().to_dict()
    blocks: list[str | Chart] = [
        _para(
            f"{len(t)} runs — "
            + ", ".join(f"{counts.get(k, 0)} {k}" for k in ("done", "failed", "pending"))
            + f"; axes: {', '.join(axes) or '(none)'}"
        )
    ]
    blocks += _validity_blocks(t)
    done = sf.done_runs(t)
    mets = [m for m in STORE_METRICS if m in done.columns and done[m].notna().any()]
    agg = aggregate(t, axes, mets) if mets and len(done) else pd.DataFrame()
    if not agg.empty:
        blocks.append(_overview(agg, axes, t, mets))
    figs: list[Callable[[Path], list[Path]]] = []
    if agg.empty:
        return Section(f"Sweep {name} ({be})", blocks), figs
    x, by, y = choose_axes(done, axes)
    title = f"{name} ({be})"
    m0 = mets[0]
    if x is not None and y is not None:
        for m in mets:
            blocks += surface_charts(agg, axes, m, x, y)
        figs.append(lambda d: sf.surface_figure(agg, m0, x, y, d, formats=["png"], title=title))
    if x is not None:
        others, facets = sf.facets_of(done, [x] + ([by] if by else []), axes=axes)
        if len(facets) > MAX_FACETS:
            blocks.append(
                _para(
                    f"{len(facets)} combinations of {', '.join(others)}: the charts below show "
                    f"the first {MAX_FACETS}; tcpfair results STORE --plot METRIC --x AXIS "
                    "draws every one"
                )
            )
        for m in mets:
            blocks += line_charts(agg, axes, m, x, by)
            blocks += box_charts(done, axes, m, x, by)
        if sf.flow_columns(done):
            blocks += bars_charts(done, axes, x, sf.group_names(s, be, done, axes))
        figs.append(lambda d: sf.line_figure(agg, m0, x, d, by=by, formats=["png"], title=title))
        figs.append(lambda d: sf.box_figure(t, axes, m0, x, d, by=by, formats=["png"], title=title))
    return Section(f"Sweep {name} ({be})", blocks), figs


def _validity_blocks(t: pd.DataFrame) -> list[str | Chart]:
    if "grade" not in t.columns or not t["grade"].notna().any():
        return []
    g = t["grade"].value_counts().to_dict()
    text = "kernel runs graded: " + ", ".join(
        f"{g.get(k, 0)} {k}" for k in ("ok", "warning", "invalid")
    )
    return [
        f'<p class="{"grade-invalid" if g.get("invalid") else "grade-ok"}">{html.escape(text)}</p>'
    ]


def _overview(agg: pd.DataFrame, axes: list[str], t: pd.DataFrame, mets: list[str]) -> str:
    shown = _varying(t, axes)
    rows = []
    keys = agg.groupby(shown, sort=False, dropna=False) if shown else [((), agg)]
    for key, part in keys:
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(shown, key, strict=True))
        by_metric = part.drop_duplicates("metric").set_index("metric")
        row["n"] = int(part["n"].max())
        for m in mets:
            mean, ci = by_metric.loc[m, "mean"], by_metric.loc[m, "ci"]
            row[m] = "–" if mean != mean else f"{mean:.3f}" + ("" if ci != ci else f" ± {ci:.3f}")
        rows.append(row)
    table = table_html(
        pd.DataFrame(rows), "mean ± half-width of the 95 % CI over the repeats (per-run values)"
    )
    # a long table is folded, so the charts are not pages below the top
    state = " open" if len(rows) <= 30 else ""
    return f"<details{state}><summary>{len(rows)} points</summary>{table}</details>"


def _facet_list(df: pd.DataFrame, axes: list[str], plotted: list[str]) -> list[dict[str, Any]]:
    _, facets = sf.facets_of(df, plotted, axes=axes)
    return facets[:MAX_FACETS]


def _facet_text(where: dict[str, Any]) -> str:
    return ", ".join(f"{sf.axis_label(k, [])} = {v}" for k, v in where.items())


def _xy_positions(values: list[Any]) -> tuple[list[Any], bool]:
    nums, _ = axis_numeric(values)
    return (nums, True) if nums is not None else ([str(v) for v in values], False)


def line_charts(
    agg: pd.DataFrame, axes: list[str], metric: str, x: str, by: str | None
) -> list[str | Chart]:
    a = agg[agg["metric"] == metric]
    scale, _ = sf.metric_scale(metric)
    out: list[str | Chart] = []
    for where in _facet_list(a, axes, [x] + ([by] if by else [])):
        part = sf.select(a, where)
        keys = sf.ordered_values(part[by].tolist()) if by else [None]
        colours = sf.series_colours(keys)
        traces: list[dict[str, Any]] = []
        for k in keys:
            p = part if k is None else part[part[by] == k]
            xs = sf.ordered_values(p[x].tolist())
            p = p.set_index(x).reindex(xs)
            pos, numeric = _xy_positions(xs)
            mean = (p["mean"] * scale).to_numpy(float)
            lo, hi = (p["lo"] * scale).to_numpy(float), (p["hi"] * scale).to_numpy(float)
            colour = colours[k] if by else "#1f77b4"
            name = str(k) if by else sf.metric_label(metric)
            if np.isfinite(lo).any():
                traces.append(
                    {
                        "type": "scatter",
                        "x": list(pos) + list(pos)[::-1],
                        "y": list(hi) + list(lo[::-1]),
                        "mode": "lines",
                        "fill": "toself",
                        "fillcolor": _rgba(colour, 0.2),
                        "line": {"width": 0},
                        "hoverinfo": "skip",
                        "showlegend": False,
                        "legendgroup": name,
                    }
                )
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "x": pos,
                    "y": mean,
                    "name": name,
                    "legendgroup": name,
                    "line": {"color": colour},
                    "customdata": np.column_stack([lo, hi]),
                    "hovertemplate": "%{y:.4g} (95 % CI %{customdata[0]:.4g}–%{customdata[1]:.4g})",
                }
            )
        layout = {
            "xaxis": {
                "title": {"text": sf.axis_label(x, list(part[x]))},
                **({} if _xy_positions(list(part[x]))[1] else {"type": "category"}),
            },
            "yaxis": {"title": {"text": sf.metric_label(metric)}},
            "legend": {"title": {"text": sf.axis_label(by, []) if by else ""}},
            "height": 420,
        }
        title = f"{sf.metric_label(metric)}: mean ± 95 % CI" + (
            f" — {_facet_text(where)}" if where else ""
        )
        out.append(Chart(title, traces, layout, part, f"{metric}-line"))
    return out


def _rgba(hex_colour: str, alpha: float) -> str:
    from matplotlib.colors import to_rgb

    r, g, b = (round(255 * c) for c in to_rgb(hex_colour))
    return f"rgba({r},{g},{b},{alpha})"


def box_charts(
    t: pd.DataFrame, axes: list[str], metric: str, x: str, by: str | None
) -> list[str | Chart]:
    data = sf.box_data(t, axes, metric, x, by)
    out: list[str | Chart] = []
    for where in _facet_list(data, axes, [x] + ([by] if by else [])):
        part = sf.select(data, where)
        keys = sf.ordered_values(part[by].tolist()) if by else [None]
        colours = sf.series_colours(keys)
        xs = [str(v) for v in sf.ordered_values(part[x].tolist())]
        traces = []
        for k in keys:
            p = part if k is None else part[part[by] == k]
            traces.append(
                {
                    "type": "box",
                    "x": [str(v) for v in p[x]],
                    "y": p["value"].to_numpy(float),
                    "name": str(k) if by else sf.metric_label(metric),
                    "boxpoints": "all",
                    "jitter": 0.3,
                    "pointpos": 0,
                    "marker": {"color": colours[k] if by else "#1f77b4", "size": 4},
                }
            )
        layout = {
            "boxmode": "group",
            "height": 420,
            "xaxis": {
                "title": {"text": sf.axis_label(x, xs)},
                "type": "category",
                "categoryorder": "array",
                "categoryarray": xs,
            },
            "yaxis": {"title": {"text": sf.metric_label(metric)}},
        }
        title = f"{sf.metric_label(metric)}: per-run values" + (
            f" — {_facet_text(where)}" if where else ""
        )
        out.append(Chart(title, traces, layout, part, f"{metric}-box"))
    return out


def bars_charts(
    t: pd.DataFrame, axes: list[str], x: str, names: dict[int, str] | None = None
) -> list[str | Chart]:
    data = sf.bars_data(t, axes, x, names)
    out: list[str | Chart] = []
    for where in _facet_list(data, axes, [x]):
        part = sf.with_facet_cca(sf.select(data, where), where)
        xs = [str(v) for v in sf.ordered_values(part[x].tolist())]
        flows = list(dict.fromkeys(part.sort_values("order")["flow"]))
        colours = sf.flow_colours(flows)
        traces = []
        for f in flows:
            p = part[part["flow"] == f]
            p = p.assign(_x=p[x].astype(str)).set_index("_x").reindex(xs)
            mean = p["mean"].to_numpy(float)
            traces.append(
                {
                    "type": "bar",
                    "name": f,
                    "x": xs,
                    "y": mean,
                    "marker": {"color": colours[f]},
                    "error_y": {
                        "type": "data",
                        "symmetric": False,
                        "array": p["hi"].to_numpy(float) - mean,
                        "arrayminus": mean - p["lo"].to_numpy(float),
                    },
                }
            )
        layout = {
            "barmode": "group",
            "height": 400,
            "xaxis": {"title": {"text": sf.axis_label(x, xs)}, "type": "category"},
            "yaxis": {"title": {"text": "throughput (Mbit/s)"}, "rangemode": "tozero"},
        }
        title = "throughput per flow: mean ± 95 % CI" + (
            f" — {_facet_text(where)}" if where else ""
        )
        out.append(Chart(title, traces, layout, part.drop(columns="order"), "flow-bars"))
    return out


def surface_charts(
    agg: pd.DataFrame, axes: list[str], metric: str, x: str, y: str
) -> list[str | Chart]:
    a = agg[agg["metric"] == metric]
    scale, unit = sf.metric_scale(metric)
    out: list[str | Chart] = []
    for where in _facet_list(a, axes, [x, y]):
        grid = pivot(sf.select(a, where), metric, x, y) * scale
        z = grid.to_numpy(float)
        trace = {
            "type": "heatmap",
            "z": z,
            "x": [str(v) for v in grid.columns],
            "y": [str(v) for v in grid.index],
            "colorscale": "Viridis",
            "texttemplate": "%{z:.3g}",
            "colorbar": {"title": {"text": unit or metric}},
            **({"zmin": 0.5, "zmax": 1.0} if metric.startswith("jfi") else {}),
        }
        layout = {
            "height": 440,
            "xaxis": {"title": {"text": sf.axis_label(x, list(grid.columns))}, "type": "category"},
            "yaxis": {"title": {"text": sf.axis_label(y, list(grid.index))}, "type": "category"},
        }
        title = (
            f"mean {sf.metric_label(metric)} over {sf.axis_label(x, [])} × {sf.axis_label(y, [])}"
            + (f" — {_facet_text(where)}" if where else "")
        )
        data = grid.stack(future_stack=True).rename(f"mean {sf.metric_label(metric)}").reset_index()
        out.append(Chart(title, [trace], layout, data, f"{metric}-surface"))
    return out


def compare_pairs(a: Any, b: Any) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """Which sweeps to compare: each (sweep, backend) of A that B also has; else, when
    each store holds one sweep, those two."""
    pa, pb = a.sweeps(), b.sweeps()
    same = [(p, p) for p in pa if p in pb]
    if same:
        return same
    return [(pa[0], pb[0])] if len(pa) == 1 and len(pb) == 1 else []


def compare_section(a: Any, b: Any, root_a: Path, root_b: Path) -> list[Section]:
    """``tcpfair compare``'s results per pair of sweeps (``compare_pairs``), A = ``a``."""
    pairs = compare_pairs(a, b)
    if not pairs:
        have = ", ".join(f"{n} ({be})" for n, be in b.sweeps())
        return [
            Section(
                f"Comparison with {root_b.name}",
                [_para(f"no sweep of {root_b.name} ({have}) matches one of {root_a.name} by name")],
            )
        ]
    return [_compare_one(a, b, pa, pb, root_a, root_b) for pa, pb in pairs]


def _compare_one(
    a: Any, b: Any, pa: tuple[str, str], pb: tuple[str, str], root_a: Path, root_b: Path
) -> Section:
    from .compare import compare, summary_lines

    (na, ba), (nb, bb) = pa, pb
    ta, tb = a.table(sweep=na, backend=ba), b.table(sweep=nb, backend=bb)
    la, lb = f"{root_a.name}:{na}/{ba}", f"{root_b.name}:{nb}/{bb}"
    blocks: list[str | Chart] = []
    for m in STORE_METRICS:
        if m not in ta.columns or m not in tb.columns:
            continue
        try:
            c = compare(ta, tb, m, a.sweep_axes(na, ba), b.sweep_axes(nb, bb), labels=(la, lb))
        except ValueError as e:
            blocks.append(_para(f"{m}: {e}"))
            continue
        blocks.append(f"<h3>{html.escape(m)}</h3>")
        blocks.append(
            "<ul>" + "".join(f"<li>{html.escape(x)}</li>" for x in summary_lines(c)) + "</ul>"
        )
        cols = [*c.axes, "n_a", "mean_a", "n_b", "mean_b", "D", "W", "p", "significant"]
        table = c.table[[k for k in cols if k in c.table.columns]]
        blocks.append(table_html(table, "per matched point: D = A − B, W = |D| − 2σ(B), Welch's p"))
    return Section(f"Comparison: A = {la}, B = {lb}", blocks)


# --------------------------------------------------------------------------- HTML
def plotly_js() -> str:
    """The minified plotly.js that the pinned ``plotly`` package ships (read as a file; the
    package's Python API is not imported)."""
    try:
        return (resources.files("plotly") / "package_data" / "plotly.min.js").read_text("utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as e:
        raise ReportError(
            f"the HTML report needs the plotly package (pyproject.toml pins it; ./dev setup "
            f"installs it): {e}"
        ) from None


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, np.generic):
        return _jsonable(x.item())
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def script_json(x: Any) -> str:
    """JSON safe inside a <script> element (no "</" that could close it)."""
    return json.dumps(_jsonable(x), separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


def csv_link(chart: Chart, i: int) -> str:
    if chart.table is None:
        return ""
    data = base64.b64encode(chart.table.to_csv(index=False).encode("utf-8")).decode("ascii")
    href = "data:text/csv;charset=utf-8;base64," + data  # a third over the CSV's size
    return (
        f'<a class="csv" download="{html.escape(chart.name)}-{i}.csv" href="{href}">data (CSV)</a>'
    )


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#222;background:#fff}
header{background:#24323f;color:#fff;padding:14px 28px}header h1{margin:0;font-size:1.4em}
header p{margin:4px 0 0;opacity:.85}main{padding:8px 28px 40px;max-width:1200px}
nav{padding:8px 28px;background:#eef1f4;font-size:.9em}nav a{margin-right:14px;color:#24323f}
h2{border-bottom:2px solid #24323f;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;margin:10px 0;font-size:.88em}
caption{text-align:left;color:#555;padding:4px 0;white-space:nowrap}
th,td{border:1px solid #ccd;padding:3px 8px;text-align:left;vertical-align:top;max-width:34em}
thead th{background:#eef1f4}
table.kv th{background:#f6f7f9;font-weight:600}td.ok{background:#dff3df}td.warn{background:#fff1c9}
td.bad{background:#f8d4d4}td.long{font-size:.8em;color:#444}.grade-ok{color:#16691d}.grade-warning{color:#8a6200}
.grade-invalid{color:#b00000;font-weight:700}.chart{margin:18px 0;border:1px solid #dde;padding:6px}
.chart h3{margin:4px 6px;font-size:1em}.chart .plot{min-height:300px}
a.csv{font-size:.85em;margin-left:6px}
"""


def render_html(rep: Report) -> str:
    charts: list[dict[str, Any]] = []
    body: list[str] = []
    toc = []
    for si, sec in enumerate(rep.sections):
        anchor = f"s{si}"
        toc.append(f'<a href="#{anchor}">{html.escape(sec.title)}</a>')
        body.append(f'<section id="{anchor}"><h2>{html.escape(sec.title)}</h2>')
        for b in sec.blocks:
            if isinstance(b, Chart):
                i = len(charts)
                charts.append({"id": f"chart{i}", "data": b.data, "layout": b.layout})
                body.append(
                    f'<div class="chart"><h3>{html.escape(b.title)} {csv_link(b, i)}</h3>'
                    f'<div class="plot" id="chart{i}" data-chart="{html.escape(b.name)}">'
                    "</div></div>"
                )
            else:
                body.append(b)
        body.append("</section>")
    boot = (
        "const CONFIG={responsive:true,displaylogo:false,showLink:false,showSendToCloud:false};"
        "for(const c of CHARTS){const l=Object.assign({autosize:true,template:undefined},c.layout);"
        "Plotly.newPlot(c.id,c.data,l,CONFIG);}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(rep.title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{html.escape(rep.title)}</h1><p>{html.escape(rep.subtitle)}</p></header>"
        f"<nav>{''.join(toc)}</nav><main>{''.join(body)}</main>"
        f"<script>{plotly_js()}</script>"
        f"<script>const CHARTS={script_json(charts)};{boot}</script>"
        "</body></html>\n"
    )


# --------------------------------------------------------------------------- PDF
def render_pdf(rep: Report, path: Path) -> None:
    """A printable PDF (matplotlib): a page of the report's tables as text, then the
    figures the report draws with tcpfair's own figure functions."""
    import tempfile

    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    with tempfile.TemporaryDirectory() as tmp, PdfPages(path) as pdf:
        lines = _text_lines(rep)
        for page in range(0, max(len(lines), 1), PDF_LINES):
            fig = plt.figure(figsize=(8.27, 11.69))  # A4
            if page == 0:
                fig.text(0.06, 0.96, rep.title, fontsize=15, weight="bold", va="top")
                fig.text(0.06, 0.93, rep.subtitle, fontsize=9, va="top")
            text = "\n".join(lines[page : page + PDF_LINES])
            fig.text(0.06, 0.90, text, fontsize=6.5, va="top", family="monospace")
            pdf.savefig(fig)
            plt.close(fig)
        for k, draw in enumerate(rep.figures):
            d = Path(tmp) / str(k)
            d.mkdir()
            for p in draw(d):
                if p.suffix != ".png":
                    continue
                img = plt.imread(p)
                h, w = img.shape[:2]
                fig = plt.figure(figsize=(8.27, 8.27 * h / w + 0.4))
                ax = fig.add_axes((0, 0, 1, 1))
                ax.imshow(img)
                ax.set_axis_off()
                pdf.savefig(fig)
                plt.close(fig)


#: text lines on a PDF page
PDF_LINES = 110


def _text_lines(rep: Report) -> list[str]:
    """The report's sections as plain text lines, tables in aligned columns."""
    import re

    lines: list[str] = []
    for sec in rep.sections:
        lines.append(f"== {sec.title}")
        for b in sec.blocks:
            if isinstance(b, Chart):
                lines.append(f"[figure] {b.title}")
                continue
            for table in re.findall(r"<table.*?</table>", b, re.S) or [b]:
                rows = [
                    [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in cells]
                    for r in re.findall(r"<tr>(.*?)</tr>", table)
                    if (cells := re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r))
                ]
                if not rows:  # a paragraph
                    lines.append(html.unescape(re.sub(r"<[^>]+>", " ", table)).strip()[:130])
                    continue
                widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(len(rows[0]))]
                for r in rows:
                    cells = [c.ljust(w) for c, w in zip(r, widths, strict=False)]
                    lines.append("  ".join(cells).rstrip()[:130])
    return lines


__all__ = ["build", "render_html", "render_pdf", "Report", "ReportError", "Chart", "Section"]
