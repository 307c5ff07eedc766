"""A sweep's figures drawn in several processes (``commands.sweep._draw``): the same files,
in the same order, with the same bytes as drawn one after the other in one process; an
error in a child reaches the caller; no fork while another thread runs."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_figures import SWEEP as FIGURES_SWEEP

from tcpfair.cli import cli
from tcpfair.commands import UserError
from tcpfair.commands import sweep as cmd
from tcpfair.store import Store
from tcpfair.sweep import sweep_from_dict

# test_figures' sweep (two RTTs × two algorithms for flow 2, a line plot of flow 2's
# throughput), with a plot of each other kind
SWEEP = FIGURES_SWEEP.format(
    extra="""
[[plots]]
kind = "surface"
metric = "jfi"
x = "flows.1.rtt"
y = "flows.1.cca"

[[plots]]
kind = "bars"
metric = "throughput"
x = "flows.1.rtt"

[[plots]]
kind = "box"
metric = "utilization"
x = "flows.1.rtt"
"""
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    d = tmp_path_factory.mktemp("figsweep")
    (d / "sw.toml").write_text(SWEEP)
    r = CliRunner().invoke(
        cli,
        ["sweep", str(d / "sw.toml"), "-o", str(d / "store"), "-j", "1", "--no-progress"]
        + ["--no-figures"],
    )
    assert r.exit_code == 0, r.output
    return Store(d / "store")


def _plots() -> list[Any]:
    return sweep_from_dict(tomllib.loads(SWEEP)).plots


def _draw(store: Store, out: Path, workers: int, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    monkeypatch.setattr(cmd, "_figure_workers", lambda n: min(workers, n))
    out.mkdir()
    return cmd._draw(store, "figsweep", "sim", _plots(), out, ["png"])


def test_figures_drawn_in_two_processes_are_those_of_one(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _draw(store, tmp_path / "one", 1, monkeypatch)
    two = _draw(store, tmp_path / "two", 2, monkeypatch)
    # in the plots' order: the line figure (one line per algorithm of flow 2), the surface,
    # the bars and the box plots one per algorithm (the axis they do not show)
    assert [p.stem for p in one if p.suffix == ".png"] == [
        "thr_g1_bps-vs-flows.1.rtt",
        "jfi-surface",
        "throughput-bars-flows.1.rtt-flows.1.cca=reno",
        "throughput-bars-flows.1.rtt-flows.1.cca=cubic",
        "utilization-box-flows.1.rtt-flows.1.cca=reno",
        "utilization-box-flows.1.rtt-flows.1.cca=cubic",
    ]
    assert len(one) == len(set(one)) == 12  # each figure a PNG and its CSV
    assert [p.name for p in two] == [p.name for p in one]
    assert {p.parent for p in two} == {tmp_path / "two"}
    for a, b in zip(one, two, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_an_error_in_a_child_reaches_the_caller(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tcpfair import surfaces

    def broken(*args: object, **kw: object) -> list[Path]:
        raise UserError(f"surface: made up for the test, in process {os.getpid()}")

    monkeypatch.setattr(surfaces, "surface_figure", broken)  # inherited by the children
    with pytest.raises(UserError, match="made up for the test") as e:
        _draw(store, tmp_path / "out", 2, monkeypatch)
    assert str(e.value).split()[-1] != str(os.getpid())  # it was drawn in another process


def test_a_child_that_dies_is_an_error_not_a_wait(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tcpfair import surfaces

    def killed(*args: object, **kw: object) -> list[Path]:
        os._exit(9)  # as the out-of-memory killer would end it

    monkeypatch.setattr(surfaces, "surface_figure", killed)
    with pytest.raises(UserError, match="died .*the same command draws the figures again"):
        _draw(store, tmp_path / "out", 2, monkeypatch)


def test_one_process_while_another_thread_runs_or_for_one_plot() -> None:
    assert cmd._figure_workers(1) == 1
    assert cmd._figure_workers(0) == 1
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert cmd._figure_workers(5) == 1
    finally:
        stop.set()
        t.join()
    # with no other thread: one per plot, at most one per core — asked in a fresh process,
    # since any Dask client earlier in this one leaves a thread for good (the check was
    # skipped then)
    probe = (
        "import os, threading\n"
        "from tcpfair.commands import sweep as cmd\n"
        "assert threading.active_count() == 1\n"
        "print(cmd._figure_workers(5), cmd._figure_workers(2), len(os.sched_getaffinity(0)))"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    five, two, cores = map(int, p.stdout.split())
    assert (five, two) == (min(5, cores), min(2, cores))
