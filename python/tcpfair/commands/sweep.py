"""``tcpfair sweep``, ``tcpfair results`` and ``tcpfair compare``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from .._text import count
from . import UserError, echo_prose, file_or_builtin, friendly_errors, table_console

FORMAT_HELP = "Figure formats, comma-separated: png, svg, pdf."


def _formats(text: str) -> list[str]:
    from ..outputs import FORMATS

    fmts = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad or not fmts:
        raise UserError(f"--format {text!r}: allowed formats are {', '.join(FORMATS)}")
    return fmts


def _wrap(fn: Any) -> Any:
    """friendly_errors, plus the errors of this module's layers."""
    import functools

    @functools.wraps(fn)
    def inner(*args: Any, **kwargs: Any) -> Any:
        import sys

        from ..sweep import SweepError

        try:
            return fn(*args, **kwargs)
        except SweepError as e:
            raise UserError(str(e)) from None
        except Exception as e:
            # a StoreError comes only from tcpfair.store, so it is imported if one was raised;
            # importing it here first would load pandas on every error path (issue 14)
            store = sys.modules.get("tcpfair.store")
            if store is not None and isinstance(e, store.StoreError):
                raise UserError(str(e)) from None
            if type(e) is not ValueError:
                raise
            # our own checks (axes, metrics); SpecError is handled by friendly_errors
            raise UserError(str(e)) from None

    return friendly_errors(inner)


# --------------------------------------------------------------------------- sweep
@click.command()
@click.argument("sweep_file", metavar="SWEEP.toml", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--backend",
    "-b",
    type=click.Choice(["sim", "kernel"]),
    default=None,
    help="Backend (default: the sweep file's 'backend', else sim).",
)
@click.option(
    "-j",
    "--jobs",
    type=int,
    default=None,
    help="Parallel runs (default: CPU cores for sim; the kernel backend runs one at a time).",
)
@click.option(
    "--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Dask scheduler address (tcp://host:8786); default: a LocalCluster of -j workers.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Results directory: an existing store (resumed), a new path or an empty directory "
    "(default: results/<sweep name>); several sweeps may share one.",
)
@click.option(
    "--axis",
    "axis_overrides",
    multiple=True,
    metavar="KEY=VALUES",
    help="Replace an axis's values: --axis 'flows.1.cca=[\"newreno\"]' (a TOML list or range).",
)
@click.option("--retry-failed", is_flag=True, help="Run again the runs that failed before.")
@click.option("--dry-run", is_flag=True, help="Validate and list the runs; run nothing.")
@click.option("--progress/--no-progress", default=True, show_default=True)
@click.option(
    "--figures/--no-figures",
    default=True,
    show_default=True,
    help="Draw the sweep file's [[plots]] into <results>/figures/<sweep>/ when done.",
)
@click.option("--format", "fmt", default="png,svg", show_default=True, help=FORMAT_HELP)
@_wrap
def sweep(
    sweep_file: Path,
    backend: str | None,
    jobs: int | None,
    executor: str,
    scheduler: str | None,
    output: Path | None,
    axis_overrides: tuple[str, ...],
    retry_failed: bool,
    dry_run: bool,
    progress: bool,
    figures: bool,
    fmt: str,
) -> None:
    """Run every point × repeat of SWEEP.toml (or a built-in sweep by name, e.g.
    sweeps/cubic-fig8) into a results store; finished runs are skipped, so the same command
    resumes an interrupted sweep."""
    from ..outputs import check_store_target
    from ..sweep import load_sweep

    formats = _formats(fmt)
    sw = load_sweep(file_or_builtin(sweep_file, "sweep"))
    if axis_overrides:
        sw = sw.with_axes(list(axis_overrides))
    be = backend or sw.backend or "sim"
    store_dir = output if output is not None else Path("results") / sw.name
    check_store_target(store_dir, option="-o" if output is not None else "results folder")
    from ..executors import make_executor  # after the checks: imports pandas
    from ..orchestrate import run_sweep

    ex = make_executor(executor, be, jobs, scheduler)  # checks -j and --scheduler too
    if dry_run:
        _dry_run(sw, be, machine=not getattr(ex, "kernel", False))  # Dask workers check theirs
        return
    rep = run_sweep(
        sw, backend=be, executor=ex, output=store_dir, retry_failed=retry_failed, progress=progress
    )
    s = rep.store
    echo_prose(
        f"{sw.name} on {be}: {count(rep.total, 'run')} ({count(sw.n_points(), 'point')} × "
        f"{count(sw.repeats, 'repeat')}); ran {rep.ran} in {rep.wall_s:.1f} s "
        f"({rep.finished} finished, {rep.failed} failed); "
        f"{rep.already_done} {'was' if rep.already_done == 1 else 'were'} done before"
        + (f", {rep.adopted} recovered" if rep.adopted else "")
    )
    if rep.damaged:
        first = next(iter(rep.damaged.values()))
        echo_prose(
            f"{len(rep.damaged)} runs recorded as done had damaged files (e.g. {first[0]}); "
            f"they ran again, the damaged files are kept in {s.root / 'runs' / be}/.damaged-*"
        )
    if rep.skipped_failed:
        echo_prose(
            f"{rep.skipped_failed} runs failed earlier and were skipped; --retry-failed runs them again"
        )
    if rep.errors:
        _print_errors(rep.errors)
    _note_invalid(s.table(sweep=sw.name, backend=be))
    click.echo(f"results: {s.root}")
    if figures and sw.plots:
        if progress:  # seed 001's 14 figures take ~10 s: say what is going on
            n = len(sw.plots)
            click.echo(f"drawing the sweep's {n} plot{'s' * (n > 1)} …", err=True)
        paths = draw_plots(s, sw.name, be, sw.plots, s.root / "figures" / sw.name, formats)
        if paths:
            click.echo(f"figures: {paths[0].parent} ({len(paths)} files)")
    if rep.failed:
        raise SystemExit(1)


