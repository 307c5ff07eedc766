"""``tcpfair run scenario.toml``: one scenario on one backend."""

from __future__ import annotations

from pathlib import Path

import click

from . import friendly_errors


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
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run directory to write (default: results/<name>-<hash>).",
)
@click.option(
    "--plot/--no-plot",
    default=True,
    show_default=True,
    help="Write throughput.png in the run directory.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@friendly_errors
def run(
    scenario: Path,
    backend: str,
    overrides: tuple[str, ...],
    output: Path | None,
    plot: bool,
    fmt: str,
) -> None:
    """Run SCENARIO (a TOML file) and print the per-flow fairness table."""
    import json

    from .. import load_scenario
    from ..backends import get_backend
    from ..report import print_run_summary

    sc = load_scenario(scenario, list(overrides))
    be = get_backend(backend)
    be.check(sc)
    result = be.run(sc, progress=fmt == "table")
    out = output or Path("results") / f"{sc.name}-{sc.hash()}-{backend}"
    result.save(out)
    figure = None
    if plot:
        from ..plots import throughput_over_time

        figure = throughput_over_time(result, out / "throughput.png")
    if fmt == "json":
        click.echo(
            json.dumps(
                {
                    "run_dir": str(out),
                    "metrics": result.metrics(),
                    "valid": result.meta.get("valid", True),
                    "checks": result.meta.get("checks", []),
                },
                indent=2,
            )
        )
    else:
        from ..kernel.display import print_checks

        print_run_summary(result, title=f"{sc.name} ({backend})")
        print_checks(result)
        click.echo(f"run directory: {out}")
        if figure:
            click.echo(f"figure: {figure}")
