"""Short flows' results (issue 10 §3): the per-flow table and its FCT metrics.

The table (``RunResult.short_flows``, ``short_flows.parquet``) has one row per short flow
of the run, in entry and arrival order: ``flow`` (row number), ``group`` (the
``[[flows]]`` entry), ``label``, ``cca``, ``start_s`` (its SYN left the sender),
``size_bytes``, ``rtt_s`` (its base RTT), ``fct_s`` (flow completion time, NaN when it had
not completed by the end of the run), ``completed``, ``bytes`` (delivered in order),
``retransmits``, ``timeouts`` (RTOs that fired), ``ideal_s`` and ``slowdown``.

- FCT: from the SYN leaving the sender to the receiver having the last byte in order.
- Ideal FCT at the link rate: ``ideal_s = 1.5 · rtt + size · 8 / rate`` — the handshake
  (one base RTT), the data's one-way trip (half an RTT) and the payload serialized at the
  bottleneck rate, with no queueing, no slow start and no header bytes: a lower bound of
  any FCT on that path, so ``slowdown = fct_s / ideal_s ≥ 1``.
- Size buckets (decimal units, as sizes are written): ``0-10KB`` (< 10 KB),
  ``10KB-100KB``, ``100KB-1MB``, ``1MB+`` (≥ 1 MB); ``all`` covers every size.

``short_flow_metrics`` summarizes the flows that *started* inside the measurement window:
per bucket the number of flows, how many completed, and over the completed ones the FCT
mean, median and 99th percentile (numpy's linear interpolation) and the slowdown's. A
flow still running at the end counts in ``unfinished`` and in no FCT statistic (its FCT is
unknown, not zero). Short flows are never in the headline JFI, min/max or sum.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .columns import Columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SHORT_COLUMNS", "SIZE_BUCKETS", "STATS", "ideal_fct_s", "short_flow_metrics"]

SHORT_COLUMNS = [
    "flow",
    "group",
    "label",
    "cca",
    "start_s",
    "size_bytes",
    "rtt_s",
    "fct_s",
    "completed",
    "bytes",
    "retransmits",
    "timeouts",
    "ideal_s",
    "slowdown",
]

#: (name, lowest size, first size above) in bytes.
SIZE_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("0-10KB", 0, 10_000),
    ("10KB-100KB", 10_000, 100_000),
    ("100KB-1MB", 100_000, 1_000_000),
    ("1MB+", 1_000_000, math.inf),
)

#: Per-bucket statistics, as named in summary.json and in the sweep tidy table
#: (``<stat>:<bucket>``, docs/sweeps.md).
STATS = (
    "fct_mean_s",
    "fct_median_s",
    "fct_p99_s",
    "slowdown_mean",
    "slowdown_median",
    "slowdown_p99",
)


def empty_table() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({c: pd.Series(dtype=_DTYPES.get(c, float)) for c in SHORT_COLUMNS})


_DTYPES = {"flow": "int64", "group": "int64", "label": object, "cca": object, "completed": bool}


def ideal_fct_s(
    size_bytes: np.ndarray, rtt_s: np.ndarray, rate_bps: float | np.ndarray
) -> np.ndarray:
    """The ideal FCT at the link rate (module docstring)."""
    return 1.5 * rtt_s + size_bytes * 8.0 / rate_bps


def table(
    raw: dict[str, Any], labels: list[str], ccas: list[str], rates_bps: list[float]
) -> Columns | None:
    """The short-flows table from the simulator's columns (``raw``); ``labels``, ``ccas``
    and ``rates_bps`` (the rate of the bottleneck its data crosses: the reverse one for a
    reverse entry) per ``[[flows]]`` entry. None when the run had no short flows."""
    group = np.asarray(raw["group"], dtype=np.int64)
    if not len(group):
        return None
    fct_ns = np.asarray(raw["fct_ns"], dtype=np.int64)
    size = np.asarray(raw["size_bytes"], dtype=np.int64)
    rtt_s = np.asarray(raw["rtt_ns"], dtype=np.float64) / 1e9
    fct_s = np.where(fct_ns >= 0, fct_ns / 1e9, np.nan)
    rate = np.asarray(rates_bps, dtype=np.float64)[group]
    ideal = ideal_fct_s(size.astype(np.float64), rtt_s, rate)
    return Columns(
        {
            "flow": np.arange(len(group), dtype=np.int64),
            "group": group,
            "label": np.array([labels[g] for g in group], dtype=object),
            "cca": np.array([ccas[g] for g in group], dtype=object),
            "start_s": np.asarray(raw["start_ns"], dtype=np.float64) / 1e9,
            "size_bytes": size,
            "rtt_s": rtt_s,
            "fct_s": fct_s,
            "completed": fct_ns >= 0,
            "bytes": np.asarray(raw["bytes_delivered"], dtype=np.int64),
            "retransmits": np.asarray(raw["retransmits"], dtype=np.int64),
            "timeouts": np.asarray(raw["timeouts"], dtype=np.int64),
            "ideal_s": ideal,
            "slowdown": fct_s / ideal,
        }
    )


_REDUCERS = (
    ("mean", np.mean),
    ("median", np.median),
    ("p99", lambda x: np.percentile(x, 99)),
)


def _stats(cols: Mapping[str, np.ndarray], sel: np.ndarray) -> dict[str, Any]:
    done = sel & cols["completed"]
    out: dict[str, Any] = {
        "flows": int(sel.sum()),
        "completed": int(done.sum()),
        "unfinished": int(sel.sum() - done.sum()),
    }
    for col, prefix, unit in (("fct_s", "fct", "_s"), ("slowdown", "slowdown", "")):
        x = cols[col][done]
        for stat, f in _REDUCERS:
            out[f"{prefix}_{stat}{unit}"] = float(f(x)) if len(x) else math.nan
    return out


def short_flow_metrics(df: Any, window: tuple[float, float]) -> dict[str, Any]:
    """``{"window", "all": {...}, "buckets": {name: {...}}}`` over the short flows that
    started in ``window`` [from, to): each ``{...}`` has flows, completed, unfinished and
    STATS (NaN where no flow completed). With short flows under more than one label (e.g.
    one entry per direction, whose FCTs have nothing in common), also ``"labels": {label:
    {...}}``, each label's flows apart. ``df``: the table (a DataFrame or ``Columns``)."""
    lo, hi = window
    cols = {
        "completed": np.asarray(df["completed"], dtype=bool),
        "fct_s": np.asarray(df["fct_s"], dtype=float),
        "slowdown": np.asarray(df["slowdown"], dtype=float),
    }
    start = np.asarray(df["start_s"], dtype=float)
    part = (start >= lo) & (start < hi)
    size = np.asarray(df["size_bytes"], dtype=float)
    buckets = {name: _stats(cols, part & (size >= a) & (size < b)) for name, a, b in SIZE_BUCKETS}
    out: dict[str, Any] = {"window": [lo, hi], "all": _stats(cols, part), "buckets": buckets}
    label = np.asarray(df["label"], dtype=object)
    labels = list(dict.fromkeys(label))
    if len(labels) > 1:
        out["labels"] = {lab: _stats(cols, part & (label == lab)) for lab in labels}
    return out
