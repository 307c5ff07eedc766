"""``tcpfair run scenario.toml``: one scenario on one backend."""

from __future__ import annotations

from pathlib import Path

import click

from . import friendly_errors


@click.command()
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
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
    force: bool,
    plot: bool,
    fmt: str,
) -> None:
    """Run SCENARIO (a TOML file) and print the per-flow fairness table."""
    import json

    from .. import load_scenario
    from ..backends import get_backend
    from ..outputs import default_run_target, run_target, write_file
    from ..report import print_run_summary

    sc = load_scenario(scenario, list(overrides))
    be = get_backend(backend)
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

        figure = write_file(
            out / "throughput.png",
            lambda p: throughput_over_time(result, p),
            option="figure",
        )
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