def _dry_run(sw: Any, be: str, machine: bool = True) -> None:
    """Validate every run and list the points, holding only their lines (not the runs)."""
    from ..executors import backend_check
    from ..orchestrate import validated
    from ..sweep import SweepError

    problems: list[tuple[str, str]] = []
    lines: list[str] = []
    n = 0
    check = backend_check(be) if machine else backend_check(be, machine=False)
    for r in validated(sw, be, check, problems):
        n += 1
        if r.repeat == 0:
            lines.append(
                "  " + ", ".join(f"{k}={v}" for k, v in r.axes.items()) + f"  [{r.point_hash}]"
            )
    if problems:
        raise SweepError(problems, sw.source)
    click.echo(
        f"{sw.name}: {count(sw.n_points(), 'point')} × {count(sw.repeats, 'repeat')} = "
        f"{count(n, 'run')} on {be}"
    )
    click.echo("\n".join(lines))


def _note_invalid(t: Any) -> None:
    """Finished runs the backend flagged (its accuracy checks failed), counted per check."""
    from collections import Counter

    if "valid" not in t.columns:
        return
    bad = t[(t["status"] == "done") & (t["valid"] == 0)]
    if bad.empty:
        return
    names: Counter[str] = Counter()
    for text in bad["failed_checks"].fillna(""):
        names.update(n for n in text.split(", ") if n)
    detail = ", ".join(f"{n} ({k}×)" for n, k in names.most_common(5))
    click.echo(
        f"note: {len(bad)} finished runs failed the backend's accuracy checks (column valid = 0)"
        + (f": {detail}" if detail else ""),
        err=True,
    )


def _print_errors(errors: dict[str, str]) -> None:
    from collections import Counter

    counts = Counter(errors.values())
    click.echo("failures:", err=True)
    for msg, n in counts.most_common(10):
        click.echo(f"  {n}× {msg}", err=True)


def draw_plots(
    store: Any,
    sweep: str,
    backend: str,
    plots: list[Any],
    out: Path,
    formats: list[str],
    *,
    force: bool = True,
    option: str = "figures",
) -> list[Path]:
    """Draw ``plots`` into the folder ``out`` (each figure written whole, then renamed into
    place); without ``force`` the folder must be new or empty (outputs.publish_figures)."""
    from ..outputs import publish_figures

    return publish_figures(
        lambda d: _draw(store, sweep, backend, plots, d, formats), out, force=force, option=option
    )


