"""Sweep figures: a metric over two axes (heatmap + 3-D surface, seed 001 Fig. 4), a metric
against one axis with confidence bands per algorithm (seed 004's ratio vs RTT), and the
difference surface W of ``tcpfair compare`` (seed 001 Fig. 5).

Every function takes the long aggregate table (``tcpfair.aggregate.aggregate``), draws one
figure per combination of the axes it does not plot ("facets"; an axis that moves with a
plotted one, like a zip partner, is not a facet), writes each in every requested format
and returns the paths.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402

from .aggregate import STATS, axis_numeric, pivot  # noqa: E402
from .compare import Comparison  # noqa: E402
from .outputs import (  # noqa: E402, F401 — defined where start-up is light
    CDF_METRICS,
    FORMATS,
    RUN_TABLES,
)
from .plots import legend_text, plain_text  # noqa: E402

__all__ = [
    "surface_figure",
    "line_figure",
    "box_figure",
    "bars_figure",
    "cdf_figure",
    "difference_figure",
    "FORMATS",
]

LABELS = {
    "jfi": "Jain's fairness index",
    "jfi_per_interval_mean": "mean JFI of the 1-interval samples",
    "ratio": "throughput ratio flow 2 / flow 1",
    "min_max_ratio": "min/max throughput ratio",
    "utilization": "link utilization (%)",
    "utilization_measured": "measured connections' share of the link (%)",
    "sum_bps": "total throughput (Mbit/s)",
    "retransmits": "retransmissions",
}

#: human names of scenario keys an axis can sweep: the key's last part -> name
#: (``flows.N.<part>`` reads "<name> of flow N+1", as flows count from 0 in keys)
KEY_NAMES = {
    "rtt": "RTT",
    "cca": "algorithm",
    "count": "number of connections",
    "streams": "parallel streams",
    "start": "start",
    "size": "transfer size",
    "rate": "bottleneck rate",
    "buffer": "buffer",
    "delay": "delay",
    "loss": "loss",
    "duration": "duration",
    "seed": "seed",
    "mtu": "MTU",
    "burst": "tbf burst",
    "aqm": "AQM",
}

#: units as written in scenario values -> as printed on an axis
UNIT_NAMES = {
    "bdp": "× BDP",
    "pkts": "packets",
    "pkt": "packets",
    "p": "packets",
    "kbit": "kbit/s",
    "Mbit": "Mbit/s",
    "Gbit": "Gbit/s",
    "kbps": "kbit/s",
    "Mbps": "Mbit/s",
    "Gbps": "Gbit/s",
}


def metric_scale(metric: str) -> tuple[float, str]:
    """Factor and unit a metric is shown in: bit/s as Mbit/s, utilization as %."""
    if metric.endswith("_bps") or metric.startswith("mean:"):
        return 1e-6, "Mbit/s"
    if metric in ("utilization", "utilization_measured"):
        return 100.0, "%"
    return 1.0, ""


def metric_label(metric: str) -> str:
    """A metric's axis label with its unit: ``thr_g1_bps`` -> "throughput of flow 2
    (Mbit/s)" (groups count from 0, flows are named from 1)."""
    m = re.fullmatch(r"thr_g(\d+)_bps", metric)
    if m:
        return f"throughput of flow {int(m.group(1)) + 1} (Mbit/s)"
    if metric.startswith("mean:"):
        return f"mean throughput of {metric[5:]} (Mbit/s)"
    if metric.startswith("ratio:"):
        return f"throughput ratio {metric[6:]}"
    return LABELS.get(metric, metric)


def axis_label(axis: str, values: Sequence[Any]) -> str:
    """An axis key in words with its unit: ``flows.1.rtt`` -> "RTT of flow 2 (ms)",
    ``bottleneck.buffer`` with values in bdp -> "buffer (× BDP)"; unknown keys as they are."""
    _, unit = axis_numeric(list(values))
    unit = UNIT_NAMES.get(unit, unit)
    parts = axis.split(".")
    name = KEY_NAMES.get(parts[-1])
    if name is None:
        text = axis
    elif len(parts) == 3 and parts[0] == "flows" and parts[1].isdigit():
        text = f"{name} of flow {int(parts[1]) + 1}"
    else:
        text = name
    return f"{text} ({unit})" if unit else text


#: colours of congestion-control algorithms, the same in every figure (tab10 order)
CCA_COLOURS = {
    "reno": "#1f77b4",
    "cubic": "#ff7f0e",
    "bbr": "#2ca02c",
    "bbr2": "#d62728",
    "bbr3": "#9467bd",
    "vegas": "#8c564b",
    "dctcp": "#e377c2",
    "htcp": "#7f7f7f",
    "westwood": "#bcbd22",
    "illinois": "#17becf",
}


