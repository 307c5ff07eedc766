"""Per-connection values drawn from a list or a distribution (``rtt``, ``start``, ``size``).

A ``[[flows]]`` entry's ``rtt``, ``start`` or ``size`` is one value (every connection of
the entry gets it, exactly as before), a list (one value per connection, cycled), or a
table naming a distribution (docs/scenario.md, "Distributions"):

- ``{ dist = "uniform", min, max }``: uniform in [min, max];
- ``{ dist = "normal", mean, sd, min, max }``: normal, draws outside [min, max] clipped
  to the nearer end;
- ``{ dist = "lognormal", mean, sd, min, max }``: log-normal whose *value* has this mean
  and standard deviation (so ``mean``/``sd`` are in the quantity's units, not in logs):
  σ² = ln(1 + sd²/mean²), μ = ln(mean) − σ²/2; clipped to [min, max];
- ``{ dist = "pareto", mean, shape, max }``: Pareto (type I) with this mean and shape
  α > 1: scale xₘ = mean·(α − 1)/α, P(X > x) = (xₘ/x)^α for x ≥ xₘ; clipped at max.

``min`` and ``max`` are optional where not required; they default to the quantity's
bounds. Draws are rounded to whole nanoseconds or bytes. They come from numpy's
``Generator(PCG64)`` seeded with ``SeedSequence([seed, entry, key])`` — the scenario's
seed, the entry's index and 1, 2, 3 for rtt, start, size — so a seed gives the same
draws every time, and entries (and keys) draw independently.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Varied", "DISTS", "KEY_CODES", "parse_varied", "rng_for"]

#: Parameters of each distribution: (required, optional).
DISTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "uniform": (("min", "max"), ()),
    "normal": (("mean", "sd"), ("min", "max")),
    "lognormal": (("mean", "sd"), ("min", "max")),
    "pareto": (("mean", "shape"), ("max",)),
}
#: The third element of the seed sequence per key.
KEY_CODES = {"rtt": 1, "start": 2, "size": 3}
MAX_LIST = 4096
MAX_SHAPE = 100.0

Checker = Callable[[Any], int]


@dataclass(frozen=True)
class Varied:
    """A list of values or a distribution, resolved to integer SI units (ns or bytes).

    ``kind`` is ``"list"`` or a name in ``DISTS``; ``values`` holds the list; ``params``
    the distribution's parameters (``shape`` a float, the others integers), with ``min``
    and ``max`` always present (the defaults filled in)."""

    kind: str
    values: tuple[int, ...] = ()
    params: tuple[tuple[str, float], ...] = ()

    def param(self, name: str) -> float:
        return dict(self.params)[name]

    def canonical(self) -> dict[str, Any]:
        """The resolved form (what the content hash covers): the distribution, not draws."""
        if self.kind == "list":
            return {"list": list(self.values)}
        return {"dist": self.kind, **dict(self.params)}

    def written(self, unit: str) -> Any:
        """As a scenario file writes it, each quantity in ``unit`` (``ns`` or ``B``)."""
        if self.kind == "list":
            return [f"{v}{unit}" for v in self.values]
        out: dict[str, Any] = {"dist": self.kind}
        for k, v in self.params:
            out[k] = v if k == "shape" else f"{int(v)}{unit}"
        return out

    def mean(self) -> float:
        """The nominal mean (before clipping): for a ``bdp`` buffer and for reports."""
        if self.kind == "list":
            return sum(self.values) / len(self.values)
        if self.kind == "uniform":
            return (self.param("min") + self.param("max")) / 2
        return self.param("mean")

    def draw(self, n: int, rng: np.random.Generator) -> list[int]:
        """``n`` values, one per connection, in the entry's connection order."""
        if self.kind == "list":
            return [self.values[i % len(self.values)] for i in range(n)]
        p = dict(self.params)
        if self.kind == "uniform":
            x = rng.uniform(p["min"], p["max"], n)
        elif self.kind == "normal":
            x = rng.normal(p["mean"], p["sd"], n)
        elif self.kind == "lognormal":
            s2 = math.log1p((p["sd"] / p["mean"]) ** 2)
            x = rng.lognormal(math.log(p["mean"]) - s2 / 2, math.sqrt(s2), n)
        else:  # pareto: numpy's pareto is Lomax (Pareto II); +1 and × xm gives type I
            a = p["shape"]
            x = (rng.pareto(a, n) + 1.0) * (p["mean"] * (a - 1) / a)
        lo = p.get("min", 0)
        return [int(v) for v in np.clip(np.rint(x), lo, p["max"])]


