"""The package as users meet it (issue 14): one version everywhere, built-in scenarios by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from build_backend_module import build_backend

import tcpfair

CompletedProcess = subprocess.CompletedProcess[str]

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


# --- the wheel, installed where users install it ---------------------------------------------
# `./dev test` builds the wheel (`./dev wheel`) and sets TCPFAIR_WHEEL; without it these skip.

WHEEL = os.environ.get("TCPFAIR_WHEEL")
needs_wheel = pytest.mark.skipif(
    not WHEEL, reason="set TCPFAIR_WHEEL to a wheel built by ./dev wheel (./dev test does)"
)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv outside the checkout with the wheel installed by pip. Its dependencies
    are this environment's (a .pth line: no download, no second copy); `pip check` proves
    they satisfy the wheel's pinned requirements."""
    assert WHEEL
    env_dir = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", env_dir], check=True)
    python = env_dir / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "-q", "--no-deps", "--no-index", WHEEL], check=True)
    ours = [p for p in sys.path if Path(p).name == "site-packages"]  # (+ any a .pth adds)
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    Path(site, "_tcpfair_test_deps.pth").write_text("".join(f"{p}\n" for p in ours))
    check = subprocess.run([*pip, "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    return env_dir


def _installed(venv: Path, cwd: Path, *args: str, prog: str = "tcpfair") -> CompletedProcess:
    """A program of the venv (its `tcpfair` script), run outside the checkout with nothing
    of the checkout's on its path (no PYTHONPATH, no TCPFAIR_LINKEM)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TCPFAIR_LINKEM")}
    cmd = [str(venv / "bin" / prog), *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


@needs_wheel
def test_the_wheel_carries_everything_both_backends_need() -> None:
    assert WHEEL
    with zipfile.ZipFile(WHEEL) as z:
        info = {i.filename: i for i in z.infolist()}
        tags = z.read(f"tcpfair-{_pyproject_version()}.dist-info/WHEEL")
    assert "Tag: cp311-abi3-manylinux_" in tags.decode()
    shipped = {f"tcpfair/scenarios/{f.relative_to(SHIPPED).as_posix()}" for f in SHIPPED.rglob("*")}
    assert {n for n in shipped if n.endswith(".toml")} <= set(info)
    for name in ("tcpfair/_core.pyi", "tcpfair/py.typed", "tcpfair/CHANGELOG.md"):
        assert name in info, name
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in info)
    binaries = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["tcpfair"]["binaries"]
    for b in ["tcpfair-linkem", *binaries]:
        mode = info[f"tcpfair/_bin/{b}"].external_attr >> 16
        assert mode & 0o111 == 0o111, f"{b} is not executable in the wheel ({mode:o})"


@needs_wheel
def test_an_installed_wheel_runs_a_builtin_scenario_by_name(venv: Path, tmp_path: Path) -> None:
    assert _installed(venv, tmp_path, "--version").stdout == f"tcpfair {_pyproject_version()}\n"
    assert _installed(venv, tmp_path, "scenarios").stdout == _cli(["scenarios"], tmp_path).stdout
    args = ["run", "lab10-reno-vs-bbr", "--set", "duration=2s", "--set", "measure.from=1s"]
    installed = _installed(venv, tmp_path, *args, "--no-plot", "--format", "json", "-o", "w")
    assert installed.returncode == 0, installed.stderr
    checkout, _ = _run_json("lab10-reno-vs-bbr", tmp_path, "c")
    assert json.loads(installed.stdout)["metrics"] == checkout["metrics"]
    used = _installed(
        venv, tmp_path, "-c", "import tcpfair; print(tcpfair.__file__)", prog="python"
    )
    assert used.stdout.startswith(str(venv)), used.stdout + used.stderr


@needs_wheel
@pytest.mark.kernel
@pytest.mark.skipif(os.geteuid() != 0, reason="the kernel backend needs root")
def test_an_installed_wheel_runs_on_the_kernel_with_its_own_emulator(
    venv: Path, tmp_path: Path
) -> None:
    """As root: a short kernel run finds tcpfair-linkem inside the installed package."""
    args = ["run", "lab10-reno-vs-bbr", "--backend", "kernel", "--set", "duration=3s"]
    args += ["--set", "measure.from=1s", "--set", "bottleneck.rate=20Mbit", "--accept-invalid"]
    p = _installed(venv, tmp_path, *args, "--no-plot", "-o", "k")
    assert p.returncode == 0, p.stderr
    summary = json.loads((tmp_path / "k" / "summary.json").read_text())
    linkem = summary["meta"]["kernel"]["tools"]
    assert linkem["tcpfair-linkem"]["source"] == "package"
    assert linkem["tcpfair-linkem"]["path"].startswith(str(venv))
    assert linkem["tcpfair-linkem"]["path"].endswith("/tcpfair/_bin/tcpfair-linkem")


def test_the_sdist_holds_what_a_wheel_is_built_from(tmp_path: Path) -> None:
    """The sdist (build_backend/tcpfair_build.py: maturin's, plus the crates of the wheel's
    binaries; 0.5 s) packs the native module's and the binaries' crates as one workspace,
    the Python package with its scenarios as real files, the build backend, LICENSE and the
    lock file. (Building a wheel from it is a cold cargo build — not run here; measured in
    docs/packaging.md.)"""
    maturin = Path(sys.executable).with_name("maturin")
    if not maturin.exists():
        pytest.skip("maturin is not installed (pip install -e '.[dev]')")
    env = {**os.environ, "PATH": f"{maturin.parent}:{os.environ['PATH']}"}
    backend = [sys.executable, ROOT / "build_backend" / "tcpfair_build.py", "sdist", tmp_path]
    subprocess.run(backend, cwd=ROOT, env=env, check=True, capture_output=True)
    (sdist,) = tmp_path.glob("tcpfair-*.tar.gz")
    top = f"tcpfair-{_pyproject_version()}"
    with tarfile.open(sdist) as t:
        names = {n.removeprefix(top + "/") for n in t.getnames()}
        manifest = t.extractfile(f"{top}/Cargo.toml")
        assert manifest is not None
        cargo = tomllib.loads(manifest.read().decode())
    binaries = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["tcpfair"]["binaries"]
    assert {"tcpfair-linkem", "tcpfair-traffic"} <= set(binaries)
    crates = ["crates/sim", "crates/py", "crates/linkem", "crates/traffic"]
    tracked = [*crates, "python/tcpfair", "build_backend"]
    for folder in tracked:
        for f in (ROOT / folder).rglob("*"):
            rel = f.relative_to(ROOT).as_posix()
            if f.is_file() and "__pycache__" not in rel and not rel.endswith(".so"):
                assert rel in names, rel
    for b in binaries:  # built from source, not shipped
        assert f"python/tcpfair/_bin/{b}" not in names
    assert set(cargo["workspace"]["members"]) == set(crates)
    assert {"LICENSE", "Cargo.lock", "Cargo.toml", "pyproject.toml", "README.md"} <= names
    assert "python/tcpfair/scenarios/lab10-reno-vs-bbr.toml" in names


def test_the_build_backend_names_what_is_wrong_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("maturin")
    backend = build_backend()
    assert (
        backend.binaries()
        == tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["tcpfair"]["binaries"]
    )
    assert backend._crate_dir("tcpfair-linkem") == "crates/linkem"
    with pytest.raises(SystemExit, match=r"^\[tool.tcpfair\] binaries: no crate under crates/ "
                       r"is named 'tcpfair-nope'$"):  # fmt: skip
        backend._crate_dir("tcpfair-nope")
    with pytest.raises(
        SystemExit, match=r"^usage: tcpfair_build.py stage \| unstage \| sdist DIR \| pgo FILE$"
    ):
        backend.main(["build"])
    assert backend._with_members('[workspace]\nmembers = ["crates/sim", "crates/py"]\n', [
        "crates/linkem"
    ]) == '[workspace]\nmembers = ["crates/sim", "crates/py", "crates/linkem"]\n'  # fmt: skip
