"""Sweep specs: a base scenario, axes, repeats → the list of runs (``docs/sweeps.md``).

A sweep file names a base scenario (a path relative to the sweep file, or an inline
``[base]`` table), axes as dotted scenario keys (``flows.1.rtt``; flows count from 0) with a
value list or a range ``{ from, to, step }``, optional ``zip`` groups of axes that move
together, and ``repeats``. The grid is the Cartesian product of the groups (an axis not in
a zip group is a group of its own), in the order the axes are written.

Every point is validated before anything runs; all bad points are reported at once, each
with its axis values (``SweepError``).

Identity and seeds (stable, part of the file format):

- ``point_hash`` = ``Scenario.hash()`` of the point's scenario with seed 0 (the resolved
  scenario without its name or seed),
- the seed of repeat ``r`` = the first 8 bytes (big-endian) of
  ``sha256("tcpfair-sweep-seed/v1:{sweep_seed}:{point_hash}:{r}")``, shifted right by one bit
  (so it is < 2⁶³),
- ``run_hash`` = ``Scenario.hash()`` of the point's scenario with that seed.

So a re-run of the same sweep reproduces every run exactly, a point keeps its seeds when
other axes are added, and two sweeps with the same seed share runs they have in common.

``start_jitter = "1s"`` (optional) moves every flow's start (a single value; a list or a
distribution of starts is left as it is) later by floor(Uᵢ·J), Uᵢ the
i-th ``random.Random(seed).random()`` of the run's seed: the simulator is deterministic and
its seed only drives random loss, RED and BBR, so without jitter the repeats of a
loss-free drop-tail point are identical (σ = 0); a testbed's repeats differ by such start
offsets among other things.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from . import spec, units
from .outputs import name_problem
from .spec import Scenario, SpecError

__all__ = [
    "SweepError",
    "Sweep",
    "Run",
    "Plot",
    "load_sweep",
    "sweep_from_dict",
    "derive_seed",
]

SEED_DOMAIN = "tcpfair-sweep-seed/v1"
#: Most runs (points × repeats) a sweep may have, and most values an axis range may expand
#: to. Every run is resolved and validated before anything starts, at about 6,000 runs/s on
#: this project's VM: 50,000 runs plan in about 10 s (docs/sweeps.md, "Limits").
MAX_RUNS = 50_000
MAX_POINTS = MAX_RUNS  # the name before issue 8
_SWEEP_KEYS = {
    "name",
    "description",
    "seed",
    "repeats",
    "start_jitter",
    "base",
    "axes",
    "zip",
    "backend",
    "plots",
}
_PLOT_KINDS = ("surface", "line", "box", "bars", "cdf")


class SweepError(ValueError):
    """Invalid sweep. ``problems`` is a list of (where, message): a key, or a point's axis values.
    ``option=True``: the problems are the command's options' (``-j``, ``--scheduler``), not
    the sweep file's — the message does not say "invalid sweep"."""

    def __init__(
        self, problems: list[tuple[str, str]], source: str | None = None, option: bool = False
    ):
        self.problems = problems
        self.source = source
        head = f"invalid sweep {source}" if source else "invalid sweep"
        from ._text import one_line

        lines = [one_line(f"{w}: {m}") for w, m in problems]  # each problem one line
        if len(lines) == 1:
            super().__init__(lines[0] if option else f"{head}: {lines[0]}")
        else:
            head = f"{len(lines)} problems" if option else f"{head} ({len(lines)} problems)"
            super().__init__(f"{head}:\n  " + "\n  ".join(lines))


@dataclass(frozen=True)
class Plot:
    """A figure the sweep draws when it finishes: ``surface`` (heatmap + 3-D) or ``line``."""

    kind: str
    metric: str
    x: str
    y: str | None = None
    by: str | None = None
    title: str | None = None
    xlabel: str | None = None
    ylabel: str | None = None
    log_x: bool = False
    log_y: bool = False


#: keys of a [[plots]] table
_PLOT_KEYS = ("kind", "metric", "x", "y", "by", "title", "xlabel", "ylabel", "log_x", "log_y")


@dataclass(frozen=True)
class Run:
    """One point × repeat: the resolved scenario and its identity."""

    point: int
    repeat: int
    axes: dict[str, Any]
    scenario: Scenario
    point_hash: str
    run_hash: str

    @property
    def seed(self) -> int:
        return self.scenario.seed


