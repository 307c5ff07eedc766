"""Captures of real TCP: the suite makes its own and checks the importer against iperf3.

Needs root, ``ip netns`` and iperf3 (skips with the reason otherwise). A network
namespace of our own (``tfcap-<hex>``, deleted afterwards whatever happens) runs three
iperf3 tests at once on its loopback device, each paced to a different rate (5, 10 and
20 Mbit/s, 8 KiB writes so the pacing is fine-grained), while
``tcpfair.kernel.capture.PacketCapture`` writes the loopback's packets to a pcap. Issue 12's
"done when": ``tcpfair fairness`` on that capture gives each flow's throughput within 2 %
of what iperf3's own JSON says it received, and the same Jain's index within 0.01.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcpfair import metrics as m
from tcpfair.cli import cli
from tcpfair.kernel import tools as T
from tcpfair.kernel.capture import PacketCapture

RATES = ("5M", "10M", "20M")
BASE_PORT = 5301
SECONDS = 4


def _problems() -> list[str]:
    if not sys.platform.startswith("linux"):
        return ["not Linux"]
    out = []
    if os.geteuid() != 0:
        out.append("not root")
    for name in ("ip", "iperf3", "cat"):
        if T.tool_paths()[name] is None:
            out.append(f"no {name} in {', '.join(T.SYSTEM_DIRS)}")
    return out


pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(bool(_problems()), reason="; ".join(_problems()) or "ok"),
]


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        T.absolute(list(argv)), capture_output=True, text=True, check=check, env=T.child_env()
    )


@pytest.fixture
def netns() -> Iterator[str]:
    ns = f"tfcap-{secrets.token_hex(3)}"
    _run("ip", "netns", "add", ns)
    try:
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        yield ns
    finally:
        _run("ip", "netns", "delete", ns, check=False)
    assert ns not in _run("ip", "netns", "list").stdout


def _listening(ns: str, port: int) -> bool:
    # iperf3 listens on :: (tcp6) where IPv6 is up, else on 0.0.0.0 (tcp)
    text = _run("ip", "netns", "exec", ns, "cat", "/proc/net/tcp", "/proc/net/tcp6").stdout
    return any(
        len(f := line.split()) > 3 and f[1].endswith(f":{port:04X}") and f[3] == "0A"
        for line in text.splitlines()
    )


def _iperf3_pairs(ns: str, out: Path) -> list[Path]:
    servers = [
        subprocess.Popen(
            T.absolute(["ip", "netns", "exec", ns, "iperf3", "-s", "-1", "-p", str(BASE_PORT + i)]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=T.child_env(),
        )
        for i in range(len(RATES))
    ]
    try:
        deadline = time.monotonic() + 10
        while not all(_listening(ns, BASE_PORT + i) for i in range(len(RATES))):
            assert time.monotonic() < deadline, "iperf3 servers did not start"
            time.sleep(0.05)
        files = [out / f"flow{i}.json" for i in range(len(RATES))]
        clients = []
        for i, rate in enumerate(RATES):
            argv = ["ip", "netns", "exec", ns, "iperf3", "-c", "127.0.0.1"]
            argv += ["-p", str(BASE_PORT + i), "-t", str(SECONDS), "-b", rate, "-l", "8K", "-J"]
            clients.append(
                subprocess.Popen(
                    T.absolute(argv),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    env=T.child_env(),
                )
            )
        for c, f in zip(clients, files, strict=True):
            stdout, stderr = c.communicate(timeout=SECONDS + 30)
            assert c.returncode == 0, stderr
            f.write_text(stdout)
        return files
    finally:
        for s in servers:
            if s.poll() is None:
                s.terminate()
            s.wait(timeout=10)


def test_loopback_capture_agrees_with_iperf3(netns: str, tmp_path: Path) -> None:
    cap_path = tmp_path / "lo.pcap"
    with PacketCapture(cap_path, "lo", namespace=netns) as cap:
        files = _iperf3_pairs(netns, tmp_path)
        time.sleep(0.2)  # the last ACKs
    assert cap.packets > 0
    res = CliRunner().invoke(cli, ["fairness", str(cap_path), "--format", "json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    got = {row["label"].split("→")[0]: row["throughput_bps"] for row in rep["rows"]}
    # iperf3's own view: what the receiving side counted, over its own test time
    want = {}
    for f in files:
        report = json.loads(f.read_text())
        port = report["start"]["connected"][0]["local_port"]
        want[f"127.0.0.1:{port}"] = report["end"]["sum_received"]["bits_per_second"]
    assert sorted(got) == sorted(want), (got, want, res.stderr)
    for client, bps in want.items():  # shown with pytest -s
        print(f"{client}: capture {got[client] / 1e6:.4f}, iperf3 {bps / 1e6:.4f} Mbit/s")
    print(f"JFI: capture {rep['jfi']:.4f}, iperf3 {m.jain(list(want.values())):.4f}")
    for client, bps in want.items():
        assert got[client] == pytest.approx(bps, rel=0.02), client
    jfi_iperf3 = m.jain(list(want.values()))
    assert abs(rep["jfi"] - jfi_iperf3) <= 0.01
    # the three paced rates really differ: the index is far from 1 ((35)² / (3·525) ≈ 0.78)
    assert jfi_iperf3 < 0.85
    # iperf3's three control connections were seen and left out
    assert "left out 3 small connection(s)" in res.stderr


SCENARIO = """
name = "capture"
duration = "5s"
seed = 1

