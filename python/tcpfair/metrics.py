"""Fairness and performance metrics: pure functions on arrays of per-flow throughputs.

Every function takes the throughputs ``x₁ … xₙ`` of n flows (any unit: bit/s, Mbit/s,
bytes; the indices are scale-invariant unless stated) and validates them the same way:
a 1-D array, at least one flow, finite and non-negative — otherwise ``ValueError`` with a
message saying what was wrong.

Formulas
========

Jain's fairness index (Jain, Chiu & Hawe 1984, DEC-TR-301; Lab 10 §1.2)::

    J(x) = (Σ xᵢ)² / (n · Σ xᵢ²)            1/n ≤ J ≤ 1, = 1 iff all equal

  ``jain([5, 3, 1]) = 81 / (3·35) = 0.7714`` (Lab 10's worked example). With k of n flows
  getting an equal share and the others nothing, J = k/n. For two flows with ratio r,
  J = (1+r)² / (2(1+r²)). With the population coefficient of variation c (below),
  J = 1 / (1 + c²).

Throughput ratios::

    max_min_ratio(x)  = max x / min x       ≥ 1 (inf when a flow got nothing)
    min_max_ratio(x)  = min x / max x       in [0, 1]
    flow_ratio(x,i,j) = xᵢ / xⱼ

Link utilization (x in bit/s, capacity C in bit/s)::

    U = Σ xᵢ / C

Max–min fairness on one bottleneck (Bertsekas & Gallager, *Data Networks*, §6.5.2): the
max–min fair allocation is the water-filling of C over the flows' demands dᵢ (∞ for bulk
transfers such as iperf3): every flow gets min(dᵢ, s) where the fair share s solves
Σ min(dᵢ, s) = C. ``is_max_min_fair`` checks that every |xᵢ − aᵢ| ≤ rel_tol · C.

Proportional-fairness utility (Kelly 1997)::

    U_PF(x) = Σ ln xᵢ                       −inf when a flow got nothing

  (natural log; depends on the unit: scaling x by c adds n·ln c, so compare allocations
  of the same number of flows in the same unit only.)

Coefficient of variation (population standard deviation, ddof = 0)::

    c(x) = σ(x) / μ(x)

Per-interval JFI: ``jain_series(M)`` applies J to each row of a (time × flow) matrix;
NaN entries mean "flow not active in that interval" and are left out of that row.

Repeats: ``repeat_stats(v)`` gives the mean, the sample standard deviation (ddof = 1) and
the two-sided Student-t confidence interval  mean ± t(1−α/2, n−1) · s/√n. The t quantile
is computed here (scipy is not a dependency): the t CDF for integer degrees of freedom
has a closed form (Abramowitz & Stegun 26.7.3–26.7.4) that is inverted by bisection to
1e-12.

Edge cases (defined once, here)
===============================

* one flow: J = 1, ratios = 1, c = 0;
* all throughputs zero: J, ratios, c are NaN (0/0: nothing was delivered, so fairness is
  undefined — Lab 10 calls the origin "fair but undesirable"; we refuse to score a dead
  run as fair); utilization 0; U_PF = −inf;
* a zero among non-zeros: J is defined (e.g. [1, 0] → 0.5), min/max = 0, max/min = inf,
  U_PF = −inf;
* NaN, ±inf, negative values, an empty or non-1-D array: ``ValueError``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "jain",
    "jain_series",
    "min_max_ratio",
    "max_min_ratio",
    "flow_ratio",
    "utilization",
    "max_min_fair_share",
    "is_max_min_fair",
    "proportional_fairness_utility",
    "cov",
    "RepeatStats",
    "repeat_stats",
    "t_quantile",
    "t_cdf",
]


def _arr(x: ArrayLike, what: str = "throughputs") -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numbers, got {x!r}") from None
    if a.ndim != 1:
        raise ValueError(f"{what} must be a 1-D sequence (one value per flow), got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{what}: no flows (empty sequence)")
    if np.isnan(a).any():
        i = int(np.flatnonzero(np.isnan(a))[0])
        raise ValueError(f"{what} must be non-negative numbers; value {i} is NaN")
    if np.isinf(a).any():
        i = int(np.flatnonzero(np.isinf(a))[0])
        raise ValueError(f"{what} must be finite; value {i} is {a[i]}")
    if (a < 0).any():
        i = int(np.flatnonzero(a < 0)[0])
        raise ValueError(f"{what} must be non-negative; value {i} is {a[i]:g}")
    return a


def jain(x: ArrayLike) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²); NaN when every flow got zero."""
    a = _arr(x)
    s2 = float((a * a).sum())
    if s2 == 0:
        return float("nan")
    return float(min(1.0, a.sum() ** 2 / (a.size * s2)))