@dataclass
class Sweep:
    name: str
    base: dict[str, Any]
    axes: dict[str, list[Any]]
    groups: list[list[str]]
    repeats: int = 1
    seed: int = 1
    backend: str | None = None
    plots: list[Plot] = field(default_factory=list)
    source: str | None = None
    start_jitter_ns: int = 0

    # ----------------------------------------------------------------- the grid
    def points(self) -> Iterator[dict[str, Any]]:
        """Axis values of each grid point: product over groups, zip within a group."""
        per_group = [list(zip(*(self.axes[k] for k in g), strict=True)) for g in self.groups]
        for combo in itertools.product(*per_group):
            values: dict[str, Any] = {}
            for g, vals in zip(self.groups, combo, strict=True):
                values.update(zip(g, vals, strict=True))
            yield {k: values[k] for k in self.axes}

    def n_points(self) -> int:
        n = 1
        for g in self.groups:
            n *= len(self.axes[g[0]])
        return n

    def runs(self) -> list[Run]:
        """Every point × repeat, validated. Raises ``SweepError`` listing every bad point."""
        problems: list[tuple[str, str]] = []
        out = list(self.iter_runs(problems))
        if problems:
            raise SweepError(problems, self.source)
        return out

    def iter_runs(self, problems: list[tuple[str, str]]) -> Iterator[Run]:
        """Every valid point × repeat, one at a time (a plan need not hold them all);
        the bad ones are appended to ``problems`` (once, when every point fails the same
        way: a bad key of the base, not of the points)."""
        bad_points: list[tuple[dict[str, Any], list[str]]] = []  # (point, its problems)
        try:
            for i, values in enumerate(self.points()):
                try:
                    sc = self.point_scenario(values)
                except SpecError as e:
                    bad_points.append(
                        (
                            values,
                            [
                                f"{key}: {msg}"
                                + ("" if value is spec._MISSING else f" (got {value!r})")
                                for key, value, msg in e.problems
                            ],
                        )
                    )
                    continue
                jitter_problem = self._jitter_problem(sc)
                if jitter_problem is not None:
                    bad_points.append((values, [jitter_problem]))
                    continue
                yield from self._repeats(i, values, sc, problems)
        finally:
            problems.extend(_said_once(bad_points, self.n_points()))

    def _jitter_problem(self, sc: Scenario) -> str | None:
        """Why ``start_jitter`` could move a flow of ``sc`` to or past its stop or the end
        of the run (the offset is below the jitter, so start + jitter <= that end is safe)."""
        fmt = units.format_time
        for i, f in enumerate(sc.flows):
            if not isinstance(f.start, int):
                continue  # a list or a distribution of starts is not moved
            end = min(f.stop, sc.duration) if f.stop is not None else sc.duration
            if f.start + self.start_jitter_ns > end:
                what = (
                    "its stop" if f.stop is not None and f.stop < sc.duration else "the run's end"
                )
                return (
                    f"start_jitter: {fmt(self.start_jitter_ns)} could move flows.{i}.start "
                    f"({fmt(f.start)}) past {what} ({fmt(end)}); allowed: at most "
                    f"{fmt(end - f.start)} here"
                )
        return None

    def _repeats(
        self, i: int, values: dict[str, Any], sc: Scenario, problems: list[tuple[str, str]]
    ) -> Iterator[Run]:
        """The runs of point ``i`` (scenario ``sc``): one per repeat, each with its seed."""
        point_hash = sc.with_seed(0).hash()
        for r in range(self.repeats):
            seed = derive_seed(self.seed, point_hash, r)
            try:
                run_sc = self._jittered(sc, seed) if self.start_jitter_ns else sc.with_seed(seed)
            except SpecError as e:
                problems.extend(
                    (f"{point_label(values)} (repeat {r})", f"{k}: {m}") for k, _, m in e.problems
                )
                continue
            yield Run(i, r, dict(values), run_sc, point_hash, run_sc.hash())

    def _jittered(self, sc: Scenario, seed: int) -> Scenario:
        """``start_jitter``: every flow's start moves later by floor(Uᵢ·J) ns, Uᵢ the i-th
        ``random.Random(seed).random()`` — so repeats of a deterministic backend differ."""
        rng = random.Random(seed)
        data = sc.to_dict()
        for i, f in enumerate(sc.flows):
            offset = int(rng.random() * self.start_jitter_ns)
            # a list or distribution of starts stays as it is: a distribution draws anew
            # with each repeat's seed already (docs/scenario.md, "Distributions")
            if isinstance(f.start, int):
                data["flows"][i]["start"] = f"{f.start + offset}ns"
        data["seed"] = seed
        return spec.from_dict(data)

    def point_scenario(self, values: dict[str, Any]) -> Scenario:
        data = self.base
        for k, v in values.items():
            data = spec.set_key(data, k, v)
        return spec.from_dict(data)

    def with_axes(self, overrides: list[str]) -> Sweep:
        """Replace (or add) axes from ``KEY=VALUES`` strings, VALUES a TOML list or range:
        ``flows.1.cca=["newreno"]``, ``flows.1.rtt={from="25ms", to="100ms", step="25ms"}``."""
        import tomllib

        axes = dict(self.axes)
        groups = [list(g) for g in self.groups]
        problems: list[tuple[str, str]] = []
        for o in overrides:
            key, sep, text = o.partition("=")
            key = key.strip()
            try:
                value = tomllib.loads(f"v = {text.strip()}")["v"] if sep else None
            except tomllib.TOMLDecodeError:
                value = None
            try:
                if isinstance(value, dict) and "from" in value:
                    value = expand_range(value)
            except ValueError as e:
                problems.append((f"--axis {key}", str(e)))
                continue
            if not key or not isinstance(value, list) or not value:
                problems.append(
                    (
                        f"--axis {o}",
                        'expected KEY=["v1", "v2"] or KEY={ from = "…", to = "…", step = "…" }',
                    )
                )
                continue
            if key not in axes:
                groups.append([key])
            axes[key] = value
        problems.extend(_size_problems(axes, groups, self.repeats, "--axis"))
        for g in groups:
            if len({len(axes[k]) for k in g}) > 1:
                problems.append(
                    (
                        "--axis",
                        "axes that move together (zip) need equal lengths; got "
                        + ", ".join(f"{k}: {len(axes[k])}" for k in g),
                    )
                )
        if problems:
            raise SweepError(problems, self.source)
        return Sweep(
            name=self.name,
            base=self.base,
            axes=axes,
            groups=groups,
            repeats=self.repeats,
            seed=self.seed,
            backend=self.backend,
            plots=self.plots,
            source=self.source,
            start_jitter_ns=self.start_jitter_ns,
        )

    def to_dict(self) -> dict[str, Any]:
        """The sweep as data (base inlined), stored in the catalog with its runs."""
        return {
            "name": self.name,
            "seed": self.seed,
            "repeats": self.repeats,
            "base": self.base,
            "axes": self.axes,
            "zip": [g for g in self.groups if len(g) > 1],
            "start_jitter_ns": self.start_jitter_ns,
        }

    def spec_hash(self) -> str:
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _said_once(
    bad_points: list[tuple[dict[str, Any], list[str]]], n_points: int
) -> list[tuple[str, str]]:
    """The problems of the bad points, as (where, problem), each problem once: when every
    point of several has the same problems (a bad key of the base), for "all N points";
    when several points share a problem, for the axis values they have in common
    (``flows.0.rtt=hello (4 points)``: one bad value of an axis), else for each point."""
    if n_points > 1 and len(bad_points) == n_points:
        first = bad_points[0][1]
        if all(p == first for _, p in bad_points):
            return [(f"all {n_points} points", m) for m in first]
    where_of: dict[str, list[dict[str, Any]]] = {}  # problem → the points that have it
    for values, msgs in bad_points:
        for m in msgs:
            where_of.setdefault(m, []).append(values)
    out = []
    for m, points in where_of.items():
        if len(points) == 1:
            out.append((point_label(points[0]), m))
            continue
        common = {k: v for k, v in points[0].items() if all(p.get(k) == v for p in points)}
        label = point_label(common) if common else f"{point_label(points[0])}, …"
        out.append((f"{label} ({len(points)} points)", m))
    return out


