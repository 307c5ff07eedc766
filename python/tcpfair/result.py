"""``RunResult``: the one result type every backend and importer produces.

Tables (pandas DataFrames, column names carry their unit):

- ``flows``: one row per TCP connection — ``flow`` (id), ``group`` (index of the
  ``[[flows]]`` entry or input file), ``label``, ``cca``, ``rtt_s`` (configured base RTT;
  NaN when unknown), ``start_s``, ``bytes`` (delivered over the whole run),
  ``retransmits``, ``mean_rtt_s`` (measured mean, NaN when unknown); simulator runs add
  ``size_bytes`` (the connection's transfer size, drawn when the scenario gives a list or
  a distribution; NaN for bulk), and runs with a reverse bottleneck ``direction``
  (``forward`` or ``reverse``).
- ``samples``: long form, one row per (flow, interval) — ``flow``, ``t_s`` (end of the
  interval, seconds since the run started), ``dt_s`` (interval length), ``bytes``
  (delivered in the interval), ``throughput_bps``, ``cwnd_bytes``, ``srtt_s``,
  ``retransmits`` (NaN where the source does not know a value).
- ``link``: bottleneck samples — ``t_s``, ``queue_bytes``, ``queue_pkts``, ``drops``
  (in the interval), ``tx_bytes`` (in the interval). Empty when unknown. With a reverse
  bottleneck it is the forward one's, with ``ack_drops`` (the reverse connections' ACKs
  lost on it in the interval, included in ``drops``).
- ``reverse_link``: the reverse bottleneck's samples (same columns; its ``ack_drops`` are
  the forward connections' ACKs), or None when the run has none.
- ``meta``: backend, versions, scenario hash, seed, wall time, ``capacity_bps`` (the
  bottleneck rate, for utilization), ``window`` (default steady-state window), ``valid``
  and ``checks``.
- ``scenario``: the resolved scenario (``Scenario.resolved()``), or None for imports.
- ``short_flows``: one row per short flow (entries with ``arrivals``; shortflows.py):
  start, size, RTT, FCT, retransmissions, timeouts, slowdown. Empty without short flows.
  Short flows have no rows in ``flows`` or ``samples``; their bytes are in ``link``.

The tables may be held as numpy columns (``tcpfair.columns.Columns``) until a caller
reads one: ``tcpfair run`` computes its metrics, prints its table and saves its run
directory without importing pandas (issue 14, start-up), with the same numbers and files.

A run directory holds ``summary.json`` (meta, scenario, metrics, flows) and Parquet files
for the three tables (four with a reverse bottleneck: ``reverse_link.parquet``; and
``short_flows.parquet`` when the run had short flows);
``RunResult.load(dir)`` gives back an equal object.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import metrics as m
from .columns import Columns, group_codes, group_sums, write_parquet
from .outputs import publish_run, run_target, stage_beside
from .shortflows import empty_table, short_flow_metrics

if TYPE_CHECKING:
    import pandas as pd

#: A result table: a pandas DataFrame, or the same columns as numpy arrays (``Columns``,
#: what the simulator builds; turned into a DataFrame when a caller asks for one).
Table = Union["pd.DataFrame", Columns]

FORMAT_VERSION = 1

FLOW_COLUMNS = [
    "flow",
    "group",
    "label",
    "cca",
    "rtt_s",
    "start_s",
    "bytes",
    "retransmits",
    "mean_rtt_s",
]
SAMPLE_COLUMNS = [
    "flow",
    "t_s",
    "dt_s",
    "bytes",
    "throughput_bps",
    "cwnd_bytes",
    "srtt_s",
    "retransmits",
]
LINK_COLUMNS = ["t_s", "queue_bytes", "queue_pkts", "drops", "tx_bytes"]


class WindowError(ValueError):
    """A measurement window that does not lie within the data; the message gives both."""


class _Resolved(tuple[float, float]):
    """A window already resolved (and checked when it was given): not checked again."""


def _table_property(name: str, default: Callable[[], Any] | None = None) -> Any:
    """A table attribute: a DataFrame when read (built from its columns on first read);
    set to a DataFrame or ``Columns``."""

    def get(self: RunResult) -> Any:
        t = self._tables[name]
        if t is None and default is not None:
            t = self._tables[name] = default()
        if isinstance(t, Columns):
            t = self._tables[name] = t.to_frame()
        return t

    def put(self: RunResult, value: Any) -> None:
        self._tables[name] = value

    return property(get, put)


def _empty_link() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(columns=LINK_COLUMNS)


class RunResult:
    flows: pd.DataFrame = _table_property("flows")
    samples: pd.DataFrame = _table_property("samples")
    link: pd.DataFrame = _table_property("link", _empty_link)
    reverse_link: pd.DataFrame | None = _table_property("reverse_link")
    short_flows: pd.DataFrame = _table_property("short_flows", empty_table)

    def __init__(
        self,
        flows: Table,
        samples: Table,
        link: Table | None = None,
        meta: dict[str, Any] | None = None,
        scenario: dict[str, Any] | None = None,
        reverse_link: Table | None = None,
        short_flows: Table | None = None,
        attachments: dict[str, str] | None = None,
    ) -> None:
        self._tables: dict[str, Table | None] = {
            "flows": flows,
            "samples": samples,
            "link": link,
            "reverse_link": reverse_link,
            "short_flows": short_flows,
        }
        self.meta: dict[str, Any] = {} if meta is None else meta
        self.scenario = scenario
        #: files that go into the run directory with the tables: name → where it is now
        #: (the kernel backend's ``capture.pcap``); ``save`` moves them in
        self.attachments: dict[str, str] = {} if attachments is None else attachments

    # ------------------------------------------------------------------ columns
    def column(self, table: str, name: str) -> np.ndarray:
        """One column of a table as a numpy array, without building a DataFrame."""
        t = self._tables[table]
        if t is None:
            t = getattr(self, table)
        return t[name] if isinstance(t, Columns) else t[name].to_numpy()

    def has_column(self, table: str, name: str) -> bool:
        t = self._tables[table]
        return t is not None and name in t

    def rows(self, table: str) -> int:
        """The number of rows of a table (0 for a table the result does not have)."""
        t = self._tables[table]
        return 0 if t is None else len(t)

    def _floats(self, table: str, name: str) -> np.ndarray:
        return self.column(table, name).astype(np.float64, copy=False)

    # ------------------------------------------------------------------ windows
    def default_window(self) -> tuple[float, float]:
        w = self.meta.get("window")
        if w:
            return float(w[0]), float(w[1])
        if self.rows("samples"):
            return 0.0, float(np.nanmax(self.column("samples", "t_s")))
        return 0.0, 0.0

    def window_mask(self, window: tuple[float | None, float | None] | None = None) -> np.ndarray:
        """Which samples ``window_samples`` keeps (a boolean array over ``samples``)."""
        lo, hi = self.resolve_window(window)
        mid = self.column("samples", "t_s") - self.column("samples", "dt_s") / 2
        return np.asarray((mid >= lo) & (mid <= hi), dtype=bool)

    def window_samples(
        self, window: tuple[float | None, float | None] | None = None
    ) -> pd.DataFrame:
        """Samples whose interval midpoint lies in [from, to].

        On an exact grid this is "interval inside the window": with 1 s samples the window
        120–300 s keeps the 180 intervals (120, 121] … (299, 300], as in the ns-2/testbed
        study. The midpoint rule also keeps them when a real tool's interval ends jitter by
        a few milliseconds (iperf3 reports 300.000136).
        """
        return self.samples[self.window_mask(window)]

    def interval_throughputs(
        self, window: tuple[float | None, float | None] | None = None
    ) -> pd.DataFrame:
        """Per-interval throughput (bit/s) as a (time × flow) table over the window.

        Samples are put on a common grid of the nominal interval Δ (``meta["interval_s"]``
        when the source states it, else the median ``dt_s`` to 3 significant digits): a
        sample ending at t goes to the row Δ·round(t/Δ), so flows whose reports end a few
        ms apart (parallel iperf3 streams) share a row. Several samples of one flow in a row
        are combined as Σ bytes·8 / Σ dt. NaN where a flow has no sample in that interval.
        """
        import pandas as pd

        cols = self.column("flows", "flow")
        grid = self.interval_matrix(window)
        if grid is None:
            return pd.DataFrame(columns=cols, dtype=float)
        times, mat = grid
        out = pd.DataFrame(mat, index=pd.Index(times, name="t_s"), columns=cols)
        out.columns.name = "flow"
        return out

    def interval_matrix(
        self, window: tuple[float | None, float | None] | None = None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``interval_throughputs`` as numpy: (row times, a rows × flows matrix in the order
        of ``flows``), or None when the window holds no sample or no interval length."""
        mask = self.window_mask(window)
        if not mask.any():
            return None
        dt = self._floats("samples", "dt_s")[mask]
        # nominal interval: the source's own (meta["interval_s"]: captures, whose first and
        # last intervals are cut to a flow's life), else the median sample length to 3
        # significant digits (1.000012 → 1)
        nominal = self.meta.get("interval_s")
        delta = float(nominal) if nominal else float(f"{float(np.median(dt)):.3g}")
        if not delta > 0:
            return None
        row = np.round(self._floats("samples", "t_s")[mask] / delta).astype(np.int64)
        rows, row_code = group_codes(row)
        flows, flow_code = group_codes(self.column("samples", "flow")[mask])
        cells, cell = group_codes(row_code * len(flows) + flow_code)
        bits, _ = group_sums(self._floats("samples", "bytes")[mask] * 8, cell, len(cells))
        secs, _ = group_sums(dt, cell, len(cells))
        grid = np.full((len(rows), len(flows)), np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            grid[cells // len(flows), cells % len(flows)] = bits / secs
        ids = self.column("flows", "flow")
        pos, found = _positions(flows, ids)
        mat = np.full((len(rows), len(ids)), np.nan)
        mat[:, found] = grid[:, pos[found]]
        return rows.astype(np.float64) * delta, mat

    def resolve_window(
        self, window: tuple[float | None, float | None] | None
    ) -> tuple[float, float]:
        """The window (from, to) in seconds: the default one, or ``window`` with its None
        ends taken from the default. An explicit window is checked (``check_window``:
        ``WindowError`` when it does not lie within the data)."""
        if isinstance(window, _Resolved):
            return window
        d_lo, d_hi = self.default_window()
        if window is None:
            return _Resolved((d_lo, d_hi))
        lo, hi = window
        out = (d_lo if lo is None else float(lo)), (d_hi if hi is None else float(hi))
        self.check_window(out)
        return _Resolved(out)

    _window = resolve_window  # the old private name, for callers not yet moved

    def data_span(self) -> tuple[float, float] | None:
        """(start of the first sampling interval, end of the last), s; None if no samples."""
        if not self.rows("samples"):
            return None
        t, dt = self.column("samples", "t_s"), self.column("samples", "dt_s")
        # to the microsecond: iperf3's "seconds" can exceed its "end" by float noise (-2e-8)
        first = round(float(np.nanmin(t - dt)), 6) + 0.0
        return first, round(float(np.nanmax(t)), 6)

    def check_window(self, window: tuple[float, float]) -> None:
        """Raise ``WindowError`` unless ``window`` lies within the data and holds a sample.

        The rule for every caller (``metrics``, ``flow_throughputs``, ``tcpfair fairness``):
        a window is never silently emptied or padded. Its ends may pass the data's ends by
        half a sampling interval at most (real tools' intervals end a few ms late; a sample
        counts when its midpoint is in the window, so such a window keeps the same samples).
        """
        lo, hi = window
        if not (math.isfinite(lo) and math.isfinite(hi) and lo >= 0 and hi >= 0):
            raise WindowError(f"window {lo:g}–{hi:g} s: the ends are finite seconds >= 0")
        span = self.data_span()
        if span is None:
            raise WindowError(f"window {lo:g}–{hi:g} s: the result has no samples")
        first, last = span
        dt = self._floats("samples", "dt_s")
        slack = 0.5 * float(np.median(dt))
        where = f"the samples cover {first:g}–{last:g} s"
        if lo >= last:
            raise WindowError(f"window {lo:g}–{hi:g} s starts after the data ends ({where})")
        if hi > last + slack:
            raise WindowError(f"window {lo:g}–{hi:g} s ends after the data ({where})")
        if lo >= hi:
            raise WindowError(f"window {lo:g}–{hi:g} s: its start must be before its end")
        if lo < first - slack:
            raise WindowError(f"window {lo:g}–{hi:g} s starts before the data ({where})")
        mid = self.column("samples", "t_s") - self.column("samples", "dt_s") / 2
        if not ((mid >= lo) & (mid <= hi)).any():
            raise WindowError(
                f"window {lo:g}–{hi:g} s holds no sampling interval (a sample counts when its "
                f"interval's midpoint is in the window; intervals are {2 * slack:g} s long)"
            )

    # ------------------------------------------------------------------ metrics
    def flow_throughputs(
        self, window: tuple[float | None, float | None] | None = None
    ) -> pd.Series:
        """Mean throughput (bit/s) of each flow over the window: Σ bytes·8 / Σ interval lengths."""
        import pandas as pd

        ids = self.column("flows", "flow")
        return pd.Series(self.flow_throughput_values(window), index=pd.Index(ids, name="flow"))

    def flow_throughput_values(
        self, window: tuple[float | None, float | None] | None = None
    ) -> np.ndarray:
        """``flow_throughputs`` as a numpy array in the order of ``flows`` (0 for a flow
        without samples in the window)."""
        mask = self.window_mask(window)
        flows, code = group_codes(self.column("samples", "flow")[mask])
        nbytes, _ = group_sums(self.column("samples", "bytes")[mask], code, len(flows))
        secs, _ = group_sums(self.column("samples", "dt_s")[mask], code, len(flows))
        with np.errstate(divide="ignore", invalid="ignore"):
            thr = nbytes * 8 / secs
        return _align(flows, thr.astype(np.float64), self.column("flows", "flow"), 0.0)

    def directions(self) -> pd.Series:
        """Each connection's direction (``forward``/``reverse``), indexed by flow id; every
        connection is forward in a result without a ``direction`` column."""
        import pandas as pd

        return pd.Series(self.direction_values(), index=self.column("flows", "flow"))

    def direction_values(self) -> np.ndarray:
        """``directions`` as a numpy array in the order of ``flows``."""
        if not self.has_column("flows", "direction"):
            return np.full(self.rows("flows"), "forward", dtype=object)
        return self.column("flows", "direction")

    def _capacity(self, direction: str) -> float | None:
        key = "reverse_capacity_bps" if direction == "reverse" else "capacity_bps"
        cap = self.meta.get(key)
        return float(cap) if cap else None

    def measured_labels(self) -> list[str] | None:
        """The labels ``[measure] flows`` names (the headline metrics' connections), or
        None: every connection."""
        sc = self.scenario or {}
        labels = sc.get("measure", {}).get("flows")
        return list(labels) if labels is not None else None

    def groups(self, window: tuple[float | None, float | None] | None = None) -> dict[str, Any]:
        """Per-group results over the window; a group is the connections sharing a label.

        ``{"groups": {label: {connections, sum_bps, mean_bps, share, jfi}}, "ratios":
        {"A/B": mean_bps of A / mean_bps of B}}``: ``mean_bps`` is per connection, ``share``
        the group's sum over the link capacity (NaN when unknown), ``jfi`` Jain's index
        within the group; ratios for every pair of groups in order of first appearance
        (seed 003's Table 6: mean goodput per Vegas connection over per Reno connection).
        """
        return self._groups(self.flow_throughput_values(window))

    def _groups(self, thr: np.ndarray) -> dict[str, Any]:
        labels = self.column("flows", "label")
        dirs = self.direction_values()
        out: dict[str, dict[str, Any]] = {}
        for label in dict.fromkeys(labels):
            sel = labels == label
            x = thr[sel]
            # a group's share is of its own direction's link (labels never span directions)
            cap = self._capacity(str(dirs[sel][0]))
            out[str(label)] = {
                "connections": int(len(x)),
                "sum_bps": float(x.sum()),
                "mean_bps": float(x.mean()),
                "share": float(x.sum() / cap) if cap else float("nan"),
                "jfi": m.jain(x),
            }
        names = list(out)
        ratios = {
            f"{a}/{b}": _ratio(out[a]["mean_bps"], out[b]["mean_bps"])
            for i, a in enumerate(names)
            for b in names[i + 1 :]
        }
        return {"groups": out, "ratios": ratios}

    def metrics(self, window: tuple[float | None, float | None] | None = None) -> dict[str, Any]:
        """Summary metrics over the window (default: the scenario's measurement window).

        With ``[measure] flows`` the headline metrics (``jfi``, ``min_max_ratio``,
        ``sum_bps``, ``cov``, ``jfi_per_interval_mean``, ``n_flows``) cover the connections
        of those labels only; ``utilization`` is always the whole link's and
        ``utilization_measured`` the measured connections' part of it. Per-group results
        are under ``groups`` and ``group_ratios`` (``groups()``).

        With reverse connections the default measured set is the forward ones,
        ``utilization`` is the forward link's (forward connections over its rate), and the
        reverse direction is reported apart under ``reverse`` (``reverse_metrics()``)."""
        span = self.resolve_window(window)
        lo, hi = span
        all_thr = self.flow_throughput_values(span)
        ids = self.column("flows", "flow")
        measured = self.measured_labels()
        forward = self.direction_values() == "forward"
        chosen = np.ones(len(ids), dtype=bool) if forward.all() else forward
        if measured is not None:
            wanted = set(measured)
            labels = self.column("flows", "label")
            chosen = np.array([label in wanted for label in labels], dtype=bool)
        x = all_thr[chosen]
        out: dict[str, Any] = {
            "window": [lo, hi],
            "n_flows": int(len(x)),
            "jfi": m.jain(x) if len(x) else float("nan"),
            "min_max_ratio": m.min_max_ratio(x) if len(x) else float("nan"),
            "sum_bps": float(x.sum()),
            "cov": m.cov(x) if len(x) else float("nan"),
            "throughput_bps": {str(k): float(v) for k, v in zip(ids, all_thr, strict=True)},
        }
        cap = self.meta.get("capacity_bps")
        fwd_thr = all_thr[forward]
        # only reverse connections: the forward link carries no data
        out["utilization"] = (
            (
                m.utilization(fwd_thr, cap)
                if len(fwd_thr)
                # no long-lived forward connection: the link carries no data (0), or only
                # short flows, which are not in this figure (NaN)
                else (float("nan") if self.rows("short_flows") else 0.0)
            )
            if cap
            else float("nan")
        )
        if measured is not None:
            out["measured_flows"] = measured
            out["utilization_measured"] = float(x.sum() / cap) if cap else float("nan")
        grouped = self._groups(all_thr)
        out["groups"] = grouped["groups"]
        out["group_ratios"] = grouped["ratios"]
        # per-interval JFI over the intervals in which every (measured) flow has a sample
        grid = self.interval_matrix(span)
        mat = grid[1][:, chosen] if grid is not None else np.zeros((0, int(chosen.sum())))
        out["jfi_per_interval_mean"] = _finite_mean(_complete_rows_jfi(mat)[1])
        # retransmissions of the same connections (reverse ones: "reverse")
        retr, whole_run = self.flow_retransmit_values(span)
        out["retransmits"] = int(np.nansum(retr[chosen]))
        out["retransmits_whole_run_flows"] = [int(f) for f in ids[chosen & whole_run]]
        out["retransmits_run"] = int(np.nansum(self._floats("flows", "retransmits")[chosen]))
        rev = self._reverse_metrics(span, all_thr)
        if rev is not None:
            out["reverse"] = rev
        if self.rows("short_flows"):  # reported apart from the headline metrics (issue 10 §4)
            out["short_flows"] = short_flow_metrics(self._tables["short_flows"], span)
        return out

    def reverse_metrics(
        self,
        window: tuple[float | None, float | None] | None = None,
        thr: pd.Series | None = None,
    ) -> dict[str, Any] | None:
        """The reverse direction over the window, or None when the run has no reverse
        bottleneck: its connections (``connections``, ``sum_bps``, ``jfi``,
        ``utilization`` = their sum over the reverse rate, ``retransmits`` in the window),
        the reverse link's queue
        (``queue_mean_bytes``, ``queue_max_bytes``, sampled), ``drops`` and ``ack_drops``
        (the forward connections' ACKs it lost), and ``forward_ack_drops`` (the reverse
        connections' ACKs lost on the forward link)."""
        if self._tables["reverse_link"] is None:
            return None
        span = self.resolve_window(window)
        values = None if thr is None else thr.to_numpy(dtype=float)
        return self._reverse_metrics(span, values)

    def _reverse_metrics(
        self, span: tuple[float, float], thr: np.ndarray | None
    ) -> dict[str, Any] | None:
        if self._tables["reverse_link"] is None:
            return None
        if thr is None:
            thr = self.flow_throughput_values(span)
        back = self.direction_values() == "reverse"
        x = thr[back]
        cap = self._capacity("reverse")
        lo, hi = span
        rt = self._floats("reverse_link", "t_s")
        rw = (rt > lo) & (rt <= hi)
        ft = self._floats("link", "t_s")
        fw = (ft > lo) & (ft <= hi)
        queue = self.column("reverse_link", "queue_bytes")[rw]
        retr = self.flow_retransmit_values(span)[0][back]

        def total(table: str, name: str, keep: np.ndarray) -> int:
            return (
                int(_nansum(self.column(table, name)[keep])) if self.has_column(table, name) else 0
            )

        return {
            "connections": int(len(x)),
            "sum_bps": float(x.sum()),
            "jfi": m.jain(x) if len(x) else float("nan"),
            "utilization": float(x.sum() / cap) if cap else float("nan"),
            "retransmits": int(np.nansum(retr)),
            "queue_mean_bytes": _nanmean(queue) if len(queue) else float("nan"),
            "queue_max_bytes": float(np.nanmax(queue)) if len(queue) else float("nan"),
            "drops": int(_nansum(self.column("reverse_link", "drops")[rw])),
            "ack_drops": total("reverse_link", "ack_drops", rw),
            "forward_ack_drops": total("link", "ack_drops", fw),
        }

    def flow_retransmits(
        self, window: tuple[float | None, float | None] | None = None
    ) -> pd.DataFrame:
        """Retransmissions of each flow in the window, indexed by flow: ``retransmits`` (NaN
        when unknown) and ``whole_run`` (True where the samples carry no per-interval count,
        so the flow's whole-run total stands in: label such figures "(run)")."""
        import pandas as pd

        retr, whole_run = self.flow_retransmit_values(window)
        rows = list(zip(retr.tolist(), whole_run.tolist(), strict=True))
        return pd.DataFrame(
            rows, index=self.column("flows", "flow"), columns=["retransmits", "whole_run"]
        )

    def flow_retransmit_values(
        self, window: tuple[float | None, float | None] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``flow_retransmits`` as numpy arrays in the order of ``flows``: (retransmits,
        whole_run)."""
        mask = self.window_mask(window)
        flow, counts = self.column("samples", "flow"), self.column("samples", "retransmits")
        in_window, code = group_codes(flow[mask])
        windowed, _ = group_sums(counts[mask], code, len(in_window))
        # the source gives per-interval counts for a flow when any of its samples has one
        every, code = group_codes(flow)
        known = np.bincount(code[~_isnan(counts)], minlength=len(every))
        ids = self.column("flows", "flow")
        per_interval = _align(every, known, ids, 0) > 0
        run = self._floats("flows", "retransmits")
        retr = np.where(per_interval, _align(in_window, windowed.astype(float), ids, 0.0), run)
        return retr.astype(np.float64), ~per_interval & ~np.isnan(run)

    def interval_throughputs_by(
        self, window: tuple[float | None, float | None] | None = None, by: str = "flow"
    ) -> pd.DataFrame:
        """``interval_throughputs`` with one column per flow (``by="flow"``) or per flow
        group (``by="group"``: the group's flows summed; NaN where none has a sample)."""
        mat = self.interval_throughputs(window)
        if by == "group":
            groups = self.flows.set_index("flow")["group"]
            mat = mat.T.groupby(groups.reindex(mat.columns).to_numpy()).sum(min_count=1).T
        return mat

    def fairness_report(
        self,
        window: tuple[float | None, float | None] | None = None,
        by: str = "flow",
        per_interval: bool = False,
    ) -> dict[str, Any]:
        """Per-flow (or per-group) rows and the fairness of the window: what ``tcpfair
        fairness`` prints (docs/fairness.md). ``WindowError`` for a window outside the data.

        Rows: ``throughput_bps`` (Σ bytes·8 / Σ dt), ``share``, ``retransmits`` (in the
        window, or the run's total where the source has no per-interval count:
        ``retransmits_whole_run``), ``mean_rtt_s`` (mean of the window's samples, else the
        flow's), ``window_bytes``, ``bytes_run``; by group, sums (mean RTT: the mean) and
        ``streams``. Summary: ``jfi``, ratios, ``sum_bps``, ``cov``, ``utilization`` (with
        ``meta["capacity_bps"]``) and the per-interval JFI over the intervals in which
        every row has a sample (``per_interval``: each such interval)."""
        if by not in ("flow", "group"):
            raise ValueError(f"by={by!r}: expected 'flow' or 'group'")
        span = self.resolve_window(window)
        lo, hi = span
        table = self._fairness_rows(span)
        if by == "group":
            table = self._group_rows(table)
        x = table["throughput_bps"].to_numpy(dtype=float)
        total = float(x.sum())
        table["share"] = x / total if total > 0 else math.nan
        cap = self.meta.get("capacity_bps")
        retr = self.flow_retransmits(span)
        out: dict[str, Any] = {
            "window": [lo, hi],
            "by": by,
            "rows": table.to_dict(orient="records"),
            "n": int(len(x)),
            "jfi": m.jain(x),
            "min_max_ratio": m.min_max_ratio(x),
            "max_min_ratio": m.max_min_ratio(x),
            "sum_bps": total,
            "cov": m.cov(x),
            "utilization": m.utilization(x, cap) if cap else None,
            "capacity_bps": cap,
            "retransmits_whole_run": bool(retr["whole_run"].any()),
            "iperf3_versions": self.meta.get("versions", {}).get("iperf3"),
            "notes": list(self.meta.get("notes", [])),
        }
        if "small_connections" in self.meta:  # captures: the connections left out
            out["small_connections"] = list(self.meta["small_connections"])
        complete, series = complete_intervals_jfi(self.interval_throughputs_by(span, by))
        out["jfi_per_interval_mean"] = _finite_mean(series)
        out["intervals"] = int(len(complete))
        if per_interval:
            key = "flow" if by == "flow" else "group"
            labels_of = {int(r[key]): r["label"] for r in out["rows"]}
            out["per_interval"] = [
                {
                    "t_s": float(t),
                    "jfi": float(j),
                    "throughput_bps": {labels_of[int(c)]: float(v) for c, v in row.items()},
                }
                for (t, row), j in zip(complete.iterrows(), series, strict=True)
            ]
        return out

    def _fairness_rows(self, span: tuple[float, float]) -> pd.DataFrame:
        import pandas as pd

        ws = self.window_samples(span)
        thr = self.flow_throughputs(span)
        g = ws.groupby("flow")
        rtt_win = g["srtt_s"].mean()
        bytes_win = g["bytes"].sum()
        retr = self.flow_retransmits(span)
        rows: list[dict[str, Any]] = []
        for _, f in self.flows.iterrows():
            fid = f["flow"]
            rtt = float(rtt_win.get(fid, math.nan))
            if math.isnan(rtt):
                rtt = float(f["mean_rtt_s"])
            rows.append(
                {
                    "flow": int(fid),
                    "group": int(f["group"]),
                    "label": str(f["label"]),
                    "cca": str(f["cca"]),
                    "throughput_bps": float(thr.get(fid, 0.0)),
                    "retransmits": float(retr.at[fid, "retransmits"]),
                    "mean_rtt_s": rtt,
                    "window_bytes": int(bytes_win.get(fid, 0)),
                    "bytes_run": int(f["bytes"]),
                }
            )
        return pd.DataFrame(rows)

    def _group_rows(self, table: pd.DataFrame) -> pd.DataFrame:
        import pandas as pd

        glabels = self.meta.get("group_labels", {})
        grouped = []
        for gid, part in table.groupby("group", sort=True):
            rtt = part["mean_rtt_s"]
            grouped.append(
                {
                    "flow": None,
                    "group": int(gid),
                    "label": glabels.get(str(gid), part["label"].iloc[0]),
                    "cca": ",".join(sorted(set(part["cca"]))),
                    "throughput_bps": float(part["throughput_bps"].sum()),
                    "retransmits": float(part["retransmits"].sum(min_count=1)),
                    "mean_rtt_s": float(rtt.mean()) if rtt.notna().any() else math.nan,
                    "window_bytes": int(part["window_bytes"].sum()),
                    "bytes_run": int(part["bytes_run"].sum()),
                    "streams": int(len(part)),
                }
            )
        return pd.DataFrame(grouped)

    def group_throughputs(
        self, window: tuple[float | None, float | None] | None = None
    ) -> pd.Series:
        """Mean throughput per flow group (sum over the group's parallel streams)."""
        thr = self.flow_throughputs(window)
        groups = self.flows.set_index("flow")["group"]
        return thr.groupby(groups.reindex(thr.index)).sum()

    # ------------------------------------------------------------------ persistence
    def save(self, directory: str | Path, *, force: bool = False) -> Path:
        """Write the run directory: into a staging folder beside it, then renamed into place.

        ``directory`` may be a new path or an empty directory; an earlier run folder there is
        replaced only with ``force``, and only once the new one is complete. Anything else is
        refused with ``tcpfair.outputs.OutputError`` before anything is written.
        """
        target = run_target(Path(directory), force=force, option="run folder")
        staging = stage_beside(target.path)
        try:
            self._write(staging)
        except BaseException:
            _rmtree(staging)
            raise
        out = publish_run(staging, target, option="run folder")
        for src in self.attachments.values():
            if Path(src).name.startswith("tcpfair-capture-"):  # a temporary file: now moved
                Path(src).unlink(missing_ok=True)
        self.attachments = {name: str(out / name) for name in self.attachments}
        return out

    def _write(self, d: Path) -> None:
        flows = self._tables["flows"]
        summary = {
            "format_version": FORMAT_VERSION,
            "meta": self.meta,
            "scenario": self.scenario,
            "metrics": _jsonable(self.metrics()),
            "flows": _jsonable(_records(flows)),
        }
        (d / "summary.json").write_text(
            json.dumps(summary, indent=2, sort_keys=True, allow_nan=True)
        )
        for name in ("flows", "samples", "link", "reverse_link", "short_flows"):
            table = self._tables[name]
            if name == "link" and table is None:
                table = self.link  # the empty default
            if table is None or (name == "short_flows" and not len(table)):
                continue
            if isinstance(table, Columns):
                write_parquet(table, d / f"{name}.parquet")
            else:
                table.to_parquet(d / f"{name}.parquet", index=False)
        for name, src in self.attachments.items():
            shutil.copyfile(src, d / name)

    @classmethod
    def load(cls, directory: str | Path) -> RunResult:
        import pandas as pd

        d = Path(directory)
        summary = json.loads((d / "summary.json").read_text())
        if not (
            isinstance(summary, dict)
            and isinstance(summary.get("meta"), dict)
            and isinstance(summary.get("scenario", 0), dict | None)  # None: an import's
        ):
            raise ValueError(
                f"{d / 'summary.json'}: not a tcpfair run summary (expected a JSON object "
                "with format_version, meta and scenario, as tcpfair run writes)"
            )
        if summary.get("format_version") != FORMAT_VERSION:
            raise ValueError(
                f"{d}: run directory format {summary.get('format_version')!r}, "
                f"this tcpfair reads {FORMAT_VERSION}"
            )
        return cls(
            flows=pd.read_parquet(d / "flows.parquet"),
            samples=pd.read_parquet(d / "samples.parquet"),
            link=pd.read_parquet(d / "link.parquet"),
            meta=summary["meta"],
            scenario=summary["scenario"],
            reverse_link=(
                pd.read_parquet(d / "reverse_link.parquet")
                if (d / "reverse_link.parquet").exists()
                else None
            ),
            short_flows=(
                pd.read_parquet(d / "short_flows.parquet")
                if (d / "short_flows.parquet").exists()
                else empty_table()
            ),
        )


def complete_intervals_jfi(mat: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows of a (time × flow) throughput table in which every column has a sample,
    and Jain's index of each (``metrics.jain_series``; NaN where all are zero)."""
    keep, series = _complete_rows_jfi(mat.to_numpy(dtype=float))
    return mat[keep], series


def _complete_rows_jfi(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``complete_intervals_jfi`` on a numpy matrix: (which rows are complete, their JFI)."""
    keep = ~np.isnan(mat).any(axis=1)
    complete = mat[keep]
    return keep, m.jain_series(complete) if len(complete) else np.array([])


def _finite_mean(series: np.ndarray) -> float:
    finite = series[~np.isnan(series)]
    return float(finite.mean()) if len(finite) else float("nan")


def _positions(keys: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``ids``: its index in the sorted distinct ``keys`` and whether it is there."""
    if not len(keys):
        return np.zeros(len(ids), dtype=np.int64), np.zeros(len(ids), dtype=bool)
    pos = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
    return pos, np.asarray(keys[pos] == ids, dtype=bool)


def _align(keys: np.ndarray, values: np.ndarray, ids: np.ndarray, fill: float) -> np.ndarray:
    """``values`` (one per sorted distinct key) in the order of ``ids``; ``fill`` for an id
    without a key (pandas' ``reindex(ids, fill_value=fill)``)."""
    pos, found = _positions(keys, ids)
    out = np.full(len(ids), fill, dtype=values.dtype)
    out[found] = values[pos[found]]
    return out


def _isnan(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.asarray(np.isnan(a), dtype=bool)
    if a.dtype.kind in "iub":
        return np.zeros(len(a), dtype=bool)
    return np.array([x is None or (isinstance(x, float) and math.isnan(x)) for x in a], bool)


def _nansum(a: np.ndarray) -> Any:
    """pandas' ``Series.sum()``: NaN left out (integers summed exactly)."""
    return np.nansum(a) if a.dtype.kind == "f" else a.sum()


def _nanmean(a: np.ndarray) -> float:
    """pandas' ``Series.mean()`` (its nanops: integers summed as float64, NaN left out)."""
    if a.dtype.kind in "iub":
        return float(a.sum(dtype=np.float64) / len(a))
    v = a.astype(np.float64)
    ok = ~np.isnan(v)
    return float(np.where(ok, v, 0.0).sum() / ok.sum()) if ok.any() else float("nan")


def _records(table: Table | None) -> list[dict[str, Any]]:
    """``DataFrame.to_dict(orient="records")``: one dict of Python values per row."""
    if table is None:
        return []
    if not isinstance(table, Columns):
        return list(table.to_dict(orient="records"))
    cols = {name: col.tolist() for name, col in table.items()}
    return [dict(zip(cols, row, strict=True)) for row in zip(*cols.values(), strict=True)]


def _ratio(a: float, b: float) -> float:
    """a / b; inf when only b is 0, NaN when both are (as ``metrics.flow_ratio``)."""
    if b > 0:
        return a / b
    return float("nan") if a == 0 else float("inf")


def _rmtree(p: Path) -> None:
    import shutil

    shutil.rmtree(p, ignore_errors=True)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x
