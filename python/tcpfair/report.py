"""Terminal tables for results (rich)."""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .result import RunResult
from .units import format_rate

#: below this many packet times in the window, one packet is more than 1 % of its capacity
COARSE_WINDOW_PACKETS = 100


def _print_coarse_window(result: RunResult, window_s: float, console: Console) -> None:
    """Say so when the window holds too few packet times for the figures to be smooth:
    bytes count when a packet is delivered, so at 1 kbit/s a 10 s window moves in steps of
    one 1500 B packet (1.2 kbit/s, 120 % of the link) and utilization can pass 100 %."""
    cap = result.meta.get("capacity_bps")
    mtu = ((result.scenario or {}).get("bottleneck") or {}).get("mtu_bytes")
    if not cap or not mtu or window_s <= 0:
        return
    packets = window_s * cap / (8 * mtu)
    if packets < COARSE_WINDOW_PACKETS:
        step = 8 * mtu / window_s
        console.print(
            f"note: the window ({window_s:g} s) holds {packets:.3g} packet times at "
            f"{format_rate(cap)}/s; bytes count when a packet is delivered, so the figures "
            f"move in steps of one packet ({format_rate(step)}/s, "
            f"{100 * step / cap:.3g} % of the link) and utilization can pass 100 % — "
            "a longer window (measure.from/to, duration) smooths them"
        )


def print_run_summary(result: RunResult, title: str = "", console: Console | None = None) -> None:
    console = console or Console()
    met = result.metrics()
    lo, hi = met["window"]
    # numpy columns, in the order of the flows table (no pandas: tcpfair run's start-up)
    thr = result.flow_throughput_values()
    # every figure in the table is over the window; a flow whose samples carry no
    # per-interval count shows its whole-run total, and the column says so
    retr, whole_run = result.flow_retransmit_values()
    retr_col = "retransmits" + (" (run)" if whole_run.any() else "")
    t = Table(title=f"{title}  window {lo:g}–{hi:g} s" if title else f"window {lo:g}–{hi:g} s")
    dirs = result.direction_values()
    two_way = bool((dirs == "reverse").any())
    cols = ("flow", "label", "cca", *(("direction",) if two_way else ()), "rtt", "throughput")
    for col in (*cols, "share", retr_col):
        t.add_column(
            col, justify="left" if col in ("label", "cca", "direction", "rtt") else "right"
        )
    # a connection's share is of its own direction's total (NaN throughputs left out)
    totals = {d: float(np.nansum(thr[dirs == d])) or 1.0 for d in set(dirs)}
    flows = zip(
        *(result.column("flows", c) for c in ("flow", "label", "cca", "rtt_s")), strict=True
    )
    for i, (flow, label, cca, rtt_s) in enumerate(flows):
        x = float(thr[i])
        rtt = "" if rtt_s != rtt_s else f"{rtt_s * 1e3:g} ms"
        r = float(retr[i])
        retr_text = "–" if r != r else f"{r:.0f}"  # NaN: unknown (e.g. iperf3 receiver side)
        t.add_row(
            str(flow),
            escape(str(label)),  # a user's label is text, never rich markup
            str(cca),
            *((str(dirs[i]),) if two_way else ()),
            rtt,
            format_rate(x) + "/s",
            f"{100 * x / totals[dirs[i]]:.1f} %",
            retr_text,
        )
    console.print(t)
    _print_groups(met, console)
    util = met["utilization"]
    measured = met.get("measured_flows")
    if measured is not None:
        console.print(
            escape(f"measured ([measure] flows): {', '.join(measured)}")
            + f" — {met['n_flows']} connections"
        )
    parts = [
        f"JFI {met['jfi']:.4f}",
        f"min/max {met['min_max_ratio']:.3f}",
        f"sum {format_rate(met['sum_bps'])}/s",
    ]
    if met.get("jfi_per_interval_mean") == met.get("jfi_per_interval_mean"):
        parts.append(f"per-interval JFI mean {met['jfi_per_interval_mean']:.4f}")
    if util == util:
        parts.append(f"utilization {100 * util:.1f} %")
        um = met.get("utilization_measured")
        if um is not None and um == um:
            parts[-1] += f" (measured connections {100 * um:.1f} %)"
    console.print("  ".join(parts))
    _print_coarse_window(result, hi - lo, console)
    _print_reverse(met, console)
    if result.rows("flows"):  # the long-lived connections' (short flows: in their table)
        run_end = _run_end(result)
        console.print(f"whole run (0–{run_end:g} s): {met['retransmits_run']} retransmits")
    _print_short_flows(met, console)


