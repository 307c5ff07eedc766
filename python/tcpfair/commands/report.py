"""``tcpfair report``: one self-contained HTML file (or a PDF) about a run or a results store."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import UserError, friendly_errors


@click.command()
@click.argument("path", metavar="RUN_DIR|STORE", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The report file (default: RUN_DIR.html / STORE.html beside the folder, .pdf with --pdf).",
)
@click.option(
    "--compare",
    "compare_with",
    type=click.Path(path_type=Path),
    default=None,
    metavar="STORE2",
    help="A second results store: add tcpfair compare's results (A = STORE, B = STORE2).",
)
@click.option("--pdf", is_flag=True, help="Write a printable PDF (matplotlib) instead of HTML.")
@click.option("--force", is_flag=True, help="Replace an existing report file.")
@click.option("--progress/--no-progress", default=True, show_default=True)
@friendly_errors
def report(
    path: Path,
    output: Path | None,
    compare_with: Path | None,
    pdf: bool,
    force: bool,
    progress: bool,
) -> None:
    """Write one offline HTML file about RUN_DIR (a run folder) or STORE (a results
    store): the resolved scenario, validity checks, per-flow and per-group tables and
    interactive charts; for a store the sweeps' surfaces, CI lines and box plots, the repro
    table of a reproduction, and with --compare the comparison with a second store."""
    from ..outputs import check_file_target, write_file

    if not path.is_dir():
        raise UserError(
            f"{path}: not a folder; expected a run folder (summary.json) or a results store"
        )
    suffix = ".pdf" if pdf else ".html"
    out = output if output is not None else default_output(path, suffix)
    if out.suffix.lower() != suffix:
        raise UserError(
            f"-o {out}: the file name must end in {suffix}" + ("" if pdf else " (or use --pdf)")
        )
    option = "-o" if output is not None else "report file"
    check_file_target(out, force=force, option=option)  # before the work, not after
    from .. import htmlreport as hr

    def say(msg: str) -> None:
        if progress:
            click.echo(f"report: {msg}", err=True)

    try:
        rep = hr.build(path, compare_with, say)
        if pdf:
            say("drawing the PDF")
            write_file(out, lambda p: hr.render_pdf(rep, p), force=force, option=option)
        else:
            text = hr.render_html(rep)
            write_file(
                out, lambda p: p.write_text(text, encoding="utf-8"), force=force, option=option
            )
    except hr.ReportError as e:
        raise UserError(str(e)) from None
    except Exception as e:
        # a damaged store fails in its reader (StoreError, imported with the store)
        store = sys.modules.get("tcpfair.store")
        if store is not None and isinstance(e, store.StoreError):
            raise UserError(str(e)) from None
        raise
    size = out.stat().st_size
    click.echo(f"report: {out} ({size / 1e6:.1f} MB)")


def default_output(path: Path, suffix: str) -> Path:
    """The report beside the folder (``results/demo`` -> ``results/demo.html``); for a run
    inside a results store (``STORE/runs/<backend>/<hash>``) beside the store, as
    ``STORE-<hash>.html``, since a store holds only what its catalog knows."""
    d = path.resolve()
    store = d.parent.parent.parent
    if d.parent.parent.name == "runs" and (store / "catalog.sqlite").is_file():
        return store.with_name(f"{store.name}-{d.name}{suffix}")
    return d.with_name(d.name + suffix)
