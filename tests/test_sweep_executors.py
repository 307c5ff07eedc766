"""Executors: the local process pool and Dask give the same results as running in-process;
failures do not stop a sweep; the kernel backend runs one at a time."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from test_sweep_support import BASE, fake_run

from tcpfair.executors import DaskExecutor, LocalExecutor, make_executor
from tcpfair.orchestrate import run_sweep
from tcpfair.result import RunResult
from tcpfair.store import Store
from tcpfair.sweep import SweepError, sweep_from_dict

SWEEP = {
    "name": "ex",
    "base": BASE,
    "repeats": 2,
    "seed": 9,
    "axes": {"flows.1.rtt": ["25ms", "50ms", "100ms"], "flows.1.cca": ["newreno", "cubic", "bbr"]},
}
METRICS = [
    "jfi",
    "jfi_per_interval_mean",
    "min_max_ratio",
    "ratio",
    "utilization",
    "sum_bps",
    "thr_g0_bps",
    "thr_g1_bps",
]


def _table(store: Path) -> pd.DataFrame:
    t = Store(store).table(sweep="ex")
    return t.sort_values("run_hash").reset_index(drop=True)


def _samples(store: Path, t: pd.DataFrame) -> list[pd.DataFrame]:
    return [RunResult.load(store / d).samples for d in t["run_dir"].dropna()]


@pytest.fixture(scope="module")
def inline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("inline")
    run_sweep(sweep_from_dict(SWEEP), run_fn=fake_run, output=out, executor=LocalExecutor(1))
    return out


def _same(a: Path, b: Path) -> None:
    ta, tb = _table(a), _table(b)
    assert len(ta) == 18
    assert list(ta["run_hash"]) == list(tb["run_hash"]) and list(ta["seed"]) == list(tb["seed"])
    assert list(ta["status"]) == list(tb["status"]) and list(ta["error"]) == list(tb["error"])
    pd.testing.assert_frame_equal(ta[METRICS], tb[METRICS])  # exactly equal, not approximately
    for sa, sb in zip(_samples(a, ta), _samples(b, tb), strict=True):
        pd.testing.assert_frame_equal(sa, sb)


def test_local_pool_matches_in_process(inline: Path, tmp_path: Path) -> None:
    rep = run_sweep(
        sweep_from_dict(SWEEP), run_fn=fake_run, output=tmp_path, executor=LocalExecutor(2)
    )
    assert (rep.finished, rep.failed) == (12, 6)  # bbr fails in the fake backend; the sweep goes on
    _same(inline, tmp_path)


def test_dask_local_cluster_matches_local_pool(inline: Path, tmp_path: Path) -> None:
    rep = run_sweep(
        sweep_from_dict(SWEEP),
        run_fn=fake_run,
        output=tmp_path,
        executor=DaskExecutor(None, jobs=2, processes=False),
    )
    assert (rep.finished, rep.failed) == (12, 6)
    _same(inline, tmp_path)
    failed = _table(tmp_path)
    assert failed[failed["status"] == "failed"]["error"].str.contains("bbr is not available").all()


def test_executor_choice_and_kernel_limits() -> None:
    assert isinstance(make_executor("local", "sim", None, None), LocalExecutor)
    assert make_executor("local", "sim", 3, None).jobs == 3
    assert make_executor("local", "kernel", None, None).jobs == 1
    with pytest.raises(SweepError, match="kernel backend runs one at a time"):
        make_executor("local", "kernel", 2, None)
    with pytest.raises(SweepError, match="needs --scheduler"):
        make_executor("dask", "kernel", None, None)
    k = make_executor("dask", "kernel", None, "tcp://127.0.0.1:8786")  # many machines
    assert isinstance(k, DaskExecutor) and k.kernel
    assert not make_executor("dask", "sim", None, "tcp://127.0.0.1:8786").kernel
    with pytest.raises(SweepError, match="only with --executor dask"):
        make_executor("local", "sim", 2, "tcp://127.0.0.1:8786")
    d = make_executor("dask", "sim", 2, "tcp://127.0.0.1:8786")
    assert isinstance(d, DaskExecutor) and d.scheduler == "tcp://127.0.0.1:8786"


def _crash(sc: object, backend: str) -> RunResult:
    import os

    if getattr(sc, "flows")[1].rtt == 50_000_000:  # noqa: B009
        os._exit(3)  # a worker dying hard (segfault, OOM kill)
    return fake_run(sc, backend)  # type: ignore[arg-type]


def test_worker_death_fails_only_the_runs_in_flight(tmp_path: Path) -> None:
    sw = sweep_from_dict(
        {**SWEEP, "axes": {"flows.1.rtt": ["25ms", "50ms", "100ms", "200ms"]}, "repeats": 1}
    )
    rep = run_sweep(sw, run_fn=_crash, output=tmp_path, executor=LocalExecutor(2))
    t = Store(tmp_path).table()
    assert (rep.finished, rep.failed) == (3, 1)  # only the culprit fails
    failed = t[t["status"] == "failed"]
    assert list(failed["flows.1.rtt"]) == ["50ms"]
    assert failed["error"].str.contains("worker process died").all()
    assert Store(tmp_path).check() == []


def test_progress_bar_counts_finished_and_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_sweep(
        sweep_from_dict(SWEEP),
        run_fn=fake_run,
        output=tmp_path,
        executor=LocalExecutor(1),
        progress=True,
    )
    err = capsys.readouterr().err
    assert "12 done" in err and "6 failed" in err and "0 left" in err


def test_a_machine_level_backend_problem_is_reported_once(tmp_path: Path) -> None:
    from tcpfair.backends import BackendError

    def no_root(sc: object) -> None:
        raise BackendError("kernel backend: needs root")

    with pytest.raises(SweepError) as e:
        run_sweep(sweep_from_dict(SWEEP), run_fn=fake_run, check=no_root, output=tmp_path / "s")
    assert e.value.problems == [("all 9 points", "backend sim: kernel backend: needs root")]

    def no_bbr(sc: object) -> None:
        if getattr(sc, "flows")[1].cca == "bbr":  # noqa: B009
            raise BackendError("flows.1.cca: no bbr here")

    with pytest.raises(SweepError) as e:
        run_sweep(sweep_from_dict(SWEEP), run_fn=fake_run, check=no_bbr, output=tmp_path / "s")
    assert len(e.value.problems) == 3 and all("flows.1.cca=bbr" in w for w, _ in e.value.problems)
    assert not (tmp_path / "s").exists()


class _InterruptedAfterOne:
    """Runs the first task, lets a 'worker' finish the second into its staging directory,
    then the user presses Ctrl-C."""

    name = "test"
    jobs = 2
    shares_filesystem = True

    def start(self) -> None:
        return None

    def map(self, run_fn, tasks):  # noqa: ANN001, ANN201
        from tcpfair.executors import execute

        key, sc, backend, stage = tasks[0]
        yield key, execute(run_fn, sc, backend, stage)
        _, sc2, backend2, stage2 = tasks[1]
        execute(run_fn, sc2, backend2, stage2)  # staged, never handed over
        raise KeyboardInterrupt


def test_interrupt_keeps_finished_runs_and_drops_staged_ones(tmp_path: Path) -> None:
    sw = sweep_from_dict(
        {**SWEEP, "axes": {"flows.1.rtt": ["25ms", "50ms", "100ms"]}, "repeats": 1}
    )
    with pytest.raises(KeyboardInterrupt):
        run_sweep(sw, run_fn=fake_run, output=tmp_path, executor=_InterruptedAfterOne())  # type: ignore[arg-type]
    s = Store(tmp_path)
    assert list(s.table()["status"]) == ["done", "pending", "pending"]
    assert (
        s.check() == []
        and [p.name for p in (tmp_path / "runs" / "sim").iterdir() if p.name.startswith(".")] == []
    )
    rep = run_sweep(sw, run_fn=fake_run, output=tmp_path, jobs=1)
    assert (rep.already_done, rep.finished) == (1, 2)


def test_layers_import_one_way():
    """spec → plan → execute → store: the sweep file's module imports neither the
    orchestration nor the executors (not even lazily), and the executors do not import the
    orchestration."""
    import ast

    import tcpfair.executors
    import tcpfair.sweep

    def imported(mod: object) -> set[str]:
        tree = ast.parse(Path(mod.__file__).read_text())  # type: ignore[attr-defined]
        return {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}

    assert not {"executors", "orchestrate"} & imported(tcpfair.sweep)
    assert "orchestrate" not in imported(tcpfair.executors)


@pytest.mark.parametrize("width", [80, 120])
def test_progress_bar_keeps_counts_and_times_whole_on_a_narrow_terminal(
    width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80 columns rich cut the sweep bar's times to "0:0… ETA -:--…"; now only the
    title gives way (and the bar itself below 100 columns)."""
    import io

    from rich.console import Console

    from tcpfair.orchestrate import _Progress

    monkeypatch.setenv("COLUMNS", str(width))
    title = "ns2-testbed-sim (sim, local ×2) and a long tail of words"
    bar = _Progress(True, 1600, title)
    try:
        bar.advance(1234, 5)
        out = io.StringIO()
        Console(file=out, width=width).print(bar.p.make_tasks_table(bar.p.tasks))
    finally:
        bar.close()
    (line,) = [ln for ln in out.getvalue().splitlines() if ln.strip()]
    assert len(line) <= width
    assert "1234 done 5 failed 361 left" in line
    # elapsed, then ETA, both whole (h:mm:ss; unknown so soon after the start)
    assert re.search(r" \d+:\d\d:\d\d ETA (-:--:--|\d+:\d\d:\d\d)$", line), line
    head = line.split(" 1234 done")[0]
    assert head.startswith("ns2-testbed-sim (sim") and "…" in head  # the title gave way
    assert ("━" in head) == (width >= 100)  # the bar only where it fits
