"""Subcommands of the ``tcpfair`` CLI, one module each, and their shared error handling."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class UserError(Exception):
    """An error whose message is meant for the user as it is (no traceback)."""


def table_console(width: int = 200) -> Any:
    """A rich Console for tables: the terminal's width on a terminal; ``width`` columns when
    piped or captured, so a wide table is not folded or cut at rich's default 80."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=width)


def echo_prose(line: str) -> None:
    """One line of prose on stdout: on a terminal, wrapped between words at its width, the
    continuation indented two more than the line (the terminal itself breaks words); piped,
    as it is — one line per record, for scripts and grep."""
    import shutil
    import sys
    import textwrap

    if not sys.stdout.isatty():
        click.echo(line)
        return
    indent = line[: len(line) - len(line.lstrip(" "))]
    click.echo(
        textwrap.fill(
            line,
            width=max(40, shutil.get_terminal_size().columns),
            subsequent_indent=indent + "  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    )


def file_or_builtin(arg: Path, kind: str) -> Path:
    """The file a command's SCENARIO / SWEEP argument means (``shipped.resolve``: an existing
    path wins, else a built-in name of ``kind``); a note when a local file hides a built-in of
    the same name; one line naming the argument when it is neither."""
    from ..shipped import resolve, unknown

    found = resolve(arg, kind=kind)
    if not found.path.exists():
        raise UserError(unknown(str(arg), kind=kind))
    if found.shadows is not None:
        click.echo(
            f"note: using the file {arg}, not the built-in {kind} {found.shadows.name} "
            f"(tcpfair scenarios show {found.shadows.name})",
            err=True,
        )
    return found.path


def _printed(e: Exception) -> str:
    """The message of ``e`` as printed: on one line (``_text.one_line``: a user's value
    with a newline in it is shown escaped), except the errors that list several problems
    one per line (a SpecError or SweepError, also when re-raised as a UserError; each of
    their problems is one line already) and the backend's, which may quote a tool's output."""
    from .._text import one_line
    from ..backends import BackendError
    from ..spec import SpecError
    from ..sweep import SweepError

    listed = (SpecError, SweepError, BackendError)
    if isinstance(e, listed) or isinstance(e.__context__, listed):
        return str(e)
    return one_line(str(e))


def friendly_errors(fn: F) -> F:
    """Turn the errors users cause into one clear line on stderr and exit status 2."""
    from ..backends import BackendError
    from ..outputs import OutputError
    from ..spec import SpecError

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (SpecError, BackendError, OutputError, UserError) as e:
            click.echo(f"error: {_printed(e)}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            # a second Ctrl-C while the interpreter shuts down would meet the default
            # handler (Python restores it at exit) and end the process with -2, not 130
            import signal

            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_IGN)
            click.echo("interrupted", err=True)
            sys.exit(130)

    return wrapper  # type: ignore[return-value]
