"""Read Flent data files (``*.flent.gz``, data file format versions 1–4) into a ``RunResult``.

A Flent data file is one JSON object (gzip-compressed as written by Flent): ``version``,
``x_values`` (seconds since the test's start ``metadata.T0``/``TIME``), ``results``
(series name → one value per x value, ``null`` where missing), ``metadata`` (``NAME``,
``STEP_SIZE``, ``SERIES_META`` with each series' ``UNITS``, ``CONG_CONTROL``, ``TCP_MSS``…)
and, from version 2 on, ``raw_values`` (series name → the tool's own samples,
``{"t": unix time, "val": …, "tcp_rtt": ms, "tcp_cwnd": packets, …}``).

What becomes a flow: every ``results`` series named ``TCP …`` (``TCP upload::1``,
``TCP download::3``, tcp_1up's ``TCP upload``) whose units are Mbit/s, except Flent's own
aggregates (``… sum``, ``… avg``, ``… totals``, ``… fairness``). Each non-null value v at
x is one sample: ``t_s`` = x, ``dt_s`` = ``STEP_SIZE`` (Flent's values are rates over its
step), ``throughput_bps`` = v·10⁶, ``bytes`` = v·10⁶/8·dt rounded to a byte. ``srtt_s``
is the mean of the series' raw ``tcp_rtt`` values (ms) in the interval (x − dt, x],
``cwnd_bytes`` the mean raw ``tcp_cwnd`` (packets) × ``TCP_MSS`` when Flent recorded the
MSS; retransmissions are unknown (NaN). ``cca`` is ``SERIES_META[name].CONG_CONTROL``.
Flows are grouped by series family within a file (``TCP upload``, ``TCP download``).
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..result import FLOW_COLUMNS, SAMPLE_COLUMNS, RunResult

__all__ = ["FlentError", "load_flent", "parse_flent", "flow_series"]

#: newest data file format read (Flent 2.x writes 4)
MAX_VERSION = 4
#: largest uncompressed data file read
MAX_FLENT_BYTES = 1 << 28
#: Bounds of a sample: its interval (one day) and rate (100 Tbit/s), so that the bytes of
#: one interval (rate × interval) fit the int64 columns; 1e30 was an OverflowError
MAX_STEP_S = 86_400.0
MAX_MBITPS = 1e8
AGGREGATE_SUFFIXES = (" sum", " avg", " totals", " total", " fairness")


class FlentError(ValueError):
    """A Flent file that cannot be used; the message names the file and the reason."""


def read_flent(path: Path) -> dict[str, Any]:
    """The decoded JSON object of a Flent data file (gzip or plain)."""
    try:
        with path.open("rb") as f:
            head = f.read(2)
            f.seek(0)
            stream: Any = gzip.GzipFile(fileobj=f) if head == b"\x1f\x8b" else f
            data = stream.read(MAX_FLENT_BYTES + 1)
    except FileNotFoundError:
        raise FlentError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise FlentError(f"{path}: is a directory, expected a Flent data file") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise FlentError(f"{path}: damaged or truncated gzip data ({e})") from None
    except OSError as e:
        raise FlentError(f"{path}: cannot read ({e.strerror or e})") from None
    if len(data) > MAX_FLENT_BYTES:
        raise FlentError(f"{path}: larger than {MAX_FLENT_BYTES >> 20} MiB uncompressed")
    try:
        obj = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise FlentError(
            f"{path}: not a Flent data file (not JSON text; a compressed capture? "
            "decompress it first)"
        ) from None
    except json.JSONDecodeError as e:
        raise FlentError(
            f"{path}: not a Flent data file (invalid JSON at line {e.lineno}: {e.msg})"
        ) from None
    except RecursionError:
        raise FlentError(f"{path}: JSON nested too deeply to be a Flent data file") from None
    if not isinstance(obj, dict):
        raise FlentError(f"{path}: not a Flent data file (the JSON is not an object)")
    return obj


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def flow_series(results: dict[str, Any], series_meta: dict[str, Any]) -> list[str]:
    """The names of the per-flow TCP throughput series, in file order."""
    out = []
    for name in results:
        if not name.startswith("TCP ") or "::tcp_" in name:
            continue
        if name.endswith(AGGREGATE_SUFFIXES):
            continue
        sm = series_meta.get(name) if isinstance(series_meta, dict) else None
        units = sm.get("UNITS") if isinstance(sm, dict) else None  # (a non-table: no units)
        if isinstance(units, str) and units.replace(" ", "").lower() not in ("mbits/s", "mbit/s"):
            continue
        out.append(name)
    return out


def _positive(v: Any) -> float | None:
    """A finite number > 0 as float; None for anything else."""
    return float(v) if _number(v) and v > 0 else None


def _start_time(meta: dict[str, Any]) -> float:
    """The test's start as Unix seconds (``T0``, else ``TIME``), NaN when unknown."""
    for key in ("T0", "TIME"):
        v = meta.get(key)
        if isinstance(v, str):
            try:
                d = datetime.fromisoformat(v.replace("Z", "+00:00"))
            except ValueError:
                continue
            if d.tzinfo is None:
                d = d.replace(tzinfo=UTC)  # Flent writes UTC times
            return d.timestamp()
    return math.nan


