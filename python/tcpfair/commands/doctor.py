"""``tcpfair doctor``: what this machine can run; ``--cleanup`` removes crashed runs' leftovers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from . import UserError, friendly_errors, table_console


def _cc_registry_table() -> Any:
    """The registry of congestion controls as a rich table: one row per algorithm and
    stack, its parameters with their defaults and units."""
    from rich.table import Table

    from .. import registry

    t = Table(title="tcpfair doctor: congestion controls (simulator registry)")
    for col in ("cca", "stack", "parameters = default (range)"):
        t.add_column(col)
    for c in registry.registry().values():
        for stack, params in c.stacks.items():
            text = "; ".join(_param_text(p) for p in params)
            t.add_row(c.name, stack, text or "none")
    return t


def _param_text(p: Any) -> str:
    """``beta = 0.7002 (0.05–0.95)``, ``hystart_low_window = 16 segments (2–1048576)``."""
    if p.type == "bool":
        return f"{p.name} = {p.default_text()}"
    unit = f" {p.unit}" if p.unit else ""
    return f"{p.name} = {p.default_text()}{unit} ({p.range_text()})"


def _write_cc_table(path: Path) -> None:
    """Replace the generated table of ``path`` with the registry's."""
    from .. import registry
    from .._files import TooLargeError, read_bytes_limited

    try:
        # a limit: /dev/zero or a FIFO must not fill the memory; the docs page is ~100 KB
        text = read_bytes_limited(path, MAX_DOC_BYTES).decode("utf-8")
        path.write_text(registry.with_docs_table(text), encoding="utf-8")
    except OSError as e:
        raise UserError(f"--write-cc-table {path}: {e.strerror or e}") from None
    except (registry.DocsError, TooLargeError) as e:
        raise UserError(f"--write-cc-table {path}: {e}; allowed: a Markdown file") from None
    except UnicodeDecodeError as e:
        raise UserError(
            f"--write-cc-table {path}: not UTF-8 text (byte {e.start}); allowed: a Markdown "
            "file (docs/scenario.md)"
        ) from None


#: the largest Markdown file --write-cc-table reads
MAX_DOC_BYTES = 16 * 2**20


