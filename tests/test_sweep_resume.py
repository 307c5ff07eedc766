"""A sweep killed with SIGKILL mid-way and started again: finished runs are untouched, every
run ends up done exactly once, the catalog is consistent."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tcpfair.store import Store

TESTS = Path(__file__).resolve().parent

DRIVER = """
import sys
sys.path.insert(0, {tests!r})
from test_sweep_support import BASE, fake_run
from tcpfair.orchestrate import run_sweep
from tcpfair.sweep import sweep_from_dict

if __name__ == "__main__":
    sw = sweep_from_dict({{"name": "kill", "base": BASE, "repeats": 3, "seed": 5,
                          "axes": {{"flows.1.rtt": ["25ms", "50ms", "75ms", "100ms"],
                                   "bottleneck.buffer": ["0.5bdp", "1bdp"]}}}})
    run_sweep(sw, run_fn=fake_run, output=sys.argv[1], jobs=int(sys.argv[2]))
"""
N_RUNS = 4 * 2 * 3


def _done_rows(db: Path) -> dict[str, tuple[object, ...]]:
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(db, timeout=30) as c:
            rows = c.execute("SELECT * FROM runs WHERE status='done'").fetchall()
    except sqlite3.OperationalError:  # schema not created yet
        return {}
    return {r[1]: tuple(r) for r in rows}


def _files(root: Path, hashes: set[str]) -> dict[str, tuple[str, int]]:
    out = {}
    for h in hashes:
        for f in sorted((root / "runs" / "sim" / h).iterdir()):
            out[f"{h}/{f.name}"] = (
                hashlib.sha256(f.read_bytes()).hexdigest(),
                f.stat().st_mtime_ns,
            )
    return out


def _start(script: Path, store: Path, jobs: int, log: Path, sleep: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, TCPFAIR_FAKE_SLEEP=sleep, TCPFAIR_FAKE_LOG=str(log))
    return subprocess.Popen(
        [sys.executable, str(script), str(store), str(jobs)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


@pytest.mark.parametrize("jobs", [1, 2])
def test_sigkill_mid_sweep_then_resume(tmp_path: Path, jobs: int) -> None:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER.format(tests=str(TESTS)))
    store = tmp_path / "store"
    db = store / "catalog.sqlite"

    p = _start(script, store, jobs, tmp_path / "log1", "0.15")
    deadline = time.monotonic() + 120
    while len(_done_rows(db)) < 6:
        assert p.poll() is None, p.stderr.read().decode() if p.stderr else ""
        assert time.monotonic() < deadline, "the sweep made no progress"
        time.sleep(0.02)
    os.kill(p.pid, signal.SIGKILL)  # the sweep process, mid-run (kill -9)
    p.wait()
    # its pool workers die with it (PR_SET_PDEATHSIG): nothing of the session is left
    gone = time.monotonic() + 10
    while True:
        try:
            os.killpg(p.pid, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < gone, "pool workers outlived the killed sweep"
        time.sleep(0.05)
    assert p.stderr is not None
    p.stderr.close()

    before = _done_rows(db)
    assert 6 <= len(before) < N_RUNS
    files_before = _files(store, set(before))
    # directories renamed into place whose commit the kill prevented: adopted, not re-run
    orphans = {
        d.name for d in (store / "runs" / "sim").iterdir() if not d.name.startswith(".")
    } - set(before)

    p2 = _start(script, store, jobs, tmp_path / "log2", "0")
    _, err = p2.communicate(timeout=120)
    assert p2.returncode == 0, err.decode()

    after = _done_rows(db)
    assert len(after) == N_RUNS
    for h, row in before.items():
        assert after[h] == row  # the catalog row of a finished run is unchanged
    assert _files(store, set(before)) == files_before  # and so are its files (bytes and mtime)
    rerun = (tmp_path / "log2").read_text().split()
    assert not set(rerun) & set(before)  # no finished run ran again
    assert len(rerun) == len(set(rerun))  # nothing ran twice
    assert not set(rerun) & orphans
    assert set(rerun) | set(before) | orphans == set(
        after
    )  # finished before + adopted + re-run = all
    s = Store(store)
    assert s.check() == []
    t = s.table(sweep="kill")
    assert len(t) == N_RUNS and set(t["status"]) == {"done"} and t["run_hash"].is_unique
    leftovers = [d.name for d in (store / "runs" / "sim").iterdir() if d.name.startswith(".")]
    assert leftovers == []


CONCURRENT = """
import sys
sys.path.insert(0, {tests!r})
from test_sweep_support import BASE, fake_run
from tcpfair.orchestrate import run_sweep
from tcpfair.sweep import sweep_from_dict

if __name__ == "__main__":
    rtts = sys.argv[3].split(",")
    sw = sweep_from_dict({{"name": sys.argv[2], "base": BASE, "repeats": 3, "seed": 5,
                          "axes": {{"flows.1.rtt": rtts, "bottleneck.buffer": ["0.5bdp", "1bdp"]}}}})
    run_sweep(sw, run_fn=fake_run, output=sys.argv[1], jobs=2)
