"""Where tcpfair writes and what it may replace (issue 8, items 1 and 3; docs/sweeps.md
"Safety"): ``-o`` never deletes what tcpfair did not create, names never become paths
outside the results folder, single files are written whole or not at all."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from badinput import fails_cleanly, fails_cleanly_subprocess, snapshot
from outputs_support import RUN_FILES, make_store, ok, write_scenario, write_sweep

import tcpfair.backends.sim
from tcpfair import outputs
from tcpfair.backends import BackendError
from tcpfair.result import RunResult
from tcpfair.spec import load_scenario
from tcpfair.sweep import load_sweep

ROOT = Path(__file__).resolve().parent.parent


def seed_of(run_dir: Path) -> int:
    return int(json.loads((run_dir / "summary.json").read_text())["scenario"]["seed"])


def hidden(d: Path) -> list[str]:
    """Staging or trash folders tcpfair left beside its outputs."""
    return sorted(p.name for p in d.iterdir() if p.name.startswith("."))


# --------------------------------------------------------------------------- run -o
def test_run_onto_a_folder_of_other_files_touches_nothing(tmp_path: Path) -> None:
    s = write_scenario(tmp_path)
    v = tmp_path / "v"
    (v / "sub").mkdir(parents=True)
    (v / "f").write_text("x")
    (v / "sub" / "g").write_text("y")
    line = fails_cleanly(["run", str(s), "-o", str(v)], unchanged=[v], cwd=tmp_path)
    assert "-o" in line and str(v) in line and "not a tcpfair run folder" in line
    # --force does not change that: it only ever replaces a run folder
    fails_cleanly(["run", str(s), "-o", str(v), "--force"], unchanged=[v], cwd=tmp_path)
    assert (v / "f").read_text() == "x" and (v / "sub" / "g").read_text() == "y"
    assert hidden(tmp_path) == []


def test_the_issues_reproduction_through_the_real_command(tmp_path: Path) -> None:
    """``mkdir v; echo x > v/f; tcpfair run s.toml -o v`` (issue 8: exit 0 and v/f gone)."""
    s = write_scenario(tmp_path)
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "f").write_text("x\n")
    fails_cleanly_subprocess(
        ["run", "s.toml", "-o", "v"], mentions=["-o v"], unchanged=[tmp_path], cwd=tmp_path
    )
    assert s.exists() and (tmp_path / "v" / "f").read_text() == "x\n"


def test_run_into_an_empty_folder_uses_it(tmp_path: Path) -> None:
    s = write_scenario(tmp_path)
    (tmp_path / "empty").mkdir()
    ok(["run", s, "-o", "empty"], tmp_path)
    assert {p.name for p in (tmp_path / "empty").iterdir()} == RUN_FILES | {
        "throughput.png",
        "run.png",
        "run.csv",
    }
    assert outputs.is_run_folder(tmp_path / "empty")
    assert hidden(tmp_path) == []


def test_an_empty_folder_is_filled_in_place(tmp_path: Path) -> None:
    """The user's empty folder stays (mode, inode; it may be the current folder)."""
    s = write_scenario(tmp_path)
    here = tmp_path / "here"
    here.mkdir(mode=0o750)
    os.chmod(here, 0o750)
    inode = here.stat().st_ino
    ok(["run", s, "-o", ".", "--no-plot"], here)
    st = here.stat()
    assert st.st_ino == inode and st.st_mode & 0o777 == 0o750
    assert {p.name for p in here.iterdir()} == RUN_FILES
    assert hidden(tmp_path) == [] and hidden(here) == []
    # the current folder is a run folder now; replacing it from inside is refused
    line = fails_cleanly(["run", str(s), "-o", ".", "--force"], unchanged=[here], cwd=here)
    assert "current folder" in line


