"""Fairness and performance metrics: pure functions on arrays.

(Placeholder signatures; the foundation work documents, hardens and tests them.)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def _arr(x: ArrayLike) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 1:
        raise ValueError("expected a 1-D array of throughputs")
    if np.isnan(a).any() or (a < 0).any():
        raise ValueError("throughputs must be non-negative numbers (got NaN or a negative value)")
    return a


def jain(x: ArrayLike) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²)."""
    a = _arr(x)
    s2 = float((a * a).sum())
    if s2 == 0:
        return float("nan")
    return float(a.sum() ** 2 / (len(a) * s2))


def jain_series(matrix: ArrayLike) -> np.ndarray:
    """JFI of each row of a (time × flow) matrix."""
    a = np.asarray(matrix, dtype=float)
    s2 = (a * a).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return a.sum(axis=1) ** 2 / (a.shape[1] * s2)


def min_max_ratio(x: ArrayLike) -> float:
    a = _arr(x)
    mx = a.max()
    return float(a.min() / mx) if mx > 0 else float("nan")


def cov(x: ArrayLike) -> float:
    a = _arr(x)
    mu = a.mean()
    return float(a.std() / mu) if mu > 0 else float("nan")


def utilization(x: ArrayLike, capacity_bps: float) -> float:
    return float(_arr(x).sum() / capacity_bps)
