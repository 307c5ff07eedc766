"""``RunResult``: the one result type every backend and importer produces.

Tables (pandas DataFrames, column names carry their unit):

- ``flows``: one row per TCP connection — ``flow`` (id), ``group`` (index of the
  ``[[flows]]`` entry or input file), ``label``, ``cca``, ``rtt_s`` (configured base RTT;
  NaN when unknown), ``start_s``, ``bytes`` (delivered over the whole run),
  ``retransmits``, ``mean_rtt_s`` (measured mean, NaN when unknown).
- ``samples``: long form, one row per (flow, interval) — ``flow``, ``t_s`` (end of the
  interval, seconds since the run started), ``dt_s`` (interval length), ``bytes``
  (delivered in the interval), ``throughput_bps``, ``cwnd_bytes``, ``srtt_s``,
  ``retransmits`` (NaN where the source does not know a value).
- ``link``: bottleneck samples — ``t_s``, ``queue_bytes``, ``queue_pkts``, ``drops``
  (in the interval), ``tx_bytes`` (in the interval). Empty when unknown.
- ``meta``: backend, versions, scenario hash, seed, wall time, ``capacity_bps`` (the
  bottleneck rate, for utilization), ``window`` (default steady-state window), ``valid``
  and ``checks``.
- ``scenario``: the resolved scenario (``Scenario.resolved()``), or None for imports.

A run directory holds ``summary.json`` (meta, scenario, metrics, flows) and Parquet files
for the three tables; ``RunResult.load(dir)`` gives back an equal object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import metrics as m
from .outputs import publish_run, run_target, stage_beside

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


@dataclass
class RunResult:
    flows: pd.DataFrame
    samples: pd.DataFrame
    link: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=LINK_COLUMNS))
    meta: dict[str, Any] = field(default_factory=dict)
    scenario: dict[str, Any] | None = None

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
        lo, hi = self._window(window)
        s = self.samples
        mid = s["t_s"] - s["dt_s"] / 2
        mask = (mid >= lo) & (mid <= hi)
        return s[mask]

    def interval_throughputs(
        self, window: tuple[float | None, float | None] | None = None
    ) -> pd.DataFrame:
        """Per-interval throughput (bit/s) as a (time × flow) table over the window.

        Samples are put on a common grid of the nominal interval Δ (the median ``dt_s`` to
        3 significant digits): a
        sample ending at t goes to the row Δ·round(t/Δ), so flows whose reports end a few
        ms apart (parallel iperf3 streams) share a row. Several samples of one flow in a row
        are combined as Σ bytes·8 / Σ dt. NaN where a flow has no sample in that interval.
        """
        ws = self.window_samples(window)
        cols = self.flows["flow"].to_numpy()
        if not len(ws):
            return pd.DataFrame(columns=cols, dtype=float)
        # nominal interval: the median sample length to 3 significant digits (1.000012 → 1)
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

    def _window(self, window: tuple[float | None, float | None] | None) -> tuple[float, float]:
        d_lo, d_hi = self.default_window()
        if window is None:
            return d_lo, d_hi
        lo, hi = window
        return (d_lo if lo is None else float(lo)), (d_hi if hi is None else float(hi))

    # ------------------------------------------------------------------ metrics
    def flow_throughputs(
        self, window: tuple[float | None, float | None] | None = None
    ) -> pd.Series:
        """Mean throughput (bit/s) of each flow over the window: Σ bytes·8 / Σ interval lengths."""
        ws = self.window_samples(window)
        g = ws.groupby("flow")
        thr = g["bytes"].sum() * 8 / g["dt_s"].sum()
        return thr.reindex(self.flows["flow"].to_numpy(), fill_value=0.0).astype(float)

    def metrics(self, window: tuple[float | None, float | None] | None = None) -> dict[str, Any]:
        """Summary metrics over the window (default: the scenario's measurement window)."""
        lo, hi = self._window(window)
        thr = self.flow_throughputs((lo, hi))
        x = thr.to_numpy(dtype=float)
        out: dict[str, Any] = {
            "window": [lo, hi],
            "n_flows": int(len(x)),
            "jfi": m.jain(x) if len(x) else float("nan"),
            "min_max_ratio": m.min_max_ratio(x) if len(x) else float("nan"),
            "sum_bps": float(x.sum()),
            "cov": m.cov(x) if len(x) else float("nan"),
            "throughput_bps": {str(k): float(v) for k, v in thr.items()},
        }
        cap = self.meta.get("capacity_bps")
        out["utilization"] = m.utilization(x, cap) if cap else float("nan")
        # per-interval JFI over the intervals in which every flow has a sample
        active = self.interval_throughputs((lo, hi)).dropna(axis=0, how="any")
        series = m.jain_series(active.to_numpy(dtype=float)) if len(active) else np.array([])
        series = series[~np.isnan(series)]
        out["jfi_per_interval_mean"] = float(series.mean()) if len(series) else float("nan")
        rt = self.flows.set_index("flow")["retransmits"]
        out["retransmits"] = int(np.nansum(rt.to_numpy(dtype=float)))
        return out

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
        return publish_run(staging, target, option="run folder")

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
        )


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
