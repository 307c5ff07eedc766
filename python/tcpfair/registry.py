"""The congestion controls a scenario may name, the stacks each exists in, and their
parameters: asked of the simulator's registry (``tcpfair._core.cc_registry``, owned by
crates/sim/src/cc/registry.rs), never listed here.

``tcpfair.spec`` validates a flow's ``params`` with it, ``tcpfair doctor`` lists it, and
``tcpfair doctor --cc-table`` writes the table of docs/scenario.md from it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Param",
    "Cca",
    "STACKS",
    "registry",
    "names",
    "params_of",
    "value_problem",
    "check",
    "markdown_table",
]

#: TCP implementations a flow may run (``stack``): Linux's, modelled by the simulator and
#: run by the kernel backend, or ns-2's one-way agents (simulator only; docs/simulator.md).
STACKS: tuple[str, ...] = ("linux", "ns2")


@dataclass(frozen=True)
class Param:
    """One parameter of one algorithm under one stack, as the registry declares it."""

    name: str
    type: str  # "real", "int" or "bool"
    default: float | None  # None: unset unless given (the feature is off)
    min: float
    max: float
    unit: str
    meaning: str
    allowed: str  # the allowed values, as error messages say them

    def default_text(self) -> str:
        if self.default is None:
            return "unset"
        if self.type == "bool":
            return "true" if self.default else "false"
        return f"{self.default:.6g}"


@dataclass(frozen=True)
class Cca:
    name: str
    summary: str
    #: stack name → its parameters there (only the stacks the algorithm exists in)
    stacks: dict[str, tuple[Param, ...]]


@functools.cache
def registry() -> dict[str, Cca]:
    """Every congestion control by name, in the registry's order (fetched once)."""
    from ._core import cc_registry

    out: dict[str, Cca] = {}
    for entry in cc_registry():
        stacks = {
            stack: tuple(Param(**p) for p in params) for stack, params in entry["stacks"].items()
        }
        out[entry["name"]] = Cca(entry["name"], entry["summary"], stacks)
    return out


def names(stack: str = "linux") -> tuple[str, ...]:
    """The algorithms that exist under ``stack``."""
    return tuple(n for n, c in registry().items() if stack in c.stacks)


def params_of(cca: str, stack: str) -> tuple[Param, ...] | None:
    """``cca``'s parameters under ``stack``, or None when it does not exist there."""
    c = registry().get(cca)
    return None if c is None else c.stacks.get(stack)


def value_problem(p: Param, value: Any) -> str | None:
    """Why ``value`` (as TOML gave it) is not of ``p``'s type, or None. Ranges and the
    rules across parameters are the simulator's (``check``)."""
    is_bool = isinstance(value, bool)
    ok = {
        "bool": is_bool,
        "int": isinstance(value, int) and not is_bool,
        "real": isinstance(value, int | float) and not is_bool,
    }[p.type]
    return None if ok else f"not allowed; allowed: {p.allowed}"


def check(cca: str, stack: str, params: dict[str, float]) -> tuple[str, str] | None:
    """The simulator's verdict on ``params`` (declared names, ranges, the algorithm's own
    rules such as Vegas's alpha <= beta): None, or (parameter, message)."""
    from ._core import check_cc_params

    return check_cc_params(cca, stack, params)


def markdown_table() -> str:
    """The parameter table of docs/scenario.md: one row per algorithm, stack and parameter."""
    rows = [
        "| `cca` | `stack` | parameter | type | default | range | unit | meaning |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in registry().values():
        for stack, params in c.stacks.items():
            if not params:
                rows.append(f"| `{c.name}` | {stack} | (none) | | | | | {c.summary} |")
            for p in params:
                rng = "0, 1" if p.type == "bool" else f"{p.min:.6g} to {p.max:.6g}"
                rows.append(
                    f"| `{c.name}` | {stack} | `{p.name}` | {p.type} | {p.default_text()} | "
                    f"{rng} | {p.unit} | {p.meaning} |"
                )
    return "\n".join(rows) + "\n"
