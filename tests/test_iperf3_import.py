"""iperf3 -J import: real transfers run by this test suite, and captured real files with
the quirks of iperf3 3.1–3.17 (see tests/fixtures/iperf3/capture.sh for how they were made)."""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tcpfair
from tcpfair.importers.iperf3 import Iperf3Error, decode_iperf3_text, parse_iperf3
from tcpfair.result import FLOW_COLUMNS, SAMPLE_COLUMNS, RunResult

FX = Path(__file__).parent / "fixtures" / "iperf3"
IPERF3 = shutil.which("iperf3")
needs_iperf3 = pytest.mark.skipif(
    IPERF3 is None, reason="iperf3 is not installed (./dev setup installs it when run as root)"
)


def jain_by_hand(x: list[float]) -> float:
    """(Σx)² / (n·Σx²), written out independently of tcpfair.metrics."""
    s = sum(x)
    return s * s / (len(x) * sum(v * v for v in x))


def by_socket(report: dict, side: str) -> dict[int, dict]:
    return {s[side]["socket"]: s[side] for s in report["end"]["streams"]}


def socket_of_flow(report: dict) -> list[int]:
    return [c["socket"] for c in report["start"]["connected"]]


# ---------------------------------------------------------------------------- live iperf3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def iperf3_server() -> Iterator[int]:
    """A one-off iperf3 server on a free loopback port; always stopped afterwards."""
    assert IPERF3 is not None
    port = _free_port()
    proc = subprocess.Popen(
        [IPERF3, "-s", "-1", "-B", "127.0.0.1", "-p", str(port), "--forceflush"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        bufsize=0,
    )
    try:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + 10
        seen = b""
        while b"Server listening" not in seen:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"iperf3 server on port {port} did not start: {seen!r}")
            r, _, _ = select.select([fd], [], [], 0.2)
            if r:
                seen += os.read(fd, 4096)
        yield port
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _client(port: int, *args: str) -> subprocess.Popen[str]:
    assert IPERF3 is not None
    return subprocess.Popen(
        [IPERF3, "-c", "127.0.0.1", "-p", str(port), "-J", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(p: subprocess.Popen[str]) -> str:
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, f"iperf3 client failed: {err or out[-400:]}"
    return out


@needs_iperf3
def test_live_parallel_streams_bytes_and_jfi_agree_with_iperf3(tmp_path: Path) -> None:
    with iperf3_server() as port:
        text = _finish(_client(port, "-t", "2", "-P", "4", "-b", "400M"))
    f = tmp_path / "p4.json"
    f.write_text(text)
    report = json.loads(text)
    res = tcpfair.load_iperf3(f)

    assert len(res.flows) == 4 and set(res.flows["group"]) == {0}
    assert res.meta["backend"] == "iperf3"
    assert res.meta["versions"]["iperf3"] == report["start"]["version"].split()[-1]
    # bytes: per stream (socket → flow via start.connected) and in sum, iperf3's own figures
    socks = socket_of_flow(report)
    rcv, snd = by_socket(report, "receiver"), by_socket(report, "sender")
    per_flow_sent = res.samples.groupby("flow")["bytes"].sum()
    for k, sock in enumerate(socks):
        row = res.flows.iloc[k]
        assert row["bytes"] == rcv[sock]["bytes"]
        assert row["sent_bytes"] == snd[sock]["bytes"]
        assert per_flow_sent[k] == snd[sock]["bytes"]  # the intervals add up to the sender total
        assert row["retransmits"] == snd[sock]["retransmits"]
        assert row["cca"] == report["end"]["sender_tcp_congestion"]
    assert res.flows["bytes"].sum() == report["end"]["sum_received"]["bytes"]
    assert res.samples["bytes"].sum() == report["end"]["sum_sent"]["bytes"]
    # JFI over the run = the formula applied to iperf3's per-stream sender rates. Our rate is
    # Σ interval bytes / Σ interval seconds; iperf3's is bytes / end seconds; the interval
    # lengths differ from the end time by microseconds (≈2e-6 relative), hence abs=1e-5.
    expected = jain_by_hand([snd[s]["bits_per_second"] for s in socks])
    assert res.metrics()["jfi"] == pytest.approx(expected, abs=1e-5)
    thr = res.flow_throughputs().to_numpy()
    assert thr == pytest.approx([snd[s]["bits_per_second"] for s in socks], rel=1e-4)


@needs_iperf3
def test_live_two_clients_with_different_cca(tmp_path: Path) -> None:
    with iperf3_server() as p1, iperf3_server() as p2:
        c1 = _client(p1, "-t", "3", "-C", "reno", "-b", "300M")
        c2 = _client(p2, "-t", "3", "-C", "cubic", "-b", "300M")
        t1, t2 = _finish(c1), _finish(c2)
    (tmp_path / "reno.json").write_text(t1)
    (tmp_path / "cubic.json").write_text(t2)
    res = tcpfair.load_iperf3([tmp_path / "reno.json", tmp_path / "cubic.json"])
    assert list(res.flows["label"]) == ["reno.json", "cubic.json"]
    assert list(res.flows["cca"]) == ["reno", "cubic"]
    assert list(res.flows["group"]) == [0, 1]
    reports = [json.loads(t1), json.loads(t2)]
    for k, rep in enumerate(reports):
        assert res.flows["bytes"].iloc[k] == rep["end"]["sum_received"]["bytes"]
        assert (
            res.samples[res.samples["flow"] == k]["bytes"].sum() == rep["end"]["sum_sent"]["bytes"]
        )
    # started within a second of each other: same clock, per-interval JFI defined
    met = res.metrics()
    expected = jain_by_hand([rep["end"]["sum_sent"]["bits_per_second"] for rep in reports])
    assert met["jfi"] == pytest.approx(expected, abs=1e-5)
    assert not math.isnan(met["jfi_per_interval_mean"])
    # labels from the caller
    res2 = tcpfair.load_iperf3([tmp_path / "reno.json", tmp_path / "cubic.json"], labels=["A", "B"])
    assert list(res2.flows["label"]) == ["A", "B"]


# ---------------------------------------------------------------------------- captured files


def test_client_P4_fixture_tables_have_runresult_layout() -> None:
    res = tcpfair.load_iperf3(FX / "client-P4-3.12.json")
    assert isinstance(res, RunResult)
    assert list(res.flows.columns)[: len(FLOW_COLUMNS)] == FLOW_COLUMNS
    assert list(res.samples.columns) == SAMPLE_COLUMNS
    assert list(res.flows["label"]) == [f"client-P4-3.12.json[{k}]" for k in (1, 2, 3, 4)]
    report = json.loads((FX / "client-P4-3.12.json").read_text())
    first = report["intervals"][0]["streams"][0]
    s0 = res.samples[res.samples["flow"] == 0].iloc[0]
    assert s0["t_s"] == first["end"] and s0["dt_s"] == first["seconds"]
    assert s0["throughput_bps"] == first["bits_per_second"]
    assert s0["cwnd_bytes"] == first["snd_cwnd"] and s0["srtt_s"] == first["rtt"] / 1e6
    assert s0["retransmits"] == first["retransmits"]
    assert (
        res.flows["mean_rtt_s"].iloc[0] == report["end"]["streams"][0]["sender"]["mean_rtt"] / 1e6
    )
    assert len(res.samples) == 4 * len(report["intervals"])


def test_run_directory_round_trip(tmp_path: Path) -> None:
    res = tcpfair.load_iperf3(FX / "client-P4-3.12.json")
    back = RunResult.load(res.save(tmp_path / "run"))
    pd.testing.assert_frame_equal(back.flows, res.flows)
    pd.testing.assert_frame_equal(back.samples, res.samples)
    assert back.metrics()["jfi"] == res.metrics()["jfi"]


def test_old_version_3_1_3_layout_gives_the_same_numbers() -> None:
    new = tcpfair.load_iperf3(FX / "client-P4-3.12.json")
    old = tcpfair.load_iperf3(FX / "client-P4-3.1.3-constructed.json")
    assert old.meta["versions"]["iperf3"] == "3.1.3"
    assert list(old.flows["cca"]) == ["unknown"] * 4  # 3.1.3 does not report it
    assert list(old.flows["bytes"]) == list(new.flows["bytes"])
    assert list(old.flows["retransmits"]) == list(new.flows["retransmits"])
    # same samples up to the six decimals 3.1.3's cJSON printed
    np.testing.assert_allclose(
        old.samples["throughput_bps"], new.samples["throughput_bps"], rtol=1e-9
    )
    np.testing.assert_array_equal(old.samples["bytes"], new.samples["bytes"])
    np.testing.assert_array_equal(old.samples["cwnd_bytes"], new.samples["cwnd_bytes"])
    # interval lengths printed with 6 decimals (≤ 5e-7 s error each) move the JFI by ~1e-9
    assert old.metrics()["jfi"] == pytest.approx(new.metrics()["jfi"], abs=1e-7)


def test_reverse_mode_reads_the_receiver_side_and_skips_omitted() -> None:
    res = tcpfair.load_iperf3(FX / "reverse-P3-omit1-3.12.json")
    report = json.loads((FX / "reverse-P3-omit1-3.12.json").read_text())
    info = res.meta["files"][0]
    assert info["reverse"] is True and info["local_side"] == "receiver" and info["role"] == "client"
    # the -R client is the receiver: no TCP_INFO figures in its intervals
    assert res.samples[["cwnd_bytes", "srtt_s", "retransmits"]].isna().all().all()
    # the omitted (-O 1) first interval is skipped: 3 streams × (intervals − 1)
    n_omitted = sum(1 for iv in report["intervals"] if iv["sum"]["omitted"])
    assert n_omitted == 1
    assert len(res.samples) == 3 * (len(report["intervals"]) - n_omitted)
    assert res.samples["bytes"].sum() == report["end"]["sum_received"]["bytes"]
    # retransmits come from the sender's (server's) summary; the CCA from sender_tcp_congestion
    snd = by_socket(report, "sender")
    assert list(res.flows["retransmits"]) == [snd[s]["retransmits"] for s in socket_of_flow(report)]
    assert set(res.flows["cca"]) == {"cubic"}
    assert res.flows["mean_rtt_s"].isna().all()  # the sender's mean_rtt is 0 = unknown here
    assert any("omitted" in n for n in res.meta["notes"])


def test_server_side_file_has_no_tcp_info_but_delivered_bytes() -> None:
    res = tcpfair.load_iperf3(FX / "server-side-3.12.json")
    report = json.loads((FX / "server-side-3.12.json").read_text())
    assert res.meta["files"][0]["role"] == "server"
    assert res.flows["bytes"].iloc[0] == report["end"]["sum_received"]["bytes"]
    assert math.isnan(res.flows["retransmits"].iloc[0]) and math.isnan(
        res.flows["sent_bytes"].iloc[0]
    )
    assert res.samples[["cwnd_bytes", "srtt_s", "retransmits"]].isna().all().all()


def test_concatenated_reports_use_the_last_complete_one_and_say_so() -> None:
    twice = tcpfair.load_iperf3(FX / "twice-3.12.json")
    once = tcpfair.load_iperf3(FX / "reverse-P3-omit1-3.12.json")
    pd.testing.assert_frame_equal(twice.samples, once.samples)
    assert any(
        "2 concatenated JSON reports; used the last complete one" in n for n in twice.meta["notes"]
    )
    appended = tcpfair.load_iperf3(FX / "appended-interrupted-3.12.json")
    base = tcpfair.load_iperf3(FX / "client-P4-3.12.json")
    pd.testing.assert_frame_equal(appended.samples, base.samples)
    assert any(
        "ignored an incomplete JSON object after the first one" in n for n in appended.meta["notes"]
    )


def test_two_different_concatenated_reports_take_the_last() -> None:
    a = (FX / "client-P4-3.12.json").read_text()
    b = (FX / "server-side-3.12.json").read_text()
    t = parse_iperf3(a + b, label="x")
    assert len(t.flows) == 1 and t.info["role"] == "server"


def test_duplicate_keys_keep_the_first_and_note_only_when_values_differ() -> None:
    obj, notes = decode_iperf3_text('{"a": 1, "a": 1, "b": {"c": 2, "c": 3}}')
    assert obj == {"a": 1, "b": {"c": 2}}
    assert notes == ["duplicate JSON keys with different values (c); kept the first of each"]
    # iperf3 ≥ 3.19 writes two "error" members when the server relays one (esnet/iperf#2051)
    text = (
        '{"start": {}, "intervals": [], "end": {}, "error": "SERVER ERROR - busy", "error": "busy"}'
    )
    with pytest.raises(Iperf3Error, match="x.json: iperf3 reported an error: SERVER ERROR - busy$"):
        parse_iperf3(text, source="x.json")


def test_real_3_12_duplicate_keys_parse() -> None:
    # iperf3 3.12 repeats sock_bufsize/sndbuf_actual/rcvbuf_actual in start with -P
    raw = (FX / "client-P4-3.12.json").read_text()
    assert raw.count('"sock_bufsize"') > 1
    t = parse_iperf3(raw, label="p4")
    assert len(t.flows) == 4 and t.info["notes"] == []


def test_parse_iperf3_api_for_the_kernel_backend() -> None:
    raw = (FX / "client-P4-3.12.json").read_text()
    obj = json.loads(raw)
    t = parse_iperf3(obj, label="h1", group=3, flow_offset=10, time_offset_s=60.0)
    flows, samples = t  # unpacks as a pair
    assert list(flows["flow"]) == [10, 11, 12, 13] and set(flows["group"]) == {3}
    assert list(flows["start_s"]) == [60.0] * 4
    assert samples["t_s"].min() == pytest.approx(60.0 + obj["intervals"][0]["streams"][0]["end"])
    assert set(samples["flow"]) == {10, 11, 12, 13}
    # text, bytes and dict give the same tables
    for variant in (raw, raw.encode()):
        f2, s2 = parse_iperf3(variant, label="h1", group=3, flow_offset=10, time_offset_s=60.0)
        pd.testing.assert_frame_equal(f2, flows)
        pd.testing.assert_frame_equal(s2, samples)
    # a single stream is labelled without an index
    single = parse_iperf3((FX / "server-side-3.12.json").read_text(), label="solo")
    assert list(single.flows["label"]) == ["solo"]


def test_streams_are_keyed_by_socket_through_start_connected() -> None:
    obj = json.loads((FX / "client-P4-3.12.json").read_text())
    socks = socket_of_flow(obj)
    # reverse the stream order inside every interval: the flow ids must not change
    for iv in obj["intervals"]:
        iv["streams"].reverse()
    t = parse_iperf3(obj, label="x")
    ref = parse_iperf3((FX / "client-P4-3.12.json").read_text(), label="x")
    pd.testing.assert_frame_equal(t.samples, ref.samples)
    snd = by_socket(obj, "sender")
    assert list(t.flows["sent_bytes"]) == [snd[s]["bytes"] for s in socks]


def test_files_started_later_are_shifted_by_their_timestamps(tmp_path: Path) -> None:
    obj = json.loads((FX / "client-P4-3.12.json").read_text())
    late = json.loads(json.dumps(obj))
    late["start"]["timestamp"]["timesecs"] += 60  # like the testbed study's flow 2 at t = 60 s
    (tmp_path / "a.json").write_text(json.dumps(obj))
    (tmp_path / "b.json").write_text(json.dumps(late))
    res = tcpfair.load_iperf3([tmp_path / "a.json", tmp_path / "b.json"])
    b = res.samples[res.flows.set_index("flow").loc[res.samples["flow"], "group"].to_numpy() == 1]
    assert b["t_s"].min() == pytest.approx(60 + obj["intervals"][0]["streams"][0]["end"])
    assert list(res.flows["start_s"]) == [0.0] * 4 + [60.0] * 4
    assert any("started 60 s after the first; times shifted" in n for n in res.meta["notes"])
    # one second apart is below the whole-second resolution: not shifted
    late["start"]["timestamp"]["timesecs"] -= 59
    (tmp_path / "b.json").write_text(json.dumps(late))
    res = tcpfair.load_iperf3([tmp_path / "a.json", tmp_path / "b.json"])
    assert list(res.flows["start_s"]) == [0.0] * 8
    unaligned = tcpfair.load_iperf3([tmp_path / "a.json", tmp_path / "b.json"], align=False)
    assert list(unaligned.flows["start_s"]) == [0.0] * 8


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "error-refused-3.12.json",
            "iperf3 reported an error: unable to connect to server: Connection refused",
        ),
        (
            "truncated-3.12.json",
            "truncated JSON (the report ends at line 133 before it is complete",
        ),
        ("udp-3.12.json", "a UDP test; fairness needs a TCP test"),
    ],
)
def test_bad_captured_files(name: str, message: str) -> None:
    with pytest.raises(Iperf3Error) as e:
        tcpfair.load_iperf3(FX / name)
    assert str(e.value).startswith(f"{FX / name}: ")
    assert message in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        ("   \n\n", "the file is empty"),
        (
            "iperf3: error - unable to connect to server\n",
            "not iperf3 JSON output (starts with 'iperf3: error",
        ),
        ('{"start": {}, "intervals": [], "end": {}}', "no measurement intervals"),
        ('{"foo": 1}', "not an iperf3 -J report"),
        ("[1, 2]", "not iperf3 JSON output"),
        (
            '{"start": {"test_start": {"bidir": 1}}, "intervals": [{}]}',
            "bidirectional test (--bidir)",
        ),
        ('{"a": 1,, "b": 2}', "invalid JSON at line 1, column 9"),
    ],
)
def test_bad_text(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content)
    with pytest.raises(Iperf3Error, match=None) as e:
        tcpfair.load_iperf3(f)
    assert str(e.value).startswith(f"{f}: ") and message in str(e.value)


