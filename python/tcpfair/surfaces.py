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
from .outputs import FORMATS  # noqa: E402, F401 — figure formats, defined where start-up is light
from .plots import legend_text, plain_text  # noqa: E402

__all__ = ["surface_figure", "line_figure", "difference_figure", "FORMATS"]

LABELS = {
    "jfi": "Jain's fairness index",
    "jfi_per_interval_mean": "mean JFI of the 1-interval samples",
    "ratio": "throughput ratio flow 2 / flow 1",
    "min_max_ratio": "min/max throughput ratio",
    "utilization": "link utilization (%)",
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
    if metric == "utilization":
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


def _facets(agg: pd.DataFrame, plotted: list[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """Axes to split figures by (those not plotted and not determined by the plotted ones)."""
    others = []
    for a in _axes_of(agg):
        if a in plotted:
            continue
        determined = agg.groupby(plotted, dropna=False)[a].nunique(dropna=False).max() <= 1
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


def _select(agg: pd.DataFrame, where: dict[str, Any]) -> pd.DataFrame:
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
    xs, _ = _positions(list(grid.columns))
    ys, _ = _positions(list(grid.index))
    X, Y = np.meshgrid(xs, ys)
    Z = np.ma.masked_invalid(grid.to_numpy(dtype=float))
    kw: dict[str, Any] = {"norm": norm} if norm is not None else {"vmin": vmin, "vmax": vmax}
    ax.plot_surface(X, Y, Z, cmap=cmap, edgecolor="0.3", linewidth=0.2, antialiased=True, **kw)
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
    _, facets = _facets(a, [x, y])
    paths: list[Path] = []
    lim = (
        (0.5, 1.0) if metric.startswith("jfi") else (None, None)
    )  # JFI of two flows lies in [0.5, 1]
    for where in facets:
        grid = pivot(_select(a, where), metric, x, y, stat=stat) * scale
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
    _, facets = _facets(a, plotted)
    paths: list[Path] = []
    for where in facets:
        part = _select(a, where)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        series = part.groupby(by, sort=False) if by else [(None, part)]
        rows: list[pd.DataFrame] = []
        for key, s in series:
            xs_raw = list(s[x])
            xs, numeric = _positions(xs_raw)
            order = np.argsort(xs) if numeric else np.arange(len(xs))
            xv, mean = xs[order], s["mean"].to_numpy(float)[order] * scale
            lo = s["lo"].to_numpy(float)[order] * scale
            hi = s["hi"].to_numpy(float)[order] * scale
            colour = cca_colour(key) if by else None  # None: the next colour of the cycle
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
    _, facets = _facets(long, [x, y])
    la, lb = c.labels
    paths: list[Path] = []
    for where in facets:
        grid = pivot(_select(long, where), "W", x, y)
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
        part = _select(t, where)
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
