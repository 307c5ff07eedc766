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
    "utilization": "link utilization",
    "sum_bps": "total throughput (bit/s)",
    "retransmits": "retransmissions",
}


def metric_label(metric: str) -> str:
    m = re.fullmatch(r"thr_g(\d+)_bps", metric)
    if m:
        return f"throughput of flow {m.group(1)} (bit/s)"
    return LABELS.get(metric, metric)


def axis_label(axis: str, values: Sequence[Any]) -> str:
    _, unit = axis_numeric(list(values))
    return f"{axis} ({unit})" if unit else axis


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


def _save(fig: Any, base: Path, formats: Sequence[str]) -> list[Path]:
    base.parent.mkdir(parents=True, exist_ok=True)
    out = []
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
) -> list[Path]:
    """Heatmap and 3-D surface of ``stat`` of ``metric`` over ``x`` × ``y`` (seed 001 Fig. 4)."""
    a = agg[agg["metric"] == metric]
    _, facets = _facets(a, [x, y])
    paths: list[Path] = []
    lim = (
        (0.5, 1.0) if metric.startswith("jfi") else (None, None)
    )  # JFI of two flows lies in [0.5, 1]
    for where in facets:
        grid = pivot(_select(a, where), metric, x, y, stat=stat)
        fig = plt.figure(figsize=(12, 4.8))
        ax1 = fig.add_subplot(1, 2, 1)
        im = _heat(ax1, grid, "viridis", vmin=lim[0], vmax=lim[1])
        ax1.set_xlabel(axis_label(x, list(grid.columns)))
        ax1.set_ylabel(axis_label(y, list(grid.index)))
        fig.colorbar(im, ax=ax1, label=f"{stat} {metric_label(metric)}")
        ax2 = fig.add_subplot(1, 2, 2, projection="3d")
        _surface3d(ax2, grid, "viridis", metric, vmin=lim[0], vmax=lim[1])
        ax2.set_xlabel(axis_label(x, list(grid.columns)), fontsize=8)
        ax2.set_ylabel(axis_label(y, list(grid.index)), fontsize=8)
        if lim[0] is not None:
            ax2.set_zlim(*lim)
        fig.suptitle(
            " ".join(
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
        paths += _save(fig, Path(out) / f"{_metric_file(metric)}-surface{_slug(where)}", formats)
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
) -> list[Path]:
    """Mean of ``metric`` against ``x``, one line per value of ``by``, with the 95 % CI band."""
    a = agg[agg["metric"] == metric]
    plotted = [x] + ([by] if by else [])
    _, facets = _facets(a, plotted)
    paths: list[Path] = []
    for where in facets:
        part = _select(a, where)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        series = part.groupby(by, sort=False) if by else [(None, part)]
        for key, s in series:
            xs_raw = list(s[x])
            xs, numeric = _positions(xs_raw)
            order = np.argsort(xs) if numeric else np.arange(len(xs))
            xv, mean = xs[order], s["mean"].to_numpy(float)[order]
            lo, hi = s["lo"].to_numpy(float)[order], s["hi"].to_numpy(float)[order]
            (line,) = ax.plot(
                xv, mean, marker="o", markersize=3, label=legend_text(key) if by else metric
            )
            if np.isfinite(lo).any():
                ax.fill_between(xv, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
            if not numeric:
                ax.set_xticks(xs, [str(v) for v in xs_raw], rotation=45)
        ax.set_xlabel(axis_label(x, list(part[x])))
        ax.set_ylabel(metric_label(metric))
        ax.grid(True, alpha=0.3)
        if by:
            ax.legend(title=by, fontsize="small")
        ax.set_title(
            " ".join(
                s
                for s in (title, "mean ± 95 % CI", ", ".join(f"{k}={v}" for k, v in where.items()))
                if s
            ),
            fontsize=10,
        )
        fig.tight_layout()
        paths += _save(
            fig, Path(out) / f"{_metric_file(metric)}-vs-{_axis_file(x)}{_slug(where)}", formats
        )
    return paths


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
        paths += _save(
            fig, Path(out) / f"{_metric_file(c.metric)}-difference{_slug(where)}", formats
        )
    return paths