def cca_colour(name: object) -> str | None:
    """The fixed colour of an algorithm (``CCA_COLOURS``), None for anything else."""
    return CCA_COLOURS.get(str(name).lower())


@dataclass(frozen=True)
class PlotStyle:
    """What a ``[[plots]]`` entry may set: a title and axis labels replacing the generated
    ones, and logarithmic axes (line plots)."""

    title: str | None = None
    xlabel: str | None = None
    ylabel: str | None = None
    log_x: bool = False
    log_y: bool = False


def _axes_of(agg: pd.DataFrame) -> list[str]:
    return [c for c in agg.columns if c not in ("metric", *STATS)]


def facets_of(
    agg: pd.DataFrame, plotted: list[str], axes: Sequence[str] | None = None
) -> tuple[list[str], list[dict[str, Any]]]:
    """Axes to split figures by (those not plotted and not determined by the plotted ones);
    ``axes`` defaults to the axis columns of an aggregate table."""
    others = []
    for a in axes if axes is not None else _axes_of(agg):
        if a in plotted:
            continue
        determined = (
            bool(plotted) and agg.groupby(plotted, dropna=False)[a].nunique(dropna=False).max() <= 1
        )
        if not determined:
            others.append(a)
    if not others:
        return [], [{}]
    combos = agg[others].drop_duplicates()
    return others, [dict(zip(others, row, strict=True)) for row in combos.itertuples(index=False)]


def _slug(where: dict[str, Any]) -> str:
    if not where:
        return ""
    text = "_".join(f"{k}={v}" for k, v in where.items())
    return "-" + re.sub(r"[^A-Za-z0-9.=_-]+", "_", text)


def select(agg: pd.DataFrame, where: dict[str, Any]) -> pd.DataFrame:
    for k, v in where.items():
        agg = agg[agg[k] == v]
    return agg


def _positions(values: list[Any]) -> tuple[np.ndarray, bool]:
    nums, _ = axis_numeric(values)
    if nums is None:
        return np.arange(len(values), dtype=float), False
    return np.asarray(nums, dtype=float), True


def _save(
    fig: Any, base: Path, formats: Sequence[str], data: pd.DataFrame | None = None
) -> list[Path]:
    """Write ``fig`` in each format, and ``data`` (what it plots) as a CSV of the same name."""
    base.parent.mkdir(parents=True, exist_ok=True)
    out = []
    if data is not None:
        csv = base.with_name(base.name + ".csv")
        data.to_csv(csv, index=False)
        out.append(csv)
    for fmt in formats:
        if fmt not in FORMATS:
            raise ValueError(f"figure format {fmt!r}; allowed: {', '.join(FORMATS)}")
        p = base.with_name(base.name + f".{fmt}")
        fig.savefig(p, dpi=130)
        out.append(p)
    plt.close(fig)
    return out


def _heat(
    ax: Any,
    grid: pd.DataFrame,
    cmap: str,
    norm: Any = None,
    vmin: float | None = None,
    vmax: float | None = None,
    annotate: bool = True,
    mark: pd.DataFrame | None = None,
    fmt: str = ".2f",
) -> Any:
    z = grid.to_numpy(dtype=float)
    im = ax.imshow(
        np.ma.masked_invalid(z),
        origin="lower",
        aspect="auto",
        cmap=cmap,
        norm=norm,
        vmin=None if norm else vmin,
        vmax=None if norm else vmax,
        interpolation="nearest",
    )
    ax.set_xticks(range(z.shape[1]), [str(v) for v in grid.columns], rotation=60, fontsize=7)
    ax.set_yticks(range(z.shape[0]), [str(v) for v in grid.index], fontsize=7)
    if annotate and z.size <= 400:
        for i in range(z.shape[0]):
            for j in range(z.shape[1]):
                if np.isfinite(z[i, j]):
                    star = "*" if mark is not None and bool(mark.iat[i, j]) else ""
                    ax.text(j, i, f"{z[i, j]:{fmt}}{star}", ha="center", va="center", fontsize=5.5)
    return im


def _surface3d(
    ax: Any,
    grid: pd.DataFrame,
    cmap: str,
    zlabel: str,
    norm: Any = None,
    vmin: float | None = None,
    vmax: float | None = None,
) -> None:
    xs, x_numeric = _positions(list(grid.columns))
    ys, y_numeric = _positions(list(grid.index))
    X, Y = np.meshgrid(xs, ys)
    Z = np.ma.masked_invalid(grid.to_numpy(dtype=float))
    kw: dict[str, Any] = {"norm": norm} if norm is not None else {"vmin": vmin, "vmax": vmax}
    ax.plot_surface(X, Y, Z, cmap=cmap, edgecolor="0.3", linewidth=0.2, antialiased=True, **kw)
    # an axis of names (algorithms) is ticked with the names, not with 0, 0.25, …
    if not x_numeric:
        ax.set_xticks(xs, [str(v) for v in grid.columns])
    if not y_numeric:
        ax.set_yticks(ys, [str(v) for v in grid.index])
    ax.set_zlabel(zlabel, fontsize=8)
    ax.tick_params(labelsize=7)


