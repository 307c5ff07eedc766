"""Figures. Matplotlib with the Agg backend (no display needed)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

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
    for k, part in s.groupby(key):
        if key == "group":
            # streams of one group report a few ms apart: sum them on a common grid
            delta = float(part["dt_s"].median()) or 1.0
            t = (part["t_s"] / delta).round() * delta
            series = part.groupby(t)["throughput_bps"].sum() / 1e6
            label = group_labels.get(str(k), part["label"].iloc[0])
        else:
            series = part.set_index("t_s")["throughput_bps"].sort_index() / 1e6
            label = f"{part['label'].iloc[0]} (flow {k})"
        ax.plot(series.index, series.to_numpy(), label=legend_text(label), linewidth=1.2)
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
