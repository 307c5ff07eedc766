"""The package as users meet it (issue 14): one version everywhere, built-in scenarios by name."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

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
