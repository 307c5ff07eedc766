"""``tcpfair repro``: a source study's published numbers beside ours.

A study is data, not code: ``scenarios/repro/<study>/reference.toml`` names the study's sweep
files (a full and a ``--quick`` version of each) and transcribes every number the source
prints as a ``[[value]]`` row: where it stands in the source, what was measured, the value
and unit, the source's scatter where it states one, and how to compute the same quantity
from our runs (``sweep``, ``point``, ``metric``, ``scale``). Running a study runs its sweeps
(resumable: ``orchestrate.run_sweep``), computes each row's metric per run from the run's
``summary.json``, aggregates over repeats (mean ± 95 % CI) and gives each row a verdict
(``verdict``: a pure function).

Metric paths (``metric``) are dotted paths into a run's ``summary.json`` —
``metrics.jfi``, ``metrics.throughput_bps.0``, ``flows.0.retransmits``,
``metrics.group_ratios.conn1/conn2`` — or two such paths divided, ``A / B`` (computed per
run, then aggregated). Rows with ``compute = "jain"`` and ``inputs`` are worked examples:
the source's arithmetic, evaluated with ``tcpfair.metrics``.

A source that states a **qualitative region** ("fairness is poor at high RTT and low
buffer") is transcribed as a *claim* row: ``claim`` (``below``, ``above`` or ``within``) and
``value`` (the threshold we chose to read the words by, e.g. JFI 0.9 = one flow gets twice
the other), a ``region`` of the sweep's grid (inclusive numeric ranges of axes, e.g.
``{"flows.1.rtt" = ["300ms", "400ms"]}``; empty = the whole grid) and optionally ``versus``
(another region and/or point: ours is then region − versus). Ours is the mean over the
region's grid cells of each cell's mean over repeats, with a 95 % CI over the cells
(``claim_stats``); ``claim_verdict`` says ``reproduced`` when the whole CI lies on the
claimed side, ``trend`` when only the mean does, ``differs`` otherwise.
"""

from __future__ import annotations

import csv
import io
import json
import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = [
    "ReproError",
    "Reference",
    "Study",
    "Row",
    "VERDICTS",
    "verdict",
    "claim_verdict",
    "claim_stats",
    "same_side",
    "same_order",
    "studies_dir",
    "list_studies",
    "load_study",
    "compare",
    "to_csv",
    "to_markdown",
]

VERDICTS = ("reproduced", "trend", "differs", "not expressible", "not run")

#: studies named by the issue but whose sources are not transcribed yet
PENDING = {
    "ns2-testbed": "seed 001 (ns-2 testbed: JFI and W-difference surfaces)",
    "cubic-fig8": "seed 004 Fig. 8 (CUBIC paper: intra-protocol fairness)",
    "cubic-fig9": "seed 004 Fig. 9 (CUBIC paper: inter-RTT fairness)",
}

_ROW_KEYS = {
    "id",
    "table",
    "row",
    "value",
    "unit",
    "measured",
    "location",
    "scatter",
    "tolerance",
    "rel_tolerance",
    "sweep",
    "point",
    "metric",
    "scale",
    "baseline",
    "order_group",
    "expressible",
    "explanation",
    "compute",
    "inputs",
    "claim",
    "region",
    "versus",
    "kernel_scale",
    "kernel_expressible",
    "kernel_note",
    "kernel_point",
}
CLAIMS = {"below": "<", "above": ">", "within": "|x| ≤"}
SWEEP_KINDS = {"full", "quick", "kernel", "kernel_why"}
_REQUIRED = ("id", "table", "row", "value", "unit", "measured", "location", "explanation")


class ReproError(ValueError):
    """A study that does not exist or a reference file that is wrong (one line)."""


