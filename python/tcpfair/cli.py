"""The ``tcpfair`` command. Each subcommand lives in ``tcpfair/commands/<name>.py`` and is
imported only when used, so ``tcpfair --help`` stays fast."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import MutableMapping, Sequence
from typing import Any

import click

#: subcommand → "module:attribute"
COMMANDS = {
    "run": "tcpfair.commands.run:run",
    "scenarios": "tcpfair.commands.scenarios:scenarios",
    "fairness": "tcpfair.commands.fairness:fairness",
    "sweep": "tcpfair.commands.sweep:sweep",
    "results": "tcpfair.commands.sweep:results",
    "compare": "tcpfair.commands.sweep:compare",
    "bench": "tcpfair.commands.bench:bench",
    "doctor": "tcpfair.commands.doctor:doctor",
    "repro": "tcpfair.commands.repro:repro",
    "report": "tcpfair.commands.report:report",
}

HELP = {
    "run": "Run one scenario on the simulator or the kernel backend.",
    "scenarios": "The built-in scenarios and sweeps; `scenarios show NAME` prints one.",
    "fairness": "Fairness (JFI, ratios) of iperf3 -J files, packet captures or Flent files.",
    "sweep": "Run a grid of scenarios with repeats into a results store.",
    "results": "Show or export the runs of a results store.",
    "compare": "Difference surface between two result sets.",
    "bench": "Simulator speed on the standard scenarios.",
    "doctor": "What this machine can run; --cleanup removes leftovers of crashed runs.",
    "repro": "Run a source study; its published numbers beside ours, with verdicts.",
    "report": "One self-contained HTML report (or --pdf) of a run or a results store.",
}


class LazyGroup(click.Group):
    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **kwargs: Any,
    ) -> Any:
        """As click's, but a usage error (unknown option, bad option value, missing
        argument) is one line naming the command and the option, like every other error
        tcpfair reports, instead of click's three-line usage block."""
        from ._text import one_line

        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **kwargs)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **kwargs)
        except click.UsageError as e:
            where = e.ctx.command_path if e.ctx is not None else "tcpfair"
            msg = one_line(e.format_message())  # a value with a newline: still one line
            click.echo(f"error: {where}: {msg} (see {where} --help)", err=True)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            click.echo(f"error: {one_line(e.format_message())}", err=True)
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("interrupted", err=True)
            sys.exit(130)
        sys.exit(rv if isinstance(rv, int) else 0)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [c for c in COMMANDS if _available(c)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS or not _available(name):
            return None
        mod, attr = COMMANDS[name].split(":")
        cmd = getattr(importlib.import_module(mod), attr)
        assert isinstance(cmd, click.Command)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(c, HELP[c]) for c in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _available(name: str) -> bool:
    mod = COMMANDS[name].split(":")[0]
    return importlib.util.find_spec(mod) is not None


@click.group(
    name="tcpfair", cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, value: _print_version(ctx, value),
    help="Show the version and exit.",
)
def cli() -> None:
    """tcpfair: TCP congestion-control fairness lab."""


def _print_version(ctx: click.Context, value: bool) -> None:
    """``tcpfair --version``: the package's version (``tcpfair.__version__``, which results
    store in ``meta["versions"]``)."""
    if not value or ctx.resilient_parsing:
        return
    from . import __version__

    click.echo(f"tcpfair {__version__}")
    ctx.exit()


def limit_blas_threads(env: MutableMapping[str, str]) -> None:
    """One BLAS thread unless the user says otherwise. numpy's OpenBLAS starts a worker
    thread per extra core when numpy is imported, and those threads spin for a while
    looking for work: ~0.1 s of CPU on every command that imports numpy, on this 2-core
    machine (docs/performance.md, Start-up). tcpfair does no linear algebra, so they never
    get any. Set before numpy is imported; child processes (Dask workers) inherit it."""
    env.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> Any:
    """The console entry point. Errors users cause are turned into one line where they are
    raised (``commands.friendly_errors``); anything that still escapes is a bug in tcpfair,
    and is reported as one line too — the traceback only with ``TCPFAIR_DEBUG=1``."""
    import os

    limit_blas_threads(os.environ)
    try:
        return cli.main(args=argv, prog_name="tcpfair")
    except Exception as e:  # noqa: BLE001 — the last guard between a bug and a traceback
        if os.environ.get("TCPFAIR_DEBUG"):
            raise
        click.echo(
            f"error: internal error ({type(e).__name__}: {e}); this is a bug in tcpfair — "
            "rerun with TCPFAIR_DEBUG=1 for the traceback and report it",
            err=True,
        )
        sys.exit(70)


if __name__ == "__main__":
    sys.exit(main())
