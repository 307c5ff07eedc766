"""The results store: ``catalog.sqlite`` + one run directory per finished run.

Layout of a results directory::

    catalog.sqlite                 the catalog (below)
    runs/<backend>/<run_hash>/     RunResult.save(): summary.json + flows/samples/link.parquet

Catalog tables:

- ``runs``: one row per (backend, run_hash) that finished or failed — status, error,
  timings, attempts, the scenario (JSON), summary metrics (JSON), the common metric
  columns (jfi, ratio, utilization, …) and ``valid`` (0 when the backend's own accuracy
  checks failed, e.g. the kernel backend's emulator fell behind).
- ``members``: which runs belong to which sweep — (sweep, backend, run_hash) with the
  point, repeat, point hash and axis values (JSON). A run shared by two sweeps is stored and
  measured once.
- ``sweeps``: each sweep's definition (as data) and when it last ran.
- view ``catalog``: members ⋈ runs, one row per run of a sweep, status ``pending`` where
  no result exists yet.

Crash safety (a SIGKILL at any moment): a run is written to a staging directory (by the
worker that ran it, when it shares the file system), then one catalog transaction renames
it into ``runs/<backend>/<run_hash>`` and inserts the ``done`` row. A complete directory
without a ``done`` row (the process died between the rename and the commit) is adopted on
the next start instead of being re-run; staging and temp directories of killed attempts
are removed. A ``done`` row is never updated or deleted and its directory never replaced
(the rename happens under the catalog's write lock), so nothing finished is lost or
rewritten; the primary keys make duplicates impossible.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .result import RunResult

__all__ = ["Store", "StoreError", "METRIC_COLUMNS", "summarize"]

SCHEMA_VERSION = 1

#: Metric columns of the catalog (also in the tidy table); per-group throughputs are added
#: to the tidy table as ``thr_g<i>_bps``.
METRIC_COLUMNS = [
    "jfi",
    "jfi_per_interval_mean",
    "min_max_ratio",
    "ratio",
    "utilization",
    "sum_bps",
    "retransmits",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT NOT NULL, backend TEXT NOT NULL, spec TEXT NOT NULL, spec_hash TEXT NOT NULL,
    axes TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL,
    PRIMARY KEY (name, backend));
CREATE TABLE IF NOT EXISTS runs (
    backend TEXT NOT NULL, run_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    error TEXT, seed INTEGER, scenario TEXT,
    started REAL, finished REAL, wall_s REAL, attempts INTEGER NOT NULL DEFAULT 1,
    jfi REAL, jfi_per_interval_mean REAL, min_max_ratio REAL, ratio REAL, utilization REAL,
    sum_bps REAL, retransmits INTEGER, valid INTEGER, metrics TEXT, run_dir TEXT,
    PRIMARY KEY (backend, run_hash));
CREATE TABLE IF NOT EXISTS members (
    sweep TEXT NOT NULL, backend TEXT NOT NULL, run_hash TEXT NOT NULL,
    point INTEGER NOT NULL, repeat INTEGER NOT NULL, point_hash TEXT NOT NULL, axes TEXT NOT NULL,
    PRIMARY KEY (sweep, backend, run_hash));
CREATE VIEW IF NOT EXISTS catalog AS
    SELECT m.sweep, m.backend, m.run_hash, m.point, m.repeat, m.point_hash, m.axes,
           COALESCE(r.status, 'pending') AS status, r.error, r.seed, r.started, r.finished,
           r.wall_s, r.attempts, r.jfi, r.jfi_per_interval_mean, r.min_max_ratio, r.ratio,
           r.utilization, r.sum_bps, r.retransmits, r.valid, r.metrics, r.run_dir
    FROM members m LEFT JOIN runs r ON r.backend = m.backend AND r.run_hash = m.run_hash;
"""


_HASH = re.compile(r"[0-9a-f]{16}")


class StoreError(RuntimeError):
    """The results directory cannot be used; the message says why."""


