"""The Flent importer on a data file written in Flent's format (tests/flentgen.py; the
checked-in fixture tests/fixtures/flent/tcp_nup-2.flent.gz is its output): two upload
streams at 8 and 4 Mbit/s, so every figure below is known by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from flentgen import tcp_nup, write

from tcpfair.cli import cli
from tcpfair.importers import file_kind, load_files
from tcpfair.importers.flent import load_flent

FIXTURE = Path(__file__).parent / "fixtures" / "flent" / "tcp_nup-2.flent.gz"


def test_fixture_is_what_the_generator_writes(tmp_path: Path) -> None:
    assert write(tmp_path / "x.flent.gz", tcp_nup()).read_bytes() == FIXTURE.read_bytes()


def test_streams_become_flows_with_known_numbers() -> None:
    r = load_flent(FIXTURE)
    assert list(r.flows["label"]) == ["TCP upload::1", "TCP upload::2"]
    assert list(r.flows["cca"]) == ["cubic", "bbr"]
    assert list(r.flows["group"]) == [0, 0]
    s = r.samples
    assert len(s) == 2 * 25  # the null first point is no sample
    assert set(s[s["flow"] == 0]["bytes"]) == {200_000}  # 8 Mbit/s × 0.2 s
    assert set(s[s["flow"] == 1]["bytes"]) == {100_000}
    assert list(r.flows["bytes"]) == [5_000_000, 2_500_000]
    assert s["srtt_s"].to_numpy() == pytest.approx(0.020)  # raw tcp_rtt, ms
    assert s["cwnd_bytes"].to_numpy() == pytest.approx(14480)  # 10 packets × TCP_MSS
    assert s["retransmits"].isna().all()
    thr = r.flow_throughputs()
    assert list(thr) == pytest.approx([8e6, 4e6], rel=1e-12)
    rep = r.fairness_report(None)
    assert rep["jfi"] == pytest.approx(0.9, abs=1e-12)  # (8+4)² / (2·(64+16))
    assert rep["jfi_per_interval_mean"] == pytest.approx(0.9, abs=1e-12)
    assert rep["intervals"] == 25
    grp = r.fairness_report(None, by="group")
    assert [(g["label"], g["streams"]) for g in grp["rows"]] == [("TCP upload", 2)]
    assert grp["rows"][0]["throughput_bps"] == pytest.approx(12e6, rel=1e-12)


def test_plain_json_and_two_files_on_one_clock(tmp_path: Path) -> None:
    plain = write(tmp_path / "a.flent", tcp_nup(), compress=False)
    later_obj = tcp_nup((2.0,))
    later_obj["metadata"]["T0"] = "2026-11-01T12:00:10.000000Z"
    later = write(tmp_path / "b.flent.gz", later_obj)
    assert file_kind(plain) == file_kind(later) == "flent"
    r = load_files([plain, later])
    assert list(r.flows["label"]) == [
        "a.flent TCP upload::1",
        "a.flent TCP upload::2",
        "b.flent.gz TCP upload::1",
    ]
    assert list(r.flows["group"]) == [0, 0, 1]
    ends = r.samples.groupby("flow")["t_s"].max()
    assert ends[2] - ends[0] == pytest.approx(10.0, abs=1e-9)


def test_cli_reads_flent_files() -> None:
    res = CliRunner().invoke(cli, ["fairness", str(FIXTURE), "--format", "json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert [row["label"] for row in rep["rows"]] == ["TCP upload::1", "TCP upload::2"]
    assert [row["throughput_bps"] for row in rep["rows"]] == pytest.approx([8e6, 4e6])
    assert [row["mean_rtt_s"] for row in rep["rows"]] == pytest.approx([0.02, 0.02])
