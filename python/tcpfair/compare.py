"""Difference between two result sets, point by point (seed 001, §IV-A and Fig. 5).

For each grid point present in both A and B, with the repeats' means Ā, B̄ and the sample
standard deviation σ(B) of B's repeats:

    D   = Ā − B̄
    C95 = 2·σ(B)           (B's ±2σ band: ~95 % of B's runs fall inside it)
    W   = |D| − C95

``W ≥ 0`` marks a point where A lies outside B's band: the two disagree there. The paper
uses A = simulation, B = testbed (W = |S − T| − 2σ(T)). Points without a finite W (B has
a single repeat, or the metric is undefined) are counted separately.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from .aggregate import aggregate

__all__ = ["Comparison", "compare"]


@dataclass
class Comparison:
    metric: str
    axes: list[str]
    table: pd.DataFrame  # axes…, n_a, mean_a, std_a, n_b, mean_b, std_b, D, C95, W, differs
    only_a: int = 0
    only_b: int = 0
    labels: tuple[str, str] = ("A", "B")
    notes: list[str] = field(default_factory=list)

    @property
    def n_points(self) -> int:
        return len(self.table)

    @property
    def n_defined(self) -> int:
        return int(np.isfinite(self.table["W"]).sum())

    @property
    def n_differ(self) -> int:
        return int((self.table["W"] >= 0).sum())

    def share(self) -> float:
        """Share of the matched points with a finite W where W ≥ 0."""
        return self.n_differ / self.n_defined if self.n_defined else float("nan")

    def by(self, axis: str) -> pd.DataFrame:
        """Share of points with W ≥ 0 for each value of one axis (e.g. per algorithm)."""
        t = self.table
        g = t.groupby(axis, sort=False)
        return pd.DataFrame(
            {
                "points": g.size(),
                "defined": g["W"].apply(lambda w: int(np.isfinite(w).sum())),
                "differ": g["W"].apply(lambda w: int((w >= 0).sum())),
                "mean_abs_D": g["D"].apply(
                    lambda d: float(np.nanmean(np.abs(d))) if np.isfinite(d).any() else np.nan
                ),
            }
        ).assign(share=lambda f: f["differ"] / f["defined"].where(f["defined"] > 0))


def compare(
    table_a: pd.DataFrame,
    table_b: pd.DataFrame,
    metric: str,
    axes_a: list[str],
    axes_b: list[str] | None = None,
    labels: tuple[str, str] = ("A", "B"),
) -> Comparison:
    """Match the points of two tidy tables on their axes and compute D, C95 and W."""
    axes_b = axes_b if axes_b is not None else axes_a
    if set(axes_a) != set(axes_b):
        raise ValueError(
            f"the result sets have different axes: {labels[0]}: {', '.join(axes_a) or '(none)'}; "
            f"{labels[1]}: {', '.join(axes_b) or '(none)'}"
        )
    for lab, t in zip(labels, (table_a, table_b), strict=True):
        if metric not in t.columns:
            raise ValueError(f"{lab} has no metric {metric!r}")
    axes = list(axes_a)
    a = aggregate(table_a, axes, [metric])
    b = aggregate(table_b, axes, [metric])
    a = a.rename(columns={"n": "n_a", "mean": "mean_a", "std": "std_a"})[
        [*axes, "n_a", "mean_a", "std_a"]
    ]
    b = b.rename(columns={"n": "n_b", "mean": "mean_b", "std": "std_b"})[
        [*axes, "n_b", "mean_b", "std_b"]
    ]
    key_a = _keys(a, axes)
    key_b = _keys(b, axes)
    a = a.assign(_k=key_a.to_numpy())
    b = b.assign(_k=key_b.to_numpy()).drop(columns=axes)
    m = a.merge(b, on="_k", how="inner").drop(columns="_k")
    m["D"] = m["mean_a"] - m["mean_b"]
    m["C95"] = 2.0 * m["std_b"]
    m["W"] = m["D"].abs() - m["C95"]
    m["differs"] = m["W"] >= 0
    out = Comparison(
        metric=metric,
        axes=axes,
        table=m,
        labels=labels,
        only_a=int((~key_a.isin(set(key_b))).sum()),
        only_b=int((~key_b.isin(set(key_a))).sum()),
    )
    if len(m) and (m["n_b"] < 2).all():
        out.notes.append(
            f"{labels[1]} has one repeat per point: σ({labels[1]}) and W are undefined"
        )
    return out


_Q = re.compile(r"^\s*([+-]?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-zµ%]+)\s*$")


def canonical(v: Any) -> str:
    """Match key of an axis value: ``1.0bdp`` and ``1bdp`` match, as do ``25`` and ``25.0``."""
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, int | float):
        return f"n:{Decimal(repr(float(v))).normalize():f}"
    if isinstance(v, str):
        m = _Q.match(v)
        if m:
            return f"q:{Decimal(m.group(1)).normalize():f}{m.group(2)}"
    return f"s:{v}"


def _keys(t: pd.DataFrame, axes: list[str]) -> pd.Series:
    if not axes:
        return pd.Series([""] * len(t), index=t.index)
    return pd.Series(
        ["\x1f".join(canonical(v) for v in row) for row in t[axes].itertuples(index=False)],
        index=t.index,
    )


def summary_lines(c: Comparison) -> list[str]:
    """What ``tcpfair compare`` prints."""
    la, lb = c.labels
    lines = [
        f"metric {c.metric}: D = {la} − {lb}, C95 = 2·σ({lb}), W = |D| − C95",
        f"matched points: {c.n_points} (only in {la}: {c.only_a}, only in {lb}: {c.only_b})",
    ]
    if c.n_defined:
        lines.append(
            f"W ≥ 0 (significant difference) at {c.n_differ} of {c.n_defined} points: {100 * c.share():.1f} %"
        )
    lines.extend(c.notes)
    return lines