@dataclass(frozen=True)
class Member:
    run_hash: str
    point: int
    repeat: int
    point_hash: str
    axes: dict[str, Any]


class Store:
    """A results directory. Open with ``Store(path)``; the catalog is created on first use."""

    def __init__(self, root: str | Path, create: bool = True):
        self.root = Path(root)
        db = self.root / "catalog.sqlite"
        if not create and not db.exists():
            raise StoreError(f"{self.root}: not a results directory (no catalog.sqlite)")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(db, timeout=60.0, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"{self.root}: cannot open the results store: {e}") from None
        self._db.execute("PRAGMA busy_timeout=60000")
        # Two processes opening a new store at once: switching to WAL needs a lock that the
        # busy handler does not wait for, so retry.
        _retry_locked(self._wal, db)
        self._db.execute("PRAGMA synchronous=NORMAL")
        _retry_locked(lambda: self._db.executescript(_SCHEMA), db)  # idempotent (IF NOT EXISTS)
        with self.transaction() as c:
            row = c.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                c.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise StoreError(
                    f"{db}: catalog schema {row[0]}, this tcpfair reads {SCHEMA_VERSION}"
                )

    def _wal(self) -> None:
        if str(self._db.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
            self._db.execute("PRAGMA journal_mode=WAL")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT (ROLLBACK on error): one writer at a time, all or nothing."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # ----------------------------------------------------------------- sweeps
    def register_sweep(
        self,
        name: str,
        backend: str,
        spec: dict[str, Any],
        spec_hash: str,
        axes: list[str],
        members: Iterable[Member],
    ) -> None:
        """Record the sweep's definition and its runs. Runs no longer in the sweep leave the
        sweep's membership (their results stay in ``runs``)."""
        now = time.time()
        rows = [
            (name, backend, m.run_hash, m.point, m.repeat, m.point_hash, _dumps(m.axes, sort=False))
            for m in members
        ]
        with self.transaction() as c:
            c.execute(
                "INSERT INTO sweeps VALUES (?,?,?,?,?,?,?) ON CONFLICT(name, backend) DO UPDATE SET "
                "spec=excluded.spec, spec_hash=excluded.spec_hash, axes=excluded.axes, updated=excluded.updated",
                (name, backend, _dumps(spec), spec_hash, _dumps(axes), now, now),
            )
            c.execute("DELETE FROM members WHERE sweep=? AND backend=?", (name, backend))
            c.executemany("INSERT INTO members VALUES (?,?,?,?,?,?,?)", rows)

    def sweeps(self) -> list[tuple[str, str]]:
        """(name, backend) of every sweep in the store."""
        return [
            (r[0], r[1])
            for r in self._db.execute("SELECT name, backend FROM sweeps ORDER BY name, backend")
        ]

    def select(self, sweep: str | None = None, backend: str | None = None) -> tuple[str, str]:
        """The one (sweep, backend) matching the filters; an error listing the choices otherwise."""
        have = self.sweeps()
        match = [
            (n, b)
            for n, b in have
            if (sweep is None or n == sweep) and (backend is None or b == backend)
        ]
        if len(match) == 1:
            return match[0]
        choices = ", ".join(f"{n} ({b})" for n, b in have) or "none"
        if not match:
            raise StoreError(
                f"{self.root}: no sweep matches sweep={sweep!r} backend={backend!r}; it has: {choices}"
            )
        raise StoreError(
            f"{self.root}: holds several sweeps ({choices}); choose one with --sweep/--backend"
        )

    def sweep_axes(self, name: str, backend: str) -> list[str]:
        row = self._db.execute(
            "SELECT axes FROM sweeps WHERE name=? AND backend=?", (name, backend)
        ).fetchone()
        if row is None:
            raise StoreError(f"{self.root}: no sweep {name!r} on backend {backend!r}")
        return list(json.loads(row[0]))

    # ----------------------------------------------------------------- runs
    def status(self, backend: str, hashes: Iterable[str] | None = None) -> dict[str, str]:
        """run_hash → 'done' | 'failed' for runs with a result (others are pending)."""
        cur = self._db.execute("SELECT run_hash, status FROM runs WHERE backend=?", (backend,))
        out = dict(cur.fetchall())
        if hashes is not None:
            want = set(hashes)
            out = {h: s for h, s in out.items() if h in want}
        return out

    def run_dir(self, backend: str, run_hash: str) -> Path:
        return self.root / "runs" / backend / run_hash

    def adopt(self, backend: str, run_hash: str, scenario_json: str, seed: int) -> bool:
        """A complete run directory without a ``done`` row (the process died between the
        rename and the commit): record it as done. Returns whether it did."""
        d = self.run_dir(backend, run_hash)
        try:
            summary = json.loads((d / "summary.json").read_text())
        except (OSError, ValueError):
            return False
        if not all((d / f).exists() for f in ("flows.parquet", "samples.parquet", "link.parquet")):
            return False
        wall = summary.get("meta", {}).get("wall_time_s")
        self._record_done(backend, run_hash, scenario_json, seed, summary, None, time.time(), wall)
        return True

    def stage_path(self, backend: str, run_hash: str) -> Path:
        """A fresh staging path for a run directory (written by a worker, then committed)."""
        d = self.root / "runs" / backend
        d.mkdir(parents=True, exist_ok=True)
        return d / f".stage-{run_hash}-{uuid.uuid4().hex[:12]}"

    def clear_stale(self, backend: str, hashes: Iterable[str]) -> int:
        """Remove the temp, staging and trash directories that attempts of these runs left
        when they were killed. Returns how many."""
        d = self.root / "runs" / backend
        want = set(hashes)
        n = 0
        if d.exists():
            for p in d.iterdir():
                if p.name.startswith(".") and want.intersection(_HASH.findall(p.name)):
                    shutil.rmtree(p, ignore_errors=True)
                    n += 1
        return n

    def save_success(
        self,
        backend: str,
        run_hash: str,
        scenario_json: str,
        seed: int,
        result: RunResult,
        started: float | None,
        finished: float | None,
        wall_s: float | None,
    ) -> bool:
        """Write the run directory and mark the run done. Returns False (and leaves the
        store as it was) if the run is already done."""
        if self.status(backend, [run_hash]).get(run_hash) == "done":
            return False
        staged = self.stage_path(backend, run_hash)
        result.save(staged)
        return self.commit_staged(
            backend, run_hash, staged, scenario_json, seed, started, finished, wall_s
        )

    def commit_staged(
        self,
        backend: str,
        run_hash: str,
        staged: Path,
        scenario_json: str,
        seed: int,
        started: float | None,
        finished: float | None,
        wall_s: float | None,
    ) -> bool:
        """Move a complete staged run directory into place and mark the run done. The rename
        happens inside the catalog's write transaction, so the directory of a done run is
        never replaced, even by another process finishing the same run."""
        trash: Path | None = None
        try:
            summary = json.loads((Path(staged) / "summary.json").read_text())
            row = summarize(summary)
            final = self.run_dir(backend, run_hash)
            with self.transaction() as c:
                prev = c.execute(
                    "SELECT status, attempts FROM runs WHERE backend=? AND run_hash=?",
                    (backend, run_hash),
                ).fetchone()
                if prev is not None and prev[0] == "done":
                    return False
                if final.exists():  # left by an attempt that died before its commit
                    trash = final.with_name(f".trash-{run_hash}-{uuid.uuid4().hex[:12]}")
                    os.replace(final, trash)
                os.replace(staged, final)
                self._insert_done(
                    c,
                    backend,
                    run_hash,
                    scenario_json,
                    seed,
                    row,
                    started,
                    finished,
                    wall_s,
                    (prev[1] + 1) if prev else 1,
                )
            return True
        finally:
            for p in (Path(staged), trash):
                if p is not None and p.exists():
                    shutil.rmtree(p, ignore_errors=True)

    def _record_done(
        self,
        backend: str,
        run_hash: str,
        scenario_json: str,
        seed: int,
        summary: dict[str, Any],
        started: float | None,
        finished: float | None,
        wall_s: float | None,
    ) -> bool:
        row = summarize(summary)
        with self.transaction() as c:
            prev = c.execute(
                "SELECT status, attempts FROM runs WHERE backend=? AND run_hash=?",
                (backend, run_hash),
            ).fetchone()
            if prev is not None and prev[0] == "done":
                return False
            self._insert_done(
                c,
                backend,
                run_hash,
                scenario_json,
                seed,
                row,
                started,
                finished,
                wall_s,
                (prev[1] + 1) if prev else 1,
            )
        return True

    def _insert_done(
        self,
        c: sqlite3.Connection,
        backend: str,
        run_hash: str,
        scenario_json: str,
        seed: int,
        row: dict[str, Any],
        started: float | None,
        finished: float | None,
        wall_s: float | None,
        attempts: int,
    ) -> None:
        rel = str(self.run_dir(backend, run_hash).relative_to(self.root))
        c.execute("DELETE FROM runs WHERE backend=? AND run_hash=?", (backend, run_hash))
        c.execute(
            "INSERT INTO runs (backend, run_hash, status, error, seed, scenario, started, finished, wall_s, "
            "attempts, jfi, jfi_per_interval_mean, min_max_ratio, ratio, utilization, sum_bps, retransmits, "
            "valid, metrics, run_dir) VALUES (?,?,'done',NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                backend,
                run_hash,
                seed,
                scenario_json,
                started,
                finished,
                wall_s,
                attempts,
                *[row[k] for k in METRIC_COLUMNS],
                row["valid"],
                _dumps(row["metrics"]),
                rel,
            ),
        )

    def save_failure(
        self,
        backend: str,
        run_hash: str,
        scenario_json: str,
        seed: int,
        error: str,
        started: float | None,
        finished: float | None,
        wall_s: float | None,
    ) -> bool:
        with self.transaction() as c:
            prev = c.execute(
                "SELECT status, attempts FROM runs WHERE backend=? AND run_hash=?",
                (backend, run_hash),
            ).fetchone()
            if prev is not None and prev[0] == "done":
                return False
            attempts = (prev[1] + 1) if prev else 1
            c.execute("DELETE FROM runs WHERE backend=? AND run_hash=?", (backend, run_hash))
            c.execute(
                "INSERT INTO runs (backend, run_hash, status, error, seed, scenario, started, finished, wall_s, "
                "attempts) VALUES (?,?,'failed',?,?,?,?,?,?,?)",
                (
                    backend,
                    run_hash,
                    error,
                    seed,
                    scenario_json,
                    started,
                    finished,
                    wall_s,
                    attempts,
                ),
            )
        return True

    # ----------------------------------------------------------------- reading
    def table(
        self, sweep: str | None = None, backend: str | None = None, status: str | None = None
    ) -> pd.DataFrame:
        """The tidy table: one row per run of a sweep, axis values and metrics as columns."""
        q = "SELECT * FROM catalog"
        cond, args = [], []
        for col, val in (("sweep", sweep), ("backend", backend), ("status", status)):
            if val is not None:
                cond.append(f"{col}=?")
                args.append(val)
        if cond:
            q += " WHERE " + " AND ".join(cond)
        q += " ORDER BY sweep, backend, point, repeat"
        df = pd.read_sql_query(q, self._db, params=args)
        return tidy(df)

    def load_run(self, backend: str, run_hash: str) -> RunResult:
        return RunResult.load(self.run_dir(backend, run_hash))

    def check(self) -> list[str]:
        """Consistency problems (empty when consistent): every done run has a complete
        directory, every run directory has a done row, every member is unique."""
        problems = []
        done = {
            (b, h)
            for b, h in self._db.execute("SELECT backend, run_hash FROM runs WHERE status='done'")
        }
        for b, h in sorted(done):
            d = self.run_dir(b, h)
            for f in ("summary.json", "flows.parquet", "samples.parquet", "link.parquet"):
                if not (d / f).exists():
                    problems.append(f"done run {b}/{h} has no {f}")
        runs_root = self.root / "runs"
        if runs_root.exists():
            for bdir in runs_root.iterdir():
                for d in bdir.iterdir():
                    if not d.name.startswith(".") and (bdir.name, d.name) not in done:
                        problems.append(f"run directory {bdir.name}/{d.name} has no done row")
        return problems


