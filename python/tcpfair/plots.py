"""Figures. Matplotlib with the Agg backend (no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .result import RunResult  # noqa: E402


def throughput_over_time(result: RunResult, path: str | Path, by: str = "group") -> Path:
    """Throughput of each flow (or flow group) against time: the labs' graph."""
    p = Path(path)
    s = result.samples.merge(result.flows[["flow", "group", "label"]], on="flow")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    key = "group" if by == "group" else "flow"
    for k, part in s.groupby(key):
        series = part.groupby("t_s")["throughput_bps"].sum() / 1e6
        label = part["label"].iloc[0] if key == "group" else f"flow {k}"
        ax.plot(series.index, series.to_numpy(), label=label, linewidth=1.2)
    lo, hi = result.default_window()
    ax.axvspan(lo, hi, color="0.9", zorder=0, label="measurement window")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=120)
    plt.close(fig)
    return p
