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

A run directory holds ``summary.json`` (meta, scenario, metrics, flows) and Parquet files
for the three tables (four with a reverse bottleneck: ``reverse_link.parquet``; and
``short_flows.parquet`` when the run had short flows);
``RunResult.load(dir)`` gives back an equal object.
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import metrics as m
from .outputs import publish_run, run_target, stage_beside
from .shortflows import empty_table, short_flow_metrics

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


@dataclass
class RunResult:
    flows: pd.DataFrame
    samples: pd.DataFrame
    link: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=LINK_COLUMNS))
    meta: dict[str, Any] = field(default_factory=dict)
    scenario: dict[str, Any] | None = None
    reverse_link: pd.DataFrame | None = None
    short_flows: pd.DataFrame = field(default_factory=empty_table)
    #: files that go into the run directory with the tables: name → where it is now
    #: (the kernel backend's ``capture.pcap``); ``save`` moves them in
    attachments: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------------ windows
    def default_window(self) -> tuple[float, float]:
        w = self.meta.get("window")
        if w:
            return float(w[0]), float(w[1])
        if len(self.samples):
            return 0.0, float(self.samples["t_s"].max())
        return 0.0, 0.0

    def window_samples(
        self, window: tuple[float | None, float | None] | None = None
    ) -> pd.DataFrame:
        """Samples whose interval midpoint lies in [from, to].

        On an exact grid this is "interval inside the window": with 1 s samples the window
        120–300 s keeps the 180 intervals (120, 121] … (299, 300], as in the ns-2/testbed
        study. The midpoint rule also keeps them when a real tool's interval ends jitter by
        a few milliseconds (iperf3 reports 300.000136).
        """
        lo, hi = self.resolve_window(window)
        s = self.samples
        mid = s["t_s"] - s["dt_s"] / 2
        mask = (mid >= lo) & (mid <= hi)
        return s[mask]

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
        ws = self.window_samples(window)
        cols = self.flows["flow"].to_numpy()
        if not len(ws):
            return pd.DataFrame(columns=cols, dtype=float)
        # nominal interval: the source's own (meta["interval_s"]: captures, whose first and
        # last intervals are cut to a flow's life), else the median sample length to 3
        # significant digits (1.000012 → 1)
        nominal = self.meta.get("interval_s")
        if nominal:
            delta = float(nominal)
        else:
            delta = float(f"{float(np.median(ws['dt_s'].to_numpy(dtype=float))):.3g}")
        if not delta > 0:
            return pd.DataFrame(columns=cols, dtype=float)
        row = np.round(ws["t_s"].to_numpy(dtype=float) / delta).astype(np.int64)
        tmp = pd.DataFrame(
            {
                "row": row,
                "flow": ws["flow"].to_numpy(),
                "bits": ws["bytes"].to_numpy(dtype=float) * 8,
                "dt": ws["dt_s"].to_numpy(dtype=float),
            }
        )
        g = tmp.groupby(["row", "flow"]).sum()
        thr = (g["bits"] / g["dt"]).unstack("flow")
        thr = thr.reindex(columns=cols)
        thr.index = thr.index.to_numpy(dtype=float) * delta
        thr.index.name = "t_s"
        return thr

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
        s = self.samples
        if not len(s):
            return None
        # to the microsecond: iperf3's "seconds" can exceed its "end" by float noise (-2e-8)
        first = round(float((s["t_s"] - s["dt_s"]).min()), 6) + 0.0
        return first, round(float(s["t_s"].max()), 6)

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
        slack = 0.5 * float(np.median(self.samples["dt_s"].to_numpy(dtype=float)))
        where = f"the samples cover {first:g}–{last:g} s"
        if lo >= last:
            raise WindowError(f"window {lo:g}–{hi:g} s starts after the data ends ({where})")
        if hi > last + slack:
            raise WindowError(f"window {lo:g}–{hi:g} s ends after the data ({where})")
        if lo >= hi:
            raise WindowError(f"window {lo:g}–{hi:g} s: its start must be before its end")
        if lo < first - slack:
            raise WindowError(f"window {lo:g}–{hi:g} s starts before the data ({where})")
        s = self.samples
        mid = s["t_s"] - s["dt_s"] / 2
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
        ws = self.window_samples(window)
        g = ws.groupby("flow")
        thr = g["bytes"].sum() * 8 / g["dt_s"].sum()
        return thr.reindex(self.flows["flow"].to_numpy(), fill_value=0.0).astype(float)

    def directions(self) -> pd.Series:
        """Each connection's direction (``forward``/``reverse``), indexed by flow id; every
        connection is forward in a result without a ``direction`` column."""
        ids = self.flows["flow"].to_numpy()
        if "direction" not in self.flows:
            return pd.Series("forward", index=ids)
        return pd.Series(self.flows["direction"].to_numpy(), index=ids)

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
        thr = self.flow_throughputs(window)
        labels = self.flows.set_index("flow")["label"].reindex(thr.index)
        dirs = self.directions().reindex(thr.index)
        out: dict[str, dict[str, Any]] = {}
        for label in dict.fromkeys(labels):
            x = thr[labels == label].to_numpy(dtype=float)
            # a group's share is of its own direction's link (labels never span directions)
            cap = self._capacity(str(dirs[labels == label].iloc[0]))
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
        all_thr = self.flow_throughputs(span)
        measured = self.measured_labels()
        forward = (self.directions().reindex(all_thr.index) == "forward").to_numpy()
        thr = all_thr if forward.all() else all_thr[forward]
        if measured is not None:
            keep = self.flows.set_index("flow")["label"].reindex(all_thr.index).isin(measured)
            thr = all_thr[keep.to_numpy()]
        x = thr.to_numpy(dtype=float)
        out: dict[str, Any] = {
            "window": [lo, hi],
            "n_flows": int(len(x)),
            "jfi": m.jain(x) if len(x) else float("nan"),
            "min_max_ratio": m.min_max_ratio(x) if len(x) else float("nan"),
            "sum_bps": float(x.sum()),
            "cov": m.cov(x) if len(x) else float("nan"),
            "throughput_bps": {str(k): float(v) for k, v in all_thr.items()},
        }
        cap = self.meta.get("capacity_bps")
        fwd_thr = all_thr[forward].to_numpy(dtype=float)
        # only reverse connections: the forward link carries no data
        out["utilization"] = (
            (
                m.utilization(fwd_thr, cap)
                if len(fwd_thr)
                # no long-lived forward connection: the link carries no data (0), or only
                # short flows, which are not in this figure (NaN)
                else (float("nan") if len(self.short_flows) else 0.0)
            )
            if cap
            else float("nan")
        )
        if measured is not None:
            out["measured_flows"] = measured
            out["utilization_measured"] = float(x.sum() / cap) if cap else float("nan")
        grouped = self.groups(span)
        out["groups"] = grouped["groups"]
        out["group_ratios"] = grouped["ratios"]
        # per-interval JFI over the intervals in which every (measured) flow has a sample
        _, series = complete_intervals_jfi(self.interval_throughputs(span)[thr.index])
        out["jfi_per_interval_mean"] = _finite_mean(series)
        # retransmissions of the same connections as the index (reverse ones: "reverse")
        retr = self.flow_retransmits(span).loc[thr.index]
        out["retransmits"] = int(np.nansum(retr["retransmits"].to_numpy(dtype=float)))
        out["retransmits_whole_run_flows"] = [int(f) for f in retr.index[retr["whole_run"]]]
        rt = self.flows.set_index("flow")["retransmits"].loc[thr.index].to_numpy(dtype=float)
        out["retransmits_run"] = int(np.nansum(rt))
        rev = self.reverse_metrics(span, all_thr)
        if rev is not None:
            out["reverse"] = rev
        if len(self.short_flows):  # reported apart from the headline metrics (issue 10 §4)
            out["short_flows"] = short_flow_metrics(self.short_flows, span)
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
        rl = self.reverse_link
        if rl is None:
            return None
        span = self._window(window)
        if thr is None:
            thr = self.flow_throughputs(span)
        back = (self.directions().reindex(thr.index) == "reverse").to_numpy()
        x = thr[back].to_numpy(dtype=float)
        cap = self._capacity("reverse")
        lo, hi = span
        rw = rl[(rl["t_s"] > lo) & (rl["t_s"] <= hi)]
        fw = self.link[(self.link["t_s"] > lo) & (self.link["t_s"] <= hi)]
        retr = self.flow_retransmits(span).loc[thr.index[back]]
        return {
            "connections": int(len(x)),
            "sum_bps": float(x.sum()),
            "jfi": m.jain(x) if len(x) else float("nan"),
            "utilization": float(x.sum() / cap) if cap else float("nan"),
            "retransmits": int(np.nansum(retr["retransmits"].to_numpy(dtype=float))),
            "queue_mean_bytes": float(rw["queue_bytes"].mean()) if len(rw) else float("nan"),
            "queue_max_bytes": float(rw["queue_bytes"].max()) if len(rw) else float("nan"),
            "drops": int(rw["drops"].sum()),
            "ack_drops": int(rw["ack_drops"].sum()) if "ack_drops" in rw else 0,
            "forward_ack_drops": int(fw["ack_drops"].sum()) if "ack_drops" in fw else 0,
        }

    def flow_retransmits(
        self, window: tuple[float | None, float | None] | None = None
    ) -> pd.DataFrame:
        """Retransmissions of each flow in the window, indexed by flow: ``retransmits`` (NaN
        when unknown) and ``whole_run`` (True where the samples carry no per-interval count,
        so the flow's whole-run total stands in: label such figures "(run)")."""
        windowed = self.window_samples(window).groupby("flow")["retransmits"].sum()
        # the source gives per-interval counts for a flow when any of its samples has one
        known = self.samples.groupby("flow")["retransmits"].count()
        rows = []
        for fid, total in zip(self.flows["flow"], self.flows["retransmits"], strict=True):
            if int(known.get(fid, 0)) > 0:
                rows.append((float(windowed.get(fid, 0.0)), False))
            else:
                run = float(total)
                rows.append((run, not math.isnan(run)))
        return pd.DataFrame(
            rows, index=self.flows["flow"].to_numpy(), columns=["retransmits", "whole_run"]
        )

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
        summary = {
            "format_version": FORMAT_VERSION,
            "meta": self.meta,
            "scenario": self.scenario,
            "metrics": _jsonable(self.metrics()),
            "flows": _jsonable(self.flows.to_dict(orient="records")),
        }
        (d / "summary.json").write_text(
            json.dumps(summary, indent=2, sort_keys=True, allow_nan=True)
        )
        self.flows.to_parquet(d / "flows.parquet", index=False)
        self.samples.to_parquet(d / "samples.parquet", index=False)
        self.link.to_parquet(d / "link.parquet", index=False)
        if self.reverse_link is not None:
            self.reverse_link.to_parquet(d / "reverse_link.parquet", index=False)
        if len(self.short_flows):
            self.short_flows.to_parquet(d / "short_flows.parquet", index=False)
        for name, src in self.attachments.items():
            shutil.copyfile(src, d / name)

    @classmethod
    def load(cls, directory: str | Path) -> RunResult:
        d = Path(directory)
        summary = json.loads((d / "summary.json").read_text())
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
    complete = mat.dropna(axis=0, how="any")
    series = m.jain_series(complete.to_numpy(dtype=float)) if len(complete) else np.array([])
    return complete, series


def _finite_mean(series: np.ndarray) -> float:
    finite = series[~np.isnan(series)]
    return float(finite.mean()) if len(finite) else float("nan")


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