"""


def test_two_sweeps_write_one_store_at_the_same_time(tmp_path: Path) -> None:
    """Overlapping sweeps in two processes: shared runs are stored once, and the files of
    every done run are the ones its catalog row describes (results differ per execution)."""
    import json

    script = tmp_path / "driver.py"
    script.write_text(CONCURRENT.format(tests=str(TESTS)))
    store = tmp_path / "store"
    env = dict(os.environ, TCPFAIR_FAKE_SLEEP="0.05", TCPFAIR_FAKE_NOISY="1")
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(store), name, rtts],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for name, rtts in (("a", "25ms,50ms,75ms"), ("b", "50ms,75ms,100ms"))
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    s = Store(store)
    assert s.check() == []
    ta, tb = s.table(sweep="a"), s.table(sweep="b")
    assert len(ta) == len(tb) == 18 and set(ta["status"]) == set(tb["status"]) == {"done"}
    with sqlite3.connect(store / "catalog.sqlite") as c:
        rows = c.execute("SELECT run_hash, jfi, utilization FROM runs").fetchall()
    assert len(rows) == 24  # 4 RTTs × 2 buffers × 3 repeats, the 12 shared ones once
    for h, jfi, util in rows:
        summary = json.loads((store / "runs" / "sim" / h / "summary.json").read_text())
        assert (summary["metrics"]["jfi"], summary["metrics"]["utilization"]) == (jfi, util)
    assert [d.name for d in (store / "runs" / "sim").iterdir() if d.name.startswith(".")] == []


RACE = """
import json, os, sys, time
sys.path.insert(0, {tests!r})
from test_sweep_support import BASE, fake_run
import tcpfair.result
from tcpfair.orchestrate import run_sweep
from tcpfair.sweep import sweep_from_dict

_save = tcpfair.result.RunResult.save
HOLD = sys.argv[3] if len(sys.argv) > 3 else None


def slow_save(self, directory):  # a slow disk: the staged run waits before its commit
    out = _save(self, directory)
    time.sleep(float(sys.argv[2]))
    deadline = time.monotonic() + 120  # (a guard against a test that never lets go)
    while HOLD and os.path.exists(HOLD) and time.monotonic() < deadline:
        time.sleep(0.02)  # ... and, while the test holds it, keeps the run staged
    return out


tcpfair.result.RunResult.save = slow_save

if __name__ == "__main__":
    sw = sweep_from_dict({{"name": "race", "base": BASE, "repeats": 5, "seed": 9,
                          "axes": {{"flows.1.rtt": ["25ms", "50ms", "75ms", "100ms"],
                                   "bottleneck.buffer": ["0.5bdp", "1bdp"]}}}})
    rep = run_sweep(sw, run_fn=fake_run, output=sys.argv[1], jobs=2)
    print(json.dumps({{"failed": rep.failed, "errors": sorted(set(rep.errors.values()))}}))
"""


def test_a_starting_sweep_leaves_a_running_sweeps_staging_alone(tmp_path: Path) -> None:
    """Issue 8: every sweep start removed the staging folders of all runs of the sweep,
    including those a concurrent sweep was writing (its runs then failed with "storing the
    result failed: FileNotFoundError"). Sweep A stages runs slowly (a slow disk); sweeps B1…B3
    of the same sweep start one after another while A is mid-way. No run of any of them
    fails, and the store ends consistent."""
    script = tmp_path / "driver.py"
    script.write_text(RACE.format(tests=str(TESTS)))
    store = tmp_path / "store"
    hold = tmp_path / "hold"
    env = dict(os.environ, TCPFAIR_FAKE_SLEEP="0.01")

    def start(delay: str, *hold_file: Path) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, str(script), str(store), delay, *map(str, hold_file)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    # A's runs take 0.1 s each to store; once A has committed two, the test holds A's
    # workers with their next runs staged until B1…B3 have finished. (A timed overlap —
    # 0.6 s per run, ~12 s — was not enough: B1…B3, three Python start-ups with pandas,
    # took longer than A under load 6 on 2 cores, and the test failed "sweep A finished
    # before the others started".)
    a = start("0.1", hold)
    deadline = time.monotonic() + 120
    while len(_done_rows(store / "catalog.sqlite")) < 2:  # A is committing runs
        assert a.poll() is None, a.communicate()[1]
        assert time.monotonic() < deadline, "sweep A made no progress"
        time.sleep(0.02)
    hold.touch()
    outputs = []
    try:
        for _ in range(3):  # each start of a sweep ran clear_stale over A's staged runs
            b = start("0")
            out, err = b.communicate(timeout=120)
            assert b.returncode == 0, err
            outputs.append(out)
        assert a.poll() is None, "sweep A finished before the others started: no race tested"
    finally:
        hold.unlink()
    out, err = a.communicate(timeout=120)
    assert a.returncode == 0, err
    for report in [out, *outputs]:
        assert json.loads(report) == {"failed": 0, "errors": []}
    s = Store(store)
    assert s.check() == []
    t = s.table(sweep="race")
    assert len(t) == 40 and set(t["status"]) == {"done"}
    with sqlite3.connect(store / "catalog.sqlite") as c:
        assert c.execute("SELECT COUNT(*) FROM runs WHERE attempts > 1").fetchone() == (0,)
    assert [d.name for d in (store / "runs" / "sim").iterdir() if d.name.startswith(".")] == []
