"""tcpfair.dispatch: which kernel run goes to which worker (pure bookkeeping, no Dask)."""

from __future__ import annotations

from tcpfair.dispatch import Dispatch


def test_each_idle_worker_gets_the_first_pending_run_it_can_run() -> None:
    # tasks 0,1 are a 5 Mbit/s scenario (kind 0), tasks 2,3 a 20 Mbit/s one (kind 1);
    # "small" can run only kind 0, "big" both
    d = Dispatch(kinds=[0, 0, 1, 1])
    d.add_worker("small", {0})
    d.add_worker("big", {0, 1})
    assert d.assign() == [(0, "small"), (1, "big")]
    assert d.assign() == []  # one run per worker at a time
    d.finished("small")
    assert d.assign() == []  # nothing left that "small" can run: it stays idle
    d.finished("big")
    assert d.assign() == [(2, "big")]
    d.finished("big")
    assert d.assign() == [(3, "big")]
    d.finished("big")
    assert d.done and d.stranded() == []


def test_a_joining_worker_takes_runs_from_the_queue() -> None:
    d = Dispatch(kinds=[0, 0, 0])
    d.add_worker("a", {0})
    assert d.assign() == [(0, "a")]
    d.add_worker("b", {0})
    assert d.assign() == [(1, "b")]
    d.finished("a")
    assert d.assign() == [(2, "a")]


def test_a_lost_worker_gets_no_more_runs_and_its_run_is_not_rerun() -> None:
    d = Dispatch(kinds=[0, 0, 0])
    d.add_worker("a", {0})
    d.add_worker("b", {0})
    assert d.assign() == [(0, "a"), (1, "b")]
    assert d.lost("a") == 0  # the caller fails task 0 with the reason
    assert d.pending == [2]
    d.finished("b")
    assert d.assign() == [(2, "b")]
    assert d.lost("b") == 2
    assert d.stranded() == [] and d.done


def test_runs_left_when_every_worker_is_lost_are_stranded() -> None:
    d = Dispatch(kinds=[0, 0, 0])
    d.add_worker("a", {0})
    assert d.assign() == [(0, "a")]
    assert d.lost("a") == 0
    assert d.stranded() == [1, 2]
    d.drop([1, 2])
    assert d.done


def test_runs_only_a_lost_worker_could_run_are_stranded_the_others_go_on() -> None:
    d = Dispatch(kinds=[1, 0, 1])
    d.add_worker("small", {0})
    d.add_worker("big", {0, 1})
    assert d.assign() == [(1, "small"), (0, "big")]
    assert d.lost("big") == 0
    assert d.stranded() == [2]
    d.drop(d.stranded())
    assert d.assign() == [] and not d.pending and not d.done  # "small" still runs task 1
    d.finished("small")
    assert d.done
