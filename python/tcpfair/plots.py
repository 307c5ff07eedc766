"""Figures. Matplotlib with the Agg backend (no display needed)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import matplotlib
import numpy as np
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from .metrics import jain_series  # noqa: E402
from .panels import DEFAULT_PANELS as DEFAULT_PANELS  # noqa: E402  (re-exported)
from .panels import PANELS as PANELS  # noqa: E402
from .result import RunResult  # noqa: E402

F = TypeVar("F", bound=Callable[..., Any])


def plain_text(fn: F) -> F:
    """Draw the figure with every text as plain text: labels, titles and tick values come from
    users (``label = "$x_{1$"``) and must never be parsed as mathtext (a parse error would
    only surface when the figure is saved, after the run)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with matplotlib.rc_context({"text.parse_math": False}):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def legend_text(label: object) -> str:
    """A user's label as a legend entry: matplotlib hides entries whose label starts with
    '_', so such a label gets a zero-width space in front."""
    text = str(label)
    return "\u200b" + text if text.startswith("_") else text


@plain_text
def throughput_over_time(
    result: RunResult,
    path: str | Path,
    by: str = "group",
    window: tuple[float, float] | None = None,
) -> Path:
    """Throughput of each flow (``by="flow"``) or flow group against time: the labs' graph.

    Each line is one flow (or the sum of a group's parallel streams) in Mbit/s at the end of
    each sampling interval; the measurement window (``window`` or the result's default) is
    shaded. The file type follows the suffix (.png, .pdf, .svg).
    """
    if by not in ("group", "flow"):
        raise ValueError(f"by must be 'group' or 'flow', got {by!r}")
    p = Path(path)
    s = result.samples.merge(result.flows[["flow", "group", "label"]], on="flow")
    group_labels = result.meta.get("group_labels", {}) if result.meta else {}
    fig, ax = plt.subplots(figsize=(8, 4.5))
    key = "group" if by == "group" else "flow"
    per_flow = flow_legend(result)
    first = result.flows.drop_duplicates("group").set_index("group")
    for k, part in s.groupby(key):
        if key == "group":
            # streams of one group report a few ms apart: sum them on a common grid
            delta = float(part["dt_s"].median()) or 1.0
            t = (part["t_s"] / delta).round() * delta
            series = part.groupby(t)["throughput_bps"].sum() / 1e6
            name = str(group_labels.get(str(k), part["label"].iloc[0]))
            label = _with_detail(name, _flow_detail(first.loc[k]))
        else:
            series = part.set_index("t_s")["throughput_bps"].sort_index() / 1e6
            label = per_flow[k]
        ax.plot(series.index, series.to_numpy(), label=label, linewidth=1.2)
    lo, hi = window if window is not None else result.default_window()
    ax.axvspan(lo, hi, color="0.9", zorder=0, label="measurement window")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        fig.savefig(p, dpi=120)
    finally:
        plt.close(fig)
    return p


def watermark(path: str | Path, text: str = "INVALID") -> Path:
    """Stamp ``text`` diagonally across a saved PNG figure (a run graded invalid), pixel for
    pixel otherwise; other file types are not raster images and raise ``ValueError``."""
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise ValueError(f"{p}: only PNG figures can be watermarked")
    img = plt.imread(p)
    height, width = img.shape[:2]
    dpi = 100
    fig = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    try:
        ax = fig.add_axes((0, 0, 1, 1))
        ax.imshow(img, interpolation="none")
        ax.set_axis_off()
        fig.text(
            0.5,
            0.5,
            text,
            fontsize=min(width / 10, height / 4),  # points at 100 dpi: ~70 % of the width
            color="red",
            alpha=0.35,
            rotation=25,
            ha="center",
            va="center",
            weight="bold",
        )
        fig.savefig(p, dpi=dpi)
    finally:
        plt.close(fig)
    return p


