"""The capture importer (``tcpfair.importers.pcap``) on hand-built captures whose every
number is known: binary-fraction times, fixed segment sizes, ACKs a fixed delay later.

Flow A (10.0.0.1:40000 → 10.0.0.2:5201): 64 segments of 3000 B every 1/32 s from 0.25 s,
each ACKed 0.125 s later (the capture is at the sender). ACKs fall at 0.375 + i/32: 20 in
[0, 1) s, 32 in [1, 2) s and 12 in [2, 2.34375] s, so the samples are 60000 B over 0.75 s
(the flow starts at 0.25 s), 96000 B over 1 s and 36000 B over 0.34375 s; the mean is
192000·8 / 2.09375 bit/s. Flow B (from 10.0.0.3) is the same with 1500 B segments: half
of A, so Jain's index is (1 + ½)² / (2·(1 + ¼)) = 0.9. Flow C is iperf3's control
connection: 300 B, left out unless --all.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from pcapgen import ACK, Seg, bulk, write_capture

from tcpfair.cli import cli
from tcpfair.importers import load_files
from tcpfair.importers.pcap import MIN_FLOW_BYTES, CaptureError, load_capture

A = (("10.0.0.1", 40000), ("10.0.0.2", 5201))
B = (("10.0.0.3", 40001), ("10.0.0.2", 5201))
C = (("10.0.0.1", 39999), ("10.0.0.2", 5201))
SPAN = 2.34375 - 0.25
A_BPS = 192000 * 8 / SPAN
B_BPS = 96000 * 8 / SPAN


def three_flows(**kw: object) -> list[Seg]:
    common = {"n": 64, "start": 0.25, "every": 1 / 32, "ack_after": 0.125, **kw}
    return (
        bulk(*A, size=3000, **common)  # type: ignore[arg-type]
        + bulk(*B, size=1500, isn=50_000, **common)  # type: ignore[arg-type]
        + bulk(*C, n=1, size=300, start=0.2, every=1, ack_after=0.125, isn=9)
    )


def thr(result: object) -> dict[str, float]:
    t = result.flow_throughputs()  # type: ignore[attr-defined]
    labels = result.flows.set_index("flow")["label"]  # type: ignore[attr-defined]
    return {labels[f]: float(v) for f, v in t.items()}


def test_exact_throughputs_series_and_index(tmp_path: Path) -> None:
    r = load_capture(write_capture(tmp_path / "c.pcap", three_flows()))
    assert list(r.flows["label"]) == [
        "10.0.0.1:40000→10.0.0.2:5201",
        "10.0.0.3:40001→10.0.0.2:5201",
    ]
    assert list(r.flows["bytes"]) == [192000, 96000]
    assert thr(r) == {
        "10.0.0.1:40000→10.0.0.2:5201": pytest.approx(A_BPS, rel=1e-12),
        "10.0.0.3:40001→10.0.0.2:5201": pytest.approx(B_BPS, rel=1e-12),
    }
    a = r.samples[r.samples["flow"] == 0]
    assert list(a["bytes"]) == [60000, 96000, 36000]
    assert list(a["dt_s"]) == pytest.approx([0.75, 1.0, 0.34375], abs=1e-9)
    assert list(a["t_s"]) == pytest.approx([1.0, 2.0, 2.34375], abs=1e-9)
    assert list(a["srtt_s"]) == pytest.approx([0.125] * 3, abs=1e-9)  # at the sender
    rep = r.fairness_report(None)
    assert rep["jfi"] == pytest.approx(0.9, abs=1e-12)
    assert rep["jfi_per_interval_mean"] == pytest.approx(0.9, abs=1e-12)
    # on the capture's 1 s grid: (0.25, 1] and (1, 2] + the last (2, 2.34375] in row 2
    per = r.interval_throughputs()
    assert list(per.index) == [1.0, 2.0]
    assert per.loc[2.0, 0] == pytest.approx((96000 + 36000) * 8 / 1.34375, rel=1e-12)
    assert list(r.flows["capture_at"]) == ["sender", "sender"]
    assert list(r.flows["throughput_from"]) == ["acked bytes", "acked bytes"]
    assert list(r.flows["mean_rtt_s"]) == pytest.approx([0.125, 0.125], abs=1e-9)
    assert list(r.flows["retransmits"]) == [0.0, 0.0]
    small = r.meta["small_connections"]
    assert [(s["connection"], s["bytes"]) for s in small] == [("10.0.0.1:39999→10.0.0.2:5201", 300)]
    assert 300 < MIN_FLOW_BYTES <= 96000


@pytest.mark.parametrize(
    "variant",
    ["pcapng", "raw-ip", "sll", "sll2", "ipv6", "seq-wraps", "no-handshake", "no-suffix"],
)
def test_same_numbers_whatever_the_container(tmp_path: Path, variant: str) -> None:
    kw: dict[str, object] = {}
    fmt, link = "pcap", "ethernet"
    segs: list[Seg]
    if variant == "pcapng":
        fmt = "pcapng"
    elif variant in ("raw-ip", "sll", "sll2"):
        link = {"raw-ip": "raw"}.get(variant, variant)
    elif variant == "seq-wraps":
        # A's sequence numbers pass 2³² after 5000 bytes
        segs = bulk(
            *A, n=64, size=3000, start=0.25, every=1 / 32, ack_after=0.125, isn=2**32 - 5000
        )
    elif variant == "no-handshake":
        kw["handshake"] = None
    if variant == "ipv6":
        a6 = (("fd00::1", 40000), ("fd00::2", 5201))
        segs = bulk(*a6, n=64, size=3000, start=0.25, every=1 / 32, ack_after=0.125)
    elif variant != "seq-wraps":
        segs = bulk(*A, n=64, size=3000, start=0.25, every=1 / 32, ack_after=0.125, **kw)  # type: ignore[arg-type]
    # the capture's first packet is at 0 (the SYN, or a stray packet before the data)
    segs.append(Seg(0.0, "10.9.9.9", 1, "10.9.9.8", 2, ACK, 1, 1, 0))
    name = "capture.dump" if variant == "no-suffix" else "c.cap"  # told by its first bytes
    r = load_files([write_capture(tmp_path / name, segs, fmt=fmt, link=link)])
    assert list(r.flows["bytes"]) == [192000]
    assert list(r.samples["bytes"]) == [60000, 96000, 36000]
    assert float(r.flow_throughputs().iloc[0]) == pytest.approx(A_BPS, rel=1e-12)
    if variant == "ipv6":
        assert r.flows["label"][0] == "[fd00::1]:40000→[fd00::2]:5201"
    if variant == "no-handshake":
        # where the capture is cannot be told: no RTT figures rather than wrong ones
        assert r.flows["capture_at"][0] == "unknown"
        assert math.isnan(r.flows["mean_rtt_s"][0])


def test_capture_at_the_receiver(tmp_path: Path) -> None:
    """ACKs leave right after the data: the data→ACK delay is not the RTT; the handshake's
    SYN → ACK is (0.125 s)."""
    segs = bulk(
        *A,
        n=64,
        size=3000,
        start=0.25,
        every=1 / 32,
        ack_after=2**-10,
        handshake=(0.0, 2**-10, 0.125),
    )
    r = load_capture(write_capture(tmp_path / "r.pcap", segs))
    assert r.flows["capture_at"][0] == "receiver"
    assert r.samples["srtt_s"].isna().all()
    assert r.flows["mean_rtt_s"][0] == pytest.approx(0.125, abs=1e-9)
    assert int(r.samples["bytes"].sum()) == 192000


def test_a_lost_segment_and_its_retransmission(tmp_path: Path) -> None:
    """At the receiver: segment 10 is lost before the capture point; segments 11–13 get
    duplicate ACKs; the retransmission at 0.25 + 13.5/32 s fills the hole and the ACK jumps
    to the end of segment 13. One retransmission; every byte acknowledged once."""
    c, s = A
    size, isn, srv = 3000, 1000, 7000
    segs = [
        Seg(0.0, *c, *s, 0x02, isn),
        Seg(2**-10, *s, *c, 0x12, srv, isn + 1),
        Seg(0.125, *c, *s, ACK, isn + 1, srv + 1),
    ]
    t_retx = 0.25 + 13.5 / 32
    for i in range(64):
        seq, t = isn + 1 + i * size, 0.25 + i / 32
        if i != 10:
            segs.append(Seg(t, *c, *s, ACK, seq, srv + 1, size))
        acked = seq + size if not 10 <= i <= 13 else isn + 1 + 10 * size
        segs.append(Seg(t + 2**-10, *s, *c, ACK, srv + 1, acked))
    segs.append(Seg(t_retx, *c, *s, ACK, isn + 1 + 10 * size, srv + 1, size))
    segs.append(Seg(t_retx + 2**-10, *s, *c, ACK, srv + 1, isn + 1 + 14 * size))
    r = load_capture(write_capture(tmp_path / "loss.pcap", segs))
    assert list(r.flows["retransmits"]) == [1.0]
    assert int(r.samples["retransmits"].sum()) == 1
    assert list(r.flows["bytes"]) == [192000]
    # without the ACKs (one direction captured) the new payload bytes count: still once each
    one_way = [g for g in segs if g.src == c[0]]
    r = load_capture(write_capture(tmp_path / "oneway.pcap", one_way))
    assert list(r.flows["throughput_from"]) == ["payload bytes"]
    assert list(r.flows["bytes"]) == [192000]
    assert list(r.flows["retransmits"]) == [1.0]


def test_all_and_by_group(tmp_path: Path) -> None:
    cap = write_capture(tmp_path / "c.pcap", three_flows())
    r = load_files([cap], include_all=True)
    assert len(r.flows) == 3 and r.meta["small_connections"] == []
    # C (10.0.0.1 → 10.0.0.2:5201, like A) is one more stream of A's iperf3 test
    assert list(r.flows["group"]) == [0, 1, 0]
    rep = r.fairness_report(None, by="group")
    rows = {row["label"]: row for row in rep["rows"]}
    assert rows["10.0.0.1→10.0.0.2:5201"]["streams"] == 2
    per_flow = r.flow_throughputs()
    assert rows["10.0.0.1→10.0.0.2:5201"]["throughput_bps"] == pytest.approx(
        per_flow[0] + per_flow[2], rel=1e-12
    )
    # C alone: 300 B between its data (0.2 s) and its ACK (0.325 s)
    assert per_flow[2] == pytest.approx(300 * 8 / 0.125, rel=1e-9)


def test_files_are_aligned_by_their_packet_times(tmp_path: Path) -> None:
    segs = bulk(*A, n=64, size=3000, start=0.25, every=1 / 32, ack_after=0.125)
    first = write_capture(tmp_path / "a.pcap", segs)
    later = write_capture(
        tmp_path / "b.pcap",
        bulk(*B, n=64, size=3000, start=0.25, every=1 / 32, ack_after=0.125),
        t0=1.7e9 + 0.5,
    )
    r = load_capture([first, later], labels=["a", "b"])
    assert list(r.flows["label"]) == ["a", "b"]
    ends = r.samples.groupby("flow")["t_s"].max()
    assert ends[1] - ends[0] == pytest.approx(0.5, abs=1e-6)
    # one grid for both files (from the first file's first packet): their intervals line up
    per = r.interval_throughputs()
    assert list(per.index) == [1.0, 2.0, 3.0]
    assert per.dropna().index.tolist() == [1.0, 2.0]  # b runs on to 2.84375 s
    r = load_capture([first, later], align=False)
    ends = r.samples.groupby("flow")["t_s"].max()
    assert ends[1] == pytest.approx(ends[0], abs=1e-9)


def test_cli_table_json_and_the_small_connection_note(tmp_path: Path) -> None:
    cap = write_capture(tmp_path / "c.pcapng", three_flows(), fmt="pcapng")
    res = CliRunner().invoke(cli, ["fairness", str(cap), "--format", "json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert [row["throughput_bps"] for row in rep["rows"]] == pytest.approx(
        [A_BPS, B_BPS], rel=1e-12
    )
    assert rep["jfi"] == pytest.approx(0.9, abs=1e-12)
    assert "10.0.0.1:39999→10.0.0.2:5201 (300 B)" in res.stderr and "--all" in res.stderr
    assert [c["connection"] for c in rep["small_connections"]] == ["10.0.0.1:39999→10.0.0.2:5201"]
    res = CliRunner().invoke(cli, ["fairness", str(cap), "--all", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n"] == 3
    res = CliRunner().invoke(cli, ["fairness", str(cap)])
    assert res.exit_code == 0, res.output
    assert "JFI 0.9000" in res.stdout


def test_a_capture_of_nothing_but_small_connections(tmp_path: Path) -> None:
    cap = write_capture(
        tmp_path / "c.pcap", bulk(*C, n=1, size=300, start=0.2, every=1, ack_after=0.125)
    )
    with pytest.raises(CaptureError, match="no TCP connection delivered payload.*--all"):
        load_capture(cap)
    assert list(load_capture(cap, include_all=True).flows["bytes"]) == [300]


def test_interval_option_regrids_the_series(tmp_path: Path) -> None:
    cap = write_capture(tmp_path / "c.pcap", three_flows())
    res = CliRunner().invoke(
        cli, ["fairness", str(cap), "--interval", "250ms", "--per-interval", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    # the flows' means do not depend on the grid
    assert [row["throughput_bps"] for row in rep["rows"]] == pytest.approx([A_BPS, B_BPS])
    # ACKs at 0.375 + i/32 s: 4 of A's in (0.25, 0.5] s → 4·3000·8 / 0.25 bit/s
    first = rep["per_interval"][0]
    assert first["t_s"] == 0.5
    assert first["throughput_bps"]["10.0.0.1:40000→10.0.0.2:5201"] == pytest.approx(384000)
    # rows 0.5, 0.75 … 2.25: (0.25, 0.5] … (2, 2.25], with (2.25, 2.34375] in the 2.25 row
    assert rep["intervals"] == 8
    r = load_capture(cap, interval_s=0.25)
    assert r.meta["interval_s"] == 0.25 and int(r.samples["bytes"].sum()) == 288000


def test_a_run_directory_takes_its_capture_along(tmp_path: Path) -> None:
    """``RunResult.attachments``: the kernel backend's temporary pcap is moved into the run
    directory by ``save`` and the temporary file is gone; the tables are unchanged."""
    import tempfile

    from tcpfair.result import RunResult

    fd, tmp = tempfile.mkstemp(prefix="tcpfair-capture-", suffix=".pcap")
    os.close(fd)
    segs = bulk(*A, n=64, size=3000, start=0.25, every=1 / 32, ack_after=0.125)
    write_capture(Path(tmp), segs)
    content = Path(tmp).read_bytes()
    r = load_capture(tmp)
    r.attachments["capture.pcap"] = tmp
    out = r.save(tmp_path / "run")
    assert (out / "capture.pcap").read_bytes() == content
    assert not Path(tmp).exists()
    assert r.attachments == {"capture.pcap": str(out / "capture.pcap")}
    back = RunResult.load(out)
    assert back.flows["bytes"].tolist() == [192000]


def test_the_capture_of_a_run_directory_is_read_on_the_runs_clock(tmp_path: Path) -> None:
    """``tcpfair fairness RUN/capture.pcap``: the summary.json beside it says when the run's
    t = 0 was, so the flows' times are the run's (here the run began 10 s before the
    capture's first packet) and its measurement window can be used as it is."""
    run = tmp_path / "run"
    run.mkdir()
    segs = bulk(*A, n=64, size=3000, start=0.25, every=1 / 32, ack_after=0.125)
    write_capture(run / "capture.pcap", segs, t0=1.7e9)
    meta = {"capture": {"file": "capture.pcap", "t0_unix_s": 1.7e9 - 10}}
    (run / "summary.json").write_text(json.dumps({"meta": meta}))
    r = load_files([run / "capture.pcap"])
    assert list(r.samples["t_s"]) == pytest.approx([11.0, 12.0, 12.34375], abs=1e-6)
    assert any("kernel run's" in n for n in r.meta["notes"])
    assert list(load_files([run / "capture.pcap"], align=False).samples["t_s"]) == pytest.approx(
        [1.0, 2.0, 2.34375], abs=1e-6
    )
