"""Backends run a ``Scenario`` and return a ``RunResult``. One module per backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # not at run time: an error path must not import pandas
    from ..result import RunResult
    from ..spec import Scenario

BACKENDS = ("sim", "kernel")


class BackendError(RuntimeError):
    """A backend cannot run this scenario on this machine; the message says why."""


class Backend(Protocol):
    name: str

    def check(self, scenario: Scenario) -> None:
        """Raise BackendError before anything is created if the scenario cannot run here."""

    def run(self, scenario: Scenario, progress: bool = False) -> RunResult: ...


def get_backend(name: str) -> Backend:
    if name == "sim":
        from .sim import SimBackend

        return SimBackend()
    if name == "kernel":
        from .kernel import KernelBackend

        return KernelBackend()
    raise BackendError(f"unknown backend {name!r}; allowed: {', '.join(BACKENDS)}")