def test_run_folder_is_replaced_only_with_force(tmp_path: Path) -> None:
    ok(["run", write_scenario(tmp_path, seed=1), "-o", "r", "--no-plot"], tmp_path)
    r = tmp_path / "r"
    assert seed_of(r) == 1
    s2 = write_scenario(tmp_path, seed=2, name="s2.toml")
    line = fails_cleanly(["run", str(s2), "-o", "r"], unchanged=[r], cwd=tmp_path)
    assert "earlier tcpfair run" in line and "--force" in line
    ok(["run", s2, "-o", "r", "--force"], tmp_path)
    assert seed_of(r) == 2 and outputs.is_run_folder(r)
    assert hidden(tmp_path) == []  # no staging folder, no trash left


def test_old_run_survives_when_the_new_run_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(["run", write_scenario(tmp_path, seed=1), "-o", "r"], tmp_path)
    r = tmp_path / "r"

    def refuse(self: object, scenario: object, progress: bool = False) -> RunResult:
        raise BackendError("the simulator refused this scenario")

    monkeypatch.setattr(tcpfair.backends.sim.SimBackend, "run", refuse)
    s2 = write_scenario(tmp_path, seed=2, name="s2.toml")
    line = fails_cleanly(["run", str(s2), "-o", "r", "--force"], unchanged=[r], cwd=tmp_path)
    assert "refused" in line
    assert seed_of(r) == 1 and hidden(tmp_path) == []


def test_an_unwritable_place_is_refused_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def must_not_run(self: object, scenario: object, progress: bool = False) -> RunResult:
        raise AssertionError("the run started although its result could not be saved")

    monkeypatch.setattr(tcpfair.backends.sim.SimBackend, "run", must_not_run)
    s = write_scenario(tmp_path)
    fails_cleanly(
        ["run", str(s), "-o", "/proc/nope/x"],
        mentions=["-o /proc/nope/x", "cannot create a folder in /proc/nope"],
        unchanged=[tmp_path],
        cwd=tmp_path,
    )


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_run_onto_a_symlink_follows_nothing(tmp_path: Path, force: bool) -> None:
    s = write_scenario(tmp_path)
    ok(["run", s, "-o", "real", "--no-plot"], tmp_path)  # a run folder behind the link
    (tmp_path / "link").symlink_to("real")
    line = fails_cleanly(
        ["run", str(s), "-o", "link", *(["--force"] if force else [])],
        unchanged=[tmp_path / "link", tmp_path / "real"],
        cwd=tmp_path,
    )
    assert "symbolic link" in line


def test_default_folder_rerun_keeps_the_earlier_result(tmp_path: Path) -> None:
    s = write_scenario(tmp_path)
    ok(["run", s, "--no-plot"], tmp_path)
    (first,) = (tmp_path / "results").iterdir()
    assert first.name.startswith("small-") and first.name.endswith("-sim")
    before = snapshot(first)
    r = ok(["run", s, "--no-plot"], tmp_path)
    second = first.with_name(first.name + "-2")
    assert snapshot(first) == before
    assert outputs.is_run_folder(second)
    assert f"writing results/{second.name}" in r.stderr
    assert f"run directory: results/{second.name}" in r.stdout
    ok(["run", s, "--no-plot"], tmp_path)
    assert outputs.is_run_folder(first.with_name(first.name + "-3"))
    # --force replaces the base folder instead of adding one
    (first / "summary.json").write_text(
        json.dumps({**json.loads((first / "summary.json").read_text()), "marker": 1})
    )
    ok(["run", s, "--no-plot", "--force"], tmp_path)
    assert "marker" not in json.loads((first / "summary.json").read_text())
    assert len(list((tmp_path / "results").iterdir())) == 3


def test_result_save_refuses_to_replace_without_force(tmp_path: Path) -> None:
    """The library rule is the command's: RunResult.save(dir) onto a run needs force."""
    sc = load_scenario(write_scenario(tmp_path))
    result = tcpfair.backends.sim.SimBackend().run(sc)
    d = result.save(tmp_path / "r")
    with pytest.raises(outputs.OutputError, match="--force"):
        result.save(d)
    assert result.save(d, force=True) == d
    assert RunResult.load(d).meta["seed"] == result.meta["seed"]


