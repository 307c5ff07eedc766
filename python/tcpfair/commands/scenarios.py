"""``tcpfair scenarios``: the built-in scenarios and sweeps, one line each;
``tcpfair scenarios show NAME`` prints one to copy and edit."""

from __future__ import annotations

import click

from . import UserError, friendly_errors


@click.group(invoke_without_command=True)
@click.pass_context
@friendly_errors
def scenarios(ctx: click.Context) -> None:
    """List the built-in scenarios and sweeps. Run one by name (tcpfair run NAME,
    tcpfair sweep NAME); a path that exists is used before a name."""
    if ctx.invoked_subcommand is not None:
        return
    from ..shipped import builtins

    entries = builtins()
    if not entries:
        raise UserError("no built-in scenarios found in this installation of tcpfair")
    width = max(len(b.name) for b in entries)
    for b in entries:
        click.echo(f"{b.name:<{width}}  {b.summary()}")


@scenarios.command()
@click.argument("name")
@friendly_errors
def show(name: str) -> None:
    """Print the built-in scenario or sweep NAME (redirect it to a file to edit it)."""
    from ..shipped import find, unknown

    found = find(name)
    if found is None:
        raise UserError(unknown(name, as_file=False))
    click.echo(found.path.read_text(encoding="utf-8"), nl=False)
