"""``tcpfair sweep`` / ``tcpfair results`` end to end (fake backend in-process), and the
real simulator once its engine is built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_sweep_support import fake_run

import tcpfair.executors
from tcpfair.cli import main
from tcpfair.store import Store

SWEEP = """
name = "cli"
repeats = 2
seed = 4
zip = [["flows.0.rtt", "flows.1.rtt"]]

[base]
duration = "20s"
[base.bottleneck]
rate = "100Mbit"
[[base.flows]]
cca = "reno"
rtt = "50ms"
[[base.flows]]
cca = "reno"
rtt = "50ms"
start = "2s"
[base.measure]
from = "5s"

[axes]
"flows.1.cca" = {ccas}
"flows.0.rtt" = ["25ms", "50ms", "100ms"]
"flows.1.rtt" = ["25ms", "50ms", "100ms"]
"bottleneck.buffer" = {{ from = "0.5bdp", to = "1bdp", step = "0.5bdp" }}

[[plots]]
kind = "surface"
metric = "jfi"
x = "flows.1.rtt"
y = "bottleneck.buffer"

[[plots]]
kind = "line"
metric = "ratio"
x = "flows.1.rtt"
by = "flows.1.cca"
"""


@pytest.fixture
def fake_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tcpfair.executors, "run_backend", fake_run)


def run_cli(args: list[str]) -> int:
    with pytest.raises(SystemExit) as e:
        main(args)
    return int(e.value.code or 0)


def test_sweep_command_runs_resumes_and_draws(
    tmp_path: Path, fake_backend: None, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.toml"
    f.write_text(SWEEP.format(ccas='["reno", "newreno"]'))
    out = tmp_path / "res"
    assert (
        run_cli(["sweep", str(f), "-j", "1", "-o", str(out), "--no-progress", "--format", "png"])
        == 0
    )
    text = capsys.readouterr().out
    assert (
        "cli on sim: 24 runs (12 points × 2 repeats); ran 24" in text
        and "24 finished, 0 failed" in text
    )
    figs = sorted(p.name for p in (out / "figures" / "cli").iterdir())
    assert (
        "jfi-surface-flows.1.cca=reno.png" in figs and "jfi-surface-flows.1.cca=newreno.png" in figs
    )
    assert "ratio-vs-flows.1.rtt-bottleneck.buffer=0.5bdp.png" in figs
    assert (
        run_cli(["sweep", str(f), "-j", "1", "-o", str(out), "--no-progress", "--no-figures"]) == 0
    )
    assert "ran 0 in" in capsys.readouterr().out and len(Store(out).table()) == 24
    assert run_cli(["results", str(out)]) == 0
    text = capsys.readouterr().out
    assert "cli (sim): 24 runs — 24 done, 0 failed, 0 pending" in text
    header = text.split("\n")[2]
    assert (
        "flows.0.rtt" in header and "flows.1.rtt" not in header
    )  # its zip partner is not repeated
    assert (
        run_cli(
            [
                "results",
                str(out),
                "--plot",
                "utilization",
                "--x",
                "flows.1.rtt",
                "--by",
                "flows.1.cca",
                "--figures",
                str(tmp_path / "figs"),
                "--format",
                "svg",
            ]
        )
        == 0
    )
    assert (tmp_path / "figs" / "utilization-vs-flows.1.rtt-bottleneck.buffer=1bdp.svg").exists()
    # the other [[plots]] kinds, from the command line, under the same rules
    before = set((tmp_path / "figs").iterdir())
    box = ["results", str(out), "--plot", "jfi", "--kind", "box", "--x", "flows.1.rtt"]
    assert run_cli([*box, "--figures", str(tmp_path / "figs"), "--format", "svg", "--force"]) == 0
    new = {p.name for p in set((tmp_path / "figs").iterdir()) - before}
    assert new and all(n.startswith("jfi-box-") and n.endswith((".svg", ".csv")) for n in new)
    capsys.readouterr()
    for extra, says in (
        (["--kind", "pie"], "--kind pie: expected one of surface, line, box, bars, cdf"),
        (["--kind", "bars"], "--plot jfi: bars draw each flow's 'throughput'"),
        (["--kind", "surface"], "--y None: a surface needs a y axis"),
    ):
        assert run_cli([*box[:4], *extra, "--x", "flows.1.rtt"]) == 2
        assert says in capsys.readouterr().err


def test_sweep_command_failures_exit_1_and_retry(
    tmp_path: Path, fake_backend: None, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.toml"
    # bbr: the simulator's pre-flight check passes only where it has bbr; the fake fails it at run time
    f.write_text(SWEEP.format(ccas='["reno", "bbr"]'))
    monkey_check = pytest.MonkeyPatch()
    monkey_check.setattr(tcpfair.executors, "backend_check", lambda backend: lambda sc: None)
    try:
        out = tmp_path / "res"
        assert (
            run_cli(["sweep", str(f), "-j", "1", "-o", str(out), "--no-progress", "--no-figures"])
            == 1
        )
        cap = capsys.readouterr()
        assert "12 finished, 12 failed" in cap.out
        assert "12× RuntimeError: fake backend: bbr is not available" in cap.err
        assert (
            run_cli(["sweep", str(f), "-j", "1", "-o", str(out), "--no-progress", "--no-figures"])
            == 0
        )
        assert "12 runs failed earlier and were skipped" in capsys.readouterr().out
        assert (
            run_cli(
                [
                    "sweep",
                    str(f),
                    "-j",
                    "1",
                    "-o",
                    str(out),
                    "--no-progress",
                    "--no-figures",
                    "--retry-failed",
                ]
            )
            == 1
        )
        assert "ran 12" in capsys.readouterr().out
    finally:
        monkey_check.undo()


def test_sweep_command_reports_bad_points_before_running(
    tmp_path: Path, fake_backend: None, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.toml"
    f.write_text(
        SWEEP.format(ccas='["reno", "tahoe"]').replace('from = "0.5bdp"', 'from = "0.5xyz"')
    )
    assert run_cli(["sweep", str(f), "-o", str(tmp_path / "res"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: invalid sweep {f}: axes.bottleneck.buffer: from, to and step must have the same unit "
        "(got '0.5xyz', '1bdp', '0.5bdp')\n"
    )
    f.write_text(SWEEP.format(ccas='["reno", "tahoe"]'))
    assert run_cli(["sweep", str(f), "-o", str(tmp_path / "res"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    # the 6 points with tahoe share the one problem: said once, for the value they share
    assert err.count("\n") == 1 and (
        "flows.1.cca=tahoe (6 points): flows.1.cca: unknown congestion control" in err
    )
    assert not (tmp_path / "res").exists()  # nothing ran, nothing was created


def test_dry_run_lists_points(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.toml"
    f.write_text(SWEEP.format(ccas='["reno"]'))
    assert run_cli(["sweep", str(f), "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "cli: 6 points × 2 repeats = 12 runs on sim"
    assert out[1].startswith(
        "  flows.1.cca=reno, flows.0.rtt=25ms, flows.1.rtt=25ms, bottleneck.buffer=0.5bdp  ["
    )


# --------------------------------------------------------------------------- real simulator
def _sim_not_built() -> str | None:
    from tcpfair import _core

    probe = {
        "name": "probe",
        "duration_ns": 10**9,
        "seed": 1,
        "bottleneck": {
            "rate_bps": 10**7,
            "buffer_bytes": 10**5,
            "buffer_pkts": None,
            "aqm": {"kind": "droptail"},
            "loss": 0.0,
            "mtu_bytes": 1500,
        },
        "flows": [],
        "measure": {"interval_ns": 10**9, "from_ns": 0, "to_ns": 10**9},
    }
    try:
        _core.simulate(json.dumps(probe))
    except Exception as e:  # only the not-built error skips; anything else lets the test run
        if "not built yet" in str(e):
            return str(e)
    return None


def test_sim_sweep_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reason = _sim_not_built()
    if reason:
        pytest.skip(f"tcpfair._core.simulate says: {reason}")
    f = tmp_path / "s.toml"
    f.write_text(SWEEP.format(ccas='["reno"]').replace('duration = "20s"', 'duration = "10s"'))
    out = tmp_path / "res"
    assert (
        run_cli(["sweep", str(f), "-j", "2", "-o", str(out), "--no-progress", "--format", "png"])
        == 0
    )
    t = Store(out).table()
    assert len(t) == 12 and set(t["status"]) == {"done"}, t["error"].dropna().tolist()
    assert ((t["jfi"] >= 0.5) & (t["jfi"] <= 1.0)).all()  # two flows: 0.5 ≤ JFI ≤ 1
    assert ((t["utilization"] > 0) & (t["utilization"] <= 1.0 + 1e-9)).all()
    # same scenario and seed: the simulator is deterministic, so a second store is identical
    out2 = tmp_path / "res2"
    assert (
        run_cli(["sweep", str(f), "-j", "1", "-o", str(out2), "--no-progress", "--no-figures"]) == 0
    )
    t2 = Store(out2).table()
    assert list(t2["jfi"]) == list(t["jfi"]) and list(t2["sum_bps"]) == list(t["sum_bps"])
    # and through Dask (a LocalCluster of worker processes)
    out3 = tmp_path / "res3"
    assert (
        run_cli(
            [
                "sweep",
                str(f),
                "--executor",
                "dask",
                "-j",
                "2",
                "-o",
                str(out3),
                "--no-progress",
                "--no-figures",
            ]
        )
        == 0
    )
    t3 = Store(out3).table()
    assert list(t3["jfi"]) == list(t["jfi"]) and list(t3["thr_g1_bps"]) == list(t["thr_g1_bps"])
    # repeats get different seeds, and the simulator's per-packet host jitter (flows' `jitter`,
    # on by default) is drawn from the seed, so repeats differ
    assert (t.groupby("point")["thr_g0_bps"].nunique() == 2).all()
    # without that jitter and without start_jitter the simulator is deterministic, so a
    # point's repeats are identical; with start_jitter they differ again
    f.write_text(f.read_text().replace('cca = "reno"\n', 'cca = "reno"\njitter = "0s"\n'))
    out5 = tmp_path / "res5"
    assert run_cli(["sweep", str(f), "-o", str(out5), "--no-progress", "--no-figures"]) == 0
    t5 = Store(out5).table()
    assert (t5.groupby("point")["thr_g0_bps"].nunique() == 1).all()
    f.write_text(f.read_text().replace("repeats = 2", 'repeats = 2\nstart_jitter = "1s"'))
    out4 = tmp_path / "res4"
    assert run_cli(["sweep", str(f), "-o", str(out4), "--no-progress", "--no-figures"]) == 0
    t4 = Store(out4).table()
    assert (t4.groupby("point")["thr_g0_bps"].nunique() == 2).all()


def test_python_api_returns_the_tidy_table(tmp_path: Path, fake_backend: None) -> None:
    from tcpfair import orchestrate

    f = tmp_path / "s.toml"
    f.write_text(SWEEP.format(ccas='["reno"]'))
    t = orchestrate.run(f, jobs=1, output=tmp_path / "res")
    assert len(t) == 12 and set(t["status"]) == {"done"}
    assert {
        "flows.1.cca",
        "flows.0.rtt",
        "flows.1.rtt",
        "bottleneck.buffer",
        "jfi",
        "ratio",
    } <= set(t.columns)


def test_results_of_a_sweep_without_axes(
    tmp_path: Path, fake_backend: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sweep of repeats only (no axes) is one point; `results` shows its row (it failed
    with pandas' "No group keys passed!")."""
    body = SWEEP.format(ccas='["reno"]').split("[axes]")[0].replace("zip = [", "# zip = [")
    f = tmp_path / "s.toml"
    f.write_text(body)
    out = tmp_path / "res"
    assert run_cli(["sweep", str(f), "-j", "1", "-o", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert run_cli(["results", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 runs — 2 done" in text and "jfi" in text


def test_results_table_at_80_columns_keeps_every_mean_and_ci_whole(
    tmp_path: Path, fake_backend: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an 80-column terminal the overview's axis names fold and its numbers stay whole:
    rich used to cut every cell to '0.986±0.…', the CI lost."""
    import io
    import re

    from rich.console import Console

    from tcpfair.commands import sweep as sweep_cmd

    f = tmp_path / "s.toml"
    f.write_text(SWEEP.format(ccas='["reno", "newreno"]'))
    out = tmp_path / "res"
    assert run_cli(["sweep", str(f), "-j", "1", "-o", str(out), "--no-progress"]) == 0
    buf = io.StringIO()
    monkeypatch.setattr(sweep_cmd, "table_console", lambda: Console(file=buf, width=80))
    assert run_cli(["results", str(out)]) == 0
    text = buf.getvalue()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) == 12  # 2 algorithms × 3 RTT pairs × 2 buffers
    for row in rows:
        cells = [c.strip() for c in row.strip("│").split("│")]
        # three axes shown (the zip partner is not), n, then jfi, ratio, utilization
        assert cells[3] == "2"
        for cell in cells[4:]:
            assert re.fullmatch(r"\d+\.\d{3}±\d+\.\d{3}", cell), row


def test_prose_lines_wrap_between_words_on_a_terminal_and_stay_whole_when_piped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`compare`'s summary lines (up to ~180 characters): piped, one line each, as scripts
    read them; on a terminal, wrapped between words at its width (the terminal broke
    "B:ns2-testbed-sim/sim" and "|D|" in the middle), the continuation indented."""
    import os
    import shutil
    import sys

    from tcpfair.commands import echo_prose

    line = (
        "  flows.1.cca=reno: significant at 0 of 80 tested points, "
        "W ≥ 0 at 0 of 80, mean |D| 0.0123"
    )
    echo_prose(line)
    assert capsys.readouterr().out == line + "\n"
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((40, 24)))
    echo_prose(line)
    out = capsys.readouterr().out.splitlines()
    assert len(out) > 1 and all(len(x) <= 40 for x in out)
    assert out[0].startswith("  flows.1.cca=reno:")
    assert all(x.startswith("    ") and not x.startswith("     ") for x in out[1:])
    assert " ".join(x.strip() for x in out) == " ".join(line.split())  # every word whole