@plain_text
def surface_figure(
    agg: pd.DataFrame,
    metric: str,
    x: str,
    y: str,
    out: str | Path,
    formats: Sequence[str] = ("png", "svg"),
    title: str = "",
    stat: str = "mean",
    style: PlotStyle | None = None,
) -> list[Path]:
    """Heatmap and 3-D surface of ``stat`` of ``metric`` over ``x`` × ``y`` (seed 001 Fig. 4),
    in the metric's display unit (``metric_scale``); the grid is also written as CSV."""
    st = style or PlotStyle()
    a = agg[agg["metric"] == metric]
    scale, unit = metric_scale(metric)
    _, facets = facets_of(a, [x, y])
    paths: list[Path] = []
    lim = (
        (0.5, 1.0) if metric.startswith("jfi") else (None, None)
    )  # JFI of two flows lies in [0.5, 1]
    for where in facets:
        grid = pivot(select(a, where), metric, x, y, stat=stat) * scale
        fig = plt.figure(figsize=(12, 4.8))
        ax1 = fig.add_subplot(1, 2, 1)
        cell = ".1f" if unit else ".2f"
        im = _heat(ax1, grid, "viridis", vmin=lim[0], vmax=lim[1], fmt=cell)
        xlabel = st.xlabel or axis_label(x, list(grid.columns))
        ylabel = st.ylabel or axis_label(y, list(grid.index))
        ax1.set_xlabel(xlabel)
        ax1.set_ylabel(ylabel)
        fig.colorbar(im, ax=ax1, label=f"{stat} {metric_label(metric)}")
        ax2 = fig.add_subplot(1, 2, 2, projection="3d")
        _surface3d(ax2, grid, "viridis", metric_label(metric), vmin=lim[0], vmax=lim[1])
        ax2.set_xlabel(xlabel, fontsize=8)
        ax2.set_ylabel(ylabel, fontsize=8)
        if lim[0] is not None:
            ax2.set_zlim(*lim)
        fig.suptitle(
            st.title
            or " ".join(
                s
                for s in (
                    title,
                    f"{stat} {metric_label(metric)}",
                    ", ".join(f"{k}={v}" for k, v in where.items()),
                )
                if s
            )
        )
        fig.subplots_adjust(left=0.07, right=0.97, bottom=0.2, top=0.88, wspace=0.25)
        data = grid.stack(future_stack=True).rename(f"{stat} {metric_label(metric)}").reset_index()
        base = Path(out) / f"{_metric_file(metric)}-surface{_slug(where)}"
        paths += _save(fig, base, formats, data)
    return paths


