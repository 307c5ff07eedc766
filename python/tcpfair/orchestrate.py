"""Sweep orchestration: spec → plan → execute → store.

``run_sweep`` takes a loaded sweep (``tcpfair.sweep``: the *spec*), expands and checks every
run before anything starts (``plan``), registers them in the results store
(``tcpfair.store``), skips what is already done there (resume), hands the rest to an
executor (``tcpfair.executors``: the *execute* layer) and writes each outcome into the
store as it arrives — the only place a sweep's results are written. ``run`` is the Python
form of ``tcpfair sweep``.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import executors
from .executors import (
    DaskExecutor,
    Executor,
    RunFn,
    Task,
    _disk_full,
    _stop_disk_full,
    backend_check,
    make_executor,
)
from .outputs import check_store_target
from .spec import Scenario
from .store import Member, Store, run_problems
from .sweep import Run, Sweep, SweepError, load_sweep, point_label

__all__ = ["SweepReport", "plan", "validated", "run_sweep", "run"]


@dataclass
class SweepReport:
    store: Store
    backend: str
    total: int = 0
    already_done: int = 0
    adopted: int = 0
    finished: int = 0
    failed: int = 0
    skipped_failed: int = 0
    #: done runs whose files were damaged: set aside (``.damaged-…``) and run again
    damaged: dict[str, list[str]] = field(default_factory=dict)
    wall_s: float = 0.0
    store_s: float = 0.0
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def ran(self) -> int:
        return self.finished + self.failed


def plan(sweep: Sweep, backend: str, check: Callable[[Scenario], None] | None) -> list[Run]:
    """Expand and validate every run before anything starts; all problems in one error."""
    problems: list[tuple[str, str]] = []
    runs = list(validated(sweep, backend, check, problems))
    if problems:
        raise SweepError(problems, sweep.source)
    return runs


def validated(
    sweep: Sweep,
    backend: str,
    check: Callable[[Scenario], None] | None,
    problems: list[tuple[str, str]],
) -> Iterator[Run]:
    """The runs of ``plan``, one at a time (``--dry-run`` holds none of them): each point
    checked by the backend once; problems appended to ``problems`` as they are found,
    the backend's at the end (one line when every point fails the same way)."""
    from .backends import BackendError

    seen: dict[str, str] = {}  # run_hash → the label of its point
    checked: set[int] = set()
    backend_problems: list[tuple[str, str]] = []
    for r in sweep.iter_runs(problems):
        label = point_label(r.axes)
        other = seen.setdefault(r.run_hash, label)
        if other != label:
            problems.append((label, f"is the same scenario as point {other}"))
        if check is not None and r.point not in checked:
            checked.add(r.point)
            try:
                check(r.scenario)
            except BackendError as e:
                backend_problems.append((label, f"backend {backend}: {e}"))
        yield r
    if (
        len(backend_problems) > 1
        and len({m for _, m in backend_problems}) == 1
        and len(backend_problems) == len(checked)
    ):
        # the machine, not the points (no root, no iperf3): say it once
        backend_problems = [(f"all {len(checked)} points", backend_problems[0][1])]
    problems.extend(backend_problems)


def run_sweep(
    sweep: Sweep,
    backend: str | None = None,
    jobs: int | None = None,
    executor: str | Executor = "local",
    scheduler: str | None = None,
    output: str | Path | None = None,
    retry_failed: bool = False,
    progress: bool = False,
    run_fn: RunFn | None = None,
    check: Callable[[Scenario], None] | None = None,
) -> SweepReport:
    """Run every unfinished run of ``sweep`` into the store at ``output`` (default
    ``results/<sweep name>``). Finished runs are skipped; failed ones too unless
    ``retry_failed``. ``run_fn`` replaces the real backends (tests); ``check`` defaults
    to the backend's own pre-flight check when the real backends are used."""
    backend = backend or sweep.backend or "sim"
    ex = (
        executor
        if not isinstance(executor, str)
        else make_executor(executor, backend, jobs, scheduler)
    )
    if run_fn is None:
        run_fn = executors.run_backend  # looked up now: tests replace it
        if check is None:
            remote = isinstance(ex, DaskExecutor) and ex.kernel  # workers check their machines
            check = backend_check(backend, machine=False) if remote else backend_check(backend)
    runs = plan(sweep, backend, check)
    if isinstance(ex, DaskExecutor) and ex.kernel and runs:
        ex.check_workers([r.scenario for r in runs])
    elif isinstance(ex, DaskExecutor) and ex.scheduler and runs:
        ex.connect()  # before the results store exists: an unreachable scheduler leaves none
    try:
        return _run_planned(sweep, backend, ex, runs, output, retry_failed, progress, run_fn)
    finally:
        if isinstance(ex, DaskExecutor):
            ex.close()


