"""Showing a run's validation checks (``meta["checks"]``) in the terminal."""

from __future__ import annotations

from rich.console import Console

from ..result import RunResult
from .validate import grade_of, overall

_MARK = {
    "ok": "[green]ok  [/green]",
    "warning": "[yellow]warn[/yellow]",
    "invalid": "[red]FAIL[/red]",
}


def print_checks(result: RunResult, console: Console | None = None) -> None:
    """One line per check; a final verdict. Prints nothing for results without checks."""
    checks = result.meta.get("checks") or []
    if not checks:
        return
    from rich.table import Table
    from rich.text import Text

    console = console or Console()
    # A grid, so that a message longer than the terminal continues under its own first
    # word, not under the grade (at 80 columns most messages take two lines); messages are
    # plain text (a "[measure]" in one is not markup).
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for c in checks:
        grid.add_row(Text.from_markup(f"  {_MARK[grade_of(c)]}"), Text(c["message"]))
    for n in (result.meta.get("kernel") or {}).get("notes") or []:
        grid.add_row(Text.from_markup("  [yellow]note[/yellow]"), Text(n))
    console.print(grid, highlight=False)
    grade = overall(checks)
    if grade == "ok":
        console.print("[green]run valid[/green]: every check passed")
    elif grade == "warning":
        warned = [c["name"] for c in checks if grade_of(c) == "warning"]
        console.print(
            f"[yellow]run valid, with warnings[/yellow]: {', '.join(warned)} — within the "
            "limits that keep the numbers trustworthy (docs/kernel.md, Grades)"
        )
    else:
        bad = [c["name"] for c in checks if grade_of(c) == "invalid"]
        console.print(
            f"[red]run INVALID[/red]: failed {', '.join(bad)} — the numbers above are not "
            "trustworthy"
        )
