"""The package as users meet it (issue 14): one version everywhere, built-in scenarios by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import tcpfair

ROOT = Path(__file__).resolve().parents[1]
TCPFAIR = Path(sys.executable).with_name("tcpfair")


def _pyproject_version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def test_version_is_pyprojects_everywhere() -> None:
    want = _pyproject_version()
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["version"]
    assert cargo == want, "Cargo.toml's workspace version must match pyproject.toml's"
    assert tcpfair.__version__ == want
    out = subprocess.run([TCPFAIR, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout == f"tcpfair {want}\n"


def test_results_store_the_version() -> None:
    want = _pyproject_version()
    sim = tcpfair.run(
        ROOT / "scenarios" / "lab10-reno-vs-reno.toml", overrides=["duration=2s", "measure.from=1s"]
    )
    assert sim.meta["versions"]["tcpfair"] == want
    fixture = sorted((ROOT / "tests" / "fixtures" / "iperf3").glob("*.json"))[0]
    assert tcpfair.load_iperf3(fixture).meta["versions"]["tcpfair"] == want


# --- built-in scenarios by name ------------------------------------------------------------

SHIPPED = ROOT / "scenarios"


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TCPFAIR, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def _first_comment(path: Path) -> str:
    """What the list shows for a file: its first line if that is a comment (else nothing)."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    return first.lstrip("# ").strip() if first.startswith("#") else ""


def test_scenarios_lists_every_shipped_file_one_line_each(tmp_path: Path) -> None:
    p = _cli(["scenarios"], tmp_path)
    assert p.returncode == 0, p.stderr
    every = {f.relative_to(SHIPPED).with_suffix("").as_posix(): f for f in SHIPPED.rglob("*.toml")}
    want = {name: f for name, f in every.items() if not name.startswith("repro/")}
    rows = dict((line.split(maxsplit=1) + [""])[:2] for line in p.stdout.splitlines())
    assert set(rows) == set(want)
    assert "lab10-reno-vs-bbr" in rows and "sweeps/cubic-fig8" in rows
    for name, summary in rows.items():
        first = _first_comment(want[name])
        assert summary == first or (summary.endswith("…") and first.startswith(summary[:-1]))


def test_scenarios_show_prints_the_file_as_shipped(tmp_path: Path) -> None:
    p = _cli(["scenarios", "show", "validation/mathis"], tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == (SHIPPED / "validation" / "mathis.toml").read_text(encoding="utf-8")


def _run_json(arg: str, cwd: Path, out: str) -> tuple[dict[str, object], str]:
    p = _cli(
        [
            "run", arg, "--set", "duration=2s", "--set", "measure.from=1s",
            "--no-plot", "--format", "json", "-o", out,
        ],
        cwd,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), p.stderr


def _scenario_name(run_dir: Path) -> str:
    return str(json.loads((run_dir / "summary.json").read_text())["scenario"]["name"])


def test_run_by_name_is_the_shipped_file(tmp_path: Path) -> None:
    by_name, _ = _run_json("lab10-reno-vs-reno", tmp_path, "a")
    by_path, _ = _run_json(str(SHIPPED / "lab10-reno-vs-reno.toml"), tmp_path, "b")
    assert by_name["metrics"] == by_path["metrics"]
    assert _scenario_name(tmp_path / "a") == "lab10-reno-vs-reno"


def test_an_existing_path_wins_over_a_name_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "lab10-reno-vs-reno").write_text(
        (SHIPPED / "lab11-loss.toml").read_text(encoding="utf-8")
    )
    _, err = _run_json("lab10-reno-vs-reno", tmp_path, "c")
    assert _scenario_name(tmp_path / "c") == "lab11-loss"
    assert "note: using the file lab10-reno-vs-reno, not the built-in scenario" in err


def test_sweep_by_name_plans_the_shipped_sweep(tmp_path: Path) -> None:
    by_name = _cli(["sweep", "sweeps/cubic-fig9", "--dry-run"], tmp_path)
    by_path = _cli(["sweep", str(SHIPPED / "sweeps" / "cubic-fig9.toml"), "--dry-run"], tmp_path)
    assert by_name.returncode == 0, by_name.stderr
    assert by_name.stdout == by_path.stdout and "cubic-fig9" in by_name.stdout


def test_package_data_is_the_checkouts_scenarios_folder() -> None:
    from tcpfair import shipped

    assert shipped.root().resolve() == SHIPPED.resolve()


@pytest.mark.skipif(
    not os.environ.get("TCPFAIR_WHEEL"),
    reason="set TCPFAIR_WHEEL to a built wheel (maturin build --release) to test it installed",
)
def test_an_installed_wheel_lists_and_runs_the_same(tmp_path: Path) -> None:
    """The wheel installed outside the checkout (its dependencies from this environment)
    lists the same built-in scenarios and runs one by name to the same numbers."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", target,
         os.environ["TCPFAIR_WHEEL"]],
        check=True,
    )  # fmt: skip
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "tcpfair.cli", *args]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=work, env=env, timeout=120)

    where = cli("scenarios", "show", "lab10-reno-vs-reno")
    assert where.stdout == (SHIPPED / "lab10-reno-vs-reno.toml").read_text(encoding="utf-8")
    assert cli("scenarios").stdout == _cli(["scenarios"], tmp_path).stdout
    args = ["run", "lab10-reno-vs-reno", "--set", "duration=2s", "--set", "measure.from=1s"]
    installed = cli(*args, "--no-plot", "--format", "json", "-o", "w")
    assert installed.returncode == 0, installed.stderr
    checkout, _ = _run_json("lab10-reno-vs-reno", work, "c")
    assert json.loads(installed.stdout)["metrics"] == checkout["metrics"]
    which = [sys.executable, "-c", "import tcpfair; print(tcpfair.__file__)"]
    used = subprocess.run(which, capture_output=True, text=True, cwd=work, env=env, check=True)
    assert used.stdout.startswith(str(target))