def parse_flent(
    obj: dict[str, Any],
    src: str,
    label: str | None = None,
    group_offset: int = 0,
    flow_offset: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """(flows, samples, info) of one decoded Flent data file (see the module docstring)."""
    version = obj.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise FlentError(f"{src}: version is {version!r}; expected a whole number ≥ 1")
    if version > MAX_VERSION:
        raise FlentError(
            f"{src}: data file format version {version}; this reads versions 1 to {MAX_VERSION}"
        )
    xs, results, meta = obj.get("x_values"), obj.get("results"), obj.get("metadata", {})
    if not isinstance(xs, list) or not isinstance(results, dict) or not isinstance(meta, dict):
        raise FlentError(
            f"{src}: not a Flent data file (needs an 'x_values' list and 'results' and "
            "'metadata' objects)"
        )
    if not xs:
        raise FlentError(f"{src}: x_values is empty (the test recorded no data points)")
    for i, x in enumerate(xs):
        if not _number(x) or x < 0 or (i and x <= xs[i - 1]):
            raise FlentError(f"{src}: x_values[{i}] is {x!r}; expected increasing seconds ≥ 0")
    series_meta = meta.get("SERIES_META", {})
    series_meta = series_meta if isinstance(series_meta, dict) else {}
    names = flow_series(results, series_meta)
    if not names:
        shown = ", ".join(list(results)[:6]) or "none"
        raise FlentError(
            f"{src}: no per-flow TCP throughput series (series: {shown}); "
            "fairness needs a TCP test such as tcp_nup or rrul"
        )
    step = _positive(meta.get("STEP_SIZE"))
    if step is None and len(xs) > 1:  # no usable STEP_SIZE: the spacing of x_values
        step = float(np.median(np.diff(xs)))
    if step is None or not 0 < step <= MAX_STEP_S:
        raise FlentError(
            f"{src}: metadata.STEP_SIZE is {meta.get('STEP_SIZE')!r}"
            + (
                ""
                if step is None or _positive(meta.get("STEP_SIZE"))
                else f" (x_values: {step:g} s apart)"
            )
            + f"; expected seconds > 0, at most {MAX_STEP_S:g}"
        )
    t0 = _start_time(meta)
    raw_all = obj.get("raw_values", {})
    raw_all = raw_all if isinstance(raw_all, dict) else {}
    families: dict[str, int] = {}
    flows: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for k, name in enumerate(names):
        values = results[name]
        if not isinstance(values, list) or len(values) != len(xs):
            raise FlentError(
                f"{src}: results[{name!r}] has {len(values) if isinstance(values, list) else 'no'} "
                f"values for {len(xs)} x_values; expected one per x value"
            )
        family = name.split("::", 1)[0]
        gid = families.setdefault(family, group_offset + len(families))
        fid = flow_offset + k
        sm = series_meta.get(name, {}) if isinstance(series_meta.get(name), dict) else {}
        mss = _positive(sm.get("TCP_MSS"))
        raw = _raw_points(raw_all.get(name), t0)
        for i, (x, v) in enumerate(zip(xs, values, strict=True)):
            if v is None:
                continue
            if not _number(v) or not 0 <= v <= MAX_MBITPS:
                raise FlentError(
                    f"{src}: results[{name!r}][{i}] is {v!r}; expected Mbit/s ≥ 0 (at most "
                    f"{MAX_MBITPS:g}) or null"
                )
            rtt_ms = _mean_in(raw, "tcp_rtt", x - step, x)
            cwnd = _mean_in(raw, "tcp_cwnd", x - step, x)
            rows.append(
                {
                    "flow": fid,
                    "t_s": float(x),
                    "dt_s": float(step),
                    "bytes": int(round(v * 1e6 / 8 * step)),
                    "throughput_bps": float(v) * 1e6,
                    "cwnd_bytes": cwnd * mss if mss is not None else math.nan,
                    "srtt_s": rtt_ms / 1e3,
                    "retransmits": math.nan,
                }
            )
        cca = sm.get("CONG_CONTROL")
        flows.append(
            {
                "flow": fid,
                "group": gid,
                "label": name if label is None else f"{label} {name}",
                "cca": cca if isinstance(cca, str) and cca else "unknown",
                "rtt_s": math.nan,
                "start_s": 0.0,
                "bytes": 0,
                "retransmits": math.nan,
                "mean_rtt_s": math.nan,
            }
        )
    samples = pd.DataFrame(rows, columns=SAMPLE_COLUMNS).astype(
        {"flow": np.int64, "bytes": np.int64}
    )
    flow_df = pd.DataFrame(flows, columns=FLOW_COLUMNS)
    g = samples.groupby("flow")
    flow_df["bytes"] = flow_df["flow"].map(g["bytes"].sum()).fillna(0).astype(np.int64)
    flow_df["mean_rtt_s"] = flow_df["flow"].map(g["srtt_s"].mean()).astype(float)
    first = samples.groupby("flow")["t_s"].min() - step
    flow_df["start_s"] = flow_df["flow"].map(first).fillna(0.0).clip(lower=0.0)
    flow_df = flow_df.astype({"flow": np.int64, "group": np.int64, "retransmits": np.float64})
    info = {
        "source": src,
        "test": meta.get("NAME"),
        "flent_version": meta.get("FLENT_VERSION"),
        "format_version": version,
        "step_s": step,
        "start_unix_s": t0,
        "group_labels": {
            str(g): family if label is None else f"{label} {family}"
            for family, g in families.items()
        },
    }
    return flow_df, samples, info


def _raw_points(raw: Any, t0: float) -> list[dict[str, Any]]:
    if not isinstance(raw, list) or math.isnan(t0):
        return []
    out = []
    for p in raw:
        if isinstance(p, dict) and _number(p.get("t")):
            out.append({**p, "_x": p["t"] - t0})
    return out


def _mean_in(points: list[dict[str, Any]], key: str, lo: float, hi: float) -> float:
    vals = [p[key] for p in points if lo < p["_x"] <= hi and _number(p.get(key))]
    return float(np.mean(vals)) if vals else math.nan


def load_flent(
    paths: str | Path | Sequence[str | Path],
    labels: Sequence[str] | None = None,
    align: bool = True,
) -> RunResult:
    """Read Flent data files into one ``RunResult`` (``meta["backend"] == "flent"``).

    With ``align`` (default), files are placed on one clock by their start times
    (``metadata.T0``/``TIME``); the earliest is t = 0."""
    from .. import __version__

    plist = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    if not plist:
        raise FlentError("no Flent files given")
    if labels is not None and len(labels) != len(plist):
        raise FlentError(f"{len(labels)} labels for {len(plist)} files; give one per file")
    parts: list[tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]] = []
    for i, p in enumerate(plist):
        label = labels[i] if labels is not None else (p.name if len(plist) > 1 else None)
        flows_so_far = sum(len(f) for f, _, _ in parts)
        groups_so_far = sum(len(info["group_labels"]) for _, _, info in parts)
        parts.append(parse_flent(read_flent(p), str(p), label, groups_so_far, flows_so_far))
    notes: list[str] = []
    starts = [info["start_unix_s"] for _, _, info in parts]
    if align and len(parts) > 1:
        if all(not math.isnan(s) for s in starts):
            first = min(starts)
            for (f, s, info), st in zip(parts, starts, strict=True):
                off = st - first
                s["t_s"] += off
                f["start_s"] += off
                info["time_offset_s"] = off
        else:
            notes.append("some files have no start time (T0/TIME); not aligned in time")
    flows = pd.concat([f for f, _, _ in parts], ignore_index=True)
    samples = pd.concat([s for _, s, _ in parts], ignore_index=True)
    samples = samples.sort_values(["flow", "t_s"], kind="stable").reset_index(drop=True)
    t_end = float(samples["t_s"].max()) if len(samples) else 0.0
    meta = {
        "backend": "flent",
        "window": [0.0, t_end],
        "capacity_bps": None,
        "versions": {
            "tcpfair": __version__,
            "flent": sorted({str(info["flent_version"]) for _, _, info in parts}),
        },
        "files": [info for _, _, info in parts],
        "notes": notes,
        "group_labels": {k: v for _, _, info in parts for k, v in info["group_labels"].items()},
    }
    return RunResult(flows=flows, samples=samples, meta=meta)