def jain_series(matrix: ArrayLike) -> np.ndarray:
    """JFI of each row of a (time × flow) matrix; NaN entries (inactive flows) are left out.

    A row with no active flow, or whose active flows all have zero, gives NaN.
    """
    a = np.asarray(matrix, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"jain_series needs a 2-D (time × flow) matrix, got shape {a.shape}")
    if np.isinf(a).any() or (a < 0).any():
        raise ValueError("per-interval throughputs must be finite and non-negative")
    present = ~np.isnan(a)
    z = np.where(present, a, 0.0)
    n = present.sum(axis=1)
    s = z.sum(axis=1)
    s2 = (z * z).sum(axis=1)
    out = np.full(a.shape[0], np.nan)
    ok = (n > 0) & (s2 > 0)
    out[ok] = np.minimum(1.0, s[ok] ** 2 / (n[ok] * s2[ok]))
    return out


def min_max_ratio(x: ArrayLike) -> float:
    """min x / max x in [0, 1]; NaN when every flow got zero."""
    a = _arr(x)
    mx = float(a.max())
    return float(a.min() / mx) if mx > 0 else float("nan")


def max_min_ratio(x: ArrayLike) -> float:
    """max x / min x ≥ 1; inf when some (not all) flows got zero, NaN when all did."""
    a = _arr(x)
    mx, mn = float(a.max()), float(a.min())
    if mx == 0:
        return float("nan")
    return mx / mn if mn > 0 else float("inf")


def flow_ratio(x: ArrayLike, i: int, j: int) -> float:
    """xᵢ / xⱼ (0-based indices); inf when only xⱼ is zero, NaN when both are."""
    a = _arr(x)
    for k in (i, j):
        if not -a.size <= k < a.size:
            raise ValueError(f"flow index {k} out of range for {a.size} flows (0…{a.size - 1})")
    xi, xj = float(a[i]), float(a[j])
    if xj == 0:
        return float("nan") if xi == 0 else float("inf")
    return xi / xj


def utilization(x: ArrayLike, capacity_bps: float) -> float:
    """Σx / capacity (x and capacity in the same unit, normally bit/s)."""
    a = _arr(x)
    if not (
        isinstance(capacity_bps, (int, float)) and math.isfinite(capacity_bps) and capacity_bps > 0
    ):
        raise ValueError(f"capacity must be a positive finite rate, got {capacity_bps!r}")
    return float(a.sum() / capacity_bps)