def _run_planned(
    sweep: Sweep,
    backend: str,
    ex: Executor,
    runs: list[Run],
    output: str | Path | None,
    retry_failed: bool,
    progress: bool,
    run_fn: RunFn,
) -> SweepReport:
    """``run_sweep`` once the runs are planned and the executor chosen."""
    root = Path(output) if output is not None else Path("results") / sweep.name
    check_store_target(root, option="results folder")  # a store, a new path or an empty folder
    store = Store(root)
    members = [Member(r.run_hash, r.point, r.repeat, r.point_hash, r.axes) for r in runs]
    store.register_sweep(
        sweep.name, backend, sweep.to_dict(), sweep.spec_hash(), list(sweep.axes), members
    )

    rep = SweepReport(store=store, backend=backend, total=len(runs))
    status = store.status(backend, [r.run_hash for r in runs])
    todo: list[Run] = []
    for r in runs:
        st = status.get(r.run_hash)
        if st == "done" and r.run_hash not in rep.damaged:
            problems = run_problems(store.run_dir(backend, r.run_hash)) and (
                store.set_aside_damaged(backend, r.run_hash)  # checks again, under the lock
            )
            if problems:  # a "done" run whose files are broken is not done: run it again
                rep.damaged[r.run_hash] = problems
                todo.append(r)
            else:
                rep.already_done += 1
        elif st == "failed" and not retry_failed:
            rep.skipped_failed += 1
        elif st is None and store.adopt(backend, r.run_hash, r.scenario.to_json(), r.seed):
            rep.adopted += 1
        else:
            todo.append(r)

    by_hash = {r.run_hash: r for r in todo}
    store.clear_stale(backend, [r.run_hash for r in runs])  # leftovers of killed attempts
    tasks: list[Task] = [
        (
            r.run_hash,
            r.scenario,
            backend,
            str(store.stage_path(backend, r.run_hash)) if ex.shares_filesystem else None,
        )
        for r in todo
    ]
    t0 = time.perf_counter()
    if tasks:
        ex.start()
    bar = _Progress(progress, len(tasks), f"{sweep.name} ({backend}, {ex.name} ×{ex.jobs})")
    results = ex.map(run_fn, tasks)
    handled: set[str] = set()
    try:
        for key, out in results:
            handled.add(key)
            r = by_hash[key]
            ts = time.perf_counter()
            sc_json = r.scenario.to_json()
            if out.disk_full:
                raise _stop_disk_full(store, out.error or "")
            if out.ok and (out.result is not None or out.staged is not None):
                try:
                    if out.staged is not None:
                        store.commit_staged(
                            backend,
                            key,
                            Path(out.staged),
                            sc_json,
                            r.seed,
                            out.started,
                            out.finished,
                            out.wall_s,
                        )
                    else:
                        assert out.result is not None
                        store.save_success(
                            backend,
                            key,
                            sc_json,
                            r.seed,
                            out.result,
                            out.started,
                            out.finished,
                            out.wall_s,
                        )
                    rep.finished += 1
                except Exception as e:  # a result that cannot be stored is a failed run
                    if _disk_full(e):
                        raise _stop_disk_full(store, e) from None
                    store.save_failure(
                        backend,
                        key,
                        sc_json,
                        r.seed,
                        f"storing the result failed: {e}",
                        out.started,
                        out.finished,
                        out.wall_s,
                    )
                    rep.failed += 1
                    rep.errors[key] = str(e)
            else:
                store.save_failure(
                    backend,
                    key,
                    sc_json,
                    r.seed,
                    out.error or "unknown error",
                    out.started,
                    out.finished,
                    out.wall_s,
                )
                rep.failed += 1
                rep.errors[key] = out.error or "unknown error"
            rep.store_s += time.perf_counter() - ts
            bar.advance(rep.finished, rep.failed)
    finally:
        bar.close()
        results.close()  # interrupted: wait for the workers, then drop what they staged
        for key, _sc, _be, stage in tasks:
            if stage is not None and key not in handled and os.path.exists(stage):
                shutil.rmtree(stage, ignore_errors=True)
        rep.wall_s = time.perf_counter() - t0
    return rep


class _Progress:
    """A rich progress bar (stderr): finished / failed / remaining and the ETA."""

    def __init__(self, enabled: bool, total: int, title: str):
        self.p: Any = None
        if not enabled or total == 0:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.table import Column

        # On a narrow terminal only the title gives way (it ends in '…') and the bar goes:
        # the counts and the times stay whole (at 80 columns rich cut them to "0:0… ETA
        # -:--…"). Widths: the counts at their widest, the two times (h:mm:ss) and "ETA".
        console = Console(stderr=True)
        digits = len(str(total))
        counts = 3 * digits + len(" done  failed  left")
        bar = 20 if console.width >= 100 else 0
        columns = 5 + (bar > 0)
        rest = counts + 7 + 3 + 7 + bar + (columns - 1)
        whole = Column(no_wrap=True)
        self.p = Progress(
            TextColumn(
                "{task.description}",
                table_column=Column(
                    no_wrap=True, overflow="ellipsis", max_width=max(8, console.width - rest)
                ),
            ),
            *([BarColumn(bar_width=bar)] if bar else []),
            TextColumn(
                "[green]{task.fields[ok]} done[/] [red]{task.fields[bad]} failed[/] "
                "{task.fields[left]} left",
                table_column=whole,
            ),
            TimeElapsedColumn(table_column=whole),
            TextColumn("ETA", table_column=whole),
            TimeRemainingColumn(table_column=whole),
            console=console,
        )
        self.total = total
        self.task = self.p.add_task(title, total=total, ok=0, bad=0, left=total)
        self.p.start()

    def advance(self, ok: int, bad: int) -> None:
        if self.p is not None:
            self.p.update(self.task, completed=ok + bad, ok=ok, bad=bad, left=self.total - ok - bad)

    def close(self) -> None:
        if self.p is not None:
            self.p.stop()


def run(
    sweep: Sweep | str | Path,
    backend: str | None = None,
    jobs: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    output: str | Path | None = None,
    retry_failed: bool = False,
    progress: bool = False,
) -> Any:
    """Run a sweep into a results store; returns the store's tidy table (pandas) for this sweep.

    The Python form of ``tcpfair sweep``; see ``run_sweep``.
    """
    sw = sweep if isinstance(sweep, Sweep) else load_sweep(sweep)
    report = run_sweep(
        sw,
        backend=backend,
        jobs=jobs,
        executor=executor,
        scheduler=scheduler,
        output=output,
        retry_failed=retry_failed,
        progress=progress,
    )
    return report.store.table(sweep=sw.name, backend=report.backend)