def _shown(v: Any) -> str:
    """An axis value in a point's label: a string as it is (``25ms``) unless it is not one
    printable line (then its repr: a label is one line of a message), others as JSON."""
    if isinstance(v, str):
        return v if v.isprintable() else repr(v)
    return json.dumps(v)


def point_label(values: dict[str, Any]) -> str:
    """``flows.1.rtt=25ms, bottleneck.buffer=0.2bdp``: how a point is named in messages."""
    return ", ".join(f"{k}={_shown(v)}" for k, v in values.items()) or "(base)"


def derive_seed(sweep_seed: int, point_hash: str, repeat: int) -> int:
    """The seed of one repeat of one point (see the module docstring; stable across versions)."""
    digest = hashlib.sha256(f"{SEED_DOMAIN}:{sweep_seed}:{point_hash}:{repeat}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


# --------------------------------------------------------------------------- loading
def load_sweep(path: str | Path) -> Sweep:
    p = Path(path)
    try:
        data = spec.read_toml(p)
    except SpecError as e:
        raise SweepError(
            [(k, m + ("" if v is spec._MISSING else f" ({v})")) for k, v, m in e.problems], str(p)
        ) from None
    except UnicodeDecodeError as e:
        raise SweepError([("(file)", _not_text(e))], str(p)) from None
    return sweep_from_dict(data, source=str(p), base_dir=p.parent, default_name=p.stem)


def sweep_from_dict(
    data: dict[str, Any],
    source: str | None = None,
    base_dir: Path | None = None,
    default_name: str = "sweep",
) -> Sweep:
    wrong = spec.file_kind_problem(data, "sweep")
    if wrong:
        raise SweepError([("(file)", wrong)], source)
    problems: list[tuple[str, str]] = []
    for k in data:
        if k not in _SWEEP_KEYS:
            problems.append((k, f"unknown key; allowed: {', '.join(sorted(_SWEEP_KEYS))}"))

    name = data.get("name", default_name)
    name_bad = name_problem(name)  # the name becomes a folder: results/<name>
    if name_bad:
        problems.append(("name", f"{name_bad} (got {name!r})"))
    repeats = data.get("repeats", 1)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= 10_000:
        problems.append(("repeats", f"expected a whole number from 1 to 10000 (got {repeats!r})"))
    backend = data.get("backend")
    if backend is not None and backend not in ("sim", "kernel"):
        problems.append(("backend", f"expected 'sim' or 'kernel' (got {backend!r})"))

    base = _load_base(data, base_dir, problems)
    seed = data.get("seed", base.get("seed", 1) if base else 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        problems.append(("seed", f"expected a whole number >= 0 (got {seed!r})"))

    jitter = 0
    if "start_jitter" in data:
        try:
            jitter = units.parse_time(data["start_jitter"])
        except units.UnitError as e:
            problems.append(("start_jitter", str(e)))
        else:
            if jitter > spec.MAX_DURATION_NS:
                problems.append(
                    (
                        "start_jitter",
                        f"out of range; allowed: at most 86400s (one day) "
                        f"(got {data['start_jitter']!r})",
                    )
                )
                jitter = 0
    axes = _load_axes(data.get("axes"), problems)
    groups = _load_groups(data.get("zip", []), axes, problems)
    plots = _load_plots(data.get("plots", []), axes, problems)
    if not problems and base:
        problems.extend(_size_problems(axes, groups, repeats, "axes"))
    if not problems and base:
        problems.extend(_axis_path_problems(base, axes))
    if problems:
        raise SweepError(problems, source)
    return Sweep(
        name=name,
        base=base,
        axes=axes,
        groups=groups,
        repeats=repeats,
        seed=seed,
        backend=backend,
        plots=plots,
        source=source,
        start_jitter_ns=jitter,
    )


def _axis_path_problems(base: dict[str, Any], axes: dict[str, list[Any]]) -> list[tuple[str, str]]:
    """An axis whose key cannot be set in the base (``flows.3.rtt`` with two flows, a key
    under a value) fails every point the same way: said once, for the axis, as the first
    point meets it (``set_key`` looks at the key, not at the value)."""
    data = base
    for k, values in axes.items():
        try:
            data = spec.set_key(data, k, values[0])
        except SpecError as e:
            return [(f"axes.{k}", msg) for _, _, msg in e.problems]
    return []


def _load_base(
    data: dict[str, Any], base_dir: Path | None, problems: list[tuple[str, str]]
) -> dict[str, Any]:
    base = data.get("base")
    if base is None:
        problems.append(
            (
                "base",
                "required: a scenario file (path relative to the sweep file) or an inline [base] table",
            )
        )
        return {}
    if isinstance(base, str):
        path = Path(base)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        try:
            raw = spec.read_toml(path)
            wrong = spec.file_kind_problem(raw, "scenario")
            if wrong:
                problems.append(("base", f"{path}: {wrong}"))
                return {}
            return spec.cdf_paths_from(raw, path.parent)
        except SpecError as e:
            for _k, v, m in e.problems:
                shown = f"{path}: {m}" if v is spec._MISSING else f"{m} ({v})"
                problems.append(("base", shown))
            return {}
        except UnicodeDecodeError as e:
            problems.append(("base", f"{path}: {_not_text(e)}"))
            return {}
    if isinstance(base, dict):
        return spec.cdf_paths_from(base, base_dir) if base_dir is not None else base
    problems.append(("base", f"expected a path or a table (got {base!r})"))
    return {}


def _size_problems(
    axes: dict[str, list[Any]], groups: list[list[str]], repeats: int, where: str
) -> list[tuple[str, str]]:
    """The grid's size against ``MAX_RUNS`` (zip groups of unequal lengths are reported
    elsewhere; their first axis counts here)."""
    n = 1
    for g in groups:
        n *= len(axes[g[0]]) if g and g[0] in axes else 1
    if n * repeats <= MAX_RUNS:
        return []
    return [
        (
            where,
            f"{n} points × {repeats} repeats = {n * repeats} runs, more than the limit of "
            f"{MAX_RUNS} runs per sweep; split it into several sweeps (they may share one "
            "results directory)",
        )
    ]


def _not_text(e: UnicodeDecodeError) -> str:
    return f"not UTF-8 text (byte {e.start}); a sweep or scenario file is TOML"


def _load_axes(raw: Any, problems: list[tuple[str, str]]) -> dict[str, list[Any]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problems.append(
            (
                "axes",
                'expected a table of dotted keys, e.g. [axes] "flows.1.rtt" = ["25ms", "50ms"]',
            )
        )
        return {}
    axes: dict[str, list[Any]] = {}

    def walk(prefix: str, node: dict[str, Any]) -> None:
        for k, v in node.items():
            key = f"{prefix}.{k}" if prefix else k
            if isinstance(v, list):
                values = v
            elif isinstance(v, dict) and "from" in v:
                try:
                    values = expand_range(v)
                except ValueError as e:
                    problems.append((f"axes.{key}", str(e)))
                    continue
            elif isinstance(v, dict):
                walk(key, v)
                continue
            else:
                problems.append(
                    (
                        f"axes.{key}",
                        f"expected a list of values or a range {{ from, to, step }} (got {v!r})",
                    )
                )
                continue
            if key in axes:
                problems.append((f"axes.{key}", "axis given twice"))
            elif not values:
                problems.append((f"axes.{key}", "the value list is empty"))
            else:
                axes[key] = values

    walk("", raw)
    return axes


def _load_groups(
    raw: Any, axes: dict[str, list[Any]], problems: list[tuple[str, str]]
) -> list[list[str]]:
    if not isinstance(raw, list) or not all(
        isinstance(g, list) and all(isinstance(k, str) for k in g) for g in raw
    ):
        problems.append(
            (
                "zip",
                f'expected a list of axis-key lists, e.g. zip = [["flows.0.rtt", "flows.1.rtt"]] (got {raw!r})',
            )
        )
        return [[k] for k in axes]
    grouped: dict[str, int] = {}
    for gi, g in enumerate(raw):
        if len(g) < 2:
            problems.append((f"zip.{gi}", "a zip group needs at least two axes"))
        for k in g:
            if k not in axes and f"axes.{k}" in {w for w, _ in problems}:
                continue  # the axis itself is reported
            if k not in axes:
                problems.append(
                    (f"zip.{gi}", f"{k!r} is not an axis; axes: {', '.join(axes) or '(none)'}")
                )
            elif k in grouped:
                problems.append((f"zip.{gi}", f"{k!r} is already in zip group {grouped[k]}"))
            else:
                grouped[k] = gi
        lens = {k: len(axes[k]) for k in g if k in axes}
        if len(set(lens.values())) > 1:
            problems.append(
                (
                    f"zip.{gi}",
                    "axes that move together need equal lengths; got "
                    + ", ".join(f"{k}: {n}" for k, n in lens.items()),
                )
            )
    # groups in the order of their first axis
    groups: list[list[str]] = []
    seen: set[int] = set()
    for k in axes:
        if k in grouped:
            gi = grouped[k]
            if gi not in seen:
                seen.add(gi)
                groups.append([a for a in raw[gi] if a in axes])
        else:
            groups.append([k])
    return groups


def _load_plots(
    raw: Any, axes: dict[str, list[Any]], problems: list[tuple[str, str]]
) -> list[Plot]:
    if not isinstance(raw, list):
        problems.append(("plots", "expected [[plots]] tables"))
        return []
    out = []
    for i, p in enumerate(raw):
        where = f"plots.{i}"
        if not isinstance(p, dict):
            problems.append((where, "expected a table { kind, metric, x, y | by }"))
            continue
        extra = set(p) - set(_PLOT_KEYS)
        if extra:
            problems.append(
                (
                    where,
                    f"unknown key(s) {', '.join(sorted(extra))}; allowed: {', '.join(_PLOT_KEYS)}",
                )
            )
        _check_plot_style(p, where, axes, problems)
        kind = p.get("kind")
        if kind not in _PLOT_KINDS:
            problems.append(
                (f"{where}.kind", f"expected one of {', '.join(_PLOT_KINDS)} (got {kind!r})")
            )
        if not isinstance(p.get("metric"), str):
            problems.append(
                (f"{where}.metric", "required: a metric name such as 'jfi', 'ratio', 'utilization'")
            )
        broken = {w for w, _ in problems}
        for k in ("x", "y", "by"):
            v = p.get(k)
            known = isinstance(v, str) and v in axes  # (a table or a list is unhashable)
            if v is not None and not known and f"axes.{v}" not in broken:
                problems.append((f"{where}.{k}", f"{v!r} is not an axis; axes: {', '.join(axes)}"))
        _check_kind_keys(p, where, problems)
        if kind == "surface" and p.get("y") is None:
            problems.append((f"{where}.y", "a surface needs a y axis"))
        out.append(
            Plot(
                kind=str(kind),
                metric=str(p.get("metric")),
                x=str(p.get("x")) if p.get("x") is not None else "",
                y=p.get("y"),
                by=p.get("by"),
                title=p.get("title") if isinstance(p.get("title"), str) else None,
                xlabel=p.get("xlabel") if isinstance(p.get("xlabel"), str) else None,
                ylabel=p.get("ylabel") if isinstance(p.get("ylabel"), str) else None,
                log_x=p.get("log_x") is True,
                log_y=p.get("log_y") is True,
            )
        )
    return out


def _check_kind_keys(p: dict[str, Any], where: str, problems: list[tuple[str, str]]) -> None:
    """What each kind needs: ``x`` (all but ``cdf``, whose x axis is the metric itself), the
    metrics ``bars`` (per-flow ``throughput``) and ``cdf`` (``throughput``, ``fct``) draw."""
    from .outputs import CDF_METRICS  # not .surfaces: a sweep file is checked without matplotlib

    kind, metric = p.get("kind"), p.get("metric")
    if kind == "cdf":
        if p.get("x") is not None:
            problems.append(
                (
                    f"{where}.x",
                    "a cdf has the metric on its x axis; use by = AXIS for one curve "
                    "per value of an axis",
                )
            )
        if isinstance(metric, str) and metric not in CDF_METRICS:
            problems.append(
                (f"{where}.metric", f"a cdf draws one of {', '.join(CDF_METRICS)} (got {metric!r})")
            )
        return
    if p.get("x") is None:
        problems.append((f"{where}.x", "required: the axis on the x axis"))
    if kind == "bars":
        if isinstance(metric, str) and metric != "throughput":
            problems.append(
                (f"{where}.metric", f"bars draw each flow's 'throughput' (got {metric!r})")
            )
        if p.get("by") is not None:
            problems.append((f"{where}.by", "bars have one bar per flow; by is not allowed"))


def _check_plot_style(
    p: dict[str, Any], where: str, axes: dict[str, list[Any]], problems: list[tuple[str, str]]
) -> None:
    """``title``/``xlabel``/``ylabel`` are one line of text; ``log_x``/``log_y`` are booleans,
    for line plots only, and ``log_x`` needs an x axis of positive numbers."""
    from .aggregate import axis_numeric

    for k in ("title", "xlabel", "ylabel"):
        v = p.get(k)
        if v is not None and (not isinstance(v, str) or not v.strip() or "\n" in v):
            problems.append((f"{where}.{k}", f"expected one line of text, got {v!r}"))
    for k in ("log_x", "log_y"):
        v = p.get(k)
        if v is None:
            continue
        if not isinstance(v, bool):
            problems.append((f"{where}.{k}", f"expected true or false, got {v!r}"))
        elif v and p.get("kind") != "line":
            problems.append((f"{where}.{k}", "a log scale applies to line plots only"))
    x = p.get("x")
    if p.get("log_x") is True and p.get("kind") == "line" and x in axes:
        nums, _ = axis_numeric(list(axes[x]))
        if nums is None or min(nums) <= 0:
            problems.append(
                (
                    f"{where}.log_x",
                    f"axis {x!r} has values {axes[x]!r}; a log scale needs positive numbers",
                )
            )


# --------------------------------------------------------------------------- ranges
_QUANTITY = re.compile(
    r"^\s*(?P<num>[+-]?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*(?P<unit>[A-Za-zµ%]*)\s*$"
)


def _split_quantity(v: Any, what: str) -> tuple[Decimal, str | None]:
    if isinstance(v, bool):
        raise ValueError(f"{what}: expected a number or a value with a unit, got {v!r}")
    if isinstance(v, int | float):
        return Decimal(str(v)), None
    if isinstance(v, str):
        m = _QUANTITY.match(v)
        if m and m.group("unit"):
            try:
                return Decimal(m.group("num")), m.group("unit")
            except InvalidOperation:
                pass
    raise ValueError(f"{what}: expected a number or a value with a unit like '25ms', got {v!r}")


def expand_range(r: dict[str, Any]) -> list[Any]:
    """``{ from = "25ms", to = "400ms", step = "25ms" }`` → ``["25ms", "50ms", …, "400ms"]``.

    Both ends are included (``to`` when it lies on the grid). Arithmetic is decimal, so
    ``0.2bdp`` steps give ``0.4bdp``, not ``0.4000000000000001bdp``. All three values use
    the same unit; plain numbers give numbers (integers when all three are integers).
    """
    extra = set(r) - {"from", "to", "step"}
    if extra:
        raise ValueError(
            f"unknown key(s) {', '.join(sorted(extra))} in a range; allowed: from, to, step"
        )
    missing = [k for k in ("from", "to", "step") if k not in r]
    if missing:
        raise ValueError(f"a range needs from, to and step (missing: {', '.join(missing)})")
    lo, u1 = _split_quantity(r["from"], "from")
    hi, u2 = _split_quantity(r["to"], "to")
    step, u3 = _split_quantity(r["step"], "step")
    if len({u1, u2, u3}) != 1:
        raise ValueError(
            f"from, to and step must have the same unit (got {r['from']!r}, {r['to']!r}, {r['step']!r})"
        )
    if step <= 0:
        raise ValueError(f"step must be positive (got {r['step']!r})")
    if hi < lo:
        raise ValueError(f"to ({r['to']!r}) is below from ({r['from']!r})")
    n = int((hi - lo) / step) + 1
    if n > MAX_RUNS:
        raise ValueError(f"the range has {n} values; at most {MAX_RUNS}")
    values = [lo + step * i for i in range(n)]
    if u1 is None:
        all_int = all(isinstance(r[k], int) for k in ("from", "to", "step"))
        return [int(v) if all_int else float(v) for v in values]
    return [f"{_fmt_decimal(v)}{u1}" for v in values]


def _fmt_decimal(d: Decimal) -> str:
    s = format(d.normalize(), "f")
    return s