def max_min_fair_share(capacity: float, demands: ArrayLike) -> np.ndarray:
    """The max–min fair allocation of one link of ``capacity`` (water-filling).

    ``demands`` may contain ``inf`` (a greedy flow). Flows are served in increasing order of
    demand: each gets min(demand, equal share of what is left).
    """
    d = np.asarray(demands, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise ValueError("demands must be a non-empty 1-D sequence")
    if np.isnan(d).any() or (d < 0).any():
        raise ValueError("demands must be non-negative numbers (inf for a greedy flow)")
    if not (math.isfinite(capacity) and capacity > 0):
        raise ValueError(f"capacity must be a positive finite rate, got {capacity!r}")
    alloc = np.zeros_like(d)
    left = float(capacity)
    order = np.argsort(d, kind="stable")
    for rank, idx in enumerate(order):
        share = left / (d.size - rank)
        alloc[idx] = min(d[idx], share)
        left -= alloc[idx]
    return alloc


def is_max_min_fair(
    x: ArrayLike, capacity: float, demands: ArrayLike | None = None, rel_tol: float = 0.05
) -> bool:
    """True when every |xᵢ − aᵢ| ≤ rel_tol·capacity, a = ``max_min_fair_share``.

    Without ``demands`` every flow is greedy, so the fair allocation is capacity/n each.
    """
    a = _arr(x)
    d = np.full(a.size, np.inf) if demands is None else np.asarray(demands, dtype=float)
    if d.shape != a.shape:
        raise ValueError(f"{d.size} demands for {a.size} flows")
    if not 0 <= rel_tol < 1:
        raise ValueError(f"rel_tol must be in [0, 1), got {rel_tol}")
    fair = max_min_fair_share(capacity, d)
    return bool(np.all(np.abs(a - fair) <= rel_tol * capacity))


def proportional_fairness_utility(x: ArrayLike) -> float:
    """Σ ln xᵢ (Kelly's proportional fairness); −inf when a flow got zero."""
    a = _arr(x)
    if (a == 0).any():
        return float("-inf")
    return float(np.log(a).sum())


def cov(x: ArrayLike) -> float:
    """Coefficient of variation σ/μ (population σ); NaN when every flow got zero."""
    a = _arr(x)
    mu = float(a.mean())
    return float(a.std() / mu) if mu > 0 else float("nan")


# ---------------------------------------------------------------------------- repeats
def t_cdf(t: float, df: int) -> float:
    """CDF of Student's t with integer ``df`` ≥ 1 (Abramowitz & Stegun 26.7.3/26.7.4)."""
    if isinstance(df, bool) or int(df) != df or df < 1:
        raise ValueError(f"degrees of freedom must be a positive integer, got {df!r}")
    df = int(df)
    if t == 0:
        return 0.5
    theta = math.atan(abs(t) / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    c2 = c * c
    if df % 2 == 1:
        # A(t|ν) = 2/π [θ + sinθ cosθ (1 + 2/3 cos²θ + … + (2·4…(ν−3))/(1·3…(ν−2)) cos^(ν−3)θ)]
        total, term = 0.0, 1.0
        if df > 1:
            total = 1.0
            for k in range(1, (df - 3) // 2 + 1):
                term *= (2 * k) / (2 * k + 1) * c2
                total += term
        a = 2 / math.pi * (theta + s * c * total) if df > 1 else 2 / math.pi * theta
    else:
        # A(t|ν) = sinθ [1 + 1/2 cos²θ + (1·3)/(2·4) cos⁴θ + … + (1·3…(ν−3))/(2·4…(ν−2)) cos^(ν−2)θ]
        total, term = 1.0, 1.0
        for k in range(1, (df - 2) // 2 + 1):
            term *= (2 * k - 1) / (2 * k) * c2
            total += term
        a = s * total
    a = min(1.0, max(0.0, a))  # P(|T| ≤ |t|)
    return 0.5 + a / 2 if t > 0 else 0.5 - a / 2


@functools.lru_cache(maxsize=256)  # a sweep's aggregate asks for the same few, thousands of times
def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with integer ``df`` (bisection on ``t_cdf``, |err| < 1e-12)."""
    if not 0 < p < 1:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2
        if hi > 1e12:
            return float("inf")
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@dataclass(frozen=True)
class RepeatStats:
    """Summary of one metric over n repeated runs."""

    n: int
    mean: float
    std: float  #: sample standard deviation (ddof = 1); NaN for n = 1
    ci_low: float
    ci_high: float
    half_width: float  #: t(1−α/2, n−1)·s/√n; NaN for n = 1
    confidence: float


def repeat_stats(values: ArrayLike, confidence: float = 0.95) -> RepeatStats:
    """Mean, sample standard deviation and Student-t confidence interval over repeats.

    Values may be negative (e.g. differences) but must be finite; n = 1 gives NaN spread.
    """
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"repeat values must be numbers, got {values!r}") from None
    if v.ndim != 1 or v.size == 0:
        raise ValueError("repeat values must be a non-empty 1-D sequence")
    if not np.isfinite(v).all():
        i = int(np.flatnonzero(~np.isfinite(v))[0])
        raise ValueError(f"repeat value {i} is {v[i]}; drop failed runs before aggregating")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n = int(v.size)
    mean = float(v.mean())
    if n == 1:
        nan = float("nan")
        return RepeatStats(1, mean, nan, nan, nan, nan, confidence)
    std = float(v.std(ddof=1))
    half = t_quantile(1 - (1 - confidence) / 2, n - 1) * std / math.sqrt(n)
    return RepeatStats(n, mean, std, mean - half, mean + half, half, confidence)