# --------------------------------------------------------------------------- outputs.py
def test_run_folder_is_recognised_strictly(tmp_path: Path) -> None:
    d = tmp_path / "r"
    d.mkdir()
    (d / "summary.json").write_text('{"format_version": 1}')
    assert outputs.is_run_folder(d)
    (d / "notes.txt").write_text("mine")  # a file a run folder does not hold
    assert not outputs.is_run_folder(d)
    (d / "notes.txt").unlink()
    (d / "flows.parquet").mkdir()  # a run file's name, but a folder
    assert not outputs.is_run_folder(d)
    (d / "flows.parquet").rmdir()
    (d / "summary.json").write_text('{"meta": {}}')  # no format_version
    assert not outputs.is_run_folder(d)
    (d / "summary.json").write_text("garbage")
    assert not outputs.is_run_folder(d)


def test_swap_rechecks_and_keeps_the_new_result(tmp_path: Path) -> None:
    """A target that stopped being a run folder between the check and the swap is left as
    it is, and the new result stays in its staging folder, named in the error."""
    d = tmp_path / "r"
    d.mkdir()
    (d / "summary.json").write_text('{"format_version": 1}')
    target = outputs.run_target(d, force=True)
    assert target.replace
    (d / "mine.txt").write_text("planted after the check")
    staging = outputs.stage_beside(d)
    (staging / "summary.json").write_text('{"format_version": 1}')
    before = snapshot(d)
    with pytest.raises(outputs.OutputError, match="kept in") as e:
        outputs.publish_run(staging, target)
    assert str(staging) in str(e.value)
    assert snapshot(d) == before and (staging / "summary.json").exists()


# --------------------------------------------------------------------------- names
SCENARIO_NAMES = ["../../x", "..", ".", ".hidden", "a/b", "/abs", "a\x00b", "a\nb", "", "x" * 101]


@pytest.mark.parametrize("name", SCENARIO_NAMES, ids=repr)
def test_scenario_name_cannot_leave_results(tmp_path: Path, name: str) -> None:
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    s = write_scenario(work)
    line = fails_cleanly(
        ["run", str(s), "--set", f"name={json.dumps(name)}"], unchanged=[tmp_path], cwd=work
    )
    # long values are shown cut to 80 characters (spec._shown), with their length
    shown = repr(name) if len(repr(name)) <= 80 else repr(name)[:68]
    assert "name:" in line and shown in line and "letters, digits" in line


def test_scenario_file_name_traversal(tmp_path: Path) -> None:
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    s = write_scenario(work)
    s.write_text(s.read_text().replace('name = "small"', 'name = "../../x"'))
    fails_cleanly(["run", str(s)], mentions=["name", "'../../x'"], unchanged=[tmp_path], cwd=work)
    assert not (tmp_path / "x-").exists() and list(tmp_path.rglob("x-*")) == []


@pytest.mark.parametrize("name", ["..", ".", "../x", ".hidden", "a\tb"], ids=repr)
def test_sweep_name_cannot_leave_results(tmp_path: Path, name: str) -> None:
    sw = write_sweep(tmp_path, name=name.replace("\t", "\\t"))
    fails_cleanly(
        ["sweep", str(sw), "--no-progress"],
        mentions=["name", repr(name)],
        unchanged=[tmp_path],
        cwd=tmp_path,
    )


def test_every_shipped_name_passes() -> None:
    scenarios = sorted((ROOT / "scenarios").glob("*.toml")) + sorted(
        (ROOT / "scenarios" / "validation").glob("*.toml")
    )
    assert len(scenarios) >= 10
    for p in scenarios:
        assert outputs.name_problem(load_scenario(p).name) is None, p
    sweeps = sorted((ROOT / "scenarios" / "sweeps").glob("*.toml"))
    assert sweeps
    for p in sweeps:
        assert outputs.name_problem(load_sweep(p).name) is None, p


