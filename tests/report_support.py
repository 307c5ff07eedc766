"""Inputs for the ``tcpfair report`` tests: a short run, a small sweep store (two numeric
axes, two repeats, so it has surfaces, CI lines and box plots) and a second store of the
same grid with another seed to compare with. Made through the CLI in a few seconds."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tcpfair.cli import cli

SCENARIO = """
name = "report-run"
duration = "8s"
[bottleneck]
rate = "10Mbit"
buffer = "1bdp"
[[flows]]
cca = "reno"
rtt = "20ms"
[[flows]]
cca = "cubic"
rtt = "40ms"
[measure]
from = "2s"
"""

SWEEP = """
name = "report-sweep"
repeats = 2
seed = {seed}

[base]
name = "report-sweep"
duration = "6s"
[base.bottleneck]
rate = "10Mbit"
[[base.flows]]
cca = "reno"
rtt = "20ms"
[[base.flows]]
cca = "cubic"
rtt = "20ms"

[axes]
"flows.1.rtt" = ["20ms", "80ms"]
"bottleneck.buffer" = ["0.5bdp", "2bdp"]
"""


def invoke(args: list[str]) -> str:
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return r.output


def make_run(d: Path) -> Path:
    (d / "run.toml").write_text(SCENARIO)
    invoke(["run", str(d / "run.toml"), "-o", str(d / "run"), "--no-plot"])
    return d / "run"


def make_store(d: Path, name: str = "store", seed: int = 1) -> Path:
    f = d / f"{name}.toml"
    f.write_text(SWEEP.format(seed=seed))
    invoke(["sweep", str(f), "-o", str(d / name), "-j", "1", "--no-progress", "--no-figures"])
    return d / name


def make_repro(d: Path) -> Path:
    invoke(["repro", "vegas", "--quick", "-o", str(d / "repro"), "--no-progress", "-j", "1"])
    return d / "repro"
