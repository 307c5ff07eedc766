"""``tcpfair doctor``: what this machine can run; ``--cleanup`` removes crashed runs' leftovers."""

from __future__ import annotations

import click

from . import friendly_errors


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
@friendly_errors
def doctor(cleanup: bool, force: bool) -> None:
    """Report root, network namespaces, the tools the kernel backend runs (absolute paths
    and versions), congestion controls, qdiscs and linkem; list (and with --cleanup
    remove) leftovers of kernel-backend runs."""
    from rich.console import Console
    from rich.table import Table

    from ..kernel import capabilities as cap
    from ..kernel import cleanup as cl
    from ..kernel.tools import LINKEM_SOURCES, SYSTEM_DIRS

    console = Console()
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
    kern_ok = sorted(n for n, k in cap.KERNEL_CCA.items() if k is not None and k in caps.ccas)
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