# --------------------------------------------------------------------------- sweep -o
def test_sweep_store_rules(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert outputs.is_store(store)
    # an existing store is resumed
    r = ok(["sweep", tmp_path / "sw.toml", "-j", "1", "-o", store, "--no-progress"], tmp_path)
    assert "8 were done before" in r.stdout
    # a folder of other files: refused, nothing created inside it
    other = tmp_path / "other"
    other.mkdir()
    (other / "f").write_text("x")
    line = fails_cleanly(
        ["sweep", str(tmp_path / "sw.toml"), "-o", str(other), "--no-progress"],
        unchanged=[other],
        cwd=tmp_path,
    )
    assert "not a results store" in line
    # an empty folder becomes a new store
    (tmp_path / "empty").mkdir()
    ok(["sweep", tmp_path / "sw.toml", "-j", "1", "-o", "empty", "--no-progress"], tmp_path)
    assert outputs.is_store(tmp_path / "empty")


# --------------------------------------------------------------------------- single files
def test_export_onto_an_existing_file(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    out = tmp_path / "runs.csv"
    out.write_text("mine\n")
    line = fails_cleanly(
        ["results", str(store), "--export", str(out)], unchanged=[out, store / "runs"], cwd=tmp_path
    )
    assert "exists" in line and "--force" in line
    ok(["results", store, "--export", out, "--force"], tmp_path)
    rows = out.read_text().splitlines()
    assert len(rows) == 1 + 8 and "run_hash" in rows[0].split(",")
    assert hidden(tmp_path) == []
    assert (os.stat(out).st_mode & 0o777) == 0o666 & ~_umask()


def _umask() -> int:
    um = os.umask(0)
    os.umask(um)
    return um


def test_export_to_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    for target in ("/proc/nope/x.csv", str(tmp_path / "missing" / "x.csv")):
        line = fails_cleanly(
            ["results", str(store), "--export", target], unchanged=[store / "runs"], cwd=tmp_path
        )
        assert target in line and "does not exist" in line
    assert not (tmp_path / "missing").exists()


def test_fairness_plot_is_replaced_only_with_force(tmp_path: Path) -> None:
    ex = ROOT / "examples" / "reno-vs-bbr"
    reno, bbr = ex / "reno.json", ex / "bbr.json"
    fig = tmp_path / "fig.png"
    ok(["fairness", reno, bbr, "--plot", fig], tmp_path)
    first = fig.read_bytes()
    assert first.startswith(b"\x89PNG")
    fails_cleanly(
        ["fairness", str(reno), str(bbr), "--plot", str(fig), "--from", "5"],
        mentions=["--plot", "--force"],
        unchanged=[fig],
        cwd=tmp_path,
    )
    ok(["fairness", reno, bbr, "--plot", fig, "--from", "5", "--force"], tmp_path)
    assert fig.read_bytes() != first and hidden(tmp_path) == []


def test_compare_figure_folder(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    mine = tmp_path / "figs"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    fails_cleanly(
        ["compare", str(store), str(store), "-o", str(mine)],
        mentions=["-o", str(mine), "--force"],
        unchanged=[mine, store / "runs"],
        cwd=tmp_path,
    )
    r = ok(["compare", store, store, "-o", mine, "--force", "--format", "png"], tmp_path)
    assert "figures:" in r.stdout
    names = sorted(p.name for p in mine.iterdir())
    assert "notes.txt" in names and any(n.endswith(".png") for n in names)
    assert (mine / "notes.txt").read_text() == "mine" and hidden(tmp_path) == []


def test_python_api_keeps_the_store_rule(tmp_path: Path) -> None:
    """tcpfair.orchestrate.run_sweep (and so tcpfair.orchestrate.run) refuses a folder of other
    files as the command does, before creating anything in it."""
    from test_sweep_support import fake_run

    from tcpfair.orchestrate import run_sweep

    other = tmp_path / "other"
    other.mkdir()
    (other / "f").write_text("x")
    before = snapshot(other)
    with pytest.raises(outputs.OutputError, match="not a results store"):
        run_sweep(load_sweep(write_sweep(tmp_path)), output=other, run_fn=fake_run)
    assert snapshot(other) == before