# --------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Reference:
    """One number the source prints, and how we measure the same thing."""

    id: str
    table: str
    row: str
    value: float
    unit: str
    measured: str
    location: str
    explanation: str
    scatter: float | None = None
    tolerance: float | None = None
    rel_tolerance: float | None = None
    sweep: str | None = None
    point: dict[str, Any] = field(default_factory=dict)
    metric: str | None = None
    scale: float = 1.0
    baseline: float | None = None
    order_group: str | None = None
    expressible: bool = True
    compute: str | None = None
    inputs: tuple[float, ...] = ()
    #: a qualitative region (module docstring): below / above / within ``value``
    claim: str | None = None
    region: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: the other side of a difference: {"point": {...}, "region": {...}} (None: no difference)
    versus: dict[str, dict[str, Any]] | None = None
    #: on the kernel backend (scaled-down runs): the factor our value is multiplied by
    #: before comparing (e.g. a throughput of a 1/200-rate run × 200), whether the row is
    #: comparable at all, and what the table says about it
    kernel_scale: float = 1.0
    kernel_expressible: bool = True
    kernel_note: str = ""
    #: the point on the kernel backend, when its scaled sweep names it differently
    kernel_point: dict[str, Any] = field(default_factory=dict)

    def allowed(self) -> float:
        """The half-width within which our mean reproduces the value: the source's own
        scatter where it states one, else the stated absolute or relative tolerance."""
        if self.scatter is not None:
            return self.scatter
        if self.tolerance is not None:
            return self.tolerance
        if self.rel_tolerance is not None:
            return abs(self.value) * self.rel_tolerance
        return 0.0


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    source: str
    directory: Path
    differences: tuple[str, ...]
    #: sweep key → {"full": file, "quick": file}
    sweeps: dict[str, dict[str, str]]
    quick_note: str
    references: tuple[Reference, ...]
    #: the source's set-up as it states it, with locations (shown above the table)
    setup: tuple[str, ...] = ()
    #: how the kernel-backend versions are scaled (shown in the table's header), or why
    #: the study cannot run on the kernel backend when none of its sweeps has a version
    kernel_note: str = ""

    def on_kernel(self) -> bool:
        """Whether any sweep has a kernel-backend version."""
        return any("kernel" in files for files in self.sweeps.values())

    def sweep_file(self, key: str, quick: bool, backend: str = "sim") -> Path | None:
        """The sweep file to run: on the kernel backend the study's scaled ``kernel``
        version — None for a sweep without one (its rows are not run; ``kernel_why`` says
        why), ReproError when no sweep has one — else the full or quick one."""
        if backend == "kernel":
            if not self.on_kernel():
                why = self.kernel_note or "none of its sweeps has a kernel-backend version"
                raise ReproError(
                    f"study {self.name!r} cannot run on the kernel backend: {why}; "
                    "allowed: --backend sim"
                )
            f = self.sweeps[key].get("kernel")
            return self.directory / f if f else None
        return self.directory / self.sweeps[key]["quick" if quick else "full"]


@dataclass
class Row:
    """A reference with our value and verdict."""

    ref: Reference
    n: int = 0
    mean: float = math.nan
    ci: float = math.nan
    verdict: str = "not run"
    #: what the table adds to the explanation (e.g. how a kernel-backend value was scaled)
    note: str = ""

    @property
    def difference(self) -> float:
        return self.mean - self.ref.value


# --------------------------------------------------------------------------- verdicts
def verdict(
    source: float,
    mean: float,
    ci: float,
    allowed: float,
    trend_holds: bool | None,
    expressible: bool = True,
) -> str:
    """The verdict of one number (pure).

    ``reproduced`` when our mean ± CI overlaps the source value ± ``allowed`` (its scatter
    or the stated tolerance), i.e. |mean − source| ≤ allowed + CI, where the CI counts for at
    most ``allowed`` (two repeats give a CI wide enough to cover anything; a mean further than
    twice the tolerance from the source never reproduces it); else ``trend`` when the
    row's ordering or side (``trend_holds``) agrees with the source, ``differs`` otherwise;
    ``not expressible`` when the quantity cannot be computed from our runs; ``not run``
    when there is no value (e.g. a point the quick grid leaves out)."""
    if not expressible:
        return "not expressible"
    if not math.isfinite(mean):
        return "not run"
    half = min(ci, allowed) if math.isfinite(ci) else 0.0
    if abs(mean - source) <= allowed + half + 1e-12:
        return "reproduced"
    if trend_holds:
        return "trend"
    return "differs"


