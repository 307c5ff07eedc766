"""``tcpfair fairness FILE…``: the labs' ``fairness.sh``, and more.

Reads ``iperf3 -J`` files (each file a flow group, each parallel stream a flow), packet
captures (pcap/pcapng: each TCP connection a flow) or Flent data files
(``tcpfair.importers``), and prints per-flow mean throughput over a window, Jain's index,
the min/max ratio and the sum. The numbers come from ``RunResult.fairness_report``; this
module only checks the options and formats. Usage: docs/fairness.md.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from pathlib import Path
from typing import Any

import click

from . import UserError, friendly_errors, table_console

PLOT_SUFFIXES = (".png", ".pdf", ".svg")


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--from",
    "t_from",
    type=float,
    default=None,
    metavar="S",
    help="Start of the measurement window, seconds (default: start of the capture).",
)
@click.option(
    "--to",
    "t_to",
    type=float,
    default=None,
    metavar="S",
    help="End of the measurement window, seconds (default: end of the capture).",
)
@click.option("--per-interval", is_flag=True, help="Also give the JFI of every sampling interval.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="table: for people; csv/json: for programs.",
)
@click.option(
    "--plot",
    type=click.Path(path_type=Path),
    default=None,
    metavar="OUT.png",
    help="Write throughput over time per flow (.png, .pdf or .svg): a new file, or an "
    "existing one with --force.",
)
@click.option("--force", is_flag=True, help="Replace an existing --plot file.")
@click.option(
    "--panels",
    default=None,
    metavar="LIST",
    help="Make --plot the run panel: comma-separated throughput,cwnd,rtt,jfi (those "
    "with data are drawn); its data goes to a .csv of the same name.",
)
@click.option(
    "--smooth",
    default=None,
    metavar="DURATION",
    help="With --plot: the run panel, throughput averaged over DURATION (e.g. 1s).",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="L",
    help="Label of each file, in order (repeat once per file; default: the file name).",
)
@click.option(
    "--by",
    type=click.Choice(["flow", "group"]),
    default="flow",
    show_default=True,
    help="flow: every TCP connection; group: sum the parallel streams of each file.",
)
@click.option(
    "--capacity",
    default=None,
    metavar="RATE",
    help="Bottleneck rate, e.g. 100Mbit, to report the link utilization.",
)
@click.option(
    "--no-align",
    is_flag=True,
    help="Do not shift files onto one clock by their start times (iperf3 timestamps, "
    "capture packet times, Flent T0).",
)
@click.option(
    "--interval",
    default=None,
    metavar="DURATION",
    help="Captures: length of the sampling intervals (default 1s, e.g. 100ms); iperf3 and "
    "Flent files bring their own.",
)
@click.option(
    "--all",
    "include_all",
    is_flag=True,
    help="Captures: also count the small connections (under 64 KiB delivered: iperf3's "
    "control connection, …) that are otherwise listed and left out.",
)
@friendly_errors
def fairness(
    files: tuple[Path, ...],
    t_from: float | None,
    t_to: float | None,
    per_interval: bool,
    fmt: str,
    plot: Path | None,
    force: bool,
    panels: str | None,
    smooth: str | None,
    labels: tuple[str, ...],
    by: str,
    capacity: str | None,
    no_align: bool,
    interval: str | None,
    include_all: bool,
) -> None:
    """Fairness of the TCP flows in FILES: iperf3 -J output, pcap/pcapng captures or Flent
    .flent.gz files (Jain's index, ratios, sum)."""
    for name, v in (("--from", t_from), ("--to", t_to)):
        if v is not None and not (math.isfinite(v) and v >= 0):
            raise UserError(f"{name} {v:g}: the window bounds are seconds ≥ 0")
    if t_from is not None and t_to is not None and t_from >= t_to:
        raise UserError(
            f"--from {t_from:g} is not before --to {t_to:g}; the window needs from < to"
        )
    from ..spec import label_problem

    for lab in labels:
        problem = label_problem(lab)
        if problem:
            raise UserError(f"--label {lab!r}: {problem}")
    if labels and len(labels) != len(files):
        raise UserError(
            f"{len(labels)} --label for {len(files)} files; give one --label per file, in order"
        )
    if plot is not None and plot.suffix.lower() not in PLOT_SUFFIXES:
        raise UserError(
            f"--plot {plot}: unknown figure type {plot.suffix or '(none)'!r}; "
            f"use one of {', '.join(PLOT_SUFFIXES)}"
        )
    from .run import figure_options

    smooth_s, panel_list = figure_options(smooth, panels)
    as_panel = panels is not None or smooth is not None
    if as_panel and plot is None:
        raise UserError("--panels/--smooth draw the run panel: give --plot OUT.png too")
    if plot is not None:
        from ..outputs import check_file_target

        check_file_target(plot, force=force, option="--plot")
        if as_panel:
            check_file_target(plot.with_suffix(".csv"), force=force, option="--plot")
    cap_bps: float | None = None
    if capacity is not None:
        from ..units import UnitError, parse_rate

        try:
            cap_bps = float(parse_rate(capacity))
        except UnitError as e:
            raise UserError(f"--capacity: {e}") from None
        from ..spec import MAX_RATE_BPS, MIN_RATE_BPS

        if not MIN_RATE_BPS <= cap_bps <= MAX_RATE_BPS:
            raise UserError(
                f"--capacity {capacity}: out of range; allowed: 1kbit to 1Tbit (a bottleneck rate)"
            )

    interval_s = _capture_interval(interval, files)
    from ..importers import ImportFileError, load_files  # (pandas: after the checks)

    try:
        result = load_files(
            list(files),
            labels=list(labels) or None,
            align=not no_align,
            include_all=include_all,
            interval_s=interval_s,
        )
    except ImportFileError as e:
        raise UserError(str(e)) from None
    if cap_bps is not None:
        result.meta["capacity_bps"] = cap_bps

    from ..result import WindowError

    try:
        report = fairness_report(result, (t_from, t_to), by=by, per_interval=per_interval)
    except WindowError as e:
        if t_from is not None or t_to is not None:
            raise UserError(f"--from/--to: {e}") from None
        # no --from/--to: the default window (from 0) did not fit the files' samples
        raise UserError(
            f"{', '.join(map(str, files))}: the default {e}; allowed: a window within the "
            "samples, given with --from/--to"
        ) from None

    figure = None
    if plot is not None:
        from ..outputs import write_file
        from ..plots import throughput_over_time
        from .run import write_panel

        window = tuple(report["window"])
        if as_panel:
            figure = write_panel(
                result, plot, smooth_s, panel_list, force=force, option="--plot", window=window
            )
        else:
            figure = write_file(
                plot,
                lambda p: throughput_over_time(result, p, by=by, window=window),
                force=force,
                option="--plot",
            )
        report["figure"] = str(figure)

    if fmt == "json":
        click.echo(json.dumps(_json_safe(report), indent=2))
    elif fmt == "csv":
        click.echo(_csv(report, per_interval), nl=False)
    else:
        _print_table(report, per_interval)
    for note in report["notes"]:
        click.echo(f"note: {note}", err=True)


#: the sampling intervals --interval allows (a capture's per-interval series)
MIN_INTERVAL_S, MAX_INTERVAL_S = 1e-3, 3600.0


def _capture_interval(interval: str | None, files: tuple[Path, ...]) -> float | None:
    """``--interval`` in seconds, checked: a duration from 1 ms to 60 min, for captures only."""
    if interval is None:
        return None
    from ..importers import file_kind
    from ..units import UnitError, parse_time

    try:
        seconds = parse_time(interval, allow_zero=False) / 1e9
    except UnitError as e:
        raise UserError(f"--interval {interval!r}: {e}; allowed: a duration, e.g. 1s") from None
    if not MIN_INTERVAL_S <= seconds <= MAX_INTERVAL_S:
        raise UserError(f"--interval {interval}: out of range; allowed: 1ms to 60min")
    for f in files:
        if not f.is_file():
            continue  # the reader says what is wrong with it
        kind = file_kind(f)
        if kind != "capture":
            raise UserError(
                f"--interval: {f} is {'iperf3 output' if kind == 'iperf3' else 'a Flent file'}"
                ", which brings its own intervals; --interval is for packet captures"
            )
    return seconds


# ---------------------------------------------------------------------------- computing
def fairness_report(
    result: Any,
    window: tuple[float | None, float | None],
    by: str = "flow",
    per_interval: bool = False,
) -> dict[str, Any]:
    """Everything ``tcpfair fairness`` prints, as a dict: ``RunResult.fairness_report``
    (kept under this name for the Python API)."""
    report: dict[str, Any] = result.fairness_report(window, by=by, per_interval=per_interval)
    return report


# ---------------------------------------------------------------------------- output
def _fmt_rate(bps: float) -> str:
    from ..units import format_rate

    return "–" if bps is None or math.isnan(bps) else f"{format_rate(bps)}/s"


def _fmt(v: float | None, spec: str) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def _print_table(report: dict[str, Any], per_interval: bool) -> None:
    from rich.markup import escape
    from rich.table import Table

    console = table_console(160)
    lo, hi = report["window"]
    t = Table(title=f"fairness over {lo:g}–{hi:g} s")
    cols = [
        "flow" if report["by"] == "flow" else "group",
        "label",
        "cca",
        "throughput",
        "share",
        "retransmits" + (" (run)" if report["retransmits_whole_run"] else ""),
        "mean RTT",
    ]
    for c in cols:
        t.add_column(c, justify="left" if c in ("label", "cca") else "right")
    for r in report["rows"]:
        ident = r["flow"] if report["by"] == "flow" else r["group"]
        retr = r["retransmits"]
        rtt = r["mean_rtt_s"]
        t.add_row(
            str(ident),
            escape(str(r["label"])),  # a user's label is text, never rich markup
            r["cca"],
            _fmt_rate(r["throughput_bps"]),
            _fmt(100 * r["share"], ".1f") + " %",
            "–" if math.isnan(retr) else f"{retr:.0f}",
            "–" if math.isnan(rtt) else f"{rtt * 1e3:.3g} ms",
        )
    console.print(t)
    parts = [
        f"JFI {_fmt(report['jfi'], '.4f')}",
        f"min/max {_fmt(report['min_max_ratio'], '.3f')}",
        f"sum {_fmt_rate(report['sum_bps'])}",
    ]
    if report["utilization"] is not None:
        parts.append(f"utilization {100 * report['utilization']:.1f} %")
    parts.append(
        f"per-interval JFI mean {_fmt(report['jfi_per_interval_mean'], '.4f')} "
        f"({report['intervals']} intervals)"
    )
    # Piped: one line (scripts read it whole). On a terminal: wrapped between the parts'
    # words at its width (soft-wrapped, the terminal broke "intervals" across lines at 80).
    console.print("  ".join(parts), soft_wrap=not console.is_terminal)
    if per_interval and not report["per_interval"]:
        console.print("JFI per interval: no interval in which every flow has a sample")
    elif per_interval:
        pt = Table(title="JFI per interval")
        pt.add_column("t (s)", justify="right")
        pt.add_column("JFI", justify="right")
        names = list(report["per_interval"][0]["throughput_bps"]) if report["per_interval"] else []
        for n in names:
            pt.add_column(n, justify="right")
        for row in report["per_interval"]:
            pt.add_row(
                f"{row['t_s']:g}",
                f"{row['jfi']:.4f}",
                *[_fmt_rate(row["throughput_bps"][n]) for n in names],
            )
        console.print(pt)
    if report.get("figure"):
        console.print(f"figure: {report['figure']}")


def _csv(report: dict[str, Any], per_interval: bool) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if per_interval:
        names = list(report["per_interval"][0]["throughput_bps"]) if report["per_interval"] else []
        w.writerow(["t_s", "jfi", *[f"{n}_bps" for n in names]])
        for row in report["per_interval"]:
            w.writerow(
                [
                    _num(row["t_s"]),
                    _num(row["jfi"]),
                    *[_num(row["throughput_bps"][n]) for n in names],
                ]
            )
        return buf.getvalue()
    key = "flow" if report["by"] == "flow" else "group"
    # one table: `kind` says which rows are flows (or groups) and which is the summary
    w.writerow(
        [
            "kind",
            key,
            "label",
            "cca",
            "throughput_bps",
            "share",
            # windowed, unless the files only have whole-run totals (then labelled so)
            "retransmits_run" if report["retransmits_whole_run"] else "retransmits",
            "mean_rtt_s",
            "window_bytes",
            "bytes_run",
            "jfi",
            "min_max_ratio",
            "window_from_s",
            "window_to_s",
        ]
    )
    for r in report["rows"]:
        w.writerow(
            [
                key,
                r[key],
                r["label"],
                r["cca"],
                _num(r["throughput_bps"]),
                _num(r["share"]),
                _num(r["retransmits"]),
                _num(r["mean_rtt_s"]),
                r["window_bytes"],
                r["bytes_run"],
                "",
                "",
                "",
                "",
            ]
        )
    lo, hi = report["window"]
    w.writerow(
        [
            "all",
            "all",
            "all",
            "",
            _num(report["sum_bps"]),
            _num(1.0 if report["sum_bps"] > 0 else math.nan),
            "",
            "",
            sum(r["window_bytes"] for r in report["rows"]),
            sum(r["bytes_run"] for r in report["rows"]),
            _num(report["jfi"]),
            _num(report["min_max_ratio"]),
            _num(lo),
            _num(hi),
        ]
    )
    return buf.getvalue()


def _num(v: Any) -> str:
    if v is None:
        return ""
    f = float(v)
    if math.isnan(f):
        return ""
    return repr(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)


def _json_safe(x: Any) -> Any:
    import numpy as np  # (loaded already: the report was computed with it)

    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        f = float(x)
        return f if math.isfinite(f) else (None if math.isnan(f) else ("inf" if f > 0 else "-inf"))
    return x


if __name__ == "__main__":  # pragma: no cover
    sys.exit(fairness())