@click.command()
@click.option(
    "--cleanup",
    is_flag=True,
    help="Remove namespaces, processes and work folders left by crashed kernel-backend runs.",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --cleanup: also remove runs whose tcpfair process is still alive.",
)
@click.option(
    "--ccas",
    is_flag=True,
    help="Only list the congestion controls, their stacks and parameters (the simulator's "
    "registry).",
)
@click.option(
    "--write-cc-table",
    "cc_table",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Rewrite the congestion-control table of this Markdown file (docs/scenario.md) "
    "from the registry.",
)
@friendly_errors
def doctor(cleanup: bool, force: bool, ccas: bool, cc_table: Path | None) -> None:
    """Report root, network namespaces, the tools the kernel backend runs (absolute paths
    and versions), congestion controls, qdiscs and linkem; list (and with --cleanup
    remove) leftovers of kernel-backend runs. List the congestion controls the scenario
    may name and their parameters (--ccas: only that)."""
    from rich.console import Console
    from rich.table import Table

    # an option another one makes pointless was silently ignored (``--ccas --cleanup``
    # listed the registry and removed nothing)
    given = [n for n, on in (("--cleanup", cleanup), ("--force", force), ("--ccas", ccas)) if on]
    if cc_table is not None and given:
        raise UserError(
            f"--write-cc-table: only on its own (it writes the file and does nothing else), "
            f"not with {' '.join(given)}"
        )
    if ccas and cleanup:
        raise UserError("--ccas: lists the congestion controls only; allowed: --ccas or --cleanup")
    if force and not cleanup:
        raise UserError("--force: only with --cleanup (it removes runs still alive)")
    from ..kernel.procs import STATE_DIR_PROBLEM

    if STATE_DIR_PROBLEM and not ccas and cc_table is None:  # before anything is printed:
        raise UserError(STATE_DIR_PROBLEM)  # the leftovers would be looked for elsewhere
    console = Console()
    if cc_table is not None:
        _write_cc_table(cc_table)
        console.print(f"wrote the congestion-control table of {cc_table}")
        return
    table_console().print(_cc_registry_table())
    if ccas:
        return

    from .. import registry
    from ..kernel import capabilities as cap
    from ..kernel import cleanup as cl
    from ..kernel.tools import LINKEM_SOURCES, SYSTEM_DIRS

    caps = cap.detect()
    t = Table(title="tcpfair doctor: kernel backend", show_header=True)
    t.add_column("item")
    t.add_column("status")

    def yn(ok: bool, text: str = "") -> str:
        return ("[green]ok[/green]" if ok else "[red]missing[/red]") + (f"  {text}" if text else "")

    t.add_row("kernel", caps.kernel)
    t.add_row("root", yn(caps.root))
    t.add_row("ip netns", yn(caps.netns))
    for name, path in caps.tools.items():
        version = caps.tool_versions.get(name)
        extra = f"{path}" + (f"  ({version})" if version else "")
        t.add_row(name, yn(path is not None, extra if path else f"not in {', '.join(SYSTEM_DIRS)}"))
    if caps.linkem_problem:
        t.add_row("tcpfair-linkem", f"[red]refused[/red]  {caps.linkem_problem}")
    else:
        t.add_row(
            "tcpfair-linkem",
            yn(
                caps.linkem is not None,
                f"{caps.linkem} ({LINKEM_SOURCES.get(caps.linkem_source, caps.linkem_source)})"
                if caps.linkem
                else "not found: install a wheel (./dev wheel), cargo build --release -p "
                "tcpfair-linkem in a checkout, or set TCPFAIR_LINKEM",
            ),
        )
    if caps.traffic_problem:
        t.add_row("tcpfair-traffic", f"[red]refused[/red]  {caps.traffic_problem}")
    else:
        t.add_row(
            "tcpfair-traffic",
            yn(
                caps.traffic is not None,
                f"{caps.traffic} ({LINKEM_SOURCES.get(caps.traffic_source, caps.traffic_source)})"
                if caps.traffic
                else "cargo build --release -p tcpfair-traffic, or set TCPFAIR_TRAFFIC "
                "(needed only for short flows)",
            ),
        )
    kern_ok = sorted(
        n for n, k in registry.kernel_modules().items() if k is not None and k in caps.ccas
    )
    t.add_row(
        "congestion controls", ", ".join(caps.ccas) + f"  → scenario names: {', '.join(kern_ok)}"
    )
    t.add_row("qdiscs", ", ".join(f"{q} {'yes' if ok else 'no'}" for q, ok in caps.qdiscs.items()))
    try:
        rates = (
            f"{cap.max_rate_bps(False) / 1e6:g} Mbit/s (GSO off), "
            f"{cap.max_rate_bps(True) / 1e6:g} Mbit/s (GSO on)"
        )
    except ValueError as e:
        rates = f"[red]{e}[/red]"
    t.add_row("max bottleneck rate", rates)
    console.print(t)
    probs = cap.machine_problems(caps)
    if probs:
        console.print("[red]the kernel backend cannot run here:[/red]")
        for p in probs:
            console.print(f"  - {p}")
    else:
        console.print("[green]the kernel backend can run here[/green]")

    if not caps.root:
        console.print("leftovers: not checked (needs root)")
        return
    left = cl.find_leftovers()
    if not left:
        console.print("leftovers: none")
        return
    for lo in left:
        console.print(f"leftover {lo.describe()}")
        if not cleanup:
            continue
        if lo.owner_alive and not force:
            console.print(
                "  skipped: its tcpfair process is still running (use --force to remove anyway)"
            )
            continue
        problems = cl.clean(lo)
        console.print("  removed" if not problems else "  problems: " + "; ".join(problems))
    if not cleanup:
        console.print("run `tcpfair doctor --cleanup` to remove them")