def _ms(x: float) -> str:
    return "–" if x != x else f"{x * 1e3:.1f}"


def _x(x: float) -> str:
    return "–" if x != x else f"{x:.2f}"


def _print_short_flows(met: dict[str, Any], console: Console) -> None:
    """Short flows (arrivals) by size bucket: FCT and slowdown over the completed ones."""
    sf = met.get("short_flows")
    if not sf:
        return
    lo, hi = sf["window"]
    t = Table(
        title=f"short flows started in {lo:g}–{hi:g} s, FCT in ms (not in the JFI or sum above)"
    )
    cols = ("size", "flows", "unfinished", "FCT mean", "med", "p99", "slowdown med", "p99")
    for col in cols:
        t.add_column(
            col, justify="left" if col == "size" else "right", no_wrap=col in ("size", "unfinished")
        )
    per_label = [(f"{lab}: all", b) for lab, b in sf.get("labels", {}).items()]
    for name, b in [*sf["buckets"].items(), ("all", sf["all"]), *per_label]:
        if not b["flows"]:
            continue
        t.add_row(
            name,
            str(b["flows"]),
            str(b["unfinished"]),
            _ms(b["fct_mean_s"]),
            _ms(b["fct_median_s"]),
            _ms(b["fct_p99_s"]),
            _x(b["slowdown_median"]),
            _x(b["slowdown_p99"]),
        )
    console.print(t)


def _print_reverse(met: dict[str, Any], console: Console) -> None:
    """The reverse direction's line (its connections apart from the headline metrics)."""
    rev = met.get("reverse")
    if rev is None:
        return
    parts = [f"reverse: {rev['connections']} connections, sum {format_rate(rev['sum_bps'])}/s"]
    if rev["connections"] > 1:
        parts.append(f"JFI {rev['jfi']:.4f}")
    if rev["utilization"] == rev["utilization"]:
        parts.append(f"utilization {100 * rev['utilization']:.1f} %")
    if rev["queue_mean_bytes"] == rev["queue_mean_bytes"]:
        parts.append(
            f"queue mean {rev['queue_mean_bytes'] / 1e3:.1f} kB, max "
            f"{rev['queue_max_bytes'] / 1e3:.1f} kB"
        )
    parts.append(f"drops {rev['drops']} (ACKs {rev['ack_drops']})")
    if "retransmits" in rev:  # summaries saved before it existed lack it
        parts.append(f"retransmits {rev['retransmits']}")
    console.print("  ".join(parts))
    scope = "forward connections" if met.get("measured_flows") is None else "[measure] flows"
    console.print(
        escape(
            f"(JFI, min/max, sum and retransmits above: {scope}; utilization: the forward "
            "link) reverse "
            f"connections' ACKs lost on the forward link: {rev['forward_ack_drops']}"
        )
    )


def _print_groups(met: dict[str, Any], console: Console) -> None:
    """The per-group table (connections sharing a label), when some group has several."""
    groups = met.get("groups") or {}
    if len(groups) < 2 or all(g["connections"] == 1 for g in groups.values()):
        return
    t = Table(title="groups (connections sharing a label)")
    for col in ("group", "connections", "sum", "mean per connection", "share of link", "JFI"):
        t.add_column(col, justify="left" if col == "group" else "right")
    for label, g in groups.items():
        share = g["share"]
        t.add_row(
            escape(label),
            str(g["connections"]),
            format_rate(g["sum_bps"]) + "/s",
            format_rate(g["mean_bps"]) + "/s",
            "–" if share != share else f"{100 * share:.1f} %",
            "–" if g["jfi"] != g["jfi"] else f"{g['jfi']:.4f}",
        )
    console.print(t)
    for pair, r in (met.get("group_ratios") or {}).items():
        console.print(escape(f"mean per connection {pair}: {r:.3f}"))


def _run_end(result: RunResult) -> float:
    span = result.data_span()
    return span[1] if span else 0.0
