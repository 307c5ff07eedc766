"""Bad-input corpus: packet captures and Flent files given to ``tcpfair fairness``.

Each case is a file a user could hand over by mistake or after an interrupted copy: a
text file named .pcap, a capture cut inside a record, a damaged record length (which must
not make the reader allocate gigabytes), a link type we do not read, a capture with no
TCP, a gzip file that is not Flent's, a Flent file from a newer format or with wrong
values. Every one fails with one line naming the file, exit 2, and changes nothing.
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Callable
from pathlib import Path

import dpkt
import pytest
from badinput import fails_cleanly
from flentgen import tcp_nup, write
from pcapgen import bulk, write_capture

A = (("10.0.0.1", 40000), ("10.0.0.2", 5201))
ROOT = Path(__file__).resolve().parent.parent
IPERF3 = ROOT / "examples" / "reno-vs-bbr" / "reno.json"


def _good(work: Path) -> Path:
    segs = bulk(*A, n=64, size=3000, start=0.25, every=1 / 32, ack_after=0.125)
    return write_capture(work / "good.pcap", segs)


def _text(work: Path) -> list[str]:
    (work / "x.pcap").write_text("this is not a capture\n")
    return ["x.pcap"]


def _empty(work: Path) -> list[str]:
    (work / "x.pcap").write_bytes(b"")
    return ["x.pcap"]


def _cut(work: Path) -> list[str]:
    data = _good(work).read_bytes()
    (work / "cut.pcap").write_bytes(data[: len(data) - 30])
    return ["cut.pcap"]


def _cut_pcapng(work: Path) -> list[str]:
    segs = bulk(*A, n=64, size=3000, start=0.25, every=1 / 32, ack_after=0.125)
    data = write_capture(work / "g.pcapng", segs, fmt="pcapng").read_bytes()
    (work / "cut.pcapng").write_bytes(data[: len(data) - 7])
    return ["cut.pcapng"]


def _huge_record(work: Path) -> list[str]:
    data = bytearray(_good(work).read_bytes())
    data[24 + 8 : 24 + 12] = struct.pack("<I", 0xFFFFFFF0)  # first record's caplen
    (work / "huge.pcap").write_bytes(bytes(data))
    return ["huge.pcap"]


def _linktype(work: Path) -> list[str]:
    with (work / "wifi.pcap").open("wb") as f:
        dpkt.pcap.Writer(f, linktype=105)  # 802.11
    return ["wifi.pcap"]


def _no_packets(work: Path) -> list[str]:
    with (work / "none.pcap").open("wb") as f:
        dpkt.pcap.Writer(f)
    return ["none.pcap"]


def _udp_only(work: Path) -> list[str]:
    import socket

    udp = dpkt.udp.UDP(sport=1, dport=2, data=b"x" * 10)
    ip = dpkt.ip.IP(src=socket.inet_aton("10.0.0.1"), dst=socket.inet_aton("10.0.0.2"), p=17)
    ip.data = udp
    eth = dpkt.ethernet.Ethernet(type=dpkt.ethernet.ETH_TYPE_IP, data=ip)
    with (work / "udp.pcap").open("wb") as f:
        w = dpkt.pcap.Writer(f)
        w.writepkt(bytes(eth), ts=1.7e9)
    return ["udp.pcap"]


def _directory(work: Path) -> list[str]:
    (work / "d.pcap").mkdir()
    return ["d.pcap"]


def _missing(work: Path) -> list[str]:
    return ["missing.pcapng"]


def _mixed(work: Path) -> list[str]:
    _good(work)
    return [str(IPERF3), "good.pcap"]


def _capture_labels(work: Path) -> list[str]:
    _good(work)
    return ["good.pcap", "--label", "a", "--label", "b"]


def _flent_text(work: Path) -> list[str]:
    (work / "x.flent.gz").write_text("not gzip, not json")
    return ["x.flent.gz"]


def _flent_cut_gzip(work: Path) -> list[str]:
    data = write(work / "g.flent.gz", tcp_nup()).read_bytes()
    (work / "x.flent.gz").write_bytes(data[: len(data) // 2])
    return ["x.flent.gz"]


def _flent_gzip_capture(work: Path) -> list[str]:
    (work / "c.pcap.gz").write_bytes(gzip.compress(_good(work).read_bytes()))
    return ["c.pcap.gz"]


def _flent_mutate(fn: Callable[[dict], None]) -> Callable[[Path], list[str]]:
    def case(work: Path) -> list[str]:
        obj = tcp_nup()
        fn(obj)
        write(work / "x.flent.gz", obj)
        return ["x.flent.gz"]

    return case


def _set(path: str, value: object) -> Callable[[dict], None]:
    def fn(obj: dict) -> None:
        keys = path.split("/")
        d = obj
        for k in keys[:-1]:
            d = d[int(k)] if isinstance(d, list) else d[k]
        last = keys[-1]
        if isinstance(d, list):
            d[int(last)] = value
        else:
            d[last] = value

    return fn


def _drop_tcp(obj: dict) -> None:
    obj["results"] = {"Ping (ms) ICMP": obj["results"]["Ping (ms) ICMP"]}


def _interval(value: str, iperf3: bool = False) -> Callable[[Path], list[str]]:
    def case(work: Path) -> list[str]:
        target = str(IPERF3) if iperf3 else str(_good(work).name)
        return [target, "--interval", value]

    return case


CASES: dict[str, tuple[Callable[[Path], list[str]], tuple[str, ...]]] = {
    "interval-zero": (_interval("0s"), ("--interval", "'0s'", "positive")),
    "interval-ninety-minutes": (_interval("90min"), ("--interval 90min", "1ms to 60min")),
    "interval-no-unit-word": (_interval("often"), ("--interval 'often'", "e.g. 1s")),
    "interval-for-iperf3": (_interval("1s", iperf3=True), ("reno.json is iperf3 output",)),
    "text-named-pcap": (_text, ("x.pcap", "not a packet capture", "pcap or pcapng")),
    "empty-pcap": (_empty, ("x.pcap", "empty")),
    "pcap-cut-in-a-record": (_cut, ("cut.pcap", "truncated")),
    "pcapng-cut-in-a-block": (_cut_pcapng, ("cut.pcapng", "truncated")),
    "pcap-record-length-4gb": (_huge_record, ("huge.pcap", "4294967280 bytes", "damaged")),
    "pcap-link-type-80211": (_linktype, ("wifi.pcap", "link type 105", "readable")),
    "pcap-no-packets": (_no_packets, ("none.pcap", "no IP packet")),
    "pcap-udp-only": (_udp_only, ("udp.pcap", "no TCP packet")),
    "pcap-is-a-directory": (_directory, ("d.pcap", "directory")),
    "pcap-missing": (_missing, ("missing.pcapng", "no such file")),
    "iperf3-and-capture-mixed": (_mixed, ("good.pcap (capture)", "one kind")),
    "capture-two-labels-one-file": (_capture_labels, ("2 --label for 1 files",)),
    "flent-not-gzip-not-json": (_flent_text, ("x.flent.gz", "not a Flent data file")),
    "flent-gzip-cut": (_flent_cut_gzip, ("x.flent.gz", "truncated gzip")),
    "flent-gzip-holding-a-capture": (_flent_gzip_capture, ("c.pcap.gz", "decompress")),
    "flent-version-99": (
        _flent_mutate(_set("version", 99)),
        ("x.flent.gz", "version 99", "1 to 4"),
    ),
    "flent-no-tcp-series": (
        _flent_mutate(_drop_tcp),
        ("x.flent.gz", "no per-flow TCP throughput series", "Ping (ms) ICMP"),
    ),
    "flent-x-values-backwards": (
        _flent_mutate(_set("x_values/3", 0.1)),
        ("x.flent.gz", "x_values[3] is 0.1", "increasing"),
    ),
    "flent-negative-rate": (
        _flent_mutate(_set("results/TCP upload::1/4", -3)),
        ("x.flent.gz", "results['TCP upload::1'][4] is -3", "≥ 0"),
    ),
    "flent-rate-is-text": (
        _flent_mutate(_set("results/TCP upload::2/2", "8")),
        (
            "x.flent.gz",
            "results['TCP upload::2'][2] is '8'",
        ),
    ),
    # session 13's mutation checker: each of these two was an internal error
    "flent-rate-1e30": (  # OverflowError: Python int too large to convert to C long
        _flent_mutate(_set("results/TCP upload::1/0", 1e30)),
        ("x.flent.gz", "results['TCP upload::1'][0] is 1e+30", "at most 1e+08"),
    ),
    "flent-step-1e30": (  # OverflowError, as above
        _flent_mutate(_set("metadata/STEP_SIZE", 1e30)),
        ("x.flent.gz", "STEP_SIZE is 1e+30", "at most 86400"),
    ),
    "flent-series-too-short": (
        _flent_mutate(_set("results/TCP upload::1", [1.0, 2.0])),
        ("x.flent.gz", "has 2 values for 26 x_values"),
    ),
    "flent-step-zero-one-point": (
        _flent_mutate(
            lambda o: (
                o.update(x_values=[0.0], results={"TCP upload::1": [1.0]})
                or o["metadata"].update(STEP_SIZE=0)
            )
        ),
        ("x.flent.gz", "STEP_SIZE is 0", "> 0"),
    ),
    "flent-json-array": (
        lambda w: [str(write(w / "x.flent.gz", [1, 2]).name)],  # type: ignore[arg-type]
        ("x.flent.gz", "not an object"),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_import_fails_cleanly(name: str, tmp_path: Path) -> None:
    make, mentions = CASES[name]
    work = tmp_path / "work"
    work.mkdir()
    args = make(work)
    fails_cleanly(["fairness", *args], mentions=mentions, unchanged=[work], cwd=work)


def test_capture_needs_the_kernel_backend(tmp_path: Path) -> None:
    fails_cleanly(
        ["run", "lab10-reno-vs-reno", "--capture", "-o", str(tmp_path / "run")],
        mentions=("--capture", "--backend kernel"),
        unchanged=[tmp_path],
    )