def rng_for(seed: int, entry: int, key: str) -> np.random.Generator:
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence([seed, entry, KEY_CODES[key]]))
    )


def parse_varied(
    v: Any, check: Checker, lo: int, hi: int, fmt: Callable[[float], str]
) -> int | Varied:
    """A plain value (``check`` reads and bounds it: exactly as before), a list, or a
    distribution table. ``lo``/``hi`` are the quantity's bounds (the default min/max);
    ``fmt`` shows a value in messages."""
    if isinstance(v, Varied):
        return v
    if isinstance(v, list):
        return _parse_list(v, check)
    if isinstance(v, dict):
        return _parse_dist(v, check, lo, hi, fmt)
    return check(v)


def _parse_list(v: list[Any], check: Checker) -> Varied:
    if not v or len(v) > MAX_LIST:
        raise ValueError(
            f"a list has 1 to {MAX_LIST} values (one per connection, cycled), got {len(v)}"
        )
    out = []
    for i, x in enumerate(v):
        if isinstance(x, (list, dict)):
            raise ValueError(f"list element {i}: expected a single value, not a list or table")
        try:
            out.append(check(x))
        except ValueError as e:
            raise ValueError(f"list element {i} ({x!r}): {e}") from None
    return Varied("list", tuple(out))


def _parse_dist(
    v: dict[str, Any], check: Checker, lo: int, hi: int, fmt: Callable[[float], str]
) -> Varied:
    name = v.get("dist")
    if name not in DISTS:
        raise ValueError(
            f"a table here names a distribution: dist = {', '.join(map(repr, DISTS))} "
            f"(got dist = {name!r}); or give one value or a list"
        )
    required, optional = DISTS[name]
    allowed = ("dist", *required, *optional)
    unknown = [k for k in v if k not in allowed]
    missing = [k for k in required if k not in v]
    if unknown or missing:
        raise ValueError(
            f"{name} takes {', '.join(k for k in allowed if k != 'dist')}"
            f" ({', '.join(optional) or 'none'} optional)"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )
    p: dict[str, float] = {}
    for k in allowed[1:]:
        if k not in v:
            continue
        if k == "shape":
            p[k] = _shape(v[k])
            continue
        try:
            p[k] = check(v[k])
        except ValueError as e:
            raise ValueError(f"{name} {k} ({v[k]!r}): {e}") from None
    if name != "pareto":
        p.setdefault("min", lo)
    p.setdefault("max", hi)
    _consistent(name, p, fmt)
    order = [k for k in ("mean", "sd", "shape", "min", "max") if k in p]
    return Varied(name, params=tuple((k, p[k]) for k in order))


def _shape(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"pareto shape is a number (got {x!r}); allowed: > 1 and <= {MAX_SHAPE:g}")
    if not 1 < x <= MAX_SHAPE:
        raise ValueError(
            f"pareto shape {x!r} out of range; allowed: > 1 (a finite mean) and <= {MAX_SHAPE:g}"
        )
    return float(x)


def _consistent(name: str, p: dict[str, float], fmt: Callable[[float], str]) -> None:
    if "min" in p and p["min"] >= p["max"]:
        raise ValueError(f"{name} needs min < max (got min {fmt(p['min'])}, max {fmt(p['max'])})")
    if name in ("normal", "lognormal") and p["sd"] <= 0:
        raise ValueError(f"{name} needs sd > 0 (use a single value for a constant)")
    if name in ("normal", "lognormal", "pareto") and not (p.get("min", 0) <= p["mean"] <= p["max"]):
        raise ValueError(
            f"{name} mean {fmt(p['mean'])} must lie within [min, max] = "
            f"[{fmt(p.get('min', 0))}, {fmt(p['max'])}]"
        )
    if name == "lognormal" and p["mean"] <= 0:
        raise ValueError("lognormal needs mean > 0")
    if name == "pareto" and p["mean"] <= 0:
        raise ValueError("pareto needs mean > 0")