def same_side(source: float, ours: float, baseline: float) -> bool:
    """Both values on the same side of ``baseline`` (or both on it): e.g. the shorter
    connection getting more (ratio > 1) in the source and in ours."""

    def side(x: float) -> int:
        return (x > baseline) - (x < baseline)

    return side(source) == side(ours)


def same_order(source: Sequence[float], ours: Sequence[float], i: int) -> bool:
    """Element ``i`` holds the same rank among ``ours`` as among ``source`` (ties count as
    equal rank)."""

    def rank(xs: Sequence[float]) -> int:
        return sum(1 for x in xs if x < xs[i])

    return rank(source) == rank(ours)


def claim_verdict(claim: str, threshold: float, mean: float, ci: float) -> str:
    """The verdict of a claim row (pure): ``reproduced`` when mean ± CI lies wholly on the
    claimed side of ``threshold`` (``below``, ``above``; ``within``: |x| ≤ threshold),
    ``trend`` when the mean does but the CI reaches across (or is unknown), ``differs`` when
    the mean is on the other side; ``not run`` without a value."""
    if not math.isfinite(mean):
        return "not run"
    half = ci if math.isfinite(ci) else math.inf
    lo, hi = mean - half, mean + half
    if claim == "below":
        holds, sure = mean < threshold, hi < threshold
    elif claim == "above":
        holds, sure = mean > threshold, lo > threshold
    elif claim == "within":
        holds, sure = abs(mean) <= threshold, max(abs(lo), abs(hi)) <= threshold
    else:
        raise ValueError(f"claim {claim!r}; allowed: {', '.join(CLAIMS)}")
    return "reproduced" if sure else "trend" if holds else "differs"


def claim_stats(cells: Sequence[float], versus: Sequence[float] | None) -> tuple[int, float, float]:
    """(cells, mean, 95 % CI half-width) of a claim row from its region's cell means; with
    ``versus`` cells, the difference of the two means and the CIs combined in quadrature."""
    from .aggregate import mean_std_ci

    n, mean, _, ci = mean_std_ci(cells)
    if versus is None:
        return n, mean, ci
    nv, mv, _, civ = mean_std_ci(versus)
    if n == 0 or nv == 0:
        return 0, math.nan, math.nan
    return n, mean - mv, math.hypot(ci, civ)


# --------------------------------------------------------------------------- loading
def studies_dir() -> Path:
    """``repro/`` of the shipped scenarios (``tcpfair.shipped.root()``: the package's own
    ``scenarios``, the checkout's in a development install) — never the working directory."""
    from .shipped import root

    return root() / "repro"


def list_studies(root: Path | None = None) -> list[tuple[str, str, str]]:
    """(name, source, status) of every study: the transcribed ones, then the pending."""
    root = root or studies_dir()
    out: list[tuple[str, str, str]] = []
    for d in sorted(p for p in root.iterdir() if (p / "reference.toml").is_file()):
        st = load_study(d.name, root)
        out.append((st.name, st.source, f"{len(st.references)} numbers transcribed"))
    names = {n for n, _, _ in out}
    out.extend((n, text, "not yet transcribed") for n, text in PENDING.items() if n not in names)
    return out


def study_names(root: Path | None = None) -> list[str]:
    return [n for n, _, s in list_studies(root) if s != "not yet transcribed"]


