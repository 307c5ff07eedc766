"""The results store: catalog rows, run directories, failures, resume, sharing, export."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_sweep_support import BASE, fake_run

from tcpfair.orchestrate import run_sweep
from tcpfair.result import RunResult
from tcpfair.spec import Scenario
from tcpfair.store import Store
from tcpfair.sweep import sweep_from_dict


def make(name: str = "s", repeats: int = 2, **axes: list[str]) -> object:
    ax = axes or {"flows.1.rtt": ["25ms", "50ms"], "flows.1.cca": ["newreno", "cubic"]}
    return sweep_from_dict(
        {
            "name": name,
            "base": BASE,
            "repeats": repeats,
            "seed": 3,
            "axes": {k.replace("__", "."): v for k, v in ax.items()},
        }
    )


def counting(calls: list[str]):  # noqa: ANN201
    def run(sc: Scenario, backend: str) -> RunResult:
        calls.append(sc.hash())
        return fake_run(sc, backend)

    return run


def test_catalog_rows_match_the_run_directories(tmp_path: Path) -> None:
    sw = make()
    rep = run_sweep(sw, run_fn=fake_run, output=tmp_path, jobs=1)
    assert (rep.total, rep.finished, rep.failed) == (8, 8, 0)
    s = Store(tmp_path)
    assert s.check() == []
    t = s.table(sweep="s")
    assert len(t) == 8 and set(t["status"]) == {"done"}
    assert list(t.columns[:9]) == [
        "sweep",
        "backend",
        "run_hash",
        "point",
        "repeat",
        "seed",
        "status",
        "flows.1.rtt",
        "flows.1.cca",
    ]
    for _, row in t.iterrows():
        res = RunResult.load(tmp_path / row["run_dir"])
        m = res.metrics()
        assert row["jfi"] == pytest.approx(m["jfi"], rel=1e-12)
        assert row["utilization"] == pytest.approx(m["utilization"], rel=1e-12)
        g = res.group_throughputs()
        assert row["thr_g0_bps"] == pytest.approx(g[0], rel=1e-12)
        assert row["ratio"] == pytest.approx(g[1] / g[0], rel=1e-12)
        assert res.meta["seed"] == row["seed"] and res.meta["scenario_hash"] == row["run_hash"]
        assert row["flows.1.rtt"] in ("25ms", "50ms")


def test_rerun_skips_finished_runs_and_never_rewrites_them(tmp_path: Path) -> None:
    sw = make()
    run_sweep(sw, run_fn=fake_run, output=tmp_path, jobs=1)
    before = Store(tmp_path).table()
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").rglob("*.parquet")}
    calls: list[str] = []
    rep = run_sweep(sw, run_fn=counting(calls), output=tmp_path, jobs=1)
    assert calls == [] and rep.already_done == 8 and rep.ran == 0
    pd.testing.assert_frame_equal(Store(tmp_path).table(), before)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").rglob("*.parquet")} == mtimes


def test_failures_are_recorded_and_retried_only_on_request(tmp_path: Path) -> None:
    sw = make(
        flows__1__rtt=["25ms", "50ms"], flows__1__cca=["newreno", "bbr"]
    )  # the fake backend fails bbr
    rep = run_sweep(sw, run_fn=fake_run, output=tmp_path, jobs=1)
    assert (rep.finished, rep.failed) == (4, 4)
    t = Store(tmp_path).table()
    failed = t[t["status"] == "failed"]
    assert set(failed["flows.1.cca"]) == {"bbr"}
    assert failed["error"].str.contains("RuntimeError: fake backend: bbr is not available").all()
    assert failed["jfi"].isna().all() and (failed["attempts"] == 1).all()
    calls: list[str] = []
    rep = run_sweep(sw, run_fn=counting(calls), output=tmp_path, jobs=1)
    assert calls == [] and rep.skipped_failed == 4
    rep = run_sweep(sw, run_fn=counting(calls), output=tmp_path, jobs=1, retry_failed=True)
    assert sorted(calls) == sorted(failed["run_hash"]) and rep.failed == 4
    assert (Store(tmp_path).table(status="failed")["attempts"] == 2).all()

    # a retry that succeeds turns the row into a done run
    def fixed(sc: Scenario, backend: str) -> RunResult:
        return fake_run(sc.model_copy(update={"flows": [sc.flows[0], sc.flows[0]]}), backend)

    rep = run_sweep(sw, run_fn=fixed, output=tmp_path, jobs=1, retry_failed=True)
    assert rep.finished == 4
    t = Store(tmp_path).table()
    assert set(t["status"]) == {"done"} and Store(tmp_path).check() == []


def test_run_directory_without_catalog_row_is_adopted(tmp_path: Path) -> None:
    """The process died after the run directory's rename and before the catalog commit."""
    sw = make(repeats=1)
    runs = sw.runs()
    s = Store(tmp_path)
    orphan = runs[2]
    fake_run(orphan.scenario, "sim").save(s.run_dir("sim", orphan.run_hash))
    (
        s.run_dir("sim", orphan.run_hash).parent / f".{orphan.run_hash}.tmpjunk"
    ).mkdir()  # a torn temp dir
    calls: list[str] = []
    rep = run_sweep(sw, run_fn=counting(calls), output=tmp_path, jobs=1)
    assert rep.adopted == 1 and orphan.run_hash not in calls and len(calls) == 3
    assert not (s.run_dir("sim", orphan.run_hash).parent / f".{orphan.run_hash}.tmpjunk").exists()
    assert Store(tmp_path).check() == []
    row = Store(tmp_path).table().set_index("run_hash").loc[orphan.run_hash]
    assert row["status"] == "done" and np.isfinite(row["jfi"])