@plain_text
def line_figure(
    agg: pd.DataFrame,
    metric: str,
    x: str,
    out: str | Path,
    by: str | None = None,
    formats: Sequence[str] = ("png", "svg"),
    title: str = "",
    style: PlotStyle | None = None,
) -> list[Path]:
    """Mean of ``metric`` against ``x``, one line per value of ``by``, with the 95 % CI band,
    in the metric's display unit; an algorithm keeps its colour (``CCA_COLOURS``). The
    plotted points (x, by, mean, lo, hi) are also written as CSV."""
    st = style or PlotStyle()
    a = agg[agg["metric"] == metric]
    scale, unit = metric_scale(metric)
    plotted = [x] + ([by] if by else [])
    _, facets = facets_of(a, plotted)
    paths: list[Path] = []
    for where in facets:
        part = select(a, where)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        series = list(part.groupby(by, sort=False)) if by else [(None, part)]
        # an algorithm keeps its colour; other keys (bic, highspeed, …) never share one
        colours = series_colours([k for k, _ in series]) if by else {}
        rows: list[pd.DataFrame] = []
        for key, s in series:
            xs_raw = list(s[x])
            xs, numeric = _positions(xs_raw)
            order = np.argsort(xs) if numeric else np.arange(len(xs))
            xv, mean = xs[order], s["mean"].to_numpy(float)[order] * scale
            lo = s["lo"].to_numpy(float)[order] * scale
            hi = s["hi"].to_numpy(float)[order] * scale
            colour = colours.get(key)  # None (no ``by``): the cycle's first colour
            (line,) = ax.plot(
                xv,
                mean,
                marker="o",
                markersize=3,
                label=legend_text(key) if by else metric,
                color=colour,
            )
            cols = {x: [xs_raw[i] for i in order], "mean": mean, "lo": lo, "hi": hi}
            if unit:
                cols = {(f"{k} ({unit})" if k != x else k): v for k, v in cols.items()}
            rows.append(pd.DataFrame(cols).assign(**({by: key} if by else {})))
            if np.isfinite(lo).any():
                ax.fill_between(xv, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
            if not numeric:
                ax.set_xticks(xs, [str(v) for v in xs_raw], rotation=45)
        ax.set_xlabel(st.xlabel or axis_label(x, list(part[x])))
        ax.set_ylabel(st.ylabel or metric_label(metric))
        if st.log_x:
            _log_x(ax, part, x)
        if st.log_y:
            ax.set_yscale("log")
            _plain_log_ticks(ax.yaxis)
        ax.grid(True, alpha=0.3)
        if by:
            ax.legend(title=axis_label(by, []), fontsize="small")
        ax.set_title(
            st.title
            or " ".join(
                s
                for s in (title, "mean ± 95 % CI", ", ".join(f"{k}={v}" for k, v in where.items()))
                if s
            ),
            fontsize=10,
        )
        fig.tight_layout()
        base = Path(out) / f"{_metric_file(metric)}-vs-{_axis_file(x)}{_slug(where)}"
        paths += _save(fig, base, formats, pd.concat(rows, ignore_index=True))
    return paths


def _plain_log_ticks(axis: Any) -> None:
    """Log-scale tick labels as plain numbers ("100", not mathtext, which is off here)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _log_x(ax: Any, part: pd.DataFrame, x: str) -> None:
    """A log x axis ticked at the swept values (``[[plots]]`` checks they are positive)."""
    ax.set_xscale("log")
    xs, numeric = _positions(list(dict.fromkeys(part[x])))
    if numeric:
        ax.set_xticks(sorted(xs))
    _plain_log_ticks(ax.xaxis)


def _metric_file(metric: str) -> str:
    """A metric name as part of a file name: a group metric (``ratio:vegas/reno``) holds a
    label, which may hold ``/`` or other characters a file name must not."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", metric)


