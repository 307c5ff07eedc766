"""``tcpfair run scenario.toml``: one scenario on one backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from . import UserError, file_or_builtin, friendly_errors, table_console

#: exit status of a run the kernel backend graded invalid (its results are saved anyway);
#: 2 is bad input, 70 a bug, 130 an interrupt
EXIT_INVALID = 3


@click.command()
@click.argument("scenario", type=click.Path(path_type=Path))
@click.option(
    "--backend", "-b", type=click.Choice(["sim", "kernel"]), default="sim", show_default=True
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a scenario key, e.g. --set flows.1.cca=cubic (flows count from 0).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Run directory to write: a new path, an empty directory, or an earlier run folder "
    "with --force (default: results/<name>-<hash>-<backend>, or the first free -2, -3, …).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an earlier run folder at -o (or the default folder) once the new run is done.",
)
@click.option(
    "--plot/--no-plot",
    default=True,
    show_default=True,
    help="Write throughput.png and the run panel (run.png + run.csv, its data) in the run "
    "directory.",
)
@click.option(
    "--smooth",
    default=None,
    metavar="DURATION",
    help="Average the panel's throughput over intervals of DURATION (e.g. 1s); bytes kept.",
)
@click.option(
    "--panels",
    default=None,
    metavar="LIST",
    help="Panels of run.png, comma-separated: throughput,cwnd,rtt,queue,queue_pkts,jfi "
    "(default: all but queue_pkts, those that have data).",
)
@click.option(
    "--plot-format",
    type=click.Choice(["png", "svg", "pdf"]),
    default="png",
    show_default=True,
    help="File type of the run panel.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option(
    "--capture",
    is_flag=True,
    help="Kernel backend: also save capture.pcap, the packets on the far side of the "
    "bottleneck (headers only); tcpfair fairness reads it.",
)
@click.option(
    "--accept-invalid",
    is_flag=True,
    help="Exit 0 even if the kernel backend grades the run invalid (otherwise exit status "
    f"{EXIT_INVALID}; the run is saved either way).",
)
@friendly_errors
def run(
    scenario: Path,
    backend: str,
    overrides: tuple[str, ...],
    output: Path | None,
    force: bool,
    plot: bool,
    smooth: str | None,
    panels: str | None,
    plot_format: str,
    fmt: str,
    capture: bool,
    accept_invalid: bool,
) -> None:
    """Run SCENARIO (a TOML file, or the name of a built-in one: tcpfair scenarios lists
    them) and print the per-flow fairness table. A path that exists is used before a name."""
    import json

    from .. import load_scenario
    from ..backends import get_backend
    from ..outputs import default_run_target, run_target, write_file

    sc = load_scenario(file_or_builtin(scenario, "scenario"), list(overrides))
    smooth_s, panel_list = figure_options(smooth, panels)
    if capture and backend != "kernel":
        raise UserError(
            f"--capture: only with --backend kernel (the {backend} backend has no packets "
            "to capture; its run directory already holds every flow's samples)"
        )
    be = get_backend(backend)
    if capture:
        import dataclasses

        be.options = dataclasses.replace(be.options, capture=True)  # type: ignore[attr-defined]
    be.check(sc)
    # where the result goes is decided before the run (a kernel run takes minutes)
    if output is not None:
        target = run_target(output, force=force)
    else:
        default = Path("results") / f"{sc.name}-{sc.hash()}-{backend}"
        target = default_run_target(default, force=force)
        if target.path != default:
            click.echo(
                f"note: {default} exists; writing {target.path} "
                "(--force replaces an earlier run there)",
                err=True,
            )
    result = be.run(sc, progress=fmt == "table")
    out = result.save(target.path, force=target.replace)
    figure = None
    if plot:
        from ..plots import throughput_over_time

        def draw(p: Path) -> Path:
            throughput_over_time(result, p)
            if not result.meta.get("valid", True):
                from ..plots import watermark

                watermark(p, "INVALID")
            return p

        figure = write_file(out / "throughput.png", draw, option="figure")
        panel = write_panel(result, out / f"run.{plot_format}", smooth_s, panel_list)
    if fmt == "json":
        click.echo(
            json.dumps(
                {
                    "run_dir": str(out),
                    "metrics": result.metrics(),
                    "valid": result.meta.get("valid", True),
                    "grade": result.meta.get("grade", "ok"),
                    "checks": result.meta.get("checks", []),
                },
                indent=2,
            )
        )
    else:
        from ..kernel.display import print_checks
        from ..report import print_run_summary

        print_run_summary(result, title=f"{sc.name} ({backend})", console=table_console())
        print_checks(result)
        click.echo(f"run directory: {out}")
        if figure:
            click.echo(f"figure: {figure}")
        if "capture" in result.meta:
            c = result.meta["capture"]
            click.echo(f"capture: {out / c['file']} ({c['packets']} packets)")
        if plot and panel:
            click.echo(f"panel: {panel} (data: {panel.with_suffix('.csv')})")
    _exit_if_invalid(result.meta, out, accept_invalid)


def figure_options(smooth: str | None, panels: str | None) -> tuple[float | None, list[str] | None]:
    """``--smooth`` in seconds and ``--panels`` as a list, checked before the run."""
    from ..units import UnitError, parse_time

    smooth_s = None
    if smooth is not None:
        try:
            smooth_s = parse_time(smooth, allow_zero=False) / 1e9
        except UnitError as e:
            raise UserError(f"--smooth {smooth!r}: {e}; allowed: a duration > 0, e.g. 1s") from None
    panel_list = None
    if panels is not None:
        from ..panels import PANELS

        panel_list = [p.strip() for p in panels.split(",") if p.strip()]
        bad = [p for p in panel_list if p not in PANELS] or ([] if panel_list else [panels])
        if bad:
            raise UserError(
                f"--panels {panels!r}: unknown panel {bad[0]!r}; allowed: {', '.join(PANELS)}"
            )
    return smooth_s, panel_list


def write_panel(
    result: Any,
    path: Path,
    smooth_s: float | None,
    panels: list[str] | None,
    *,
    force: bool = False,
    option: str = "figure",
    window: tuple[float, float] | None = None,
) -> Path | None:
    """The run panel at ``path`` and its data (a CSV of the same name) beside it, each
    written atomically; None when no requested panel has data."""
    from ..outputs import write_file
    from ..panels import DEFAULT_PANELS
    from ..plots import run_panel, run_panel_data

    wanted = panels or list(DEFAULT_PANELS)
    data = run_panel_data(result, smooth_s, wanted)
    if not len(data):
        click.echo("note: no requested panel has data; run panel not written", err=True)
        return None
    stamp = None if result.meta.get("valid", True) else "INVALID"
    csv = path.with_suffix(".csv")
    write_file(csv, lambda p: data.to_csv(p, index=False), force=force, option=option)
    return write_file(
        path,
        lambda p: run_panel(result, p, data, panels=wanted, window=window, stamp=stamp),
        force=force,
        option=option,
    )


def _exit_if_invalid(meta: dict[str, Any], out: Path, accept_invalid: bool) -> None:
    """One line and exit status 3 for a run graded invalid, unless it was accepted."""
    import sys

    if meta.get("valid", True) or accept_invalid:
        return
    failed = [
        str(c.get("name"))
        for c in meta.get("checks", [])
        if isinstance(c, dict) and not c.get("ok", True)
    ]
    click.echo(
        f"error: run INVALID (failed: {', '.join(failed) or '?'}); saved in {out} — "
        f"--accept-invalid exits 0 for such runs",
        err=True,
    )
    sys.exit(EXIT_INVALID)
