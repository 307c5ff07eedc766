"""tcpfair: a TCP congestion-control fairness lab.

Describe an experiment once (``tcpfair.load_scenario``), run it on the packet-level
simulator or the real Linux stack (``tcpfair.run``), and read per-flow throughput, Jain's
fairness index, utilization and more from the returned ``RunResult``.

``import tcpfair`` is light: ``RunResult``, ``Scenario`` and the rest (which need numpy,
pandas, pydantic) and ``__version__`` are resolved when first used, so ``tcpfair --help``
and ``--version`` start fast.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._core import __version__ as _core_version

if TYPE_CHECKING:
    from .result import RunResult, WindowError
    from .spec import Scenario, SpecError, load_scenario

    __version__: str


def _package_version() -> str:
    """The version of the installed distribution (pyproject.toml's ``version``, the one
    place it is written); a checkout on PYTHONPATH without an install reports the native
    module's, which is built from the same tree. Raises ImportError if the native module
    was built from another version (a stale build)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("tcpfair")
    except PackageNotFoundError:
        return str(_core_version)
    if found != _core_version:
        raise ImportError(
            f"tcpfair's native module is version {_core_version} but the package is {found}: "
            "rebuild it (./dev setup, or pip install .)"
        )
    return found


__all__ = [
    "__version__",
    "RunResult",
    "Scenario",
    "SpecError",
    "WindowError",
    "load_files",
    "load_iperf3",
    "load_scenario",
    "run",
]

#: public names imported on first use: name → module that defines it
_LAZY = {
    "RunResult": ".result",
    "WindowError": ".result",
    "Scenario": ".spec",
    "SpecError": ".spec",
    "load_scenario": ".spec",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # importlib.metadata costs ~40 ms: only when asked
        globals()[name] = _package_version()
        return globals()[name]
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tcpfair' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


def run(
    scenario: Scenario | str | Path | dict[str, Any],
    backend: str = "sim",
    overrides: list[str] | None = None,
    progress: bool = False,
) -> RunResult:
    """Run one scenario (object, TOML path or dict) on a backend; returns a ``RunResult``."""
    from . import spec
    from .backends import get_backend
    from .spec import load_scenario

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


def load_files(
    paths: str | Path | list[str | Path] | tuple[str | Path, ...],
    labels: list[str] | tuple[str, ...] | None = None,
    align: bool = True,
    include_all: bool = False,
) -> RunResult:
    """Read other tools' files into a ``RunResult``: iperf3 -J output, pcap/pcapng
    captures or Flent data files, whichever they are (all of one kind).

    The Python side of ``tcpfair fairness``; see ``tcpfair.importers`` (and ``.pcap``,
    ``.flent``, ``.iperf3`` for each format). Raises ``tcpfair.importers.ImportFileError``
    (a ``ValueError``) naming the file and the reason.
    """
    from .importers import load_files as _load

    plist = [paths] if isinstance(paths, (str, Path)) else list(paths)
    return _load(plist, labels=labels, align=align, include_all=include_all)