def load_study(name: str, root: Path | None = None) -> Study:
    root = root or studies_dir()
    path = root / name / "reference.toml"
    if name in PENDING and not path.is_file():
        raise ReproError(
            f"study {name!r}: {PENDING[name]} is not yet transcribed; allowed now: "
            + ", ".join([*study_names(root), "all", "list"])
        )
    if not path.is_file():
        known = sorted(
            {p.name for p in root.iterdir() if (p / "reference.toml").is_file()} | set(PENDING)
        )
        raise ReproError(f"unknown study {name!r}; allowed: {', '.join(known)}, all")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ReproError(f"{path}: not valid TOML: {e}") from None
    return _study(raw, path)


def _study(raw: dict[str, Any], path: Path) -> Study:
    st = raw.get("study")
    if not isinstance(st, dict):
        raise ReproError(f"{path}: needs a [study] table")
    for key in ("name", "title", "source", "sweeps"):
        if key not in st:
            raise ReproError(f"{path}: [study] needs '{key}'")
    sweeps = st["sweeps"]
    if not isinstance(sweeps, dict):
        raise ReproError(f"{path}: [study.sweeps] must be a table of {{full, quick}} files")
    for key, files in sweeps.items():
        if not isinstance(files, dict) or not {"full", "quick"} <= set(files) <= SWEEP_KINDS:
            raise ReproError(
                f"{path}: study.sweeps.{key} needs 'full' and 'quick' (and may have 'kernel')"
            )
        for kind, f in files.items():
            if kind != "kernel_why" and not (path.parent / f).is_file():
                raise ReproError(f"{path}: study.sweeps.{key}: no file {path.parent / f}")
    values = raw.get("value", [])
    refs = tuple(_reference(v, i, path, set(sweeps)) for i, v in enumerate(values))
    ids = [r.id for r in refs]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ReproError(f"{path}: duplicate value ids: {', '.join(dup)}")
    return Study(
        name=str(st["name"]),
        title=str(st["title"]),
        source=str(st["source"]),
        directory=path.parent,
        differences=tuple(str(d) for d in st.get("differences", [])),
        sweeps={k: dict(v) for k, v in sweeps.items()},
        quick_note=str(st.get("quick", "")),
        references=refs,
        setup=tuple(str(d) for d in st.get("setup", [])),
        kernel_note=str(st.get("kernel", "")),
    )


def _reference(v: Any, i: int, path: Path, sweeps: set[str]) -> Reference:
    where = f"{path}: value[{i}]"
    if not isinstance(v, dict):
        raise ReproError(f"{where}: must be a table")
    where = f"{path}: value {v.get('id', i)!r}"
    unknown = sorted(set(v) - _ROW_KEYS)
    if unknown:
        raise ReproError(
            f"{where}: unknown key(s) {', '.join(unknown)}; allowed: "
            + ", ".join(sorted(_ROW_KEYS))
        )
    missing = [k for k in _REQUIRED if k not in v]
    if missing:
        raise ReproError(f"{where}: missing {', '.join(missing)}")
    if not isinstance(v["value"], int | float) or isinstance(v["value"], bool):
        raise ReproError(f"{where}: value {v['value']!r} must be a number")
    expressible = bool(v.get("expressible", True))
    compute = v.get("compute")
    if compute is not None and compute != "jain":
        raise ReproError(f"{where}: compute {compute!r}; allowed: jain")
    if expressible and compute is None:
        if v.get("sweep") not in sweeps:
            raise ReproError(
                f"{where}: sweep {v.get('sweep')!r}; allowed: {', '.join(sorted(sweeps))}"
            )
        if not isinstance(v.get("metric"), str):
            raise ReproError(f"{where}: needs a metric (a summary.json path)")
    claim = _claim_fields(v, where)
    opt: dict[str, Any] = {
        k: float(v[k]) for k in ("scatter", "tolerance", "rel_tolerance", "baseline") if k in v
    }
    return Reference(
        id=str(v["id"]),
        table=str(v["table"]),
        row=str(v["row"]),
        value=float(v["value"]),
        unit=str(v["unit"]),
        measured=str(v["measured"]),
        location=str(v["location"]),
        explanation=str(v["explanation"]),
        sweep=v.get("sweep"),
        point=dict(v.get("point", {})),
        metric=v.get("metric"),
        scale=float(v.get("scale", 1.0)),
        order_group=v.get("order_group"),
        expressible=expressible,
        compute=compute,
        inputs=tuple(float(x) for x in v.get("inputs", [])),
        **claim,
        **opt,
        **_kernel_fields(v, where),
    )