# --------------------------------------------------------------------------- run panel
def smooth_throughput(samples: pd.DataFrame, width_s: float) -> pd.DataFrame:
    """Per-flow throughput re-binned into intervals of ``width_s`` seconds: each bin is
    Σ bytes·8 / Σ dt of the samples whose midpoint falls in it, so the bytes (and the mean
    over any span of whole bins) are kept exactly. Columns ``flow``, ``t_s`` (bin end),
    ``throughput_bps``."""
    if not width_s > 0:
        raise ValueError(f"smoothing width must be > 0 s, got {width_s}")
    mid = samples["t_s"] - samples["dt_s"] / 2
    tmp = pd.DataFrame(
        {
            "flow": samples["flow"].to_numpy(),
            "bin": np.floor(mid.to_numpy(dtype=float) / width_s).astype(np.int64),
            "bits": samples["bytes"].to_numpy(dtype=float) * 8,
            "dt": samples["dt_s"].to_numpy(dtype=float),
        }
    )
    g = tmp.groupby(["flow", "bin"], sort=True)[["bits", "dt"]].sum().reset_index()
    g = g[g["dt"] > 0]
    return pd.DataFrame(
        {
            "flow": g["flow"].to_numpy(),
            "t_s": (g["bin"].to_numpy(dtype=float) + 1) * width_s,
            "throughput_bps": (g["bits"] / g["dt"]).to_numpy(),
        }
    )


def _flow_detail(row: pd.Series) -> str:
    """ "cca, rtt" of a flows row (", reverse" for a reverse connection); the parts that
    are unknown left out."""
    parts = [str(row["cca"])] if isinstance(row.get("cca"), str) and row["cca"] else []
    rtt = row.get("rtt_s")
    if rtt is not None and np.isfinite(float(rtt)):
        parts.append(f"{float(rtt) * 1e3:g} ms")
    if row.get("direction") == "reverse":
        parts.append("reverse")
    return ", ".join(parts)


def _with_detail(name: str, detail: str) -> str:
    return legend_text(f"{name} ({detail})" if detail else name)


def flow_legend(result: RunResult) -> dict[Any, str]:
    """Legend entry of each flow: "label (cca, rtt)", with the flow id when labels repeat."""
    f = result.flows
    repeated = f["label"].duplicated(keep=False)
    out: dict[Any, str] = {}
    for (_, row), rep in zip(f.iterrows(), repeated, strict=True):
        name = f"{row['label']} #{row['flow']}" if rep else str(row["label"])
        out[row["flow"]] = _with_detail(name, _flow_detail(row))
    return out


def _per_flow(result: RunResult, column: str, scale: float) -> list[pd.DataFrame]:
    s = result.samples[["flow", "t_s", column]].dropna()
    if not len(s):
        return []
    return [
        pd.DataFrame({"series": flow, "t_s": part["t_s"], "value": part[column] * scale})
        for flow, part in s.sort_values("t_s").groupby("flow", sort=True)
    ]


def run_panel_data(
    result: RunResult, smooth_s: float | None = None, panels: Sequence[str] = DEFAULT_PANELS
) -> pd.DataFrame:
    """The data of the run panel in tidy form: ``panel``, ``series`` (a flow id, or
    ``queue``/``drops``/``jfi``), ``t_s``, ``value`` (in the panel's unit, see ``PANELS``),
    for ``panels`` in that order. Panels without data (no cwnd from iperf3 files, no queue
    outside the simulator) have no rows. ``smooth_s`` re-bins throughput
    (``smooth_throughput``) before plotting."""
    parts: list[pd.DataFrame] = []

    def add(panel: str, frames: list[pd.DataFrame]) -> None:
        for fr in frames:
            parts.append(fr.assign(panel=panel))

    thr = result.samples if smooth_s is None else smooth_throughput(result.samples, smooth_s)
    add("throughput", _per_flow(RunResult(result.flows, thr), "throughput_bps", 1e-6))
    add("cwnd", _per_flow(result, "cwnd_bytes", 1e-3))
    add("rtt", _per_flow(result, "srtt_s", 1e3))
    for panel, column, scale in (("queue", "queue_bytes", 1e-3), ("queue_pkts", "queue_pkts", 1)):
        two_way = result.reverse_link is not None
        add(panel, _queue(result.link, column, scale, "forward " if two_way else ""))
        if result.reverse_link is not None:  # the reverse bottleneck's, in the same panel
            add(panel, _queue(result.reverse_link, column, scale, "reverse "))
    span = result.data_span()
    # JFI over the forward connections (reverse ones share another link)
    dirs = result.directions()
    fwd = dirs.index[(dirs == "forward").to_numpy()]
    if span is not None and fwd.nunique() > 1:
        it = result.interval_throughputs(span)[fwd]
        if len(it):
            jfi = jain_series(it.to_numpy(dtype=float))
            add("jfi", [pd.DataFrame({"series": "jfi", "t_s": it.index, "value": jfi}).dropna()])
    cols = ["panel", "series", "t_s", "value"]
    if not parts:
        return pd.DataFrame(columns=cols)
    out = pd.concat(parts, ignore_index=True)[cols]
    order = {p: i for i, p in enumerate(panels)}
    out = out[out["panel"].isin(order)]
    return out.sort_values("panel", key=lambda c: c.map(order), kind="stable").reset_index(
        drop=True
    )