def _axis_file(axis: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", axis)


@plain_text
def difference_figure(
    c: Comparison, x: str, y: str, out: str | Path, formats: Sequence[str] = ("png", "svg")
) -> list[Path]:
    """W = |D| − 2σ(B) over ``x`` × ``y`` (seed 001 Fig. 5): heatmap (cells with W ≥ 0 starred)
    and 3-D surface with the W = 0 plane; the title also gives Welch's count (``compare``)."""
    t = c.table
    long = t.rename(columns={"W": "mean"}).assign(
        metric="W", n=0, std=np.nan, ci=np.nan, lo=np.nan, hi=np.nan
    )
    long = long[[*c.axes, "metric", *STATS]]
    _, facets = facets_of(long, [x, y])
    la, lb = c.labels
    paths: list[Path] = []
    for where in facets:
        grid = pivot(select(long, where), "W", x, y)
        z = grid.to_numpy(dtype=float)
        finite = z[np.isfinite(z)]
        span = float(np.abs(finite).max()) if finite.size else 1.0
        span = span or 1.0
        norm = TwoSlopeNorm(vcenter=0.0, vmin=-span, vmax=span)
        fig = plt.figure(figsize=(12, 4.8))
        ax1 = fig.add_subplot(1, 2, 1)
        im = _heat(ax1, grid, "RdBu_r", norm=norm, mark=grid >= 0, fmt="+.3f")
        ax1.set_xlabel(axis_label(x, list(grid.columns)))
        ax1.set_ylabel(axis_label(y, list(grid.index)))
        fig.colorbar(im, ax=ax1, label="W = |A − B| − 2σ(B)   (* marks W ≥ 0)")
        ax2 = fig.add_subplot(1, 2, 2, projection="3d")
        _surface3d(ax2, grid, "RdBu_r", "W", norm=norm)
        xs, _ = _positions(list(grid.columns))
        ys, _ = _positions(list(grid.index))
        X, Y = np.meshgrid(xs, ys)
        ax2.plot_surface(X, Y, np.zeros_like(X), color="0.5", alpha=0.15)
        ax2.set_xlabel(axis_label(x, list(grid.columns)), fontsize=8)
        ax2.set_ylabel(axis_label(y, list(grid.index)), fontsize=8)
        share = (finite >= 0).mean() if finite.size else float("nan")
        part = select(t, where)
        tested, sig = int(part["tested"].sum()), int(part["significant"].sum())
        fig.suptitle(
            f"{c.metric}: difference surface, A = {la}, B = {lb}"
            + (f", {', '.join(f'{k}={v}' for k, v in where.items())}" if where else "")
            + f" — W ≥ 0 at {100 * share:.0f} % of points; Welch p < {c.alpha:g} at {sig} of "
            f"{tested} tested"
        )
        fig.subplots_adjust(left=0.07, right=0.97, bottom=0.2, top=0.88, wspace=0.25)
        data = grid.stack(future_stack=True).rename("W").reset_index()
        base = Path(out) / f"{_metric_file(c.metric)}-difference{_slug(where)}"
        paths += _save(fig, base, formats, data)
    return paths


# --------------------------------------------------------------------------- per-run figures
# RUN_TABLES and CDF_METRICS live in .outputs, where a sweep file's check reads them
# without loading matplotlib


def done_runs(table: pd.DataFrame) -> pd.DataFrame:
    """The runs of a tidy table that finished (all of them when it has no status column)."""
    return table[table["status"] == "done"] if "status" in table.columns else table


def ordered_values(values: Sequence[Any]) -> list[Any]:
    """Distinct axis values, in numeric order where they are numbers or quantities."""
    uniq = list(dict.fromkeys(values))
    nums, _ = axis_numeric(uniq)
    if nums is None:
        return uniq
    return [v for _, v in sorted(zip(nums, uniq, strict=True), key=lambda p: p[0])]


def series_colours(keys: Sequence[Any]) -> dict[Any, str]:
    """A colour per key: an algorithm's own (``CCA_COLOURS``), the others from the rest of
    the tab10 cycle in order, so no two keys share a colour while there are colours left."""
    from matplotlib.colors import to_hex

    cycle = [to_hex(c) for c in plt.rcParams["axes.prop_cycle"].by_key()["color"]]
    fixed = {k: c for k in keys if (c := cca_colour(k)) is not None}
    free = [c for c in cycle if c not in fixed.values()] or cycle
    out: dict[Any, str] = {}
    i = 0
    for k in keys:
        if k in fixed:
            out[k] = fixed[k]
        else:
            out[k] = free[i % len(free)]
            i += 1
    return out


def box_data(
    table: pd.DataFrame, axes: Sequence[str], metric: str, x: str, by: str | None = None
) -> pd.DataFrame:
    """The per-run values a box plot draws: the axis columns, ``repeat`` and ``value`` (the
    metric in its display unit, ``metric_scale``) of every finished run with a finite value."""
    t = done_runs(table)
    if metric not in t.columns:
        raise ValueError(f"no metric {metric!r} in the runs")
    scale, _ = metric_scale(metric)
    keep = list(dict.fromkeys([*axes, x, *([by] if by else [])]))
    v = pd.to_numeric(t[metric], errors="coerce") * scale
    out = t[keep].assign(repeat=t["repeat"] if "repeat" in t.columns else 0, value=v)
    return out[np.isfinite(out["value"].to_numpy(dtype=float))].reset_index(drop=True)


@plain_text
def box_figure(
    table: pd.DataFrame,
    axes: Sequence[str],
    metric: str,
    x: str,
    out: str | Path,
    by: str | None = None,
    formats: Sequence[str] = ("png", "svg"),
    title: str = "",
    style: PlotStyle | None = None,
) -> list[Path]:
    """Box plots of ``metric`` over the repeats at each value of ``x`` (one box per value of
    ``by`` side by side, coloured per algorithm), every run's value drawn as a dot. The CSV
    holds the per-run values."""
    st = style or PlotStyle()
    data = box_data(table, axes, metric, x, by)
    _, unit = metric_scale(metric)
    _, facets = facets_of(data, [x] + ([by] if by else []), axes=axes)
    paths: list[Path] = []
    for where in facets:
        part = select(data, where)
        if part.empty:
            continue
        xs = ordered_values(part[x].tolist())
        keys = ordered_values(part[by].tolist()) if by else [None]
        colours = series_colours(keys)
        fig, ax = plt.subplots(figsize=(min(10.0, max(6.0, 0.6 * len(xs) * len(keys) + 2)), 4.5))
        width = 0.8 / len(keys)
        for j, key in enumerate(keys):
            sel = part if key is None else part[part[by] == key]
            vals = [sel.loc[sel[x] == v, "value"].to_numpy(dtype=float) for v in xs]
            pos = np.arange(len(xs)) - 0.4 + width * (j + 0.5)
            colour = colours[key] if by else "#1f77b4"
            bp = ax.boxplot(
                vals, positions=pos, widths=width * 0.8, patch_artist=True, showfliers=False
            )
            for box in bp["boxes"]:
                box.set(facecolor=colour, alpha=0.35, edgecolor=colour)
            for k in ("medians", "whiskers", "caps"):
                for ln in bp[k]:
                    ln.set(color=colour)
            for p, v in zip(pos, vals, strict=True):
                ax.plot(np.full(len(v), p), v, ".", color=colour, markersize=4)
            if by:
                ax.plot([], [], "s", color=colour, label=legend_text(key))
        ax.set_xticks(range(len(xs)), [str(v) for v in xs], rotation=45 if len(xs) > 6 else 0)
        ax.set_xlim(-0.6, len(xs) - 0.4)
        ax.set_xlabel(st.xlabel or axis_label(x, xs))
        ax.set_ylabel(st.ylabel or metric_label(metric))
        ax.grid(True, axis="y", alpha=0.3)
        if by:
            ax.legend(title=axis_label(by, []), fontsize="small")
        n = part.groupby([x] + ([by] if by else []))["value"].size()
        ax.set_title(
            st.title
            or " ".join(
                s
                for s in (
                    title,
                    f"over {_count_text(n)} repeats per point",
                    ", ".join(f"{k}={v}" for k, v in where.items()),
                )
                if s
            ),
            fontsize=10,
        )
        fig.tight_layout()
        csv = part[[x, *([by] if by else []), "repeat", "value"]].rename(
            columns={"value": f"{metric} ({unit})" if unit else metric}
        )
        base = Path(out) / f"{_metric_file(metric)}-box-{_axis_file(x)}{_slug(where)}"
        paths += _save(fig, base, formats, csv)
    return paths


def _count_text(n: pd.Series) -> str:
    lo, hi = int(n.min()), int(n.max())
    return str(lo) if lo == hi else f"{lo}–{hi}"


def flow_columns(table: pd.DataFrame) -> list[str]:
    """The per-flow-group throughput columns ``thr_g<i>_bps`` of a tidy table, in order."""
    return sorted(
        (c for c in table.columns if re.fullmatch(r"thr_g\d+_bps", str(c))),
        key=lambda c: int(c[5:-4]),
    )


def bars_data(
    table: pd.DataFrame, axes: Sequence[str], x: str, labels: dict[int, str] | None = None
) -> pd.DataFrame:
    """Per point and flow group: ``flow`` (its name), ``n``, ``mean``, ``lo``, ``hi`` of its
    throughput (Mbit/s) over the repeats, the CI from the per-run values."""
    from .aggregate import aggregate

    t = done_runs(table)
    cols = flow_columns(t)
    if not cols:
        raise ValueError("the runs have no per-flow throughputs (thr_g<i>_bps)")
    keep = list(dict.fromkeys([*axes, x]))
    agg = aggregate(t, keep, cols)
    g = agg["metric"].str.slice(5, -4).astype(int)
    names = labels or {}
    agg = agg.assign(flow=[names.get(i, f"flow {i + 1}") for i in g], order=g)
    for c in ("mean", "lo", "hi"):
        agg[c] = agg[c] * 1e-6
    return agg[[*keep, "order", "flow", "n", "mean", "lo", "hi"]]


@plain_text
def bars_figure(
    table: pd.DataFrame,
    axes: Sequence[str],
    x: str,
    out: str | Path,
    formats: Sequence[str] = ("png", "svg"),
    title: str = "",
    style: PlotStyle | None = None,
    labels: dict[int, str] | None = None,
) -> list[Path]:
    """Per-flow bars: the mean throughput of each flow group at each value of ``x`` with
    the 95 % CI over the repeats as error bars; ``labels`` names the groups (e.g. "flow 2
    (cubic)") and a name that is an algorithm keeps its colour."""
    st = style or PlotStyle()
    data = bars_data(table, axes, x, labels)
    _, facets = facets_of(data, [x], axes=axes)
    paths: list[Path] = []
    for where in facets:
        part = with_facet_cca(select(data, where), where)
        xs = ordered_values(part[x].tolist())
        flows = list(dict.fromkeys(part.sort_values("order")["flow"]))
        colours = flow_colours(flows)
        fig, ax = plt.subplots(figsize=(min(10.0, max(6.0, 0.5 * len(xs) * len(flows) + 2)), 4.5))
        width = 0.8 / len(flows)
        for j, f in enumerate(flows):
            sel = part[part["flow"] == f].set_index(x).reindex(xs)
            mean = sel["mean"].to_numpy(dtype=float)
            err = np.vstack([mean - sel["lo"].to_numpy(float), sel["hi"].to_numpy(float) - mean])
            ax.bar(
                np.arange(len(xs)) - 0.4 + width * (j + 0.5),
                mean,
                width * 0.9,
                yerr=np.where(np.isfinite(err), err, 0),
                capsize=3,
                color=colours[f],
                alpha=0.85,
                label=legend_text(f),
            )
        ax.set_xticks(range(len(xs)), [str(v) for v in xs])
        ax.set_xlabel(st.xlabel or axis_label(x, xs))
        ax.set_ylabel(st.ylabel or "throughput (Mbit/s)")
        ax.set_ylim(bottom=0)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="small")
        ax.set_title(
            st.title
            or " ".join(
                s
                for s in (
                    title,
                    "mean ± 95 % CI per flow",
                    ", ".join(f"{k}={v}" for k, v in where.items()),
                )
                if s
            ),
            fontsize=10,
        )
        fig.tight_layout()
        csv = part.drop(columns="order").rename(
            columns={c: f"{c} (Mbit/s)" for c in ("mean", "lo", "hi")}
        )
        base = Path(out) / f"throughput-bars-{_axis_file(x)}{_slug(where)}"
        paths += _save(fig, base, formats, csv)
    return paths