def _retry_locked(fn: Any, db: Path, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            fn()
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e):
                raise StoreError(f"{db}: {e}") from None
            if time.monotonic() > deadline:
                raise StoreError(
                    f"{db}: still locked by another process after {seconds:.0f} s"
                ) from None
            time.sleep(0.05)


def summarize(summary: dict[str, Any]) -> dict[str, Any]:
    """The catalog's metric columns from a run's ``summary.json``."""
    met = dict(summary.get("metrics", {}))
    thr = met.get("throughput_bps", {})
    groups: dict[int, float] = {}
    for f in summary.get("flows", []):
        g = int(f.get("group", 0))
        groups[g] = groups.get(g, 0.0) + float(thr.get(str(f["flow"]), 0.0))
    group_thr = [groups[g] for g in sorted(groups)]
    met["group_throughput_bps"] = group_thr
    # ratio: throughput of flow group 1 over flow group 0 (flow 2 / flow 1 of the studies)
    ratio = group_thr[1] / group_thr[0] if len(group_thr) >= 2 and group_thr[0] > 0 else math.nan
    met["ratio"] = ratio
    out: dict[str, Any] = {k: _num(met.get(k)) for k in METRIC_COLUMNS}
    # the backend's own accuracy checks (the kernel backend's emulation limits)
    meta = summary.get("meta", {})
    out["valid"] = int(bool(meta.get("valid", True)))
    failed = [
        c.get("name", "?")
        for c in meta.get("checks", [])
        if isinstance(c, dict) and not c.get("ok", True)
    ]
    if failed:
        met["failed_checks"] = failed
    out["metrics"] = met
    return out