[bottleneck]
rate = "20Mbit"
buffer = "1bdp"

[[flows]]
cca = "reno"
rtt = "20ms"

[[flows]]
cca = "cubic"
rtt = "40ms"

[measure]
interval = "1s"
from = "1s"
"""


@pytest.mark.skipif(
    not (os.environ.get("TCPFAIR_LINKEM") or T.find_linkem(None).path),
    reason="no tcpfair-linkem built (./dev setup, or TCPFAIR_LINKEM)",
)
def test_kernel_run_capture_gives_the_runs_throughputs(tmp_path: Path) -> None:
    """``tcpfair run --backend kernel --capture``: capture.pcap, read back on the run's
    clock, gives each flow the bytes and the mean throughput the run measured (iperf3's
    receiver reports)."""
    from tcpfair.importers.pcap import load_capture
    from tcpfair.result import RunResult

    sc = tmp_path / "capture.toml"
    sc.write_text(SCENARIO)
    run_dir = tmp_path / "run"
    p = subprocess.run(
        [str(Path(sys.executable).with_name("tcpfair")), "run", str(sc), "--backend", "kernel"]
        + ["--capture", "--no-plot", "-o", str(run_dir), "--format", "json", "--accept-invalid"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    run = RunResult.load(run_dir)
    meta = run.meta["capture"]
    assert (run_dir / "capture.pcap").is_file() and meta["packets"] > 0
    assert meta["kernel_drops"] == 0
    cap = load_capture(run_dir / "capture.pcap", t_zero=meta["t0_unix_s"])
    # sender g is 10.1.g.2 (tcpfair.kernel.topology)
    group_of = {
        f: int(c.split(".")[2])
        for f, c in zip(cap.flows["flow"], cap.flows["connection"], strict=True)
    }
    flow_of_group = dict(zip(run.flows["group"], run.flows["flow"], strict=True))
    assert sorted(group_of.values()) == [0, 1]
    run_bytes = run.flows.set_index("flow")["bytes"]
    cap_bytes = cap.flows.set_index("flow")["bytes"]
    for f, g in group_of.items():
        # bytes: the capture also counts iperf3's 37-byte cookie and what was still in
        # flight when the server stopped counting (≤ one window: 1 % here)
        assert cap_bytes[f] == pytest.approx(run_bytes[flow_of_group[g]], rel=0.01), g
        # the mean over the flow's life: the capture's first to last byte against iperf3's
        # reports (Σ bytes·8 / Σ seconds). Not the mean over the run's window: the run
        # places iperf3's reports on its clock by launch time plus an estimate of the
        # set-up time, the capture by the packets' own times, and with rates still moving a
        # 0.1 s shift of a 4 s window changes its mean by several % (issue 12 report)
        life_cap = cap.flow_throughputs(cap.data_span())[f]
        s = run.samples[run.samples["flow"] == flow_of_group[g]]
        life_run = s["bytes"].sum() * 8 / s["dt_s"].sum()
        w = run.default_window()
        in_window = (cap.flow_throughputs(w)[f], run.flow_throughputs(w)[flow_of_group[g]])
        print(
            f"flows.{g}: bytes {cap_bytes[f]} capture, {run_bytes[flow_of_group[g]]} run; "
            f"life {life_cap / 1e6:.4f} vs {life_run / 1e6:.4f} Mbit/s; window {w}: "
            f"{in_window[0] / 1e6:.4f} vs {in_window[1] / 1e6:.4f} Mbit/s"
        )
        assert life_cap == pytest.approx(life_run, rel=0.02), g
    assert cap.flows["capture_at"].tolist() == ["receiver", "receiver"]


TCPDUMP = T.find_tool("tcpdump")


def _wait_for_line(p: subprocess.Popen[str], text: str, timeout: float) -> None:
    """Read ``p``'s stderr until a line holds ``text`` (tcpdump: "listening on …")."""
    import select

    assert p.stderr is not None
    fd = p.stderr.fileno()  # raw reads: a buffered readline would hide lines from select
    seen = b""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        chunk = os.read(fd, 4096) if ready else b""
        seen += chunk
        if text.encode() in seen:
            return
        if ready and not chunk:
            break  # the process ended
    raise AssertionError(f"{p.args!r}: no {text!r} on stderr within {timeout} s: {seen!r}")