def _kernel_fields(v: dict[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kernel_note": str(v.get("kernel_note", "")),
        "kernel_point": dict(v.get("kernel_point", {})),
    }
    if "kernel_scale" in v:
        k = v["kernel_scale"]
        if not isinstance(k, int | float) or isinstance(k, bool) or not k > 0:
            raise ReproError(f"{where}: kernel_scale {k!r}; allowed: a number > 0")
        out["kernel_scale"] = float(k)
    if "kernel_expressible" in v:
        out["kernel_expressible"] = bool(v["kernel_expressible"])
    if (out.get("kernel_scale", 1.0) != 1.0 or not out.get("kernel_expressible", True)) and not out[
        "kernel_note"
    ]:
        raise ReproError(f"{where}: kernel_scale/kernel_expressible need a kernel_note (why)")
    return out


def _region(raw: Any, where: str) -> dict[str, tuple[str, str]]:
    """``{axis = [low, high]}``: inclusive ranges of quantities with one unit per axis."""
    from .aggregate import axis_numeric

    if not isinstance(raw, dict):
        raise ReproError(f"{where}: must be a table of axis = [low, high]")
    out: dict[str, tuple[str, str]] = {}
    for axis, bounds in raw.items():
        ok = isinstance(bounds, list) and len(bounds) == 2
        nums = axis_numeric([str(b) for b in bounds])[0] if ok else None
        if nums is None or nums[0] > nums[1]:
            raise ReproError(
                f"{where}: {axis} = {bounds!r}; allowed: [low, high] in one unit, e.g. "
                '["300ms", "400ms"]'
            )
        out[str(axis)] = (str(bounds[0]), str(bounds[1]))
    return out


def _claim_fields(v: dict[str, Any], where: str) -> dict[str, Any]:
    """The claim, region and versus of a claim row (module docstring), checked."""
    if "claim" not in v:
        stray = [k for k in ("region", "versus") if k in v]
        if stray:
            raise ReproError(f"{where}: {', '.join(stray)} needs a claim (below, above, within)")
        return {}
    if v["claim"] not in CLAIMS:
        raise ReproError(f"{where}: claim {v['claim']!r}; allowed: {', '.join(CLAIMS)}")
    out: dict[str, Any] = {
        "claim": v["claim"],
        "region": _region(v.get("region", {}), f"{where}: region"),
    }
    if "versus" in v:
        vs = v["versus"]
        if not isinstance(vs, dict) or not set(vs) <= {"point", "region"}:
            raise ReproError(f"{where}: versus must be a table with point and/or region")
        out["versus"] = {
            "point": dict(vs.get("point", {})),
            "region": _region(vs.get("region", {}), f"{where}: versus.region"),
        }
    return out


# --------------------------------------------------------------------------- metrics
def metric_value(summary: dict[str, Any], metric: str) -> float:
    """A metric path (module docstring) evaluated on one run's summary.json."""
    if " / " in metric:
        a, b = metric.split(" / ", 1)
        den = metric_value(summary, b)
        return metric_value(summary, a) / den if den else math.nan
    node: Any = summary
    for part in _split_path(metric):
        if isinstance(node, list):
            node = node[int(part)] if part.isdigit() and int(part) < len(node) else None
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            node = None
        if node is None:
            return math.nan
    try:
        return float(node)
    except (TypeError, ValueError):
        return math.nan


def _split_path(metric: str) -> list[str]:
    """Dots separate keys, except inside a group-ratio key (``group_ratios.a/b``)."""
    head, _, tail = metric.partition("group_ratios.")
    parts = [p for p in head.split(".") if p]
    if tail:
        parts += ["group_ratios", tail]
    return parts


def _matches(row: dict[str, Any], point: dict[str, Any]) -> bool:
    return all(str(row.get(k)) == str(v) for k, v in point.items())


def run_values(table: Any, store: Any, backend: str, ref: Reference) -> list[float]:
    """The metric of ``ref`` on every finished run of its point."""
    out: list[float] = []
    for rec in table.to_dict("records"):
        if rec.get("status") != "done" or not _matches(rec, ref.point):
            continue
        summary = json.loads((store.run_dir(backend, rec["run_hash"]) / "summary.json").read_text())
        assert ref.metric is not None
        out.append(metric_value(summary, ref.metric) * ref.scale)
    return out


def invalid_note(table: Any, ref: Reference) -> str:
    """How many finished runs behind ``ref`` the backend graded invalid (its accuracy checks,
    e.g. the kernel backend's emulator lateness), and which checks: they count, and say so."""
    recs = [
        r
        for r in table.to_dict("records")
        if r.get("status") == "done"
        and _matches(r, ref.point)
        and (ref.claim is None or _in_region(r, ref.region))
    ]
    bad = [r for r in recs if r.get("valid") == 0]
    if not bad:
        return ""
    checks = sorted(
        {c.strip() for r in bad for c in str(r.get("failed_checks") or "").split(",")} - {""}
    )
    return (
        f"{len(bad)} of {len(recs)} runs graded invalid by the backend's checks "
        f"({', '.join(checks) or 'unnamed'}); they are counted."
    )


def _in_region(rec: dict[str, Any], region: dict[str, tuple[str, str]]) -> bool:
    from .aggregate import axis_numeric

    for axis, (low, high) in region.items():
        nums, _ = axis_numeric([low, high, str(rec.get(axis))])
        if nums is None or not nums[0] <= nums[2] <= nums[1]:
            return False
    return True


def region_cells(
    table: Any,
    store: Any,
    backend: str,
    metric: str,
    point: dict[str, Any],
    region: dict[str, tuple[str, str]],
) -> list[float]:
    """Per grid cell of ``region`` (at ``point``), the mean of ``metric`` over its finished
    runs (NaN cells left out)."""
    per: dict[str, list[float]] = {}
    for rec in table.to_dict("records"):
        if rec.get("status") != "done" or not _matches(rec, point) or not _in_region(rec, region):
            continue
        summary = json.loads((store.run_dir(backend, rec["run_hash"]) / "summary.json").read_text())
        per.setdefault(str(rec["point_hash"]), []).append(metric_value(summary, metric))
    means = [math.fsum(v) / len(v) for v in per.values() if all(map(math.isfinite, v))]
    return means


def claim_cells(
    table: Any, store: Any, backend: str, ref: Reference
) -> tuple[list[float], list[float] | None]:
    """The cell means of a claim row's region and, if it has one, of its ``versus``."""
    assert ref.metric is not None
    cells = region_cells(table, store, backend, ref.metric, ref.point, ref.region)
    if ref.versus is None:
        return cells, None
    point = {**ref.point, **ref.versus["point"]}
    return cells, region_cells(table, store, backend, ref.metric, point, ref.versus["region"])


# --------------------------------------------------------------------------- comparing
def compare(
    study: Study,
    values: dict[str, list[float]],
    claims: dict[str, tuple[list[float], list[float] | None]] | None = None,
    backend: str = "sim",
    skipped: dict[str, str] | None = None,
    flags: dict[str, str] | None = None,
) -> list[Row]:
    """Rows with means, CIs and verdicts from each reference's per-run values (``values``:
    reference id → values, already scaled; missing means not run) and each claim row's cell
    means (``claims``: id → (region cells, versus cells or None)). On the kernel backend a
    row that is not comparable there is ``not expressible``, and rows of the ``skipped``
    sweeps (key → why) are ``not run``; the table's note says why, and ``flags`` (id → text,
    e.g. runs graded invalid) are added to it."""
    from .aggregate import mean_std_ci
    from .metrics import jain

    rows: list[Row] = []
    for ref in study.references:
        ref, note = _on_backend(ref, backend, skipped or {})
        flag = (flags or {}).get(ref.id, "")
        row = Row(ref, note=f"{note} {flag}".strip())
        if ref.compute == "jain":
            row.n, row.mean, row.ci = 1, jain(list(ref.inputs)), 0.0
        elif ref.claim is not None and ref.expressible:
            if (claims or {}).get(ref.id):
                row.n, row.mean, row.ci = claim_stats(*(claims or {})[ref.id])
            row.verdict = claim_verdict(ref.claim, ref.value, row.mean, row.ci)
        elif ref.expressible and values.get(ref.id):
            row.n, row.mean, _, row.ci = mean_std_ci(values[ref.id])
        rows.append(row)
    groups: dict[str, list[Row]] = {}
    for row in rows:
        if row.ref.order_group:
            groups.setdefault(row.ref.order_group, []).append(row)
    for row in rows:
        if row.ref.claim is not None and row.ref.expressible:
            continue  # claim_verdict above
        row.verdict = verdict(
            row.ref.value,
            row.mean,
            row.ci,
            row.ref.allowed(),
            _trend(row, groups),
            row.ref.expressible,
        )
    return rows


def _on_backend(ref: Reference, backend: str, skipped: dict[str, str]) -> tuple[Reference, str]:
    """The reference as it is compared on ``backend`` and the note the table shows."""
    if ref.compute is not None or not ref.expressible:
        return ref, ""
    if ref.sweep in skipped:
        return ref, skipped[ref.sweep]
    if backend != "kernel":
        return ref, ""
    if not ref.kernel_expressible:
        return replace(ref, expressible=False), f"Kernel backend: {ref.kernel_note}."
    if ref.kernel_scale != 1.0:
        return ref, f"Kernel backend: {ref.kernel_note} (ours × {ref.kernel_scale:g})."
    return ref, ""


def _trend(row: Row, groups: dict[str, list[Row]]) -> bool | None:
    if not math.isfinite(row.mean):
        return None
    if row.ref.baseline is not None:
        return same_side(row.ref.value, row.mean, row.ref.baseline)
    group = groups.get(row.ref.order_group or "")
    if group and all(math.isfinite(r.mean) for r in group) and len(group) > 1:
        # rank in the metric's own unit: a group may print some rows in Mbit/s, some in Gbit/s
        i = group.index(row)
        src = [r.ref.value / r.ref.scale for r in group]
        return same_order(src, [r.mean / r.ref.scale for r in group], i)
    return None


# --------------------------------------------------------------------------- output
COLUMNS = (
    "id",
    "table",
    "row",
    "unit",
    "source",
    "tcpfair",
    "n",
    "difference",
    "verdict",
    "explanation",
    "location",
)
#: the columns a reader sees (table, Markdown): the CSV's without its id and location
SHOWN = tuple(c for c in COLUMNS if c not in ("id", "location"))


def fmt(x: float) -> str:
    if not math.isfinite(x):
        return "–"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}".replace(",", " ")
    if a >= 100:
        return f"{x:.1f}"
    if a >= 10:
        return f"{x:.2f}"
    return f"{x:.3f}"


