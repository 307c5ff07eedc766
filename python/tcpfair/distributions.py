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
  α > 1: scale xₘ = mean·(α − 1)/α, P(X > x) = (xₘ/x)^α for x ≥ xₘ; clipped at max;
- ``{ cdf = "web.csv" }`` or ``{ cdf = [["10KB", 0.5], ["1MB", 1]] }``: an empirical CDF,
  points (value, cumulative probability) with increasing values, last probability 1; a
  draw is the inverse transform, linear between points (ns-2's EmpiricalRandomVariable
  with interpolation), P(X = first value) = its probability. The file: two comma-separated
  columns, a quantity with its unit and a probability; ``#`` comments.

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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy loads when values are drawn, not when a spec is read
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
    #: an empirical CDF: (value, cumulative probability), values increasing, last p = 1
    points: tuple[tuple[int, float], ...] = ()

    def param(self, name: str) -> float:
        return dict(self.params)[name]

    def canonical(self) -> dict[str, Any]:
        """The resolved form (what the content hash covers): the distribution, not draws."""
        if self.kind == "list":
            return {"list": list(self.values)}
        if self.kind == "cdf":
            return {"cdf": [[x, p] for x, p in self.points]}
        return {"dist": self.kind, **dict(self.params)}

    def written(self, unit: str) -> Any:
        """As a scenario file writes it, each quantity in ``unit`` (``ns`` or ``B``)."""
        if self.kind == "list":
            return [f"{v}{unit}" for v in self.values]
        if self.kind == "cdf":
            return {"cdf": [[f"{x}{unit}", p] for x, p in self.points]}
        out: dict[str, Any] = {"dist": self.kind}
        for k, v in self.params:
            out[k] = v if k == "shape" else f"{int(v)}{unit}"
        return out

    def mean(self) -> float:
        """The nominal mean (before clipping): for a ``bdp`` buffer and for reports."""
        if self.kind == "list":
            return sum(self.values) / len(self.values)
        if self.kind == "cdf":  # a point mass at the first value, then uniform segments
            total = self.points[0][0] * self.points[0][1]
            for (xa, pa), (xb, pb) in zip(self.points, self.points[1:], strict=False):
                total += (pb - pa) * (xa + xb) / 2
            return total
        if self.kind == "uniform":
            return (self.param("min") + self.param("max")) / 2
        return self.param("mean")

    def draw(self, n: int, rng: np.random.Generator) -> list[int]:
        """``n`` values, one per connection, in the entry's connection order."""
        import numpy as np

        if self.kind == "list":
            return [self.values[i % len(self.values)] for i in range(n)]
        if self.kind == "cdf":  # inverse transform, linear between the points
            xs = np.array([x for x, _ in self.points], dtype=float)
            ps = np.array([q for _, q in self.points], dtype=float)
            return [int(v) for v in np.rint(np.interp(rng.random(n), ps, xs))]
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
    import numpy as np

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
    if isinstance(v, dict) and "cdf" in v:
        return _parse_cdf(v, check)
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
    if not isinstance(name, str) or name not in DISTS:  # (a table or a list is unhashable)
        raise ValueError(
            f"a table here names a distribution: dist = {', '.join(map(repr, DISTS))} "
            f'(got dist = {name!r}), or an empirical CDF {{ cdf = "file.csv" }}; or give one '
            "value or a list"
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
    if name == "pareto":
        # its least value is x_m = mean × (shape − 1) / shape (no min key): below the
        # quantity's floor the draws would round to 0 (a 0-byte transfer, a 0 ns RTT) and
        # the simulator refuse the run after validation said yes
        xm = p["mean"] * (p["shape"] - 1) / p["shape"]
        if xm < lo:
            raise ValueError(
                f"pareto mean {fmt(p['mean'])} with shape {p['shape']:g} draws from "
                f"{fmt(xm)} up, below the least value {fmt(lo)}; allowed: a mean of at least "
                f"{fmt(math.ceil(lo * p['shape'] / (p['shape'] - 1)))}"
            )
    order = [k for k in ("mean", "sd", "shape", "min", "max") if k in p]
    return Varied(name, params=tuple((k, p[k]) for k in order))


MAX_CDF_POINTS = 10_000
MAX_CDF_BYTES = 1 << 20


def _parse_cdf(v: dict[str, Any], check: Checker) -> Varied:
    """``{ cdf = "file.csv" }`` or ``{ cdf = [["10KB", 0.5], ["1MB", 1.0]] }``."""
    if set(v) != {"cdf"}:
        raise ValueError(
            f"an empirical CDF table has the one key cdf; unknown: "
            f"{', '.join(sorted(set(v) - {'cdf'}))}"
        )
    src = v["cdf"]
    if isinstance(src, str):
        rows, where = _read_cdf_file(src), f"cdf file {src!r}"
    elif isinstance(src, list):
        rows, where = [(i, r) for i, r in enumerate(src)], "cdf point"
    else:
        raise ValueError(
            f"cdf is a file name or a list of [value, probability] pairs (got {src!r})"
        )
    if not 1 <= len(rows) <= MAX_CDF_POINTS:
        raise ValueError(f"{where}: 1 to {MAX_CDF_POINTS} points, got {len(rows)}")
    points: list[tuple[int, float]] = []
    for n, row in rows:
        at = f"{where}, {'line' if isinstance(src, str) else 'point'} {n}"
        if not isinstance(row, (list, tuple)) or len(row) != 2:
            raise ValueError(f"{at}: expected a value and a cumulative probability")
        x = _cdf_value(row[0], check, at)
        q = _probability(row[1], at)
        if points and (x <= points[-1][0] or q < points[-1][1]):
            raise ValueError(
                f"{at}: values must increase and probabilities not decrease "
                f"(after {points[-1][0]} with {points[-1][1]:g})"
            )
        points.append((x, q))
    if points[-1][1] != 1.0:
        raise ValueError(
            f"{where}: the last cumulative probability must be 1, got {points[-1][1]:g}"
        )
    return Varied("cdf", points=tuple(points))


def _cdf_value(x: Any, check: Checker, at: str) -> int:
    try:
        return check(x)
    except ValueError as e:
        raise ValueError(f"{at}: {e}") from None


def _probability(q: Any, at: str) -> float:
    if isinstance(q, str):
        try:
            q = float(q)
        except ValueError:
            raise ValueError(f"{at}: probability {q!r} is not a number; allowed: 0 to 1") from None
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 <= q <= 1:
        raise ValueError(f"{at}: probability {q!r} out of range; allowed: 0 to 1")
    return float(q)


def _read_cdf_file(name: str) -> list[tuple[int, list[str]]]:
    """(line number, [value, probability]) of a CDF file: two comma-separated columns, a
    size with its unit and a cumulative probability; blank lines and ``#`` comments skipped."""
    from pathlib import Path

    from ._files import TooLargeError, read_bytes_limited

    try:
        raw = read_bytes_limited(Path(name), MAX_CDF_BYTES)
    except TooLargeError as e:
        raise ValueError(f"cdf file {name!r}: {e}, too large for a CDF") from None
    except FileNotFoundError:
        raise ValueError(f"cdf file {name!r}: no such file") from None
    except OSError as e:
        raise ValueError(f"cdf file {name!r}: cannot read: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"cdf file {name!r}: not a text file (byte {e.start} is not UTF-8)"
        ) from None
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if line:
            rows.append((n, [c.strip() for c in line.split(",")]))
    return rows


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
