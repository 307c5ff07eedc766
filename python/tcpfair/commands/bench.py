"""``tcpfair bench``: simulator speed on the standard scenarios."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from . import UserError, friendly_errors, table_console

if TYPE_CHECKING:
    from ..bench import BenchResult


@click.command()
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="NAME",
    help="Run only these scenarios (A1, A1-sack, N2 … N10000, N2-10g … N10000-10g, G10, "
    "A1-sack-10g, N200-S1000); repeatable.",
)
@click.option(
    "--duration", default="60s", show_default=True, help="Simulated time of the A1 scenarios."
)
@click.option("--quick", is_flag=True, help="Short scaling runs (5 s instead of 20 s).")
@click.option(
    "--repeat",
    type=click.IntRange(1, 20),
    default=1,
    show_default=True,
    help="Run each scenario N times and keep the fastest (the least disturbed).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@friendly_errors
def bench(only: tuple[str, ...], duration: str, quick: bool, repeat: int, fmt: str) -> None:
    """Measure bottleneck packets and events per wall-clock second, and peak memory.

    Each scenario runs in its own process, one at a time, on one core. Results depend on
    what else the machine is doing: measure on a quiet machine.
    """
    from ..bench import as_dict, run_one, scenarios

    _check_duration(duration)
    all_sc = scenarios(duration, quick)
    names = list(only) or list(all_sc)
    unknown = [n for n in names if n not in all_sc]
    if unknown:
        raise UserError(f"--only: unknown scenario {unknown[0]!r}; allowed: {', '.join(all_sc)}")
    results = [
        min((run_one(n, all_sc[n]) for _ in range(repeat)), key=lambda r: r.wall_s) for n in names
    ]
    if fmt == "json":
        click.echo(json.dumps([as_dict(r) for r in results], indent=2))
        return
    _print_results(results)
    _print_scaling(results)


def _check_duration(duration: str) -> None:
    """``--duration`` before any scenario runs: a bad one was reported only when the A1
    scenarios were built, as "invalid scenario: duration: …" (or, too short for their 1 s
    sampling interval, as a problem of measure.interval), after the scenarios before them
    had run."""
    from ..spec import MAX_DURATION_NS
    from ..units import UnitError, parse_time

    try:
        ns = parse_time(duration, allow_zero=False)
    except UnitError as e:
        raise UserError(f"--duration {duration!r}: {e}") from None
    if not 10**9 <= ns <= MAX_DURATION_NS:
        raise UserError(
            f"--duration {duration!r}: out of range; allowed: 1s (the A1 scenarios sample "
            "every second) to 86400s"
        )


def _print_results(results: list[BenchResult]) -> None:
    """The results table; on a terminal too narrow for all eleven columns (the full table
    needs ~130), a compact one that keeps the rates whole instead of cutting every number
    with '…', and says where the rest is."""
    from rich.measure import Measurement
    from rich.table import Table

    from .._core import PROFILE_GUIDED

    build = "profile-guided build" if PROFILE_GUIDED else "build without a profile: slower"
    title = f"tcpfair bench (simulator, {build})"
    t = Table(title=title)
    for col in (
        "scenario",
        "flows",
        "short flows",
        "sim s",
        "wall s",
        "bottleneck pkts",
        "pkts/s",
        "events/s",
        "util",
        "peak RSS MB",
        "bytes/flow",
    ):
        t.add_column(col, justify="right")
    for r in results:
        t.add_row(
            r.name,
            str(r.flows),
            f"{r.short_flows:,}",
            f"{r.simulated_s:g}",
            f"{r.wall_s:.3f}",
            f"{r.bottleneck_packets:,}",
            f"{r.pkts_per_s:,.0f}",
            f"{r.events_per_s:,.0f}",
            f"{r.utilization:.3f}",
            f"{r.rss_peak_mb:.1f}",
            f"{r.bytes_per_flow:,.0f}",
        )
    console = table_console()
    natural = Measurement.get(console, console.options.update(max_width=10_000), t).maximum
    if natural <= console.width:
        console.print(t)
        return
    compact = Table(
        title=title,
        caption="narrow terminal: for the simulated time, packets, short flows and bytes "
        "per flow, use --format json or a wider window",
    )
    for col in ("scenario", "flows", "wall s", "M pkts/s", "M events/s", "util", "RSS MB"):
        compact.add_column(col, justify="right", no_wrap=col == "scenario")
    for r in results:
        compact.add_row(
            r.name,
            f"{r.flows:,}",
            f"{r.wall_s:.3f}",
            f"{r.pkts_per_s / 1e6:.2f}",
            f"{r.events_per_s / 1e6:.2f}",
            f"{r.utilization:.3f}",
            f"{r.rss_peak_mb:.1f}",
        )
    console.print(compact)


def _print_scaling(results: list[BenchResult]) -> None:
    """The per-packet cost against the number of flows, if scaling cases ran."""
    from rich.table import Table

    from ..bench import scaling_rows

    rows = scaling_rows(results)
    if not rows:
        return
    t = Table(title="scaling (wall ns and events per bottleneck packet)")
    for col in ("scenario", "flows", "ns/packet", "events/packet", "x fewest flows"):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(
            r.name,
            f"{r.flows:,}",
            f"{r.ns_per_packet:,.0f}",
            f"{r.events_per_packet:.2f}",
            f"{r.vs_fewest:.2f}",
        )
    table_console().print(t)
