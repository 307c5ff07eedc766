"""Aggregation over repeats: per grid point, mean, standard deviation and a Student-t
confidence interval of each metric; pivots of one metric over two axes.

For n repeats x₁…xₙ of a metric at a point: mean x̄, sample standard deviation
s = √(Σ(xᵢ−x̄)²/(n−1)), and the two-sided confidence interval x̄ ± t₍₁₋α/2, n−1₎·s/√n
(α = 0.05 for 95 %). With one repeat, s and the interval are NaN. Non-finite values (a
ratio whose denominator was 0) are left out and ``n`` counts what was used.

The statistics are ``tcpfair.metrics.repeat_stats`` (Student-t quantile without SciPy).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from . import metrics
from .store import GROUP_STATS, METRIC_COLUMNS

__all__ = ["mean_std_ci", "aggregate", "pivot", "axis_numeric", "metric_columns"]

STATS = ("n", "mean", "std", "ci", "lo", "hi")


# --------------------------------------------------------------------------- statistics
def mean_std_ci(
    values: Sequence[float] | np.ndarray, level: float = 0.95
) -> tuple[int, float, float, float]:
    """(n, mean, sample std, half-width of the two-sided t interval) of the finite values
    (``tcpfair.metrics.repeat_stats``); n = 0 gives NaNs."""
    a = np.asarray(values, dtype=float)
    a = a[np.isfinite(a)]
    if len(a) == 0:
        return 0, math.nan, math.nan, math.nan
    st = metrics.repeat_stats(a, level)
    return st.n, st.mean, st.std, st.half_width


# --------------------------------------------------------------------------- tables
def metric_columns(table: pd.DataFrame) -> list[str]:
    """The metric columns of a tidy table: the catalog's, the per-group throughputs, and
    the per-label group metrics (``mean:<label>``, ``ratio:<A>/<B>``; store.group_columns)
    and the reverse direction's (``reverse_utilization``, …) present in every run."""
    thr = sorted(
        (c for c in table.columns if re.fullmatch(r"thr_g\d+_bps", c)), key=lambda c: int(c[5:-4])
    )
    prefixes = tuple(f"{s}:" for s in (*GROUP_STATS, "ratio"))
    # a group column is a metric of the sweep when every run has that label (a default label
    # names the cca, so a sweep over cca gives columns that exist at some points only)
    groups = [
        c
        for c in table.columns
        if isinstance(c, str)
        and (c.startswith(prefixes) or c == "utilization_measured" or c.startswith("reverse_"))
        and table[c].notna().all()
    ]
    return [c for c in METRIC_COLUMNS if c in table.columns] + thr + groups


def aggregate(
    table: pd.DataFrame, axes: list[str], metrics: list[str] | None = None, level: float = 0.95
) -> pd.DataFrame:
    """Long table: one row per (point, metric) with n, mean, std, ci (half-width), lo, hi.

    Only ``done`` runs count when the table has a status column."""
    t = table
    if "status" in t.columns:
        t = t[t["status"] == "done"]
    metrics = metrics or metric_columns(t)
    missing = [a for a in axes if a not in t.columns]
    if missing:
        raise ValueError(
            f"no axis column(s) {', '.join(missing)}; columns: {', '.join(map(str, t.columns))}"
        )
    rows: list[dict[str, Any]] = []
    groups = t.groupby(axes, sort=False, dropna=False) if axes else [((), t)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            n, mean, std, half = mean_std_ci(
                pd.to_numeric(part[m], errors="coerce").to_numpy(dtype=float), level
            )
            row = dict(zip(axes, key, strict=True))
            row.update(metric=m, n=n, mean=mean, std=std, ci=half, lo=mean - half, hi=mean + half)
            rows.append(row)
    return pd.DataFrame(rows, columns=[*axes, "metric", *STATS])


def pivot(
    agg: pd.DataFrame,
    metric: str,
    x: str,
    y: str,
    stat: str = "mean",
    where: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """``stat`` of ``metric`` with ``y`` values as rows and ``x`` values as columns, both in
    numeric order where the values are numbers or quantities (``25ms``), else as given.
    ``where`` fixes the other axes (``{"flows.1.cca": "cubic"}``)."""
    a = agg[agg["metric"] == metric]
    for k, v in (where or {}).items():
        a = a[a[k] == v]
    if a.duplicated([x, y]).any():
        others = [c for c in a.columns if c not in (x, y, "metric", *STATS)]
        raise ValueError(
            f"several points per ({x}, {y}) cell: fix the other axes with where= ({', '.join(others)})"
        )
    p = a.pivot(index=y, columns=x, values=stat)
    return p.reindex(index=_ordered(a[y]), columns=_ordered(a[x]))


def _ordered(values: pd.Series) -> list[Any]:
    uniq = list(dict.fromkeys(values.tolist()))
    nums, _ = axis_numeric(uniq)
    if nums is None:
        return uniq
    return [v for _, v in sorted(zip(nums, uniq, strict=True), key=lambda p: p[0])]


_Q = re.compile(r"^\s*([+-]?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-zµ%]*)\s*$")


def axis_numeric(values: Sequence[Any]) -> tuple[list[float] | None, str]:
    """Numbers for plotting an axis: numbers as they are, quantities with one common unit
    (``25ms``, ``0.2bdp``) as their number and that unit; otherwise (None, '')."""
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values], ""
    nums, units = [], set()
    for v in values:
        m = _Q.match(v) if isinstance(v, str) else None
        if not m or not m.group(2):
            return None, ""
        nums.append(float(m.group(1)))
        units.add(m.group(2))
    if len(units) != 1:
        return None, ""
    return nums, units.pop()