def test_sweeps_share_a_store_and_common_runs(tmp_path: Path) -> None:
    a = make("a", flows__1__rtt=["25ms", "50ms"])
    b = make("b", flows__1__rtt=["50ms", "75ms"])
    run_sweep(a, run_fn=fake_run, output=tmp_path, jobs=1)
    calls: list[str] = []
    rep = run_sweep(b, run_fn=counting(calls), output=tmp_path, jobs=1)
    assert rep.already_done == 2 and len(calls) == 2  # the 50 ms runs were measured by sweep a
    s = Store(tmp_path)
    assert s.sweeps() == [("a", "sim"), ("b", "sim")]
    ta, tb = s.table(sweep="a"), s.table(sweep="b")
    assert len(ta) == len(tb) == 4
    shared = ta[ta["flows.1.rtt"] == "50ms"]["run_hash"]
    assert set(shared) == set(tb[tb["flows.1.rtt"] == "50ms"]["run_hash"])
    with sqlite3.connect(tmp_path / "catalog.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 6
    assert s.check() == []


def test_changed_sweep_keeps_old_runs_but_lists_only_current_ones(tmp_path: Path) -> None:
    run_sweep(make("s", flows__1__rtt=["25ms", "50ms"]), run_fn=fake_run, output=tmp_path, jobs=1)
    run_sweep(make("s", flows__1__rtt=["25ms"]), run_fn=fake_run, output=tmp_path, jobs=1)
    s = Store(tmp_path)
    assert set(s.table(sweep="s")["flows.1.rtt"]) == {"25ms"}
    with sqlite3.connect(tmp_path / "catalog.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM runs WHERE status='done'").fetchone()[0] == 4


def test_pending_runs_show_in_the_table(tmp_path: Path) -> None:
    sw = make(repeats=1)
    s = Store(tmp_path)
    from tcpfair.store import Member

    s.register_sweep(
        "s",
        "sim",
        sw.to_dict(),
        sw.spec_hash(),
        list(sw.axes),
        [Member(r.run_hash, r.point, r.repeat, r.point_hash, r.axes) for r in sw.runs()],
    )
    t = s.table()
    assert len(t) == 4 and set(t["status"]) == {"pending"}


def test_results_export_csv_and_parquet(tmp_path: Path) -> None:
    from tcpfair.cli import main

    run_sweep(make(), run_fn=fake_run, output=tmp_path / "r", jobs=1)
    for name in ("out.csv", "out.parquet"):
        with pytest.raises(SystemExit) as e:
            main(["results", str(tmp_path / "r"), "--export", str(tmp_path / name)])
        assert e.value.code == 0
    csv = pd.read_csv(tmp_path / "out.csv")
    pq = pd.read_parquet(tmp_path / "out.parquet")
    assert len(csv) == len(pq) == 8
    assert np.allclose(csv["jfi"], pq["jfi"]) and list(csv["flows.1.rtt"]) == list(
        pq["flows.1.rtt"]
    )
    with pytest.raises(SystemExit) as e:
        main(["results", str(tmp_path / "r"), "--export", str(tmp_path / "agg.csv"), "--aggregate"])
    agg = pd.read_csv(tmp_path / "agg.csv")
    assert set(agg.columns) >= {
        "flows.1.rtt",
        "flows.1.cca",
        "metric",
        "n",
        "mean",
        "std",
        "ci",
        "lo",
        "hi",
    }
    assert (agg["n"] == 2).all()


def test_results_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tcpfair.cli import main

    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as e:
        main(["results", str(tmp_path / "empty")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a results directory" in err
    run_sweep(make(), run_fn=fake_run, output=tmp_path / "r", jobs=1)
    with pytest.raises(SystemExit) as e:
        main(["results", str(tmp_path / "r"), "--export", str(tmp_path / "x.xlsx")])
    assert e.value.code == 2 and "must end in .csv or .parquet" in capsys.readouterr().err


def test_summary_json_is_the_source_of_the_catalog_metrics(tmp_path: Path) -> None:
    run_sweep(make(repeats=1), run_fn=fake_run, output=tmp_path, jobs=1)
    t = Store(tmp_path).table()
    for _, row in t.iterrows():
        summary = json.loads((tmp_path / row["run_dir"] / "summary.json").read_text())
        assert row["jfi"] == summary["metrics"]["jfi"]
        assert row["min_max_ratio"] == summary["metrics"]["min_max_ratio"]


def test_backend_accuracy_checks_are_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def flagged(sc: Scenario, backend: str) -> RunResult:
        res = fake_run(sc, backend)
        if sc.flows[1].rtt == 50_000_000:
            res.meta["valid"] = False
            res.meta["checks"] = [
                {
                    "name": "lateness.p99",
                    "ok": False,
                    "value": 3.1,
                    "limit": 1.0,
                    "message": "late",
                },
                {"name": "goodput", "ok": True, "value": 1, "limit": 1, "message": ""},
            ]
        return res

    run_sweep(make(), run_fn=flagged, output=tmp_path, jobs=1)
    t = Store(tmp_path).table()
    assert set(t[t["flows.1.rtt"] == "50ms"]["valid"]) == {0} and set(
        t[t["flows.1.rtt"] == "25ms"]["valid"]
    ) == {1}
    assert set(t[t["flows.1.rtt"] == "50ms"]["failed_checks"]) == {"lateness.p99"}
    assert t[t["flows.1.rtt"] == "25ms"]["failed_checks"].isna().all()
    from tcpfair.cli import main

    with pytest.raises(SystemExit):
        main(["results", str(tmp_path)])
    assert (
        "note: 4 finished runs failed the backend's accuracy checks (column valid = 0): lateness.p99 (4×)"
        in capsys.readouterr().err
    )


def test_results_check_reports_inconsistencies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    from tcpfair.cli import main

    run_sweep(make(repeats=1), run_fn=fake_run, output=tmp_path, jobs=1)
    with pytest.raises(SystemExit) as e:
        main(["results", str(tmp_path), "--check"])
    assert e.value.code == 0 and "consistent" in capsys.readouterr().out
    t = Store(tmp_path).table()
    (tmp_path / t["run_dir"][0] / "samples.parquet").unlink()
    shutil.copytree(tmp_path / t["run_dir"][1], tmp_path / "runs" / "sim" / "0123456789abcdef")
    with pytest.raises(SystemExit) as e:
        main(["results", str(tmp_path), "--check"])
    out = capsys.readouterr().out
    assert e.value.code == 1 and "2 problems" in out
    assert f"done run sim/{t['run_hash'][0]}: has no samples.parquet" in out
    assert "run directory sim/0123456789abcdef has no done row" in out


def _done_rows(root: Path) -> dict[str, tuple[object, ...]]:
    with sqlite3.connect(root / "catalog.sqlite") as c:
        return {r[1]: tuple(r) for r in c.execute("SELECT * FROM runs WHERE status='done'")}


def test_damaged_done_runs_are_reported_set_aside_and_run_again(tmp_path: Path) -> None:
    """Issue 8: ``--check`` called a store consistent when a summary.json was garbage, and a
    resume counted such runs as done. Three runs damaged three ways are reported, moved
    aside (kept) and measured again; the intact ones are neither re-run nor rewritten."""
    sw = make()
    run_sweep(sw, run_fn=fake_run, output=tmp_path, jobs=1)
    s = Store(tmp_path)
    hashes = sorted(s.table()["run_hash"])
    bad = {hashes[0]: "summary.json", hashes[1]: "flows.parquet", hashes[2]: "samples.parquet"}
    (s.run_dir("sim", hashes[0]) / "summary.json").write_bytes(b"\x00garbage{")
    (s.run_dir("sim", hashes[1]) / "flows.parquet").unlink()
    samples = s.run_dir("sim", hashes[2]) / "samples.parquet"
    samples.write_bytes(samples.read_bytes()[:100])  # truncated
    problems = s.check()
    assert len(problems) == 3 and all(any(h in p for p in problems) for h in bad)
    assert [f for h, f in bad.items() for p in problems if h in p and f in p] == list(bad.values())
    good_before = {h: r for h, r in _done_rows(tmp_path).items() if h not in bad}
    mtimes = {p: p.stat().st_mtime_ns for h in good_before for p in s.run_dir("sim", h).iterdir()}

    calls: list[str] = []
    rep = run_sweep(sw, run_fn=counting(calls), output=tmp_path, jobs=1)
    assert sorted(calls) == sorted(bad) and set(rep.damaged) == set(bad)
    assert rep.already_done == 5 and rep.finished == 3
    assert Store(tmp_path).check() == []
    after = _done_rows(tmp_path)
    assert {h: after[h] for h in good_before} == good_before
    assert {p: p.stat().st_mtime_ns for p in mtimes} == mtimes
    kept = sorted(d.name for d in (tmp_path / "runs" / "sim").iterdir() if d.name.startswith("."))
    assert [k.split("-")[1] for k in kept] == sorted(bad)  # .damaged-<hash>-…, not deleted
    assert (tmp_path / "runs" / "sim" / kept[0] / "summary.json").read_bytes() == b"\x00garbage{"
    # a second resume finds nothing to do
    calls.clear()
    rep = run_sweep(sw, run_fn=counting(calls), output=tmp_path, jobs=1)
    assert calls == [] and rep.damaged == {} and rep.already_done == 8


def test_clear_stale_removes_only_what_no_live_process_holds(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tcpfair.kernel.procs import proc_start_time

    s = Store(tmp_path)
    h, other = "0123456789abcdef", "fedcba9876543210"
    mine = s.stage_path("sim", h)
    mine.mkdir()
    (mine.parent / f".{mine.name}.tmp1").mkdir()  # RunResult.save's temp dir inside a stage
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()  # a finished process: its PID and start time name no live process
    dead = mine.parent / f".stage-{h}-p{p.pid}s{proc_start_time(os.getpid())}-aaaaaaaaaaaa"
    recycled = mine.parent / f".stage-{h}-p{os.getpid()}s1-bbbbbbbbbbbb"  # PID reused
    legacy = mine.parent / f".stage-{h}-cccccccccccc"  # no lease: an older tcpfair
    torn = mine.parent / f".{h}.x1y2"
    damaged = mine.parent / f".damaged-{h}-20260101T000000-abcdef"
    unrelated = mine.parent / f".stage-{other}-p1s1-dddddddddddd"
    for d in (dead, recycled, legacy, torn, damaged, unrelated):
        d.mkdir()
    assert s.clear_stale("sim", [h]) == 4
    left = {d.name for d in mine.parent.iterdir()}
    assert left == {mine.name, f".{mine.name}.tmp1", damaged.name, unrelated.name}


def test_read_only_commands_neither_write_nor_wait_for_a_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 8: ``results`` opened a write transaction, waited 60 s behind a sweep writing
    the store, then crashed. It reads in SQLite's read-only mode: at once, and the
    catalog's bytes stay as they were."""
    import time

    from tcpfair.cli import main

    run_sweep(make(), run_fn=fake_run, output=tmp_path, jobs=1)
    writer = Store(tmp_path)
    catalog = (tmp_path / "catalog.sqlite").read_bytes()
    commands = (["results", str(tmp_path)], ["compare", str(tmp_path), str(tmp_path)])
    for args in commands:  # once with nobody writing: their imports are not what is timed
        with pytest.raises(SystemExit) as e:
            main(args)
        assert e.value.code == 0, capsys.readouterr().err
    capsys.readouterr()
    with writer.transaction():  # another process is writing
        t0 = time.monotonic()
        for args in commands:
            with pytest.raises(SystemExit) as e:
                main(args)
            assert e.value.code == 0, capsys.readouterr().err
        took = time.monotonic() - t0
        # waiting for the writer would take the read-only connection's 10-s busy timeout
        # (and then fail) or, as before issue 8, 60 s; both commands take well under 1 s
        assert took < 5
    assert "s (sim): 8 runs — 8 done" in capsys.readouterr().out
    assert (tmp_path / "catalog.sqlite").read_bytes() == catalog
    with pytest.raises(Exception, match="readonly"):  # noqa: PT011
        Store(tmp_path, readonly=True).register_sweep("x", "sim", {}, "h", [], [])


def test_a_full_disk_is_one_line_and_loses_nothing(tmp_path: Path) -> None:
    """SQLite's ``max_page_count`` makes the catalog full, as a full disk does: the sweep
    stops with a StoreError saying so, and every run finished before is intact."""
    from tcpfair.store import StoreError

    sw = make(repeats=1)
    run_sweep(sw, run_fn=fake_run, output=tmp_path, jobs=1)
    before = _done_rows(tmp_path)
    bigger = make(repeats=30)
    orig = Store._open

    def full(self: Store, db: Path, new: bool) -> None:
        orig(self, db, new)
        n = self._db.execute("PRAGMA page_count").fetchone()[0]
        self._db.execute(f"PRAGMA max_page_count={n}")

    mp = pytest.MonkeyPatch()
    mp.setattr(Store, "_open", full)
    try:
        with pytest.raises(StoreError, match="the disk is full") as e:
            run_sweep(bigger, run_fn=fake_run, output=tmp_path, jobs=1)
    finally:
        mp.undo()
    assert str(e.value).count("\n") == 0 and "catalog.sqlite" in str(e.value)
    after = _done_rows(tmp_path)
    assert {h: after[h] for h in before} == before
    assert Store(tmp_path).check() == []


def test_a_lost_catalog_is_rebuilt_by_running_the_sweep_again(tmp_path: Path) -> None:
    """What the damaged-catalog message tells users to do works: with the catalog moved
    away, the same sweep adopts every complete run directory and runs nothing."""
    sw = make()
    run_sweep(sw, run_fn=fake_run, output=tmp_path, jobs=1)
    before = Store(tmp_path).table()
    (tmp_path / "catalog.sqlite").rename(tmp_path / "catalog.damaged")
    calls: list[str] = []
    rep = run_sweep(sw, run_fn=counting(calls), output=tmp_path, jobs=1)
    assert calls == [] and rep.adopted == 8
    after = Store(tmp_path).table()
    pd.testing.assert_frame_equal(
        after[["run_hash", "jfi", "utilization"]], before[["run_hash", "jfi", "utilization"]]
    )


@pytest.mark.parametrize("jobs", [1, 2])
def test_no_space_for_a_run_directory_stops_the_sweep_and_loses_nothing(
    tmp_path: Path, jobs: int
) -> None:
    """ENOSPC while a run directory is written (in the sweep process or a pool worker):
    the sweep stops with one line instead of recording every further run as failed; no run
    is marked failed, and the same command later runs the rest."""
    import errno

    from tcpfair.store import StoreError

    sw = make(repeats=3)
    writes = tmp_path / "writes"

    def filling(self: RunResult, directory: object) -> Path:  # the disk fills after 5 runs
        # take a place first (an O_APPEND write of one byte is atomic), then look: with two
        # pool workers, reading the count before writing let both take the fifth place
        with open(writes, "a") as f:
            f.write("x")
        if len(writes.read_text()) > 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        return save(self, directory)

    save = RunResult.save
    mp = pytest.MonkeyPatch()
    mp.setattr(RunResult, "save", filling)
    try:
        with pytest.raises(StoreError, match="the disk is full") as e:
            run_sweep(sw, run_fn=fake_run, output=tmp_path / "s", jobs=jobs)
    finally:
        mp.undo()
    assert "No space left on device" in str(e.value) and "\n" not in str(e.value)
    with sqlite3.connect(tmp_path / "s" / "catalog.sqlite") as c:
        statuses = [r[0] for r in c.execute("SELECT status FROM runs")]
    assert 1 <= len(statuses) <= 5 and set(statuses) == {"done"}
    assert Store(tmp_path / "s").check() == []
    rep = run_sweep(sw, run_fn=fake_run, output=tmp_path / "s", jobs=1)  # space again
    assert (
        rep.failed == 0 and rep.already_done == len(statuses) and rep.finished == 12 - len(statuses)
    )


def test_a_reader_who_cannot_write_the_folder_still_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store a sweep made with sudo, read by a user: SQLite cannot create the -shm file a
    WAL reader needs and refuses ("attempt to write a readonly database"; seen as user
    nobody). With no WAL pending the catalog file is complete and is read as immutable.
    (The tests run as root, whom permissions do not stop, so SQLite's refusal is imitated.)"""
    import tcpfair.store as store_mod
    from tcpfair.cli import main

    run_sweep(make(), run_fn=fake_run, output=tmp_path, jobs=1).store.close()
    real = sqlite3.connect
    opened: list[str] = []

    def no_shm(target: str, *args: object, **kwargs: object) -> sqlite3.Connection:
        opened.append(str(target))
        if "immutable=1" not in str(target):
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real(target, *args, **kwargs)

    monkeypatch.setattr(store_mod.sqlite3, "connect", no_shm)
    with pytest.raises(SystemExit) as e:
        main(["results", str(tmp_path)])
    assert e.value.code == 0 and "s (sim): 8 runs — 8 done" in capsys.readouterr().out
    assert [u.split("?")[1] for u in opened] == ["mode=ro", "mode=ro&immutable=1"]
    # a WAL with pages not yet in the catalog file: immutable would miss them, so no
    (tmp_path / "catalog.sqlite-wal").write_bytes(b"x" * 100)
    with pytest.raises(SystemExit) as e:
        main(["results", str(tmp_path)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "readonly" in err and "read it as the store's owner" in err


def test_runs_stored_before_windowed_retransmits_do_not_mix_with_new_ones(tmp_path: Path) -> None:
    """A run stored when ``retransmits`` counted the whole run (its metrics have no
    ``retransmits_run``) shows that count as ``retransmits_run`` and NaN as the windowed
    count; runs stored now carry both, the windowed one never larger."""
    run_sweep(make(), run_fn=fake_run, output=tmp_path, jobs=1)
    new = Store(tmp_path).table()
    assert new["retransmits"].notna().all()
    assert (new["retransmits"] <= new["retransmits_run"]).all()
    old_hash = new["run_hash"].iloc[0]
    db = sqlite3.connect(tmp_path / "catalog.sqlite")
    (text,) = db.execute("SELECT metrics FROM runs WHERE run_hash=?", (old_hash,)).fetchone()
    met = json.loads(text)
    del met["retransmits_run"]
    db.execute(
        "UPDATE runs SET metrics=?, retransmits=? WHERE run_hash=?",
        (json.dumps(met), 1234, old_hash),
    )
    db.commit()
    db.close()
    t = Store(tmp_path).table().set_index("run_hash")
    assert np.isnan(t.loc[old_hash, "retransmits"]) and t.loc[old_hash, "retransmits_run"] == 1234
    others = t.drop(index=old_hash)
    assert others["retransmits"].notna().all()


def test_host_and_grade_columns_come_from_the_runs_meta(tmp_path: Path) -> None:
    # kernel runs record the machine and their grade; the export shows both per run, and a
    # store of runs without them (the simulator) has neither column
    def on_host(sc: Scenario, backend: str) -> RunResult:
        r = fake_run(sc, backend)
        name = "a" if sc.flows[1].cca == "newreno" else "b"
        r.meta["host"] = {"name": name, "kernel": "6.1", "cpu_model": "x", "cores": 4}
        r.meta["grade"] = "warning" if name == "b" else "ok"
        return r

    run_sweep(make(repeats=1), run_fn=on_host, output=tmp_path / "k", jobs=1)
    t = Store(tmp_path / "k").table(sweep="s")
    cca = t["flows.1.cca"]
    assert list(t["host"]) == ["a" if c == "newreno" else "b" for c in cca]
    assert list(t["grade"]) == ["ok" if c == "newreno" else "warning" for c in cca]
    run_sweep(make(repeats=1), run_fn=fake_run, output=tmp_path / "s", jobs=1)
    assert not {"host", "grade"} & set(Store(tmp_path / "s").table(sweep="s").columns)