def cells(row: Row) -> dict[str, str]:
    ours = "–"
    if math.isfinite(row.mean):
        ours = fmt(row.mean) + (f" ± {fmt(row.ci)}" if math.isfinite(row.ci) and row.n > 1 else "")
    src = f"{row.ref.value:g}" if abs(row.ref.value) < 1e6 else fmt(row.ref.value)
    if row.ref.claim is not None:
        src = f"{CLAIMS[row.ref.claim]} {src}"
    if row.ref.scatter is not None:
        src += f" ± {fmt(row.ref.scatter)}"
    return {
        "id": row.ref.id,
        "table": row.ref.table,
        "row": row.ref.row,
        "unit": row.ref.unit,
        "source": src,
        "tcpfair": ours,
        "n": str(row.n),
        "difference": fmt(row.difference) if math.isfinite(row.mean) else "–",
        "verdict": row.verdict,
        "explanation": f"{row.note} {row.ref.explanation}" if row.note else row.ref.explanation,
        "location": row.ref.location,
    }


def to_csv(rows: list[Row]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(cells(r))
    return buf.getvalue()


def to_markdown(study: Study, rows: list[Row], header: str) -> str:
    counts = {v: sum(1 for r in rows if r.verdict == v) for v in VERDICTS}
    lines = [
        f"## {study.name}: {study.title}",
        "",
        f"Source: {study.source}. {header}",
        "",
        "Verdicts: " + ", ".join(f"{v} {n}" for v, n in counts.items() if n) + ".",
        "",
    ]
    if study.setup:
        lines += ["The source's set-up, as it states it:", ""]
        lines += [f"- {d}" for d in study.setup] + [""]
    if study.differences:
        lines += ["Differences from the source's set-up:", ""]
        lines += [f"- {d}" for d in study.differences] + [""]
    cols = SHOWN
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "---|" * len(cols))
    for r in rows:
        c = cells(r)
        lines.append("| " + " | ".join(c[k].replace("|", "/") for k in cols) + " |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- running
@dataclass
class StudyRun:
    """What ``run_study`` ran: the rows, the store and each sweep key's sweep (its name and
    ``[[plots]]``: the command draws them)."""

    rows: list[Row]
    store: Any
    backend: str
    sweeps: dict[str, Any]


def run_study(
    study: Study,
    backend: str,
    quick: bool,
    output: Path,
    jobs: int | None = None,
    progress: bool = False,
    only: Sequence[str] | None = None,
) -> StudyRun:
    """Run (or resume) the study's sweeps (``only`` these keys, if given) into the store at
    ``output`` and compare; rows of the sweeps not run say why."""
    from .orchestrate import run_sweep
    from .sweep import load_sweep

    values: dict[str, list[float]] = {}
    claims: dict[str, tuple[list[float], list[float] | None]] = {}
    flags: dict[str, str] = {}
    unknown = sorted(set(only or ()) - set(study.sweeps))
    if unknown:
        raise ReproError(
            f"--sweep {', '.join(unknown)}: study {study.name!r} has no such sweep; allowed: "
            + ", ".join(study.sweeps)
        )
    files = {key: study.sweep_file(key, quick, backend) for key in study.sweeps}  # all first
    skipped = {
        key: "Not run on the kernel backend: "
        + study.sweeps[key].get("kernel_why", "no kernel-backend version")
        + "."
        for key, f in files.items()
        if f is None
    }
    for key in study.sweeps:
        if only and key not in only and key not in skipped:
            skipped[key] = "Not run: left out by --sweep."
    sweeps = {
        key: load_sweep(f) for key, f in files.items() if f is not None and key not in skipped
    }
    store: Any = None
    for key, sw in sweeps.items():
        rep = run_sweep(sw, backend=backend, jobs=jobs, output=output, progress=progress)
        store = rep.store
        table = rep.store.table(sweep=sw.name, backend=rep.backend)
        for ref in study.references:
            if ref.sweep != key or not ref.expressible or ref.compute is not None:
                continue
            if backend == "kernel" and ref.kernel_point:
                ref = replace(ref, point=ref.kernel_point)
            if note := invalid_note(table, ref):
                flags[ref.id] = note
            if ref.claim is not None:
                claims[ref.id] = claim_cells(table, rep.store, rep.backend, ref)
            else:
                scale = ref.kernel_scale if backend == "kernel" else 1.0
                values[ref.id] = [x * scale for x in run_values(table, rep.store, backend, ref)]
    rows = compare(study, values, claims, backend, skipped, flags)
    return StudyRun(rows, store, backend, sweeps)