@pytest.mark.skipif(TCPDUMP is None, reason="no tcpdump in the system folders (optional)")
def test_tcpdump_and_our_capture_read_alike(netns: str, tmp_path: Path) -> None:
    """Interoperability, where tcpdump happens to be installed (tcpfair never needs it):
    tcpdump reads our pcap, and tcpdump's own captures — of lo (Ethernet) and of "any"
    (Linux cooked, nanosecond times) — give the same flows as ours, within 0.1 %."""
    assert TCPDUMP is not None
    ours, lo, any_ = tmp_path / "ours.pcap", tmp_path / "lo.pcap", tmp_path / "any.pcap"
    dumps = [
        subprocess.Popen(
            T.absolute(["ip", "netns", "exec", netns])
            + [TCPDUMP, "-i", iface, "-s", "128", *extra, "-w", str(path), "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=T.child_env(),
        )
        for iface, path, extra in (
            ("lo", lo, []),
            ("any", any_, ["--time-stamp-precision=nano"]),
        )
    ]
    try:
        for p in dumps:
            _wait_for_line(p, "listening on", 10)
        with PacketCapture(ours, "lo", namespace=netns):
            _iperf3_pairs(netns, tmp_path)
            time.sleep(0.2)
    finally:
        for p in dumps:
            p.send_signal(2)  # SIGINT: tcpdump writes its buffer and exits
            p.communicate(timeout=10)
    shown = subprocess.run(
        [TCPDUMP, "-r", str(ours), "-nn", "-c", "1"], capture_output=True, text=True
    )
    assert shown.returncode == 0 and "Flags [S]" in shown.stdout, shown.stderr
    from tcpfair.importers.pcap import load_capture

    results = {p.name: load_capture(p) for p in (ours, lo, any_)}
    thr = {
        name: dict(zip(r.flows["connection"], r.flow_throughputs(), strict=True))
        for name, r in results.items()
    }
    assert len(thr["ours.pcap"]) == len(RATES)
    for name in ("lo.pcap", "any.pcap"):
        assert thr[name].keys() == thr["ours.pcap"].keys()
        for conn, bps in thr["ours.pcap"].items():
            assert thr[name][conn] == pytest.approx(bps, rel=1e-3), (name, conn)