def _queue(link: pd.DataFrame, column: str, scale: float, prefix: str = "") -> list[pd.DataFrame]:
    """The bottleneck queue (``column`` × ``scale``) and, as series ``drops``, its value at
    the samples whose interval had drops; nothing when the link was not sampled. The
    series names start with ``prefix`` (``"reverse "`` for the reverse bottleneck)."""
    if not len(link) or column not in link or not link[column].notna().any():
        return []
    q = link.dropna(subset=[column])
    d = q[q["drops"].fillna(0) > 0]
    return [
        pd.DataFrame({"series": prefix + "queue", "t_s": q["t_s"], "value": q[column] * scale}),
        pd.DataFrame({"series": prefix + "drops", "t_s": d["t_s"], "value": d[column] * scale}),
    ]


@plain_text
def run_panel(
    result: RunResult,
    path: str | Path,
    data: pd.DataFrame,
    panels: list[str] | None = None,
    window: tuple[float, float] | None = None,
    stamp: str | None = None,
) -> Figure:
    """Draw ``data`` (``run_panel_data``) as panels sharing the time axis, the measurement
    window shaded, into ``path`` (PNG, SVG or PDF by suffix); panels without data are left
    out. ``stamp`` (e.g. "INVALID") is written across the figure. Returns the (closed)
    figure, whose axes tests can inspect."""
    wanted = [p for p in (panels or DEFAULT_PANELS) if (data["panel"] == p).any()]
    if not wanted:
        raise ValueError("no panel has data to draw")
    legend = flow_legend(result)
    fig, axes = plt.subplots(
        len(wanted), 1, sharex=True, figsize=(8, 1.9 * len(wanted) + 0.8), squeeze=False
    )
    lo, hi = window if window is not None else result.default_window()
    colours: dict[Any, Any] = {}
    for ax, panel in zip(axes[:, 0], wanted, strict=True):
        d = data[data["panel"] == panel]
        for series, part in d.groupby("series", sort=False):
            x, y = part["t_s"].to_numpy(dtype=float), part["value"].to_numpy(dtype=float)
            if str(series).endswith("drops"):
                mark = "+" if series == "reverse drops" else "x"
                ax.plot(x, y, mark, color="red", label=series, markersize=4)
                continue
            label = legend.get(series, str(series))
            kw = {"color": colours[series]} if series in colours else {}
            (line,) = ax.plot(x, y, label=label, linewidth=1.1, **kw)
            colours.setdefault(series, line.get_color())
        ax.axvspan(lo, hi, color="0.92", zorder=0)
        ax.set_ylabel(PANELS[panel])
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        if panel in ("queue", "queue_pkts") or panel == wanted[0]:
            ax.legend(loc="upper right", fontsize="x-small")
    axes[-1, 0].set_xlabel("time (s)  —  shaded: measurement window")
    fig.tight_layout()
    if stamp:
        fig.text(
            0.5,
            0.5,
            stamp,
            fontsize=60,
            color="red",
            alpha=0.3,
            rotation=25,
            ha="center",
            va="center",
            weight="bold",
        )
    p = Path(path)
    try:
        fig.savefig(p, dpi=120, format=p.suffix.lstrip(".").lower() or "png")
    finally:
        plt.close(fig)
    return fig
