"""Difference between two result sets, point by point (seed 001, §IV-A and Fig. 5).

For each grid point present in both A and B, with nₐ, n_b repeats, their means Ā, B̄ and
sample standard deviations σ(A), σ(B):

    D   = Ā − B̄
    C95 = 2·σ(B)           (B's ±2σ band: ~95 % of B's runs fall inside it)
    W   = |D| − C95        (seed 001's criterion: W ≥ 0 where A lies outside B's band)

**Which points differ** is decided by Welch's t-test (two-sided, unequal variances;
``scipy.stats.ttest_ind_from_stats``): t = D / √(σ(A)²/nₐ + σ(B)²/n_b) with the
Welch–Satterthwaite degrees of freedom, significant when p < α (0.05). Unlike W it counts
A's spread and the number of repeats: with 3 repeats a side a sample σ is itself uncertain
by a factor of ~2, and W marks a point "different" when σ(B) happens to come out small
(σ(B) = 0 and D = 10⁻⁷ gave W ≥ 0). A point is not tested when a side has fewer than two
repeats or neither side has any spread (every repeat identical: no test can tell D from
noise; D is still reported). W stays in the table and draws the difference surface, as
seed 001 defines it (the paper: A = simulation, B = testbed, W = |S − T| − 2σ(T)).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .aggregate import aggregate

__all__ = ["Comparison", "compare"]


@dataclass
class Comparison:
    metric: str
    axes: list[str]
    #: axes…, n_a, mean_a, std_a, n_b, mean_b, std_b, D, C95, W, differs_w (W ≥ 0),
    #: t, df, p (Welch), tested, significant (p < alpha), untested (why not, or "")
    table: pd.DataFrame
    only_a: int = 0
    only_b: int = 0
    labels: tuple[str, str] = ("A", "B")
    notes: list[str] = field(default_factory=list)
    alpha: float = 0.05

    @property
    def n_tested(self) -> int:
        return int(self.table["tested"].sum())

    @property
    def n_significant(self) -> int:
        return int(self.table["significant"].sum())

    @property
    def n_points(self) -> int:
        return len(self.table)

    @property
    def n_defined(self) -> int:
        return int(np.isfinite(self.table["W"]).sum())

    @property
    def n_differ(self) -> int:
        """Points with W ≥ 0 (seed 001's criterion)."""
        return int((self.table["W"] >= 0).sum())

    def share(self) -> float:
        """Share of the matched points with a finite W where W ≥ 0."""
        return self.n_differ / self.n_defined if self.n_defined else float("nan")

    def by(self, axis: str) -> pd.DataFrame:
        """Per value of one axis (e.g. per algorithm): points tested and significant
        (Welch), points with a finite W and with W ≥ 0, mean |D|."""
        t = self.table
        g = t.groupby(axis, sort=False)
        return pd.DataFrame(
            {
                "points": g.size(),
                "tested": g["tested"].sum().astype(int),
                "significant": g["significant"].sum().astype(int),
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
    alpha: float = 0.05,
) -> Comparison:
    """Match the points of two tidy tables on their axes; D, C95, W and Welch's test."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha: expected a level between 0 and 1, e.g. 0.05 (got {alpha!r})")
    axes_b = axes_b if axes_b is not None else axes_a
    if set(axes_a) != set(axes_b):
        raise ValueError(
            f"the result sets have different axes: {labels[0]}: {', '.join(axes_a) or '(none)'}; "
            f"{labels[1]}: {', '.join(axes_b) or '(none)'}"
        )
    for lab, t in zip(labels, (table_a, table_b), strict=True):
        if metric not in t.columns:
            from .aggregate import metric_columns

            raise ValueError(
                f"metric {metric!r}: {lab} has no such metric; allowed: "
                f"{', '.join(metric_columns(t))}"
            )
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
    m["differs_w"] = m["W"] >= 0
    m = pd.concat([m, welch(m, alpha)], axis=1)
    out = Comparison(
        metric=metric,
        axes=axes,
        table=m,
        labels=labels,
        only_a=int((~key_a.isin(set(key_b))).sum()),
        only_b=int((~key_b.isin(set(key_a))).sum()),
        alpha=alpha,
    )
    if len(m) and (m["n_b"] < 2).all():
        out.notes.append(
            f"{labels[1]} has one repeat per point: σ({labels[1]}) and W are undefined"
        )
    return out


def welch(m: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Welch's t-test per row of n_a, mean_a, std_a, n_b, mean_b, std_b: t, df, p,
    tested, significant (p < alpha) and, for rows not tested, why."""
    na, nb = m["n_a"].to_numpy(dtype=float), m["n_b"].to_numpy(dtype=float)
    va = m["std_a"].to_numpy(dtype=float) ** 2 / na
    vb = m["std_b"].to_numpy(dtype=float) ** 2 / nb
    d = m["D"].to_numpy(dtype=float)
    few = (na < 2) | (nb < 2) | ~np.isfinite(d)
    flat = ~few & (va + vb == 0)
    tested = ~few & ~flat
    t = np.full(len(m), np.nan)
    p = np.full(len(m), np.nan)
    df = np.full(len(m), np.nan)
    if tested.any():
        i = tested
        res = stats.ttest_ind_from_stats(
            m["mean_a"].to_numpy(dtype=float)[i],
            m["std_a"].to_numpy(dtype=float)[i],
            na[i],
            m["mean_b"].to_numpy(dtype=float)[i],
            m["std_b"].to_numpy(dtype=float)[i],
            nb[i],
            equal_var=False,
        )
        t[i], p[i] = res.statistic, res.pvalue
        with np.errstate(divide="ignore", invalid="ignore"):  # one side without spread
            df[i] = (va[i] + vb[i]) ** 2 / (
                np.where(na[i] > 1, va[i] ** 2 / (na[i] - 1), 0.0)
                + np.where(nb[i] > 1, vb[i] ** 2 / (nb[i] - 1), 0.0)
            )
    why = np.where(few, "fewer than 2 repeats", np.where(flat, "no spread on either side", ""))
    return pd.DataFrame(
        {"t": t, "df": df, "p": p, "tested": tested, "significant": tested & (p < alpha)},
        index=m.index,
    ).assign(untested=why)


def repeats_text(n: pd.Series) -> str:
    """How many repeats the points had: ``3`` or ``2–5 (median 3)``."""
    n = n[n > 0]
    if n.empty:
        return "0"
    lo, hi = int(n.min()), int(n.max())
    return str(lo) if lo == hi else f"{lo}–{hi} (median {float(n.median()):g})"


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
    t = c.table
    lines = [
        f"metric {c.metric}: D = {la} − {lb}; Welch's t-test per point on the repeats "
        f"(two-sided, α = {c.alpha:g})",
        f"matched points: {c.n_points} (only in {la}: {c.only_a}, only in {lb}: {c.only_b}); "
        f"repeats per point: {la} {repeats_text(t['n_a'])}, {lb} {repeats_text(t['n_b'])}",
    ]
    if c.n_tested:
        lines.append(
            f"significant difference (Welch p < {c.alpha:g}) at {c.n_significant} of "
            f"{c.n_tested} tested points: {100 * c.n_significant / c.n_tested:.1f} %"
        )
    for why in ("fewer than 2 repeats", "no spread on either side"):
        part = t[t["untested"] == why]
        if len(part):
            d = part["D"].abs()
            lines.append(
                f"not tested: {len(part)} point{'s' if len(part) > 1 else ''} with {why}"
                + (f" (|D| up to {d.max():.3g})" if np.isfinite(d).any() else "")
            )
    if c.n_defined:
        lines.append(
            f"seed 001's W = |D| − 2·σ({lb}) ≥ 0 at {c.n_differ} of {c.n_defined} points: "
            f"{100 * c.share():.1f} % (W ignores σ({la}) and the repeat count; it draws the "
            "difference surface)"
        )
    lines.extend(c.notes)
    return lines
