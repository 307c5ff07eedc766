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
    "kernel_modules",
    "params_of",
    "value_problem",
    "check",
    "markdown_table",
    "DOCS_BEGIN",
    "DOCS_END",
    "DocsError",
    "docs_section",
    "with_docs_table",
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
        return number_text(self.default)

    def range_text(self) -> str:
        if self.type == "bool":
            return "true, false"
        return f"{number_text(self.min)} to {number_text(self.max)}"


def number_text(x: float) -> str:
    """A registry number as tables show it: whole numbers in full, others to 6 digits."""
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


@dataclass(frozen=True)
class Cca:
    name: str
    summary: str
    #: Linux's name for it (``net.ipv4.tcp_congestion_control``); None: not in mainline Linux
    kernel: str | None
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
        out[entry["name"]] = Cca(entry["name"], entry["summary"], entry["kernel"], stacks)
    return out


def names(stack: str = "linux") -> tuple[str, ...]:
    """The algorithms that exist under ``stack``."""
    return tuple(n for n, c in registry().items() if stack in c.stacks)


def kernel_modules() -> dict[str, str | None]:
    """Scenario name → Linux's name for the algorithm (None: not in mainline Linux)."""
    return {n: c.kernel for n, c in registry().items()}


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
                rows.append(
                    f"| `{c.name}` | {stack} | `{p.name}` | {p.type} | {p.default_text()} | "
                    f"{p.range_text()} | {p.unit} | {p.meaning} |"
                )
    return "\n".join(rows) + "\n"


#: Markers around the generated table in docs/scenario.md.
DOCS_BEGIN = "<!-- generated by `tcpfair doctor --write-cc-table docs/scenario.md`: begin -->"
DOCS_END = "<!-- generated by `tcpfair doctor --write-cc-table docs/scenario.md`: end -->"


class DocsError(ValueError):
    """A document without (exactly one pair of) the generated table's markers."""


def docs_section(text: str) -> tuple[int, int]:
    """Where the generated table lies in ``text``: (start, end) between the markers."""
    if text.count(DOCS_BEGIN) != 1 or text.count(DOCS_END) != 1:
        raise DocsError(
            f"needs the lines {DOCS_BEGIN!r} and {DOCS_END!r} once each, around the table"
        )
    start = text.index(DOCS_BEGIN) + len(DOCS_BEGIN) + 1
    end = text.index(DOCS_END)
    if end < start:
        raise DocsError(f"{DOCS_END!r} comes before {DOCS_BEGIN!r}")
    return start, end


def with_docs_table(text: str) -> str:
    """``text`` with the generated table between the markers replaced by the registry's."""
    start, end = docs_section(text)
    return text[:start] + markdown_table() + text[end:]
