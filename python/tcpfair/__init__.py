"""tcpfair: a TCP congestion-control fairness lab.

Describe an experiment once (``tcpfair.load_scenario``), run it on the packet-level
simulator or the real Linux stack (``tcpfair.run``), and read per-flow throughput, Jain's
fairness index, utilization and more from the returned ``RunResult``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._core import __version__ as _core_version
from .result import RunResult, WindowError
from .spec import Scenario, SpecError, load_scenario

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "RunResult",
    "Scenario",
    "SpecError",
    "WindowError",
    "load_iperf3",
    "load_scenario",
    "run",
]

assert _core_version == __version__, (
    f"native module {_core_version} does not match tcpfair {__version__}"
)


def run(
    scenario: Scenario | str | Path | dict[str, Any],
    backend: str = "sim",
    overrides: list[str] | None = None,
    progress: bool = False,
) -> RunResult:
    """Run one scenario (object, TOML path or dict) on a backend; returns a ``RunResult``."""
    from . import spec
    from .backends import get_backend

    if isinstance(scenario, (str, Path)):
        sc = load_scenario(scenario, overrides)
    elif isinstance(scenario, dict):
        data = spec.apply_overrides(scenario, overrides) if overrides else scenario
        sc = spec.from_dict(data)
    else:
        sc = scenario
        if overrides:
            sc = spec.from_dict(spec.apply_overrides(sc.to_dict(), overrides))
    return get_backend(backend).run(sc, progress=progress)


def load_iperf3(
    paths: str | Path | list[str | Path] | tuple[str | Path, ...],
    labels: list[str] | tuple[str, ...] | None = None,
    align: bool = True,
) -> RunResult:
    """Read iperf3 -J files into a ``RunResult`` (each file a flow group, each stream a flow).

    The Python side of ``tcpfair fairness``; see ``tcpfair.importers.iperf3``. Raises
    ``tcpfair.importers.iperf3.Iperf3Error`` (a ``ValueError``) naming the file and the reason.
    """
    from .importers.iperf3 import load_iperf3 as _load

    return _load(paths, labels=labels, align=align)
