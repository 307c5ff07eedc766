"""``tcpfair repro``: a source study's published numbers beside ours (tcpfair/repro.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import UserError, friendly_errors, table_console

if TYPE_CHECKING:
    from ..repro import Row, Study, StudyRun


@click.command()
@click.argument("study_args", metavar="STUDY...|list|all", nargs=-1, required=True)
@click.option(
    "--backend", "-b", type=click.Choice(["sim", "kernel"]), default="sim", show_default=True
)
@click.option("--quick", is_flag=True, help="The scaled version: shorter runs, fewer repeats.")
@click.option("-j", "--jobs", type=int, default=None, help="Parallel runs (default: CPU cores).")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Results directory (default: results/repro-<study>[-quick|-kernel]); resumed if it "
    "exists. Comparison tables are written into it as CSV and Markdown.",
)
@click.option(
    "--markdown",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write every study's Markdown table into this file.",
)
@click.option(
    "--against",
    type=click.Path(path_type=Path),
    default=None,
    help="A second results store holding the same sweep (e.g. run on the kernel backend): "
    "draw seed 001's difference surface W = |A − B| − 2σ(B) of each surface plot's metric, "
    "A = this run, B = that store.",
)
@click.option(
    "--figures/--no-figures",
    default=True,
    show_default=True,
    help="Draw each sweep's [[plots]] (the source's figures) into <results>/figures/<sweep>/.",
)
@click.option(
    "--sweep",
    "only",
    multiple=True,
    metavar="KEY",
    help="Run only this sweep of the study (repeatable; keys as in its reference.toml); "
    "the other rows are 'not run'.",
)
@click.option("--progress/--no-progress", default=True, show_default=True)
@friendly_errors
def repro(
    study_args: tuple[str, ...],
    backend: str,
    quick: bool,
    jobs: int | None,
    output: Path | None,
    markdown: Path | None,
    against: Path | None,
    figures: bool,
    only: tuple[str, ...],
    progress: bool,
) -> None:
    """Run source studies (one or more, or all) and print their published numbers beside
    ours with a verdict (reproduced, trend, differs, not expressible). 'list' shows them."""
    from .. import repro as rp

    try:
        study = " ".join(study_args)
        if study == "list":
            _list()
            return
        names = rp.study_names() if study == "all" else list(dict.fromkeys(study_args))
        studies = [rp.load_study(n) for n in names]
        if study != "all":  # before any run: a refused study fails now, not after an hour
            for st in studies:
                st.sweep_file(next(iter(st.sweeps)), quick, backend)
    except rp.ReproError as e:
        raise UserError(str(e)) from None
    if backend == "kernel" and study == "all":
        for st in studies:
            if not st.on_kernel():
                click.echo(f"skipped {st.name}: not on the kernel backend ({st.kernel_note})")
        studies = [st for st in studies if st.on_kernel()]
    if jobs is not None and jobs < 1:
        raise UserError(f"-j {jobs}: must be a whole number ≥ 1")
    from ..outputs import check_file_target, check_store_target

    if markdown is not None:  # before any run: a bad path fails now, not after an hour
        check_file_target(markdown, force=True, option="--markdown")
    if against is not None and not (against / "catalog.sqlite").is_file():
        raise UserError(f"--against {against}: not a results store (no catalog.sqlite in it)")
    from ..store import StoreError
    from ..sweep import SweepError

    pages: list[str] = []
    for st in studies:
        suffix = _suffix(backend, quick)
        store = output or Path("results") / f"repro-{st.name}{suffix}"
        check_store_target(store, option="-o" if output is not None else "results folder")
        try:
            ran = rp.run_study(st, backend, quick, store, jobs, progress, only)
            pics = None if markdown is None else (markdown.parent, "figures/repro")
            extra = _figures(ran, against, pics) if figures or against is not None else []
        except (SweepError, StoreError, rp.ReproError) as e:
            raise UserError(str(e)) from None
        rows = ran.rows
        header = _header(st, backend, quick)
        _print(st, rows, header)
        md = rp.to_markdown(st, rows, header) + "".join(f"\n{line}\n" for line in extra)
        for ext, text in (("csv", rp.to_csv(rows)), ("md", md)):
            _write(store / f"repro-{st.name}{suffix}.{ext}", text, "-o")
        click.echo(f"tables: {store}/repro-{st.name}{suffix}.csv, .md")
        pages.append(md)
    if markdown is not None:
        _write(markdown, _page(pages, study, backend, quick), "--markdown")
        click.echo(f"markdown: {markdown}")


def _figures(ran: StudyRun, against: Path | None, page: tuple[Path, str] | None) -> list[str]:
    """Draw each sweep's [[plots]]; with ``against``, each surface plot's difference surface
    W against that store. Returns lines for the Markdown (what was drawn, W's summary); with
    ``page`` (the Markdown's folder, a folder under it) the PNGs are copied there and shown."""
    import shutil

    from .sweep import draw_plots

    lines: list[str] = []
    root = ran.store.root
    for sw in ran.sweeps.values():
        if sw.plots:
            out = root / "figures" / sw.name
            paths = draw_plots(ran.store, sw.name, ran.backend, sw.plots, out, ["png"])
            click.echo(f"figures: {out} ({len(paths)} files)")
            lines.append(
                f"Figures ({sw.name}): `<results>/figures/{sw.name}/`, {len(paths)} files."
            )
            if page is not None:
                rel = f"{page[1]}/{sw.name}"
                (page[0] / rel).mkdir(parents=True, exist_ok=True)
                for png in sorted(q for q in paths if q.suffix == ".png"):
                    shutil.copyfile(png, page[0] / rel / png.name)
                    lines.append(f"![{png.stem}]({rel}/{png.name})")
        if against is not None:
            lines += _difference(ran, sw, against)
    return lines


def _difference(ran: StudyRun, sw: Any, against: Path) -> list[str]:
    """W = |A − B| − 2σ(B) of each surface plot of ``sw`` (A: this run, B: ``against``)."""
    from ..compare import compare, summary_lines
    from ..outputs import publish_figures
    from ..store import Store

    surfaces = [p for p in sw.plots if p.kind == "surface"]
    if not surfaces:
        return []
    axes = ran.store.sweep_axes(sw.name, ran.backend)
    sb = Store(against, readonly=True)
    match = [(n, b) for n, b in sb.sweeps() if set(sb.sweep_axes(n, b)) == set(axes)]
    if len(match) != 1:
        have = ", ".join(f"{n} ({b})" for n, b in sb.sweeps()) or "none"
        raise UserError(
            f"--against {against}: needs exactly one sweep with the axes {', '.join(axes)} "
            f"(as {sw.name}); it has: {have}"
        )
    nb, bb = match[0]
    ta = ran.store.table(sweep=sw.name, backend=ran.backend)
    tb = sb.table(sweep=nb, backend=bb)
    labels = (f"{sw.name}/{ran.backend}", f"{nb}/{bb}")
    lines: list[str] = []
    for p in surfaces:
        try:
            c = compare(ta, tb, p.metric, axes, sb.sweep_axes(nb, bb), labels=labels)
        except ValueError as e:
            raise UserError(f"--against {against}: {e}") from None
        if c.n_points == 0:
            raise UserError(f"--against {against}: no point of {nb} matches a point of {sw.name}")
        out = ran.store.root / "figures" / f"compare-{sw.name}-vs-{nb}"
        paths = publish_figures(_drawer(c, p.x, p.y), out, force=True, option="--against")
        click.echo(f"difference surfaces: {out} ({len(paths)} files)")
        summary = summary_lines(c)
        for line in summary:
            click.echo(line)
        lines.append(f"Difference surface against `{against}` ({p.metric}): " + "; ".join(summary))
    return lines


def _drawer(c: Any, x: str, y: str) -> Any:
    """A figure-drawing callback for outputs.publish_figures: W of ``c`` over x × y."""
    from ..surfaces import difference_figure

    def draw(d: Path) -> list[Path]:
        return difference_figure(c, x, y, d, ["png"])

    return draw


def _write(path: Path, text: str, option: str) -> None:
    """Replace ``path`` with ``text`` atomically (outputs.write_file)."""
    from ..outputs import write_file

    def fill(p: Path) -> None:
        p.write_text(text, encoding="utf-8")

    write_file(path, fill, force=True, option=option)


def _suffix(backend: str, quick: bool) -> str:
    """Results and table names: ``-kernel`` (its own scaled version), ``-quick`` or none."""
    return "-kernel" if backend == "kernel" else "-quick" if quick else ""


def _header(st: Study, backend: str, quick: bool) -> str:
    if backend == "kernel":
        mode = f"its kernel-backend version, {st.kernel_note}"
    elif quick:
        mode = f"--quick ({st.quick_note})"
    else:
        mode = "the full study"
    return f"Backend {backend}, {mode}; ours: mean ± 95 % CI over repeats."


def _version() -> str:
    """tcpfair's version and, in a checkout, its commit (where a record was made)."""
    import subprocess

    from .. import __version__

    here = Path(__file__).resolve().parent
    p = subprocess.run(
        ["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    commit = p.stdout.strip() if p.returncode == 0 else ""
    return f"{__version__} (commit `{commit}`)" if commit else __version__


def _page(pages: list[str], study: str, backend: str, quick: bool) -> str:
    cmd = (
        f"tcpfair repro {study} --backend {backend}{' --quick' if quick else ''} "
        "--markdown <this file>"
    )
    recorded = ""
    if backend == "kernel":  # root and a quiet machine: a record, not regenerated by docgen
        recorded = (
            f"Kernel-backend data, recorded at tcpfair {_version()} on "
            f"{time.strftime('%Y-%m-%d', time.gmtime())}; docs pages regenerated by "
            "benches/docgen.py leave it as it is. "
        )
    intro = (
        "# Reproductions: the sources' published numbers beside tcpfair's\n\n"
        f"Generated by `{cmd}`; do not edit by hand. {recorded}Each study is data in "
        "`scenarios/repro/<study>/`: its sweep files (a full and a `--quick` version) and "
        "`reference.toml`, which transcribes every number the source prints (table/figure, "
        "row, value, unit, what was measured, where in the source it stands, the source's "
        "scatter or our stated tolerance) and how we compute the same quantity from a run's "
        "`summary.json`.\n\n"
        "Verdicts: `reproduced` when our mean ± 95 % CI overlaps the source value ± its "
        "scatter or the stated tolerance (|mean − source| ≤ tolerance + CI, the CI counting "
        "for at most the tolerance: with 2 repeats the t interval is wide, so read `n`); "
        "else `trend` when the row's ordering among "
        "its group (e.g. CUBIC/Reno/BBR) or its side of a baseline (ratio > 1) holds; else "
        "`differs`; `not expressible` when our runs do not record the quantity; `not run` "
        "when no run covered it. A source that states a region of a surface in words "
        "(seed 001) is transcribed as a *claim* row: the threshold we read the words by "
        "(in its explanation), a region of the grid, and the side the source puts it on "
        "(source column `< 0.9`, `> 0`, `|x| ≤ 0.05`); ours is the mean over the region's "
        "grid cells of each cell's mean over repeats (or the difference of two such means), "
        "`reproduced` when its 95 % CI over the cells lies wholly on that side, `trend` "
        "when only the mean does. `--quick` numbers are first looks, not the study as "
        "published; `--backend kernel` runs each study's scaled kernel version (said in "
        "its header and on each scaled row).\n\n"
    )
    return intro + "\n".join(pages)


def _list() -> None:
    from .. import repro as r

    for name, source, status in r.list_studies():
        click.echo(f"{name:12s} {status:26s} {source}")


#: The columns a terminal narrower than the full table shows (the rest, the explanation
#: above all, is in the .md and .csv tables written next to the results).
_NARROW = ("table", "row", "source", "tcpfair", "verdict")


def _print(st: Study, rows: list[Row], header: str) -> None:
    """The study's rows: every column at 200 columns when piped (as before) or on a wide
    terminal; on a narrower one (an 80-column terminal wrapped each 200-column line into
    three) the comparison itself, the row folding and the numbers and verdicts whole."""
    from rich.table import Table
    from rich.text import Text

    from .. import repro as r

    console = table_console(width=200)
    full = console.width >= 200
    cols = r.SHOWN if full else _NARROW
    narrow = (
        "\nnarrow terminal: the units, counts, differences and explanations are in the .md "
        "and .csv tables named below"
    )
    caption = header if full else header + narrow
    t = Table(title=f"{st.name}: {st.title}", caption=caption)
    for col in cols:
        if full or col == "row":
            t.add_column(col, overflow="fold")
        else:
            t.add_column(col, no_wrap=True)
    for row in rows:
        c = r.cells(row)
        t.add_row(*(Text(c[k]) for k in cols))
    console.print(t)
