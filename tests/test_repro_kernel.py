"""``tcpfair repro --backend kernel`` for real: the smallest study slice (Lab 10's -P 8 sweep,
scaled to 50 Mbit/s, 2 × 10 s) in network namespaces. Needs root, ``ip netns``, iperf3 and a
built tcpfair-linkem; skips with the reason otherwise. Nothing of ours may be left behind."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from kernel_support import KERNEL_MARKS
from test_kernel import _ours  # namespaces of this process or of dead ones, not a live sweep's

from tcpfair.cli import cli
from tcpfair.kernel.procs import list_namespaces

pytestmark = KERNEL_MARKS


@pytest.fixture(autouse=True)
def no_namespaces_left() -> Iterator[None]:
    before = set(list_namespaces())
    yield
    assert _ours(set(list_namespaces()) - before) == []


def test_lab10_parallel_streams_on_the_kernel_backend(tmp_path: Path) -> None:
    out = tmp_path / "store"
    args = ["repro", "lab10", "--backend", "kernel", "--sweep", "p8", "-o", str(out)]
    r = CliRunner().invoke(cli, [*args, "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "kernel-backend version" in r.output and "1/200" in r.output  # scaled, said so
    text = (out / "repro-lab10-kernel.csv").read_text()
    rows = {row["id"]: row for row in csv.DictReader(text.splitlines())}
    p8 = rows["parallel-8-jfi"]
    assert p8["n"] == "2"
    jfi = float(p8["tcpfair"].split(" ± ")[0])
    # eight streams of one host through one 50 Mbit/s queue: a JFI of 8 flows lies in
    # [1/8, 1]; far below 1 would mean streams starving, which Linux's CUBIC does not do here
    assert 0.5 < jfi <= 1.0
    assert p8["verdict"] in ("reproduced", "trend", "differs")
    # the other sweeps were left out and say so; the worked example needs no run
    assert rows["reno-reno-jfi"]["verdict"] == "not run"
    assert "left out by --sweep" in rows["reno-reno-jfi"]["explanation"]
    assert rows["example-jfi"]["verdict"] == "reproduced"
