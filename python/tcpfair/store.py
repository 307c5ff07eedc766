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
are removed — only those whose owner is gone: their names carry the owner's PID and
process start time (a lease, checked as the kernel backend's state file is), so a sweep
never removes what a concurrent sweep on the same store is writing. A ``done`` row is
never updated and its directory never replaced (the rename happens under the catalog's
write lock), so nothing finished is lost or rewritten; the primary keys make duplicates
impossible. The one exception is a done run whose files are damaged (``run_problems``):
a resume moves its directory aside to ``.damaged-<run_hash>-<time>`` (kept, never
removed) and drops the row, so the run is measured again.

Read-only users (``tcpfair results``, ``tcpfair compare``) open the catalog with
``readonly=True`` (SQLite ``mode=ro``): they never write it, never wait behind a writer
(WAL readers do not block), and refuse a file that is not a tcpfair catalog. Every SQLite
error (a damaged, truncated or foreign file, a full disk) becomes a ``StoreError`` that
names the file and says what to do.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import shutil
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from .result import RunResult

__all__ = ["Store", "StoreError", "METRIC_COLUMNS", "summarize"]

SCHEMA_VERSION = 1

#: Metric columns of the catalog (also in the tidy table); per-entry throughputs are added
#: to the tidy table as ``thr_g<i>_bps`` (entry i's long-lived connections, in their own
#: direction); ``ratio`` is over the measured entries (``_measured_entries``).
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
#: the owner (lease) in the names of staging and trash directories: ``-p<pid>s<start time>-``
_LEASE = re.compile(r"-p([0-9]+)s([0-9]+)-")
#: hidden directories that are not scratch: damaged runs set aside (kept for the user)
_KEEP = ".damaged-"
RUN_FILES = ("summary.json", "flows.parquet", "samples.parquet", "link.parquet")
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: what to do with a damaged catalog (``test_a_lost_catalog_is_rebuilt_…`` shows it works)
_RECOVER = (
    "Keep a copy, then move it away and run the sweep again with the same -o: complete run "
    "directories are adopted, not re-run"
)

F = TypeVar("F", bound=Callable[..., Any])


class StoreError(RuntimeError):
    """The results directory cannot be used; the message says why."""


def _explain(db: Path, e: BaseException) -> str:
    """One line for an SQLite error on the catalog ``db``: what happened and what to do."""
    text = str(e)
    if isinstance(e, StoreError):
        return text
    low = text.lower()
    if "full" in low:
        return (
            f"{db}: the disk is full ({text}); nothing stored was lost — free space and run "
            "the same command again (finished runs are kept)"
        )
    if "locked" in low or "busy" in low:
        return f"{db}: locked by another process ({text}); try again when it has finished"
    if "readonly" in low or "read-only" in low:
        return f"{db}: cannot write the catalog ({text}); check the permissions of {db.parent}"
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return f"{db}: the catalog is damaged ({text}); tcpfair did not change it. {_RECOVER}"
    return f"{db}: {text}"


def _sql_errors(fn: F) -> F:
    """Store methods: SQLite errors (a damaged catalog, a full disk) as a ``StoreError``."""

    @functools.wraps(fn)
    def inner(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except (sqlite3.DatabaseError, pd.errors.DatabaseError) as e:
            raise StoreError(_explain(self.db_path, e)) from None
        except json.JSONDecodeError as e:  # a row's JSON column (axes, metrics, spec)
            raise StoreError(
                f"{self.db_path}: a row holds text that is not JSON ({e}); the catalog was "
                f"edited or damaged. {_RECOVER}"
            ) from None

    return inner  # type: ignore[return-value]


def _owner_tag() -> str:
    """This process's lease, for the names of the directories it writes."""
    from .kernel.procs import proc_start_time

    return f"p{os.getpid()}s{proc_start_time(os.getpid()) or 0}"


def _held_by_live_process(name: str) -> bool:
    """Whether a scratch directory's owner (PID + start time in its name) still runs.
    A name without a lease (written by an older tcpfair) has no owner to wait for."""
    from .kernel.procs import alive

    m = _LEASE.search(name)
    if m is None:
        return False
    pid, start = int(m.group(1)), int(m.group(2))
    return alive(pid, start or None)


def run_problems(d: Path) -> list[str]:
    """What is wrong with a run directory (empty when complete): every file present,
    ``summary.json`` a run summary, each Parquet file readable (its footer)."""
    import pyarrow.parquet as pq

    if not d.is_dir():
        return ["its run directory is missing"]
    problems = []
    try:
        summary = json.loads((d / "summary.json").read_text())
        if not isinstance(summary, dict) or not isinstance(summary.get("metrics"), dict):
            problems.append("summary.json is not a run summary (no metrics)")
    except FileNotFoundError:
        problems.append("has no summary.json")
    except OSError as e:  # permissions, too many open files: the reader's problem, not damage
        raise StoreError(f"{d / 'summary.json'}: cannot read it ({e.strerror or e})") from None
    except ValueError as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        problems.append(f"summary.json is unreadable ({type(e).__name__}: {e})")
    for f in RUN_FILES[1:]:
        if not (d / f).exists():
            problems.append(f"has no {f}")
            continue
        try:
            pq.read_metadata(d / f)
        except OSError as e:
            raise StoreError(f"{d / f}: cannot read it ({e.strerror or e})") from None
        except Exception as e:  # noqa: BLE001 — ArrowInvalid and others for a damaged file
            problems.append(f"{f} is not a readable Parquet file ({type(e).__name__}: {e})")
    return problems


def _check_catalog_file(db: Path, has_runs: bool) -> bool:
    """Refuse what is not an SQLite database before SQLite touches it. Returns whether the
    file is new (absent, or empty with no run directories beside it)."""
    if not db.exists():
        return True
    if not db.is_file():
        raise StoreError(f"{db}: not a file; a results directory's catalog.sqlite is a file")
    try:
        with open(db, "rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except OSError as e:
        raise StoreError(f"{db}: cannot read the catalog ({e.strerror})") from None
    if not head:
        if has_runs:
            raise StoreError(
                f"{db}: the catalog is empty (0 bytes) but runs/ holds run directories: it was "
                f"lost or truncated. {_RECOVER}"
            )
        return True
    if head != _SQLITE_MAGIC:
        raise StoreError(
            f"{db}: not an SQLite database (it starts with {head[:8]!r}); tcpfair did not "
            f"change it. {_RECOVER}"
        )
    _check_size(db)
    return False


def _connect_ro(db: Path) -> sqlite3.Connection:
    """The catalog in SQLite's read-only mode. A reader of a WAL database needs its -shm
    file; in a folder the user cannot write (a store a sweep made with sudo) SQLite cannot
    create it and refuses ("attempt to write a readonly database"). Then, when no WAL holds
    pages not yet in the catalog file, the file is complete and is read as immutable."""
    uri = db.resolve().as_uri()
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=10.0, isolation_level=None)
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # opens the WAL index
        return conn
    except sqlite3.OperationalError as e:
        wal = db.with_name(db.name + "-wal")
        if "readonly" not in str(e):
            raise
        if wal.exists() and wal.stat().st_size > 0:
            raise StoreError(
                f"{db}: cannot read it ({e}): a sweep is writing it or was cut off (its -wal "
                f"file holds results not yet in the catalog) and SQLite cannot create its -shm "
                f"file in {db.parent}, which you cannot write; read it as the store's owner "
                "or once a sweep has run to the end"
            ) from None
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None)


def _check_size(db: Path) -> None:
    """A file shorter than its header says (cut off by a copy or a full disk) is refused
    before SQLite opens it. The header's size counts only when it is valid (offset 92
    equals the change counter) and no WAL holds pages not yet copied into the file."""
    wal = db.with_name(db.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return
    with open(db, "rb") as f:
        header = f.read(100)
    size = db.stat().st_size
    expected = 100
    if len(header) == 100 and header[24:28] == header[92:96]:
        page_size = int.from_bytes(header[16:18], "big")
        expected = (65536 if page_size == 1 else page_size) * int.from_bytes(header[28:32], "big")
    if size < expected:
        raise StoreError(
            f"{db}: the catalog is truncated ({size} bytes; its header says at least "
            f"{expected}); tcpfair did not change it. {_RECOVER}"
        )


@dataclass(frozen=True)
class Member:
    run_hash: str
    point: int
    repeat: int
    point_hash: str
    axes: dict[str, Any]


class Store:
    """A results directory. Open with ``Store(path)``; the catalog is created on first use."""

    def __init__(self, root: str | Path, create: bool = True, readonly: bool = False):
        """``create=False``: the catalog must exist. ``readonly=True`` (implies it): open it
        with SQLite's ``mode=ro`` — nothing is written, no write lock is taken."""
        self.root = Path(root)
        self.db_path = db = self.root / "catalog.sqlite"
        self.readonly = readonly
        if (readonly or not create) and not db.exists():
            raise StoreError(f"{self.root}: not a results directory (no catalog.sqlite)")
        has_runs = (self.root / "runs").is_dir() and any((self.root / "runs").iterdir())
        new = _check_catalog_file(db, has_runs)
        if readonly and new:
            raise StoreError(
                f"{db}: the catalog is empty (0 bytes): no sweep has written it; "
                f"run a sweep with -o {self.root} first"
            )
        try:
            if readonly:
                self._db = _connect_ro(db)
            else:
                self.root.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(db, timeout=60.0, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"{self.root}: cannot open the results store: {e}") from None
        try:
            self._open(db, new)
        except BaseException:
            self._db.close()
            raise

    @_sql_errors
    def _open(self, db: Path, new: bool) -> None:
        if self.readonly:
            if not self._schema_version(db):
                raise StoreError(f"{db}: an empty SQLite database: no sweep has written it")
            return
        self._db.execute("PRAGMA busy_timeout=60000")
        if not new:  # an existing file must be a tcpfair catalog before anything is written
            self._schema_version(db)
        # Two processes opening a new store at once: switching to WAL needs a lock that the
        # busy handler does not wait for, so retry.
        _retry_locked(self._wal, db)
        self._db.execute("PRAGMA synchronous=NORMAL")
        _retry_locked(self._create_schema, db)
        self._schema_version(db)

    def _create_schema(self) -> None:
        """Tables and schema version in one transaction (idempotent: IF NOT EXISTS, OR
        IGNORE), so another process opening the store at the same moment sees either no
        tables (a new catalog) or the whole catalog — never tables without their version,
        which it would rightly refuse as "not a tcpfair catalog"."""
        script = (
            "BEGIN IMMEDIATE;\n"
            + _SCHEMA
            + f"\nINSERT OR IGNORE INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');"
            + "\nCOMMIT;"
        )
        try:
            self._db.executescript(script)
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def _schema_version(self, db: Path) -> bool:
        """Refuse a database that is not a tcpfair catalog of the schema this version reads.
        Returns False for a database without tables (a new catalog)."""
        tables = {
            r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if not tables:
            return False  # a new catalog whose creation was cut off: nothing in it yet
        row = None
        if "meta" in tables:
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None or not {"runs", "members", "sweeps"} <= tables:
            raise StoreError(
                f"{db}: an SQLite database, but not a tcpfair catalog (tables: "
                f"{', '.join(sorted(tables))}); tcpfair did not change it"
            )
        if str(row[0]) != str(SCHEMA_VERSION):
            raise StoreError(
                f"{db}: catalog schema {row[0]!r}, this tcpfair reads {SCHEMA_VERSION}"
            )
        return True

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
            if self._db.in_transaction:  # SQLite ends it itself on some errors (a full disk)
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # ----------------------------------------------------------------- sweeps
    @_sql_errors
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

    @_sql_errors
    def sweeps(self) -> list[tuple[str, str]]:
        """(name, backend) of every sweep in the store."""
        return [
            (r[0], r[1])
            for r in self._db.execute("SELECT name, backend FROM sweeps ORDER BY name, backend")
        ]

    def select(
        self,
        sweep: str | None = None,
        backend: str | None = None,
        options: tuple[str, str] = ("--sweep", "--backend"),
    ) -> tuple[str, str]:
        """The one (sweep, backend) matching the filters; an error listing the choices
        otherwise, naming the filters by ``options`` (the command's option names)."""
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
            given = " ".join(
                f"{o} {v!r}" for o, v in zip(options, (sweep, backend), strict=True) if v
            )
            raise StoreError(
                f"{self.root}: no sweep matches {given or 'the filters'}; allowed: {choices}"
            )
        raise StoreError(
            f"{self.root}: holds several sweeps ({choices}); choose one with "
            f"{options[0]}/{options[1]}"
        )

    @_sql_errors
    def sweep_axes(self, name: str, backend: str) -> list[str]:
        row = self._db.execute(
            "SELECT axes FROM sweeps WHERE name=? AND backend=?", (name, backend)
        ).fetchone()
        if row is None:
            raise StoreError(f"{self.root}: no sweep {name!r} on backend {backend!r}")
        return list(json.loads(row[0]))

    # ----------------------------------------------------------------- runs
    @_sql_errors
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

    @_sql_errors
    def adopt(self, backend: str, run_hash: str, scenario_json: str, seed: int) -> bool:
        """A complete run directory without a ``done`` row (the process died between the
        rename and the commit): record it as done. Returns whether it did."""
        d = self.run_dir(backend, run_hash)
        if not d.is_dir() or run_problems(d):
            return False
        summary = json.loads((d / "summary.json").read_text())
        wall = summary.get("meta", {}).get("wall_time_s")
        self._record_done(backend, run_hash, scenario_json, seed, summary, None, time.time(), wall)
        return True

    def stage_path(self, backend: str, run_hash: str) -> Path:
        """A fresh staging path for a run directory (written by a worker, then committed)."""
        d = self.root / "runs" / backend
        d.mkdir(parents=True, exist_ok=True)
        return d / f".stage-{run_hash}-{_owner_tag()}-{uuid.uuid4().hex[:12]}"

    def clear_stale(self, backend: str, hashes: Iterable[str]) -> int:
        """Remove the staging, temp and trash directories that attempts of these runs left
        when they were killed — only those whose owner (the PID and start time in the name)
        no longer runs, so a concurrent sweep's work in progress is left alone. Set-aside
        damaged runs (``.damaged-…``) are never removed. Returns how many were removed."""
        d = self.root / "runs" / backend
        want = set(hashes)
        n = 0
        if d.exists():
            for p in d.iterdir():
                if not p.name.startswith(".") or p.name.startswith(_KEEP):
                    continue
                if want.intersection(_HASH.findall(p.name)) and not _held_by_live_process(p.name):
                    shutil.rmtree(p, ignore_errors=True)
                    n += 1
        return n

    @_sql_errors
    def set_aside_damaged(self, backend: str, run_hash: str) -> list[str]:
        """A done run whose files are damaged: move its directory aside (kept as
        ``.damaged-<run_hash>-<time>``) and drop its row, so the run is measured again.
        Returns the problems found (empty, and nothing done, when the run is intact)."""
        final = self.run_dir(backend, run_hash)
        with self.transaction() as c:
            row = c.execute(
                "SELECT status FROM runs WHERE backend=? AND run_hash=?", (backend, run_hash)
            ).fetchone()
            problems = run_problems(final)
            if row is None or row[0] != "done" or not problems:
                return []
            if final.exists():
                stamp = time.strftime("%Y%m%dT%H%M%S")
                os.replace(
                    final, final.with_name(f".damaged-{run_hash}-{stamp}-{uuid.uuid4().hex[:6]}")
                )
            c.execute("DELETE FROM runs WHERE backend=? AND run_hash=?", (backend, run_hash))
        return problems

    @_sql_errors
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

    @_sql_errors
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
                    trash = final.with_name(
                        f".trash-{run_hash}-{_owner_tag()}-{uuid.uuid4().hex[:12]}"
                    )
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

    @_sql_errors
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

    @_sql_errors
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
    @_sql_errors
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

    @_sql_errors
    def check(self) -> list[str]:
        """Consistency problems (empty when consistent): SQLite's integrity check of the
        catalog, every done run has a complete directory (``run_problems``: files present,
        summary.json a run summary, Parquet files readable), every run directory has a
        done row."""
        problems = [
            f"catalog: {r[0]}"
            for r in self._db.execute("PRAGMA integrity_check")
            if str(r[0]).lower() != "ok"
        ]
        for table, key, col in (
            ("sweeps", "name", "spec"),
            ("sweeps", "name", "axes"),
            ("members", "run_hash", "axes"),
            ("runs", "run_hash", "metrics"),
        ):
            for k, text in self._db.execute(f"SELECT {key}, {col} FROM {table}"):
                try:
                    if text is not None:
                        json.loads(text)
                except ValueError as e:
                    problems.append(f"catalog: {table}.{col} of {k} is not JSON ({e})")
        done = {
            (b, h)
            for b, h in self._db.execute("SELECT backend, run_hash FROM runs WHERE status='done'")
        }
        for b, h in sorted(done):
            for p in run_problems(self.run_dir(b, h)):
                problems.append(f"done run {b}/{h}: {p}")
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
        except sqlite3.DatabaseError as e:  # a damaged file too, not only a lock
            if "locked" not in str(e) and "busy" not in str(e):
                raise StoreError(_explain(db, e)) from None
            if time.monotonic() > deadline:
                raise StoreError(
                    f"{db}: still locked by another process after {seconds:.0f} s"
                ) from None
            time.sleep(0.05)


def summarize(summary: dict[str, Any]) -> dict[str, Any]:
    """The catalog's metric columns from a run's ``summary.json``."""
    met = dict(summary.get("metrics", {}))
    thr = met.get("throughput_bps", {})
    flows = summary.get("flows", [])
    groups: dict[int, float] = {}
    for f in flows:
        g = int(f.get("group", 0))
        groups[g] = groups.get(g, 0.0) + float(thr.get(str(f["flow"]), 0.0))
    # by entry index (thr_g<i>_bps is entry i's); None: an entry without long-lived
    # connections (short flows only)
    met["group_throughput_bps"] = [groups.get(g) for g in range(max(groups, default=-1) + 1)]
    # ratio: throughput of the second measured entry over the first (flow 2 / flow 1 of the
    # studies), so it never mixes in reverse traffic or entries outside [measure] flows
    first_two = _measured_entries(flows, met.get("measured_flows"))[:2]
    a, b = (groups[g] for g in first_two) if len(first_two) == 2 else (math.nan, math.nan)
    met["ratio"] = b / a if a > 0 else math.nan
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
    host = meta.get("host")
    if isinstance(host, dict) and host.get("name"):
        met["host"] = str(host["name"])  # the machine (runs of a sweep on many: compare)
    if meta.get("grade"):
        met["grade"] = str(meta["grade"])
    out["metrics"] = met
    return out


def _measured_entries(flows: list[dict[str, Any]], measured: list[str] | None) -> list[int]:
    """The ``[[flows]]`` entries in the headline metrics' set, in entry order: those whose
    label ``[measure] flows`` names, else every forward entry (``RunResult.metrics``)."""
    out: set[int] = set()
    for f in flows:
        if measured is not None:
            keep = f.get("label") in measured
        else:
            keep = f.get("direction", "forward") == "forward"
        if keep:
            out.add(int(f.get("group", 0)))
    return sorted(out)


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
    for col in ("host", "grade"):  # kernel runs: the machine and the validity grade
        if any(col in m for m in mets):
            checks[col] = [m.get(col) for m in mets]
    df = _windowed_retransmits(df, mets)
    front = ["sweep", "backend", "run_hash", "point", "repeat", "seed", "status"]
    rest = [c for c in df.columns if c not in front and c not in ("axes", "metrics", "point_hash")]
    groups = group_columns(mets, df.index)
    out = pd.concat(
        [df[front], axis_cols, df[rest], thr, groups, checks, df[["point_hash"]]], axis=1
    )
    return out


#: Per-group metric columns of the tidy table, ``<stat>:<label>`` (docs/sweeps.md), from
#: ``RunResult.groups()``; and ``ratio:<A>/<B>`` (mean per connection of A over B's).
GROUP_STATS = {
    "connections": "connections",
    "sum": "sum_bps",
    "mean": "mean_bps",
    "share": "share",
    "jfi": "jfi",
}


#: The reverse direction's columns of the tidy table, ``reverse_<stat>``, from
#: ``RunResult.reverse_metrics()`` (runs with a reverse bottleneck).
REVERSE_STATS = (
    "utilization",
    "sum_bps",
    "jfi",
    "retransmits",
    "queue_mean_bytes",
    "drops",
    "ack_drops",
    "forward_ack_drops",
)


def _dict_or_empty(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def group_columns(mets: list[dict[str, Any]], index: pd.Index) -> pd.DataFrame:
    """``<stat>:<label>`` and ``ratio:<A>/<B>`` columns from the runs' metrics (NaN where a
    run has no such group: runs stored before per-group results, or another label set),
    ``utilization_measured`` where runs have ``[measure] flows`` and ``reverse_<stat>``
    where they have a reverse bottleneck."""
    cols: dict[str, list[float]] = {}
    n = len(mets)
    for i, met in enumerate(mets):
        groups = _dict_or_empty(met.get("groups"))
        cells = {
            f"{stat}:{label}": g.get(key)
            for label, g in groups.items()
            if isinstance(g, dict)
            for stat, key in GROUP_STATS.items()
        }
        ratios = _dict_or_empty(met.get("group_ratios"))
        cells.update({f"ratio:{pair}": v for pair, v in ratios.items()})
        if "utilization_measured" in met:  # runs with [measure] flows
            cells["utilization_measured"] = met["utilization_measured"]
        cells.update(short_flow_cells(met))
        rev = met.get("reverse")
        if isinstance(rev, dict):  # runs with a reverse bottleneck
            cells.update({f"reverse_{k}": rev.get(k) for k in REVERSE_STATS})
        for k, v in cells.items():
            cols.setdefault(k, [math.nan] * n)[i] = _num(v)
    return pd.DataFrame(cols, index=index)


#: Short-flow columns of the tidy table, ``<stat>:<bucket>`` (docs/sweeps.md) from the
#: ``short_flows`` block of the metrics (shortflows.py; bucket ``all`` or a size bucket).
SHORT_STATS = {
    "short_flows": "flows",
    "unfinished": "unfinished",
    "fct_mean": "fct_mean_s",
    "fct_median": "fct_median_s",
    "fct_p99": "fct_p99_s",
    "slowdown_mean": "slowdown_mean",
    "slowdown_median": "slowdown_median",
    "slowdown_p99": "slowdown_p99",
}


def short_flow_cells(met: dict[str, Any]) -> dict[str, Any]:
    sf = met.get("short_flows")
    if not isinstance(sf, dict):
        return {}
    parts = {"all": sf.get("all"), **(sf.get("buckets") or {})}
    return {
        f"{stat}:{name}": b.get(key)
        for name, b in parts.items()
        if isinstance(b, dict)
        for stat, key in SHORT_STATS.items()
    }


def _windowed_retransmits(df: pd.DataFrame, mets: list[dict[str, Any]]) -> pd.DataFrame:
    """``retransmits`` counts inside the measurement window, ``retransmits_run`` over the
    whole run. Runs stored before tcpfair counted in the window (their metrics have no
    ``retransmits_run``) hold the whole-run count in ``retransmits``: it moves to
    ``retransmits_run`` and their windowed count is unknown (NaN), so a resumed old sweep
    never mixes the two in one column."""
    if "retransmits" not in df.columns:
        return df
    df = df.copy()
    stored = df["retransmits"].astype(float)
    old = [bool(m) and "retransmits_run" not in m for m in mets]
    df["retransmits_run"] = [
        stored.iloc[i] if was_old else _num(m.get("retransmits_run"))
        for i, (m, was_old) in enumerate(zip(mets, old, strict=True))
    ]
    df["retransmits"] = stored.mask(pd.Series(old, index=df.index))
    return df


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
