"""Subcommands of the ``tcpfair`` CLI, one module each, and their shared error handling."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class UserError(Exception):
    """An error whose message is meant for the user as it is (no traceback)."""


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
            click.echo(f"error: {e}", err=True)
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