def test_missing_binary_and_directory(tmp_path: Path) -> None:
    with pytest.raises(Iperf3Error, match="no such file"):
        tcpfair.load_iperf3(tmp_path / "nope.json")
    with pytest.raises(Iperf3Error, match="is a directory"):
        tcpfair.load_iperf3(tmp_path)
    f = tmp_path / "bin.json"
    f.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(Iperf3Error, match="not a text file"):
        tcpfair.load_iperf3(f)
    with pytest.raises(Iperf3Error, match="2 labels for 1 files"):
        tcpfair.load_iperf3(FX / "client-P4-3.12.json", labels=["a", "b"])


def _as_json_stream(report: dict) -> str:
    """The events iperf3 ≥ 3.17 writes with --json-stream (format of esnet/iperf#1098):
    one compact JSON object per line. iperf3 3.12 here cannot write it, so it is rebuilt
    from a real -J capture."""
    events = [{"event": "start", "data": report["start"]}]
    events += [{"event": "interval", "data": iv} for iv in report["intervals"]]
    events.append({"event": "end", "data": report["end"]})
    return "\n".join(json.dumps(e, separators=(",", ":")) for e in events) + "\n"


def test_json_stream_output() -> None:
    report = json.loads((FX / "client-P4-3.12.json").read_text())
    ref = parse_iperf3(report, label="x")
    stream = _as_json_stream(report)
    t = parse_iperf3(stream, label="x")
    pd.testing.assert_frame_equal(t.flows, ref.flows)
    pd.testing.assert_frame_equal(t.samples, ref.samples)
    assert any("--json-stream" in n for n in t.info["notes"])
    # interrupted: no end event, last line cut → intervals still usable, totals from them
    lines = stream.splitlines()
    cut = "\n".join(lines[:-2]) + "\n" + lines[-2][:40]
    t2 = parse_iperf3(cut, label="x")
    assert len(t2.samples) == len(ref.samples) - 4
    assert list(t2.flows["bytes"]) == list(t2.samples.groupby("flow")["bytes"].sum())
    assert any("no 'end' summary" in n for n in t2.info["notes"])
    err = '{"event":"start","data":{}}\n{"event":"error","data":"unable to connect to server"}\n'
    with pytest.raises(Iperf3Error, match="s.json: iperf3 reported an error: unable to connect"):
        parse_iperf3(err, source="s.json")