def with_facet_cca(part: pd.DataFrame, where: dict[str, Any]) -> pd.DataFrame:
    """Bars data of one facet with each flow named by its algorithm where the facet fixes it
    (``flows.1.cca = bbr``: "flow 2" reads "flow 2 (bbr)")."""
    names = [
        f"{n} ({where[k]})" if (k := f"flows.{g}.cca") in where and "(" not in n else n
        for n, g in zip(part["flow"], part["order"], strict=True)
    ]
    return part.assign(flow=names)


def flow_colours(names: Sequence[str]) -> dict[str, str]:
    """Colours of flow bars: the algorithm's (``"flow 2 (cubic)"`` is orange) when every flow
    names a different algorithm, else one colour per flow, so bars stay apart."""
    ccas = [_cca_of(n) for n in names]
    if all(ccas) and len(set(ccas)) == len(ccas):
        by_cca = series_colours(ccas)
        return {n: by_cca[c] for n, c in zip(names, ccas, strict=True)}
    return series_colours(list(names))


def group_names(
    store: Any, backend: str, table: pd.DataFrame, axes: Sequence[str]
) -> dict[int, str]:
    """Names of a sweep's flow groups, "flow 2 (cubic)", from the scenario of its first
    finished run; the algorithm is left out of a flow whose algorithm is an axis."""
    import json

    done = done_runs(table)
    if done.empty:
        return {}
    try:
        summary = json.loads(
            (store.run_dir(backend, done["run_hash"].iloc[0]) / "summary.json").read_text()
        )
        flows = summary["scenario"]["flows"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    out: dict[int, str] = {}
    for f in flows:
        g = int(f["group"])
        if g not in out:
            fixed = f"flows.{g}.cca" not in axes and f.get("cca")
            out[g] = f"flow {g + 1}" + (f" ({f['cca']})" if fixed else "")
    return out


def _cca_of(name: str) -> str | None:
    """The algorithm a flow name "flow 2 (cubic)" or "cubic" ends with, if it is one we colour."""
    m = re.search(r"\(([^()]*)\)\s*$", name)
    cand = m.group(1) if m else name
    return cand if cca_colour(cand) is not None else None


def ecdf(values: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The empirical CDF of the finite ``values``: sorted values v₍ᵢ₎ and F = i/n."""
    v = np.sort(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    return v, np.arange(1, len(v) + 1) / len(v) if len(v) else np.array([])


#: line styles of curves that share a colour (matplotlib names; plotly.js has the same idea)
DASHES = (("solid", "-"), ("dash", "--"), ("dot", ":"), ("dashdot", "-."), ("longdash", "--"))


def curve_styles(values: pd.DataFrame) -> dict[Any, tuple[str, int]]:
    """Colour and dash index of each ``curve`` of ``values``: with a ``cca`` column, the
    algorithm's colour and one dash per curve of the same algorithm (so an algorithm has
    one colour in every figure); without one, a colour per curve."""
    curves = list(dict.fromkeys(values["curve"]))
    if "cca" not in values.columns:
        colours = series_colours([_cca_of(str(c)) or c for c in curves])
        return {c: (colours[_cca_of(str(c)) or c], 0) for c in curves}
    cca = values.drop_duplicates("curve").set_index("curve")["cca"].astype(str)
    colours = series_colours(list(dict.fromkeys(cca[c] for c in curves)))
    seen: dict[str, int] = {}
    out: dict[Any, tuple[str, int]] = {}
    for c in curves:
        k = seen.get(cca[c], 0)
        seen[cca[c]] = k + 1
        out[c] = (colours[cca[c]], k % len(DASHES))
    return out


def cdf_data(values: pd.DataFrame) -> pd.DataFrame:
    """``curve``, ``value``, ``F`` — the ECDF of each curve's ``value``s (a tidy frame of
    ``curve`` and ``value``), the curves in their first-seen order."""
    parts = []
    for curve, part in values.groupby("curve", sort=False):
        v, f = ecdf(part["value"].to_numpy(dtype=float))
        parts.append(pd.DataFrame({"curve": curve, "value": v, "F": f}))
    if not parts:
        return pd.DataFrame(columns=["curve", "value", "F"])
    return pd.concat(parts, ignore_index=True)


@plain_text
def cdf_figure(
    values: pd.DataFrame,
    path: str | Path,
    xlabel: str,
    formats: Sequence[str] = ("png", "svg"),
    title: str = "",
    style: PlotStyle | None = None,
) -> list[Path]:
    """Empirical CDFs, one step line per ``curve`` of ``values`` (columns ``curve``, ``value``
    in the unit ``xlabel`` names); a curve named after an algorithm keeps its colour. The CSV
    holds the steps (curve, value, F)."""
    st = style or PlotStyle()
    data = cdf_data(values)
    if data.empty:
        raise ValueError("no values to draw a CDF of")
    styles = curve_styles(values)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for c, (colour, dash) in styles.items():
        part = data[data["curve"] == c]
        ax.step(
            part["value"],
            part["F"],
            where="post",
            color=colour,
            linestyle=DASHES[dash][1],
            label=legend_text(c),
        )
    ax.set_xlabel(st.xlabel or xlabel)
    ax.set_ylabel(st.ylabel or "fraction ≤ x (CDF)")
    ax.set_ylim(0, 1.02)
    if st.log_x:
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(st.title or title, fontsize=10)
    fig.tight_layout()
    p = Path(path)
    return _save(
        fig, p.with_suffix("") if p.suffix in (".png", ".svg", ".pdf") else p, formats, data
    )


def run_cdf_values(result: Any, metric: str, run_dir: Path | None = None) -> pd.DataFrame | None:
    """``curve`` (the flow's label), ``value`` and ``cca`` of one run for a CDF:
    ``throughput`` — the per-interval throughput of each flow in the measurement window
    (Mbit/s); a ``RUN_TABLES`` metric — that table's column (``fct``: NaN for a flow that did
    not complete, which a CDF leaves out), None when the run has no such table."""
    if metric == "throughput":
        it = result.interval_throughputs()
        f = result.flows.set_index("flow")
        long = it.melt(var_name="flow", value_name="value").dropna()
        return pd.DataFrame(
            {
                "curve": long["flow"].map(f["label"].astype(str)).to_numpy(),
                "value": long["value"].to_numpy(dtype=float) * 1e-6,
                "cca": long["flow"].map(f["cca"].astype(str)).to_numpy(),
            }
        )
    if metric not in RUN_TABLES:
        raise ValueError(f"CDF metric {metric!r}; allowed: {', '.join(CDF_METRICS)}")
    name, column, scale, _ = RUN_TABLES[metric]
    f = (run_dir or Path(".")) / name
    if run_dir is None or not f.is_file():
        return None
    t = pd.read_parquet(f)
    if column not in t.columns:
        return None
    label = t["label"].astype(str) if "label" in t.columns else pd.Series("flows", index=t.index)
    out = pd.DataFrame({"curve": label.to_numpy(), "value": t[column].to_numpy(float) * scale})
    if "cca" in t.columns:
        out["cca"] = t["cca"].astype(str).to_numpy()
    return out


def cdf_xlabel(metric: str) -> str:
    return "throughput per interval (Mbit/s)" if metric == "throughput" else RUN_TABLES[metric][3]


def cdf_frames(
    store: Any,
    backend: str,
    table: pd.DataFrame,
    axes: Sequence[str],
    metric: str,
    by: str | None = None,
) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """The values of a sweep's CDF figures: one figure per combination of the axes other
    than ``by``, each the finished runs' values (``run_cdf_values``) pooled over the repeats,
    one curve per flow label (and value of ``by``). Figures without values are left out."""
    from .result import RunResult

    t = done_runs(table)
    _, facets = facets_of(t, [by] if by else [], axes=axes)
    out: list[tuple[dict[str, Any], pd.DataFrame]] = []
    for where in facets:
        parts = []
        for _, rec in select(t, where).iterrows():
            d = store.run_dir(backend, rec["run_hash"])
            result = RunResult.load(d) if metric == "throughput" else None
            v = run_cdf_values(result, metric, d)
            if v is None or v.empty:
                continue
            if by:
                v = v.assign(curve=v["curve"] + f", {axis_label(by, [])} = {rec[by]}")
            parts.append(v)
        if parts:
            out.append((where, pd.concat(parts, ignore_index=True)))
    return out
