"""Showing a run's validation checks (``meta["checks"]``) in the terminal."""

from __future__ import annotations

from rich.console import Console

from ..result import RunResult


def print_checks(result: RunResult, console: Console | None = None) -> None:
    """One line per check; a final verdict. Prints nothing for results without checks."""
    checks = result.meta.get("checks") or []
    if not checks:
        return
    console = console or Console()
    for c in checks:
        mark = "[green]ok  [/green]" if c["ok"] else "[red]FAIL[/red]"
        console.print(f"  {mark} {c['message']}", highlight=False)
    for n in (result.meta.get("kernel") or {}).get("notes") or []:
        console.print(f"  [yellow]note[/yellow] {n}", highlight=False)
    if result.meta.get("valid", True):
        console.print("[green]run valid[/green]: every check passed")
    else:
        bad = [c["name"] for c in checks if not c["ok"]]
        console.print(
            f"[red]run INVALID[/red]: failed {', '.join(bad)} — the numbers above are not "
            "trustworthy"
        )