def _draw(
    store: Any, sweep: str, backend: str, plots: list[Any], out: Path, formats: list[str]
) -> list[Path]:
    from ..aggregate import aggregate

    table = store.table(sweep=sweep, backend=backend)
    axes = store.sweep_axes(sweep, backend)
    agg = aggregate(table, axes)
    if agg.empty or not agg["n"].gt(0).any():
        return []
    known = set(agg["metric"])
    for p in plots:  # every plot checked before any is drawn
        if p.kind not in ("bars", "cdf") and p.metric not in known:
            raise UserError(
                f"plots: unknown metric {p.metric!r}; metrics: {', '.join(dict.fromkeys(agg['metric']))}"
            )
    job = _PlotJob(store, sweep, backend, table, axes, agg, out, formats)
    # the kinds drawn from the aggregate alone may go to other processes; bars and cdf
    # read the runs through the store (its SQLite connection stays in this process)
    apart = [i for i, p in enumerate(plots) if p.kind in ("surface", "line", "box")]
    workers = _figure_workers(len(apart))
    drawn: dict[int, list[Path]] = {}
    if workers >= 2:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        from .. import surfaces  # noqa: F401 — imported once, here, for every child

        global _FORKED_JOB
        _FORKED_JOB = job  # the children inherit it (fork): nothing large is pickled
        try:
            # an executor, not a multiprocessing.Pool: a child that dies (out of memory)
            # breaks it with an error instead of leaving its plot waiting forever
            fork = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(workers, mp_context=fork) as pool:
                parts = list(pool.map(_draw_forked, [plots[i] for i in apart]))
        except BrokenProcessPool:
            raise UserError(
                "a process drawing the figures died (out of memory?); the runs are in the "
                "store: the same command draws the figures again without running them"
            ) from None
        finally:
            _FORKED_JOB = None
        drawn = dict(zip(apart, parts, strict=True))
    paths: list[Path] = []
    for i, p in enumerate(plots):
        paths += drawn[i] if i in drawn else job.draw(p)
    return paths