# ---------------------------------------------------------------------------- strict fields


def _p4() -> dict:
    return json.loads((FX / "client-P4-3.12.json").read_text())


def test_null_optional_fields_are_unknown_not_zero_and_not_errors() -> None:
    report = _p4()
    for iv in report["intervals"]:
        for s in iv["streams"]:
            s["rtt"] = None
            s["snd_cwnd"] = None
            s["bits_per_second"] = None
    t = parse_iperf3(report, label="x")
    ref = parse_iperf3(_p4(), label="x")
    assert t.samples["srtt_s"].isna().all() and t.samples["cwnd_bytes"].isna().all()
    # without bits_per_second the rate is bytes·8/seconds of the same interval
    expect = ref.samples["bytes"] * 8 / ref.samples["dt_s"]
    assert t.samples["throughput_bps"].to_numpy() == pytest.approx(expect.to_numpy(), rel=1e-12)


def test_a_zero_length_interval_is_skipped() -> None:
    report = _p4()
    last = report["intervals"][-1]["streams"][0]
    report["intervals"].append(
        {"streams": [{**last, "start": last["end"], "seconds": 0, "bytes": 0}]}
    )
    t = parse_iperf3(report, label="x")
    assert len(t.samples) == len(parse_iperf3(_p4(), label="x").samples)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("intervals", 0, "streams", 0, "bytes"), 1e30, "intervals[0].streams[0].bytes is 1e+30"),
        (("intervals", 1, "streams", 2, "seconds"), -1, "intervals[1].streams[2].seconds is -1"),
        (("intervals", 0, "streams", 3, "socket"), "5", 'intervals[0].streams[3].socket is "5"'),
        (("start", "connected"), {"a": 1}, 'start.connected is {"a": 1}; expected a list'),
        (("end", "streams", 1, "sender"), 7, "end.streams[1].sender is 7; expected an object"),
        (("end", "streams", 1, "sender", "mean_rtt"), -3, "end.streams[1].sender.mean_rtt"),
    ],
)
def test_a_field_of_the_wrong_type_names_its_json_path(
    path: tuple, value: object, message: str
) -> None:
    report = _p4()
    cur = report
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    with pytest.raises(Iperf3Error) as e:
        parse_iperf3(report, source="c.json")
    assert str(e.value).startswith(f"c.json: {message}")


def test_a_window_outside_the_capture_is_an_error() -> None:
    res = tcpfair.load_iperf3(FX / "client-P4-3.12.json")  # 3 s
    with pytest.raises(tcpfair.WindowError, match="starts after the data ends"):
        res.metrics((120, 300))
    with pytest.raises(tcpfair.WindowError, match="ends after the data"):
        res.metrics((1, 300))


def test_a_file_beyond_the_size_limit_is_refused_without_reading_it_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tcpfair.importers.iperf3 as mod

    monkeypatch.setattr(mod, "MAX_REPORT_BYTES", 1000)
    f = tmp_path / "big.json"
    f.write_text(" " * 1001)
    with pytest.raises(Iperf3Error, match="big.json: larger than 1000 B, too large"):
        tcpfair.load_iperf3(f)
    f.write_text("{}" + " " * 998)  # exactly the limit: read, then judged as a report
    with pytest.raises(Iperf3Error, match="not an iperf3 -J report"):
        tcpfair.load_iperf3(f)
