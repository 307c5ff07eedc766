"""Start-up (issue 14): ``tcpfair --help``, ``--version`` and error paths do not import the
heavy libraries (numpy included: reading a scenario needs it only for drawn values);
``import tcpfair`` is light and its public names load on first use.

Each case runs a fresh interpreter (``sys.modules`` of the test process is full already) and
records, at exit, which heavy top-level packages were imported. Not a timing test: timings
are in docs/performance.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("numpy", "pandas", "pyarrow", "matplotlib", "dask")

DRIVER = f"""
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["TCPFAIR_TEST_MODULES"], "w").write(json.dumps(
    sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r})))))
"""

CLI_BODY = """
from tcpfair.cli import main
sys.argv[0] = "tcpfair"
main(sys.argv[1:])
"""


def _run(body: str, args: list[str], tmp_path: Path) -> tuple[int, str, str, list[str]]:
    record = tmp_path / "modules.json"
    env = {**os.environ, "TCPFAIR_TEST_MODULES": str(record)}
    p = subprocess.run(
        [sys.executable, "-c", DRIVER + body, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    return p.returncode, p.stdout, p.stderr, json.loads(record.read_text())


def _bad_scenario(tmp_path: Path) -> str:
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\n[link]\nrate = "fast"\n')
    return str(path)


CASES = {
    "help": (lambda t: ["--help"], 0, "Commands"),
    "version": (lambda t: ["--version"], 0, "tcpfair 0."),
    "run-help": (lambda t: ["run", "--help"], 0, "SCENARIO"),
    "run-missing-file": (lambda t: ["run", str(t / "nope.toml")], 2, "nope.toml"),
    "run-bad-value": (lambda t: ["run", _bad_scenario(t)], 2, "rate"),
    "run-bad-backend": (lambda t: ["run", "x.toml", "--backend", "ns3"], 2, "--backend"),
    "unknown-command": (lambda t: ["frobnicate"], 2, "frobnicate"),
    "sweep-missing-file": (lambda t: ["sweep", str(t / "nope.toml")], 2, "nope.toml"),
    "sweep-bad-file": (lambda t: ["sweep", _bad_scenario(t)], 2, "bad.toml"),
    "sweep-bad-format": (
        lambda t: ["sweep", "sweeps/cubic-fig8", "--format", "gif", "--dry-run"],
        2,
        "gif",
    ),
    "results-missing-store": (lambda t: ["results", str(t / "nostore")], 2, "nostore"),
    "report-help": (lambda t: ["report", "--help"], 0, "RUN_DIR|STORE"),
    "report-missing-path": (lambda t: ["report", str(t / "nothing")], 2, "not a folder"),
    "fairness-bad-window": (lambda t: ["fairness", "a.json", "--from", "5", "--to", "1"], 2, "5"),
    "fairness-bad-plot": (lambda t: ["fairness", "a.json", "--plot", "x.gif"], 2, "x.gif"),
    "fairness-bad-capacity": (lambda t: ["fairness", "a.json", "--capacity", "fast"], 2, "fast"),
    "fairness-bad-panels": (
        lambda t: ["fairness", "a.json", "--plot", "x.png", "--panels", "nope"],
        2,
        "nope",
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_cli_paths_do_not_import_heavy_modules(case: str, tmp_path: Path) -> None:
    make_args, code, needle, *_ = CASES[case]
    rc, out, err, heavy = _run(CLI_BODY, make_args(tmp_path), tmp_path)
    assert rc == code, f"exit {rc}, stderr: {err}"
    assert needle in out + err
    assert "Traceback" not in err
    assert heavy == [], f"tcpfair {case} imported {heavy}"


def test_run_no_plot_imports_neither_pandas_nor_matplotlib(tmp_path: Path) -> None:
    """A simulator run keeps its tables as numpy columns and writes Parquet with pyarrow
    alone: it loads numpy and pyarrow, not pandas, matplotlib or dask. Its files read back with pandas."""
    args = ["run", "lab10-reno-vs-reno", "--set", "duration=1s", "--set", "measure.from=0s"]
    rc, out, err, heavy = _run(CLI_BODY, [*args, "--no-plot", "-o", "r"], tmp_path)
    assert rc == 0, err
    assert heavy == ["numpy", "pyarrow"]
    assert "JFI" in out
    assert not (tmp_path / "r" / "throughput.png").exists()
    from tcpfair.result import RunResult

    res = RunResult.load(tmp_path / "r")
    assert list(res.flows["label"]) == ["h1", "h3"]
    assert len(res.samples) == 2  # two flows, one 1 s interval


def test_run_json_imports_no_pandas(tmp_path: Path) -> None:
    args = ["run", "lab10-reno-vs-reno", "--set", "duration=1s", "--no-plot", "--format", "json"]
    rc, out, err, heavy = _run(CLI_BODY, [*args, "--set", "measure.from=0s", "-o", "r"], tmp_path)
    assert rc == 0, err
    assert heavy == ["numpy", "pyarrow"]
    assert json.loads(out)["metrics"]["n_flows"] == 2


def test_import_tcpfair_is_light_and_names_load_on_use(tmp_path: Path) -> None:
    rc, out, err, heavy = _run("import tcpfair; print(tcpfair.__version__)", [], tmp_path)
    assert rc == 0, err
    assert heavy == []
    body = "import tcpfair; print(tcpfair.RunResult.__module__, tcpfair.load_scenario.__module__)"
    rc, out, err, heavy = _run(body, [], tmp_path)
    assert rc == 0, err
    assert out.split() == ["tcpfair.result", "tcpfair.spec"]
    assert heavy == ["numpy"]  # pandas loads when a caller reads a table as a DataFrame


def test_unknown_attribute_is_an_attribute_error() -> None:
    import tcpfair

    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        tcpfair.nonsense  # noqa: B018


THREADS_AFTER_NUMPY = """
import os
def threads() -> int:
    return len(os.listdir("/proc/self/task"))
{setup}
before = threads()
import numpy
print(threads() - before)
"""


def _extra_threads_from_numpy(setup: str) -> int:
    # OpenBLAS also obeys OMP_NUM_THREADS and GOTO_NUM_THREADS, and dask.distributed sets
    # OMP_NUM_THREADS=1 in this process's environment once a test has started a cluster
    blas = {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "GOTO_NUM_THREADS"}
    env = {k: v for k, v in os.environ.items() if k not in blas}
    code = THREADS_AFTER_NUMPY.format(setup=setup)
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert p.returncode == 0, p.stderr
    return int(p.stdout)


def test_the_cli_starts_no_blas_worker_threads() -> None:
    """numpy's OpenBLAS starts a worker per extra core at import, which spins (~0.1 s of
    CPU per command, docs/performance.md); the CLI asks for one thread before numpy loads."""
    setup = "from tcpfair.cli import limit_blas_threads; limit_blas_threads(os.environ)"
    assert _extra_threads_from_numpy(setup) == 0
    if (os.cpu_count() or 1) > 1:  # the control: without it, numpy does start workers
        assert _extra_threads_from_numpy("") > 0


def test_the_cli_leaves_a_users_blas_setting_alone(tmp_path: Path) -> None:
    body = (
        "import atexit; atexit.register(lambda: print(os.environ['OPENBLAS_NUM_THREADS']))\n"
        + CLI_BODY
    )
    for given, seen in ((None, "1"), ("3", "3")):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if given is not None:
            env["OPENBLAS_NUM_THREADS"] = given
        p = subprocess.run(
            [sys.executable, "-c", "import os, sys\n" + body, "--version"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert p.stdout.split()[-1] == seen, p.stdout + p.stderr


def test_a_sweep_file_with_plots_is_checked_without_matplotlib(tmp_path: Path) -> None:
    """The [[plots]] checks (a cdf's metric among them) need no plotting library: a dry run,
    and a refused plot, come back without loading matplotlib (~1 s)."""
    base = Path(__file__).parents[1] / "scenarios" / "sweeps" / "ns2-testbed-sim.toml"
    rc, out, err, heavy = _run(CLI_BODY, ["sweep", str(base), "--dry-run"], tmp_path)
    assert rc == 0, err
    assert "320 points × 5 repeats = 1,600 runs on sim" in out  # _text.count: n:,
    assert "matplotlib" not in heavy
    bad = tmp_path / "bad.toml"
    bad.write_text(
        base.read_text() + '\n[[plots]]\nkind = "cdf"\nmetric = "jfi"\nby = "flows.1.rtt"\n'
    )
    rc, out, err, heavy = _run(CLI_BODY, ["sweep", str(bad), "--dry-run"], tmp_path)
    assert rc == 2, err
    assert "plots.3.metric" in err and "throughput, fct" in err, err
    assert "matplotlib" not in heavy