def tidy(df: pd.DataFrame) -> pd.DataFrame:
    """Expand the axes and per-group throughput JSON into columns."""
    if df.empty:
        return df.drop(columns=["axes", "metrics"], errors="ignore")
    axes = [json.loads(a) for a in df["axes"]]
    keys: list[str] = []
    for a in axes:
        keys.extend(k for k in a if k not in keys)
    axis_cols = pd.DataFrame(
        {k: [_axis_value(a.get(k)) for a in axes] for k in keys}, index=df.index
    )
    mets = [json.loads(m) if isinstance(m, str) else {} for m in df["metrics"]]
    ng = max((len(m.get("group_throughput_bps", [])) for m in mets), default=0)
    thr = pd.DataFrame(
        {
            f"thr_g{g}_bps": [
                _num((m.get("group_throughput_bps") or [])[g])
                if len(m.get("group_throughput_bps") or []) > g
                else math.nan
                for m in mets
            ]
            for g in range(ng)
        },
        index=df.index,
    )
    checks = pd.DataFrame(
        {"failed_checks": [", ".join(m.get("failed_checks", [])) or None for m in mets]},
        index=df.index,
    )
    front = ["sweep", "backend", "run_hash", "point", "repeat", "seed", "status"]
    rest = [c for c in df.columns if c not in front and c not in ("axes", "metrics", "point_hash")]
    out = pd.concat([df[front], axis_cols, df[rest], thr, checks, df[["point_hash"]]], axis=1)
    return out


def _axis_value(v: Any) -> Any:
    """Axis values as table cells: scalars as they are, tables/lists as canonical JSON."""
    return v if v is None or isinstance(v, str | int | float | bool) else _dumps(v)


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _dumps(x: Any, sort: bool = True) -> str:
    return json.dumps(x, sort_keys=sort, separators=(",", ":"), allow_nan=True, default=str)