def _figure_workers(n_plots: int) -> int:
    """Processes to draw ``n_plots`` plots in (a sweep's figures are independent of each
    other: seed 001's 14 take ~10 s in one process): one per core, at most one per plot;
    one (in this process) where forking is not safe — another thread is running (a Dask
    client, a progress display) or the platform has no ``fork``."""
    import multiprocessing
    import os
    import threading

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if (
        n_plots < 2
        or threading.active_count() > 1
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        return 1
    return max(1, min(n_plots, cores or 1))


_FORKED_JOB: _PlotJob | None = None


def _draw_forked(p: Any) -> list[Path]:
    assert _FORKED_JOB is not None
    return _FORKED_JOB.draw(p)


@dataclass
class _PlotJob:
    """What drawing one of a sweep's plots needs: the store's table, its aggregate, where to
    write and in which formats."""

    store: Any
    sweep: str
    backend: str
    table: Any
    axes: list[str]
    agg: Any
    out: Path
    formats: list[str]

    def draw(self, p: Any) -> list[Path]:
        from ..surfaces import PlotStyle, box_figure, line_figure, surface_figure

        table, axes, agg, out, formats = self.table, self.axes, self.agg, self.out, self.formats
        title = f"{self.sweep} ({self.backend})"
        style = PlotStyle(p.title, p.xlabel, p.ylabel, p.log_x, p.log_y)
        if p.kind in ("bars", "cdf"):
            return _draw_per_flow(
                self.store, self.backend, table, axes, p, out, formats, title, style
            )
        if p.kind == "box":
            return box_figure(
                table, axes, p.metric, p.x, out, by=p.by, formats=formats, title=title, style=style
            )
        if p.kind == "surface":
            return surface_figure(agg, p.metric, p.x, p.y, out, formats, title=title, style=style)
        return line_figure(
            agg, p.metric, p.x, out, by=p.by, formats=formats, title=title, style=style
        )


def _draw_per_flow(
    store: Any,
    backend: str,
    table: Any,
    axes: list[str],
    p: Any,
    out: Path,
    formats: list[str],
    title: str,
    style: Any,
) -> list[Path]:
    """``bars`` (per-flow throughput over the repeats) and ``cdf`` (values of the runs'
    samples or per-run tables, pooled over the repeats of a point) figures."""
    from .. import surfaces as sf
    from ..outputs import RUN_TABLES

    if p.kind == "bars":
        names = sf.group_names(store, backend, table, axes)
        return sf.bars_figure(
            table, axes, p.x, out, formats, title=title, style=style, labels=names
        )
    paths: list[Path] = []
    frames = sf.cdf_frames(store, backend, table, axes, p.metric, p.by)
    if not frames:
        raise UserError(
            f"plots: no run has values for a cdf of {p.metric!r}"
            + (f" (a {RUN_TABLES[p.metric][0]} table)" if p.metric in RUN_TABLES else "")
        )
    for where, values in frames:
        slug = sf._slug(where)
        paths += sf.cdf_figure(
            values,
            out / f"{p.metric}-cdf{slug}",
            sf.cdf_xlabel(p.metric),
            formats,
            title=" ".join(
                s for s in (title, ", ".join(f"{k}={v}" for k, v in where.items())) if s
            ),
            style=style,
        )
    return paths


# --------------------------------------------------------------------------- results
@click.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--sweep", "sweep_name", default=None, help="Only this sweep.")
@click.option("--backend", default=None, help="Only this backend.")
@click.option(
    "--export",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the tidy table (one row per run) to a .csv or .parquet file.",
)
@click.option(
    "--aggregate",
    "aggregated",
    is_flag=True,
    help="With --export: write the per-point aggregates (mean, std, 95 % CI) instead.",
)
@click.option(
    "--plot",
    "metric",
    default=None,
    help="Draw METRIC (jfi, ratio, utilization, thr_g0_bps, mean:LABEL, ratio:A/B, …).",
)
@click.option(
    "--kind",
    default=None,
    help="Figure kind (with --plot): surface, line, box, bars, cdf (default: surface with "
    "--y, else line), as a sweep's [[plots]] kind.",
)
@click.option("--x", "x", default=None, help="Axis on x (with --plot).")
@click.option("--y", "y", default=None, help="Second axis: heatmap + 3-D surface (with --plot).")
@click.option(
    "--by", "by", default=None, help="One line per value of this axis (with --plot, no --y)."
)
@click.option(
    "--figures",
    type=click.Path(path_type=Path),
    default=None,
    help="Figure directory (default: DIRECTORY/figures/<sweep>).",
)
@click.option("--format", "fmt", default="png,svg", show_default=True, help=FORMAT_HELP)
@click.option(
    "--check", is_flag=True, help="Check the store's consistency (catalog vs run directories)."
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing --export file; write figures into a non-empty folder.",
)
@_wrap
def results(
    directory: Path,
    sweep_name: str | None,
    backend: str | None,
    export: Path | None,
    aggregated: bool,
    metric: str | None,
    kind: str | None,
    x: str | None,
    y: str | None,
    by: str | None,
    figures: Path | None,
    fmt: str,
    check: bool,
    force: bool,
) -> None:
    """Show the runs of a results store, export them, or plot them."""
    from ..aggregate import aggregate
    from ..outputs import check_figure_dir, check_file_target, write_file
    from ..store import Store

    if export is not None:
        _export_suffix(export)
        check_file_target(export, force=force, option="--export")
    if metric is not None and figures is not None:
        check_figure_dir(figures, force=force, option="--figures")
    s = Store(directory, readonly=True)
    if check:
        problems = s.check()
        for problem in problems:
            click.echo(problem)
        click.echo(f"{s.root}: " + (f"{len(problems)} problems" if problems else "consistent"))
        if problems:
            raise SystemExit(1)
        return
    if export is not None:
        if aggregated:
            name, be = s.select(sweep_name, backend)
            df = aggregate(s.table(sweep=name, backend=be), s.sweep_axes(name, be))
        else:
            df = s.table(sweep=sweep_name, backend=backend)
        write_file(export, lambda p: _write_table(df, p, export), force=force, option="--export")
        click.echo(f"wrote {len(df)} rows to {export}")
        return
    if metric is None and kind is not None:
        raise UserError("--kind goes with --plot METRIC")
    if metric is not None:
        if x is None and kind != "cdf":
            raise UserError(
                "--plot needs --x AXIS (and --y AXIS for a surface, or --by AXIS for lines)"
            )
        name, be = s.select(sweep_name, backend)
        plot = _plot_from_options(
            metric, kind or ("surface" if y else "line"), x, y, by, s.sweep_axes(name, be), name
        )
        out = figures or s.root / "figures" / name
        paths = draw_plots(
            s,
            name,
            be,
            [plot],
            out,
            _formats(fmt),
            force=force or figures is None,
            option="--figures",
        )
        for p in paths:
            click.echo(str(p))
        return
    _print_overview(s, sweep_name, backend)


#: a [[plots]] key → the `results` option that sets it (for messages)
_PLOT_OPTIONS = {"kind": "--kind", "metric": "--plot", "x": "--x", "y": "--y", "by": "--by"}


def _plot_from_options(
    metric: str,
    kind: str,
    x: str | None,
    y: str | None,
    by: str | None,
    axes: list[str],
    sweep_name: str,
) -> Any:
    """The figure ``results --plot`` asked for, checked as a sweep's ``[[plots]]`` table is
    (the same kinds and rules); a problem becomes one line naming the option."""
    from ..sweep import _load_plots

    problems: list[tuple[str, str]] = []
    table = {k: v for k, v in (("kind", kind), ("metric", metric), ("x", x), ("y", y), ("by", by))}
    given = [{k: v for k, v in table.items() if v is not None}]
    # the axes' names are what the rules need (their values only for log scales, which
    # the command line does not set)
    plots = _load_plots(given, {a: [] for a in axes}, problems)
    if problems:
        where, what = problems[0]
        key = where.rsplit(".", 1)[-1]
        option = _PLOT_OPTIONS.get(key, "--plot")
        value = table.get(key, metric)
        what = what.replace("is not an axis;", f"is not an axis of {sweep_name};")
        raise UserError(f"{option} {value}: {what}")
    return plots[0]


def _export_suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise UserError(f"--export {path}: the file name must end in .csv or .parquet")
    return suffix


def _write_table(df: Any, tmp: Path, export: Path) -> None:
    """Write ``df`` to ``tmp`` in the format ``export``'s suffix names."""
    if _export_suffix(export) == ".csv":
        df.to_csv(tmp, index=False)
    else:
        df.to_parquet(tmp, index=False)


def _hosts_line(t: Any) -> str | None:
    """Kernel runs per machine and their grades (a sweep on many machines: a bad host shows),
    e.g. ``hosts: a 12 runs (11 ok, 1 warning); b 12 runs (12 ok)``."""
    if "host" not in t.columns or not t["host"].notna().any():
        return None
    parts = []
    for host, part in t[t["host"].notna()].groupby("host", sort=True):
        grades = part["grade"].value_counts() if "grade" in part.columns else {}
        shown = ", ".join(f"{grades[g]} {g}" for g in ("ok", "warning", "invalid") if g in grades)
        parts.append(f"{host} {len(part)} runs" + (f" ({shown})" if shown else ""))
    return "hosts: " + "; ".join(parts)


def _print_overview(s: Any, sweep_name: str | None, backend: str | None) -> None:
    from rich.table import Table

    from ..aggregate import aggregate

    console = table_console()
    pairs = [(n, b) for n, b in s.sweeps() if (sweep_name in (None, n)) and (backend in (None, b))]
    if not pairs:
        given = " ".join(
            f"{o} {v!r}" for o, v in (("--sweep", sweep_name), ("--backend", backend)) if v
        )
        raise UserError(
            f"{s.root}: no sweep matches {given}; allowed: "
            + (", ".join(f"{n} ({b})" for n, b in s.sweeps()) or "none")
        )
    for name, be in pairs:
        t = s.table(sweep=name, backend=be)
        counts = t["status"].value_counts().to_dict()
        console.print(
            f"[bold]{name}[/] ({be}): {len(t)} runs — "
            + ", ".join(f"{counts.get(k, 0)} {k}" for k in ("done", "failed", "pending"))
        )
        hosts = _hosts_line(t)
        if hosts:
            console.print(hosts, highlight=False)
        axes = s.sweep_axes(name, be)
        agg = aggregate(t, axes, ["jfi", "ratio", "utilization"])
        if agg.empty or not agg["n"].gt(0).any():
            continue
        # zip partners (an axis determined by an earlier one) are not shown twice
        shown = [
            a
            for i, a in enumerate(axes)
            if not any(
                (t.groupby(b, dropna=False)[a].nunique(dropna=False) <= 1).all() for b in axes[:i]
            )
        ]
        tab = Table(caption="mean ± half-width of the 95 % CI over the repeats")
        # On a narrow terminal the axis names fold (flows.1.cca over two lines) and the
        # numbers stay whole: at 80 columns rich cut every mean ± CI to "0.986±0.…".
        for a in shown:
            tab.add_column(a, overflow="fold")
        tab.add_column("n", justify="right", no_wrap=True)
        for m in ("jfi", "ratio", "utilization"):
            tab.add_column(m, justify="right", no_wrap=True)
        parts = agg.groupby(shown, sort=False, dropna=False) if shown else [((), agg)]
        for key, part in parts:  # a sweep without axes is one point
            key = key if isinstance(key, tuple) else (key,)
            by_metric = part.set_index("metric")
            cells = [str(v) for v in key] + [str(int(part["n"].max()))]
            for m in ("jfi", "ratio", "utilization"):
                mean, ci = by_metric.loc[m, "mean"], by_metric.loc[m, "ci"]
                cells.append(
                    "" if mean != mean else f"{mean:.3f}" + ("" if ci != ci else f"±{ci:.3f}")
                )
            tab.add_row(*cells)
        console.print(tab)
        _note_invalid(t)
        failed = t[t["status"] == "failed"]
        if len(failed):
            _print_errors(dict(zip(failed["run_hash"], failed["error"].fillna(""), strict=True)))


# --------------------------------------------------------------------------- compare
@click.command()
@click.argument("a", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.argument("b", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--metric",
    default="jfi",
    show_default=True,
    help="Metric to compare (jfi, ratio, utilization, …).",
)
@click.option("--a-sweep", default=None, help="Sweep in A (when A holds several).")
@click.option("--b-sweep", default=None, help="Sweep in B (when B holds several).")
@click.option("--a-backend", default=None, help="Backend in A (when A holds several).")
@click.option("--b-backend", default=None, help="Backend in B (when B holds several).")
@click.option(
    "--x",
    "x",
    default=None,
    help="Axis on x of the difference surface (default: the first numeric axis).",
)
@click.option("--y", "y", default=None, help="Axis on y (default: the next numeric axis).")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Figure directory (default: A/figures/compare-<a>-vs-<b>).",
)
@click.option(
    "--export",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the matched points with D, C95, W and Welch's t, df, p to .csv or .parquet.",
)
@click.option("--format", "fmt", default="png,svg", show_default=True, help=FORMAT_HELP)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing --export file; write figures into a non-empty folder.",
)
@click.option(
    "--alpha",
    default="0.05",
    show_default=True,
    help="Significance level of Welch's t-test per point.",
)
@_wrap
def compare(
    a: Path,
    b: Path,
    metric: str,
    a_sweep: str | None,
    b_sweep: str | None,
    a_backend: str | None,
    b_backend: str | None,
    x: str | None,
    y: str | None,
    output: Path | None,
    export: Path | None,
    fmt: str,
    force: bool,
    alpha: str,
) -> None:
    """Difference between result sets A and B per matched point: D = A − B, Welch's t-test
    on the repeats (significant where p < --alpha), and seed 001's W = |D| − 2·σ(B); prints
    how many points differ and the repeats per side, and draws the surface of W."""
    from ..compare import compare as do_compare
    from ..compare import summary_lines
    from ..outputs import check_figure_dir, check_file_target, publish_figures, write_file
    from ..store import Store
    from ..surfaces import difference_figure

    formats = _formats(fmt)
    if export is not None:
        _export_suffix(export)
        check_file_target(export, force=force, option="--export")
    if output is not None:
        check_figure_dir(output, force=force, option="-o")
    level = _alpha(alpha)
    sa, sb = Store(a, readonly=True), Store(b, readonly=True)
    na, ba = sa.select(a_sweep, a_backend, options=("--a-sweep", "--a-backend"))
    nb, bb = sb.select(b_sweep, b_backend, options=("--b-sweep", "--b-backend"))
    la, lb = f"{na}/{ba}", f"{nb}/{bb}"
    if la == lb:
        la, lb = f"A:{la}", f"B:{lb}"
    ta, tb = sa.table(sweep=na, backend=ba), sb.table(sweep=nb, backend=bb)
    c = do_compare(
        ta, tb, metric, sa.sweep_axes(na, ba), sb.sweep_axes(nb, bb), labels=(la, lb), alpha=level
    )
    for lab, t in ((la, ta), (lb, tb)):
        if "valid" in t.columns and ((t["status"] == "done") & (t["valid"] == 0)).any():
            click.echo(f"{lab}: ", nl=False, err=True)
            _note_invalid(t)
    for line in summary_lines(c):
        echo_prose(line)
    if c.n_points == 0:
        raise UserError("no point of A matches a point of B (same axes, same values)")
    if export is not None:
        write_file(
            export, lambda p: _write_table(c.table, p, export), force=force, option="--export"
        )
        click.echo(f"wrote {len(c.table)} points to {export}")
    xy = _pick_xy(c.table, c.axes, x, y)
    facets = [
        k
        for k in c.axes
        if k not in xy
        and c.table[k].nunique() > 1
        and not (c.table.groupby(list(xy))[k].nunique() <= 1).all()
    ]
    for f in facets:
        for key, row in c.by(f).iterrows():
            echo_prose(
                f"  {f}={key}: significant at {int(row['significant'])} of "
                f"{int(row['tested'])} tested points, W ≥ 0 at {int(row['differ'])} of "
                f"{int(row['defined'])}, mean |D| {row['mean_abs_D']:.4g}"
            )
    if len(xy) == 2:
        out = output or a / "figures" / f"compare-{na}-vs-{nb}"
        paths = publish_figures(
            lambda d: difference_figure(c, xy[0], xy[1], d, formats),
            out,
            force=force or output is None,
            option="-o",
        )
        click.echo(f"figures: {out} ({len(paths)} files)")
    else:
        click.echo("no difference surface: it needs two numeric axes (--x, --y)")


def _alpha(text: str) -> float:
    try:
        level = float(text)
    except ValueError:
        level = float("nan")
    if not 0 < level < 1:
        raise UserError(
            f"--alpha {text!r}: expected a significance level between 0 and 1, e.g. 0.05"
        )
    return level


def _pick_xy(table: Any, axes: list[str], x: str | None, y: str | None) -> list[str]:
    from ..aggregate import axis_numeric

    for option, k in (("--x", x), ("--y", y)):
        if k is not None and k not in axes:
            raise UserError(
                f"{option} {k!r}: not an axis A and B share; allowed: {', '.join(axes)}"
            )
    if x and y:
        return [x, y]
    numeric = [
        k
        for k in axes
        if table[k].nunique() > 1 and axis_numeric(list(table[k].unique()))[0] is not None
    ]
    picked = [x] if x else []
    for k in numeric:
        if len(picked) == 2:
            break
        if k in picked or k == y:
            continue
        if picked and (table.groupby(picked[0])[k].nunique() <= 1).all():
            continue  # moves with the first axis (a zip partner)
        picked.append(k)
    if y:
        picked = picked[:1] + [y]
    return picked[:2]
