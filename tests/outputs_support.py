"""Shared set-up for the tests of where tcpfair writes (``test_outputs.py`` and the corpus
``test_bad_inputs_outputs.py``): a small scenario, a sweep on it, and a results store."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner, Result

from tcpfair.cli import cli

#: Two flows for 5 simulated seconds at 10 Mbit/s: a run takes a fraction of a second.
SCENARIO = """
name = "small"
duration = "5s"
seed = {seed}

[bottleneck]
rate = "10Mbit"

[[flows]]
cca = "reno"
rtt = "20ms"

[[flows]]
cca = "cubic"
rtt = "20ms"
"""

SWEEP = """
name = "{name}"
base = "s.toml"
repeats = 2

[axes]
"flows.1.rtt" = ["20ms", "40ms"]
"bottleneck.buffer" = ["0.5bdp", "1bdp"]
"""

RUN_FILES = {"summary.json", "flows.parquet", "samples.parquet", "link.parquet"}


def write_scenario(d: Path, seed: int = 1, name: str = "s.toml") -> Path:
    p = d / name
    p.write_text(SCENARIO.format(seed=seed))
    return p


def write_sweep(d: Path, name: str = "tiny") -> Path:
    write_scenario(d)
    p = d / "sw.toml"
    p.write_text(SWEEP.format(name=name))
    return p


@contextmanager
def inside(d: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(d)
    try:
        yield
    finally:
        os.chdir(old)


def tcpfair(args: list[str], cwd: Path) -> Result:
    """Run ``tcpfair ARGS`` in-process in ``cwd`` and return click's result."""
    with inside(cwd):
        r = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return r


def ok(args: list[str], cwd: Path) -> Result:
    r = tcpfair(args, cwd)
    assert r.exit_code == 0, f"tcpfair {' '.join(map(str, args))}: {r.exit_code}\n{r.stderr}"
    return r


def make_store(d: Path) -> Path:
    """A results store ``d/store`` with the sweep ``tiny`` done on the simulator."""
    sw = write_sweep(d)
    ok(["sweep", sw, "-j", "1", "-o", d / "store", "--no-progress", "--no-figures"], d)
    return d / "store"
