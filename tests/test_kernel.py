"""Kernel backend end to end: real namespaces, real Linux TCP, real iperf3, linkem.

Needs root, ``ip netns``, iperf3 and a built tcpfair-linkem; skips with the reason
otherwise. All traffic stays inside the namespaces each run creates (10.x addresses that
exist only there). After every test — including interrupted and killed runs — no
namespace, state file, iptables rule or process of ours may be left.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from kernel_support import KERNEL_MARKS

from tcpfair.kernel.procs import STATE_DIR, list_namespaces
from tcpfair.kernel.topology import PREFIX
from tcpfair.result import RunResult
from tcpfair.spec import from_dict

pytestmark = KERNEL_MARKS

TCPFAIR = Path(sys.executable).with_name("tcpfair")


def _our_processes() -> set[tuple[int, str]]:
    """(pid, exe) of iperf3 and tcpfair-linkem processes that are not children of another
    live tcpfair (another user's run on this machine is not ours to judge)."""
    out = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            exe = os.readlink(d / "exe")
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if exe.endswith(("/iperf3", "/tcpfair-linkem", "/tcpfair-traffic")):
            if ppid in (1, os.getpid()) or not Path(f"/proc/{ppid}").exists():
                out.add((int(d.name), exe))
    return out


def _foreign(run_id: str) -> bool:
    """A run of another live process (e.g. a concurrent sweep), not one of this test's."""
    f = STATE_DIR / f"{run_id}.json"
    try:
        owner = int(json.loads(f.read_text())["owner_pid"])
    except (OSError, ValueError, KeyError):
        return False
    return owner != os.getpid() and Path(f"/proc/{owner}").exists()


def _ours(names: set[str]) -> list[str]:
    return sorted(n for n in names if n.startswith(PREFIX) and not _foreign(n.split("-")[1]))


def _iptables() -> str:
    p = subprocess.run(["iptables-legacy-save"], capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else ""


def _strip_comments(s: str) -> list[str]:
    return [ln for ln in s.splitlines() if not ln.startswith("#")]


@pytest.fixture(autouse=True)
def nothing_left_behind() -> Iterator[None]:
    ns0 = set(list_namespaces())
    st0 = set(STATE_DIR.glob("*.json")) if STATE_DIR.is_dir() else set()
    pr0 = _our_processes()
    ipt0 = _iptables()
    yield
    deadline = time.monotonic() + 5  # PDEATHSIG'd children may need a moment to exit
    while time.monotonic() < deadline and _our_processes() - pr0:
        time.sleep(0.1)
    assert _ours(set(list_namespaces()) - ns0) == []
    states = (set(STATE_DIR.glob("*.json")) if STATE_DIR.is_dir() else set()) - st0
    assert [f for f in states if not _foreign(f.stem)] == []
    assert _our_processes() - pr0 == set()
    assert _strip_comments(_iptables()) == _strip_comments(ipt0)


def run(sc: dict[str, Any]) -> RunResult:
    import tcpfair

    return tcpfair.run(from_dict(sc), backend="kernel")


def check(result: RunResult, name: str) -> dict[str, Any]:
    return next(c for c in result.meta["checks"] if c["name"] == name)


def base(**over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": "t",
        "duration": "10s",
        "seed": 3,
        "bottleneck": {"rate": "20Mbit", "buffer": "1bdp"},
        "flows": [{"cca": "reno", "rtt": "20ms"}],
        "measure": {"interval": "1s", "from": "2s"},
    }
    d.update(over)
    return d


# --------------------------------------------------------------------------------------
def test_rtt_rate_and_buffer_are_emulated() -> None:
    # Two groups with different RTTs share a 40 Mbit/s tbf with a 1-BDP buffer
    # (mean RTT 35 ms → 40e6/8 × 0.035 = 175 000 B); the second starts 2 s later.
    r = run(
        base(
            duration="12s",
            bottleneck={"rate": "40Mbit", "buffer": "1bdp"},
            flows=[{"cca": "reno", "rtt": "10ms"}, {"cca": "cubic", "rtt": "60ms", "start": "2s"}],
            measure={"interval": "1s", "from": "4s"},
        )
    )
    # the staggered start is honoured: flow 1's first 1-s interval ends about 3 s in,
    # and it runs round(12 − 2) = 10 s
    first = r.samples.groupby("flow")["t_s"].min()
    assert 0.9 < first[0] < 1.2 and 2.9 < first[1] < 3.5
    assert r.samples[r.samples["flow"] == 1]["dt_s"].sum() == pytest.approx(10, abs=0.2)
    # idle RTT per group (SYN → RST through the path) within 0.5 ms of the configured RTT
    for g, want in ((0, 0.010), (1, 0.060)):
        c = check(r, f"rtt.flows.{g}")
        assert abs(c["value"] - want) < 0.5e-3, c["message"]
    # goodput: everything the receivers got, over the span the flows were active, is at
    # most the MSS/frame share of the rate (1448/1514) and close to it
    cap_goodput = 40e6 * 1448 / 1514
    span = r.samples["t_s"].max() - (r.samples["t_s"] - r.samples["dt_s"]).min()
    goodput = r.flows["bytes"].sum() * 8 / span
    assert 0.9 * cap_goodput < goodput <= 1.005 * cap_goodput
    # the buffer limit: the backlog reaches it, never exceeds it, and tail drops happen
    assert r.scenario is not None and r.scenario["bottleneck"]["buffer_bytes"] == 175_000
    assert 0.6 * 175_000 < r.link["queue_bytes"].max() <= 175_000
    assert r.link["drops"].sum() > 0 and r.meta["link_totals"]["drops"] == r.link["drops"].sum()
    # the result is complete and labelled like the simulator's
    assert list(r.flows["cca"]) == ["reno", "cubic"]
    assert r.meta["backend"] == "kernel" and r.meta["kernel"]["gso"] is False
    assert r.meta["versions"]["iperf3"] and r.meta["versions"]["kernel"] == os.uname().release
    assert {
        "emulator.lateness_mean",
        "emulator.lateness_max",
        "goodput.capacity",
        "cpu.emulator",
    } <= {c["name"] for c in r.meta["checks"]}
    assert r.meta["valid"] == all(c["ok"] for c in r.meta["checks"])


def test_random_loss_is_measured() -> None:
    r = run(base(bottleneck={"rate": "10Mbit", "buffer": "1bdp", "loss": 0.01}))
    em = r.meta["kernel"]["emulator"]["a2b"]
    n, lost = em["rx_pkts"], em["loss_drops"]
    # Bernoulli(0.01) over n data-direction packets: within 4 standard deviations
    assert n > 5000
    assert abs(lost / n - 0.01) < 4 * (0.01 * 0.99 / n) ** 0.5
    assert check(r, "loss.rate")["ok"]
    assert r.flows["retransmits"].sum() >= 0.5 * lost  # TCP saw (most of) them as losses
    # the sender namespace's own MIB counts the same retransmissions as iperf3's TCP_INFO
    # (a new namespace's counters start at zero; iperf3's control connection sends a few
    # small segments through the same 1 % loss, hence up to two more)
    snd = r.meta["kernel"]["tcp_counters"]["0"]["sender"]
    assert 0 <= snd["Tcp.RetransSegs"] - r.flows["retransmits"].sum() <= 2
    assert snd.get("TcpExt.TCPSackRecovery", 0) + snd.get("TcpExt.TCPLossProbes", 0) > 0
    assert r.meta["kernel"]["tcp_counters"]["0"]["receiver"]["Tcp.InSegs"] > n * 0.9


def test_tbf_sends_at_its_rate_while_backlogged() -> None:
    # issue 4: the rate is emulated within 1 %. One CUBIC flow (20 ms) into a 1.5 MB buffer
    # at 40 Mbit/s: after a loss the window is 0.7 × (100 kB + 1.5 MB), so the queue stays
    # above 0.5 MB, a 100 ms sampling interval's worth — the link cannot idle inside such
    # an interval whatever the sender does, and tbf's counters over those intervals are its
    # rate (`rate.bottleneck`; intervals with less backlog measure the flows, not the link).
    r = run(
        base(
            duration="8s",
            bottleneck={"rate": "40Mbit", "buffer": "1500kB"},
            flows=[{"cca": "cubic", "rtt": "20ms"}],
        )
    )
    lk = r.link.assign(dt=r.link["t_s"].diff(), prev_q=r.link["queue_bytes"].shift())
    full = lk[lk["prev_q"] * 8 >= 40e6 * lk["dt"]]
    assert full["dt"].sum() > 4.0
    wire = full["tx_bytes"].sum() * 8 / full["dt"].sum()
    c = check(r, "rate.bottleneck")
    assert c["value"] == pytest.approx(wire, rel=1e-9) and c["limit"] == 40e6
    assert wire <= 40e6 * 1.01, c["message"]  # a token bucket never sends faster
    # Below the rate only if the machine was busy — tbf's dequeue timer fired late and
    # lost the tokens beyond its burst — and then the run must say so.
    busy_machine = any(
        x["grade"] != "ok" for x in r.meta["checks"] if x["name"].startswith(("cpu.", "emulator."))
    )
    if not busy_machine or wire >= 40e6 * 0.99:
        assert wire == pytest.approx(40e6, rel=0.01), c["message"]
        assert c["grade"] == "ok"
    else:
        assert c["grade"] in ("warning", "invalid"), c["message"]


def test_red_in_linkem_keeps_the_queue_between_thresholds() -> None:
    r = run(
        base(
            bottleneck={
                "rate": "10Mbit",
                "buffer": "200pkt",
                "aqm": {"kind": "red", "min_th": "10pkt", "max_th": "30pkt", "max_p": 0.1},
            },
            flows=[{"cca": "reno", "rtt": "20ms"}, {"cca": "reno", "rtt": "20ms"}],
        )
    )
    assert r.meta["kernel"]["bottleneck"] == "linkem"
    totals = r.meta["link_totals"]
    assert totals["red_drops"] > 0
    # with RED in front the 200-packet hard limit is never reached
    assert totals["drops"] == totals["red_drops"]
    q = r.link[r.link["t_s"] > 2]["queue_pkts"]
    assert q.max() < 200 and 3 < q.mean() < 45
    # linkem serialises at the configured rate: in 100 ms sampling intervals that start and
    # end with a backlog it sends 10 Mbit/s (the median, since the queue may still have
    # run dry inside a few of them; one 1514 B frame is 1.2 % of an interval's bytes)
    lk = r.link.assign(dt=r.link["t_s"].diff(), prev_q=r.link["queue_pkts"].shift())
    busy = lk[(lk["queue_pkts"] > 0) & (lk["prev_q"] > 0)]
    assert len(busy) > 20
    assert (busy["tx_bytes"] * 8 / busy["dt"]).median() == pytest.approx(10e6, rel=0.02)


def test_reno_vs_reno_is_fair() -> None:
    # Lab 10 §4: two hosts, same CCA and RTT → JFI close to 1 (0.996 in the lab)
    r = run(
        base(
            duration="15s",
            flows=[{"cca": "reno", "rtt": "10ms"}, {"cca": "reno", "rtt": "10ms"}],
            measure={"interval": "1s", "from": "3s"},
        )
    )
    assert r.metrics()["jfi"] > 0.95


def test_bbr_beats_cubic_at_a_shallow_buffer() -> None:
    # 0.25 BDP buffer: BBR's model keeps sending at its bandwidth estimate through the
    # losses that make CUBIC back off, so BBR takes most of the link.
    r = run(
        base(
            duration="12s",
            bottleneck={"rate": "50Mbit", "buffer": "0.25bdp"},
            flows=[{"cca": "cubic", "rtt": "20ms"}, {"cca": "bbr", "rtt": "20ms"}],
            measure={"interval": "1s", "from": "3s"},
        )
    )
    thr = r.group_throughputs()
    assert thr[1] / (thr[0] + thr[1]) > 0.7
    assert list(r.flows["cca"]) == ["cubic", "bbr"]


# -------------------------------------------------------------------------------- cleanup
def _start_cli(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    toml = tmp_path / "long.toml"
    toml.write_text(
        'name = "long"\nduration = "20s"\n[bottleneck]\nrate = "10Mbit"\nbuffer = "1bdp"\n'
        '[[flows]]\ncca = "reno"\nrtt = "20ms"\n[[flows]]\ncca = "cubic"\nrtt = "30ms"\n'
    )
    before = set(STATE_DIR.glob("*.json")) if STATE_DIR.is_dir() else set()
    p = subprocess.Popen(
        [
            str(TCPFAIR),
            "run",
            str(toml),
            "--backend",
            "kernel",
            "-o",
            str(tmp_path / "out"),
            "--no-plot",
            "--format",
            "json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # a suite started in the background (`cmd &` in a script) inherits SIGINT ignored;
        # the user at a terminal this test stands for has it at its default
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 300  # includes waiting for another kernel run's lock
    while time.monotonic() < deadline:
        for f in (set(STATE_DIR.glob("*.json")) if STATE_DIR.is_dir() else set()) - before:
            try:
                rec = json.loads(f.read_text())
                procs = rec["procs"]
            except (OSError, ValueError, KeyError):
                continue
            if rec.get("owner_pid") != p.pid:
                continue  # someone else's run
            if sum(p["name"].startswith("client") for p in procs) == 2:
                time.sleep(1.0)  # traffic is flowing
                return p, f
        time.sleep(0.05)
    p.kill()
    p.communicate()
    raise AssertionError(
        "the run did not start its clients in 20 s: " + p.stderr.read().decode() if p.stderr else ""
    )


def _nothing_of_run_left(rid: str, state: Path, tmp_path: Path) -> None:
    assert not any(n.startswith(f"{PREFIX}{rid}-") for n in list_namespaces())
    assert not state.exists()
    assert not list(Path(tempfile.gettempdir()).glob(f"tcpfair-{rid}-*"))  # the work folder
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("sig", "times", "gap_s"),
    [
        (signal.SIGINT, 1, 0.3),
        (signal.SIGTERM, 1, 0.3),
        (signal.SIGINT, 3, 0.3),
        # impatient Ctrl-C presses land during the tear-down itself: 5 of them, at three
        # paces (issue 8: exit -2 instead of 130 in 4 of 6 trials, the work folder leaked
        # in 2 of 6)
        (signal.SIGINT, 5, 0.02),
        (signal.SIGINT, 5, 0.1),
        (signal.SIGINT, 5, 0.3),
        (signal.SIGINT, 5, 0.6),
    ],
)
def test_interrupted_run_leaves_nothing(tmp_path: Path, sig: int, times: int, gap_s: float) -> None:
    p, state = _start_cli(tmp_path)
    rid = json.loads(state.read_text())["run_id"]
    assert any(n.startswith(f"{PREFIX}{rid}-") for n in list_namespaces())
    for _ in range(times):
        p.send_signal(sig)
        time.sleep(gap_s)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err.decode()
    assert err.decode().strip().splitlines() == ["interrupted"]
    _nothing_of_run_left(rid, state, tmp_path)


@pytest.mark.parametrize(
    ("child", "named"),
    [
        ("linkem", "the emulator tcpfair-linkem"),
        ("client0", "the iperf3 client of flows.0"),
        ("server1", "the iperf3 server of flows.1"),
    ],
)
def test_a_killed_child_stops_the_run_at_once(tmp_path: Path, child: str, named: str) -> None:
    # issue 8: a killed linkem left the run waiting ~50 s and then blamed iperf3; a killed
    # client was reported at the end as "the file is empty"
    p, state = _start_cli(tmp_path)
    rec = json.loads(state.read_text())
    pid = next(pr["pid"] for pr in rec["procs"] if pr["name"] == child)
    t0 = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    _, err = p.communicate(timeout=60)
    took = time.monotonic() - t0
    lines = err.decode().strip().splitlines()
    assert p.returncode == 2, err.decode()
    assert len(lines) == 1, lines
    assert f"{named} (pid {pid}) was killed by signal 9 (SIGKILL)" in lines[0]
    assert took < 10, f"the run took {took:.1f} s to stop"
    _nothing_of_run_left(rec["run_id"], state, tmp_path)


def test_planted_tools_and_emulator_never_run(tmp_path: Path) -> None:
    # a user who can write to a folder early in root's $PATH, or to the folder root runs
    # tcpfair in, plants tools there; the run must use the system's (and say which)
    marker = tmp_path / "planted-tool-ran"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("ip", "tc", "sysctl", "ethtool", "iperf3", "cat", "tcpfair-linkem"):
        for where in (bin_dir / name, tmp_path / name):
            where.write_text(f"#!/bin/sh\ntouch {marker}\n")
            where.chmod(0o755)
    rel = tmp_path / "target" / "release"
    rel.mkdir(parents=True)
    (rel / "tcpfair-linkem").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (rel / "tcpfair-linkem").chmod(0o755)
    (tmp_path / "s.toml").write_text(
        'name = "planted"\nduration = "3s"\n[bottleneck]\nrate = "10Mbit"\n'
        'buffer = "1bdp"\n[[flows]]\ncca = "reno"\nrtt = "20ms"\n'
    )
    env = {**os.environ, "PATH": f"{bin_dir}:.:{os.environ['PATH']}"}
    p = subprocess.run(
        [
            str(TCPFAIR),
            "run",
            "s.toml",
            "-b",
            "kernel",
            "-o",
            "out",
            "--no-plot",
            "--accept-invalid",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    assert not marker.exists()
    tools = RunResult.load(tmp_path / "out").meta["kernel"]["tools"]
    for name in ("ip", "tc", "sysctl", "ethtool", "iperf3", "cat"):
        assert os.path.dirname(tools[name]["path"]) in ("/usr/sbin", "/sbin", "/usr/bin", "/bin")
        assert tools[name]["version"]
    assert not tools["tcpfair-linkem"]["path"].startswith(str(tmp_path))
    assert tools["tcpfair-linkem"]["source"] in ("TCPFAIR_LINKEM", "package", "build folder")


def test_killed_run_is_cleaned_up_by_doctor(tmp_path: Path) -> None:
    p, state = _start_cli(tmp_path)
    rec = json.loads(state.read_text())
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=10)
    # children die with their parent (PR_SET_PDEATHSIG); namespaces stay until cleanup
    assert any(n.startswith(f"{PREFIX}{rec['run_id']}-") for n in list_namespaces())
    out = subprocess.run(
        [str(TCPFAIR), "doctor", "--cleanup"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert f"run {rec['run_id']}" in out.stdout and "removed" in out.stdout
    assert not any(n.startswith(f"{PREFIX}{rec['run_id']}-") for n in list_namespaces())
    assert not state.exists()
    assert not list(Path(tempfile.gettempdir()).glob(f"tcpfair-{rec['run_id']}-*"))
    for pr in rec["procs"]:
        assert not Path(f"/proc/{pr['pid']}").exists() or pr["start_time"] is None


def test_capability_errors_come_before_anything_is_created() -> None:
    import tcpfair
    from tcpfair.backends import BackendError

    ns0 = set(list_namespaces())
    with pytest.raises(BackendError, match=r"flows\.1\.cca: 'vegas' is not available.*supports"):
        tcpfair.run(
            from_dict(
                base(flows=[{"cca": "reno", "rtt": "20ms"}, {"cca": "vegas", "rtt": "20ms"}])
            ),
            backend="kernel",
        )
    with pytest.raises(
        BackendError, match=r"bottleneck\.rate: .* above what this machine emulates"
    ):
        tcpfair.run(
            from_dict(base(bottleneck={"rate": "40Gbit", "buffer": "1bdp"})), backend="kernel"
        )
    assert set(list_namespaces()) == ns0


def test_doctor_cleanup_removes_work_folders_of_dead_runs_only() -> None:
    # issue 8: a work folder leaked by an interrupted run was invisible ("leftovers: none")
    from tcpfair.kernel.procs import proc_start_time

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    tmp = Path(tempfile.gettempdir())
    gone = Path(tempfile.mkdtemp(prefix="tcpfair-0dead0-", dir=tmp))
    (gone / "owner.json").write_text(json.dumps({"run_id": "0dead0", "owner_pid": dead.pid}))
    (gone / "client0.out").write_text("{}")
    live = Path(tempfile.mkdtemp(prefix="tcpfair-0a1fe0-", dir=tmp))
    me = {"owner_pid": os.getpid(), "owner_start": proc_start_time(os.getpid())}
    (live / "owner.json").write_text(json.dumps({"run_id": "0a1fe0", **me}))
    try:
        listed = subprocess.run(
            [str(TCPFAIR), "doctor"], capture_output=True, text=True, timeout=60
        ).stdout
        assert "leftover run 0dead0: 0 namespaces, 0 live processes, 1 work folder," in listed
        out = subprocess.run(
            [str(TCPFAIR), "doctor", "--cleanup"], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert not gone.exists()
        assert live.exists() and "skipped: its tcpfair process is still running" in out.stdout
    finally:
        for d in (gone, live):
            if d.exists():
                for f in d.iterdir():
                    f.unlink()
                d.rmdir()


# ------------------------------------------------------- reverse direction and short flows
MIX = """
name = "mix"
duration = "4s"
seed = 3

[bottleneck]
rate = "50Mbit"
buffer = "1bdp"

[[flows]]
cca = "reno"
rtt = "20ms"
label = "forward"

# bbr, so that the check below can tell iperf3's -C from the namespace default (reno); its
# startup (pacing gain 2.89) overfills a 1-BDP buffer, so the reverse queue surely drops
[[flows]]
cca = "bbr"
rtt = "20ms"
direction = "reverse"
label = "reverse"

[[flows]]
cca = "cubic"
rtt = "20ms"
label = "short"
size = { dist = "pareto", mean = "20KB", shape = 1.5, max = "1MB" }
arrivals = { process = "poisson", rate = "50/s" }
start = "0.5s"
stop = "3s"
"""


def _data_sender_ccas(
    ns_suffix: str, port: int, proc: subprocess.Popen[str], before: set[str]
) -> set[str]:
    """While ``proc`` (a kernel run) is going: the congestion controls ``ss -ti`` shows for
    the sockets on ``port`` that have sent over 100 kB, in the run's namespace ending in
    ``ns_suffix`` (its data sender; namespaces in ``before`` are not the run's)."""
    seen: set[str] = set()
    filt = ["state", "established", "(", "sport", "=", f":{port}", ")"]
    while proc.poll() is None and not seen:
        for ns in set(list_namespaces()) - before:
            if not ns.endswith(ns_suffix):
                continue
            cmd = ["ip", "netns", "exec", ns, "ss", "-tin", *filt]
            p = subprocess.run(cmd, capture_output=True, text=True)
            for info in p.stdout.splitlines():
                words = info.split()
                sent = [w for w in words if w.startswith("bytes_sent:")]
                if words and sent and int(sent[0].split(":")[1]) > 100_000:
                    seen.add(words[0])
        time.sleep(0.2)
    return seen


def test_a_reverse_flow_and_short_flows_at_50mbit_leave_nothing_behind(tmp_path: Path) -> None:
    (tmp_path / "mix.toml").write_text(MIX)
    sc = from_dict(tomllib.loads(MIX))
    out = tmp_path / "out"
    before = set(list_namespaces())
    proc = subprocess.Popen(
        [str(TCPFAIR), "run", str(tmp_path / "mix.toml"), "--backend", "kernel", "-o", str(out),
         "--accept-invalid"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    # the reverse entry's data leaves iperf3's server in r1 (port 5201 + 1), sent with -C bbr
    ccas = _data_sender_ccas("-r1", 5202, proc, before)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert ccas == {"bbr"}
    rid = RunResult.load(out).meta["kernel"]["run_id"]
    assert not list(Path(tempfile.gettempdir()).glob(f"tcpfair-{rid}-*"))  # the work folder
    r = RunResult.load(out)
    # the reverse flow ran, through the reverse queue, which it filled together with the
    # forward flow's ACKs: 1 BDP = 50e6 / 8 × 0.02 = 125 000 B
    assert r.flows.set_index("flow").loc[1, "bytes"] > 1_000_000
    rev = r.meta["reverse_link_totals"]
    assert rev["drops"] > 0 and rev["max_queue_bytes"] > 125_000 / 2
    assert r.reverse_link is not None and r.reverse_link["queue_bytes"].max() > 125_000 / 2
    assert r.flows.set_index("flow")["direction"].to_dict() == {0: "forward", 1: "reverse"}
    assert r.metrics()["reverse"]["connections"] == 1
    # the default measured set is the long-lived forward connection alone: the reverse
    # flow and the short flows stay out of the headline metrics and the sweep's ratio
    met = r.metrics()
    thr = r.flow_throughputs(tuple(met["window"]))
    assert met["n_flows"] == 1 and met["jfi"] == 1.0 and met["min_max_ratio"] == 1.0
    assert met["sum_bps"] == pytest.approx(float(thr[0]))
    assert met["utilization"] == pytest.approx(float(thr[0]) / r.meta["capacity_bps"])
    from tcpfair.store import summarize

    summary = json.loads((out / "summary.json").read_text())
    assert math.isnan(summarize(summary)["ratio"])  # one measured entry: no ratio
    # both directions are linkem queues, counting the pure ACKs among their drops
    assert r.meta["kernel"]["bottleneck"] == "linkem"
    assert "ack_drops" in r.reverse_link and "ack_drops" in r.link
    assert 0 <= rev["ack_drops"] <= rev["drops"] + rev["loss_drops"]
    assert rev["tx_bytes"] > r.flows.set_index("flow").loc[1, "bytes"]
    assert any(c["name"] == "emulator.reverse.lateness_mean" for c in r.meta["checks"])
    # every scheduled short flow ran, with the simulator's draws, and completed
    want = sc.short_flow_schedule(2)
    short = r.short_flows
    assert len(short) == len(want) > 50
    assert short["size_bytes"].tolist() == want.size_bytes.tolist()
    assert short["error"].isna().all()
    assert (short["bytes"] == short["size_bytes"]).all() and short["completed"].all()
    # an FCT is at least the handshake and half a round trip for the data: 1.5 RTT
    assert (short["fct_s"] >= 0.030).all()
    assert set(short["cca"]) == {"cubic"}
    assert (short["start_s"] - want.start_ns / 1e9).abs().max() < 0.05


def test_a_lone_short_flow_takes_the_slow_start_time() -> None:
    # one 100 kB reno flow at 0.5 s on an idle 50 Mbit/s path with a 20 ms RTT (a long flow
    # starts only after it has ended). By hand: 100 000 B = 70 segments of 1448 B; slow start
    # from Linux's initial window of 10 sends 10, 20, 40 per round trip (cwnd grows by each
    # ACKed segment), so 3 rounds; the SYN takes a round trip, the last round's data half a
    # round trip plus its serialisation: 40 frames of 1514 B at 50 Mbit/s.
    rtt, rate, mss, frame = 0.020, 50e6, 1448, 1514
    segs = -(-100_000 // mss)
    sent, rounds, cwnd = 0, 0, 10
    while sent < segs:
        last = min(cwnd, segs - sent)
        sent, rounds, cwnd = sent + last, rounds + 1, 2 * cwnd
    assert (segs, rounds, last) == (70, 3, 40)
    expect = (rounds + 0.5) * rtt + last * frame * 8 / rate  # 79.7 ms
    r = run(
        base(
            duration="2s",
            bottleneck={"rate": "50Mbit", "buffer": "1bdp"},
            flows=[
                {"cca": "reno", "rtt": "20ms", "size": "100KB", "start": "0.5s", "stop": "1s",
                 "arrivals": {"process": "fixed", "rate": "1/s"}},
                {"cca": "reno", "rtt": "20ms", "start": "1.2s"},
            ],
            measure={"interval": "100ms"},
        )
    )  # fmt: skip
    short = r.short_flows
    assert len(short) == 1
    fct = float(short["fct_s"].iloc[0])
    assert abs(fct - expect) < rtt, (fct, expect)
    assert short["retransmits"].iloc[0] == 0


def test_reverse_traffic_delays_the_forward_flows_acks() -> None:
    # The same dumbbell (a reverse link in both runs, so the same linkem queues), with and
    # without a reverse Reno flow: its standing queue on b → a is in front of every
    # forward ACK, so the forward flow's mean RTT grows — by about the reverse queue's mean
    # delay (what the ACKs wait), less what the forward queue gives back.
    def forward_run(with_reverse: bool) -> RunResult:
        flows: list[dict[str, Any]] = [{"cca": "reno", "rtt": "20ms"}]
        if with_reverse:
            flows.append({"cca": "reno", "rtt": "20ms", "direction": "reverse"})
        return run(
            base(
                duration="6s",
                bottleneck={"rate": "50Mbit", "buffer": "1bdp", "reverse": {"rate": "50Mbit"}},
                flows=flows,
                # the means compared below are of the window's samples: 20 SRTT and queue
                # samples per run, not 3 of 1 s — the reverse Reno flow's sawtooth lasts
                # ~2 s, and three samples of it put the mean ACK wait anywhere in it
                measure={"interval": "200ms", "from": "2s"},
            )
        )

    def rtt(r: RunResult) -> float:
        return float(r.flows.set_index("flow").loc[0, "mean_rtt_s"])

    def queue_delay(r: RunResult, table: pd.DataFrame) -> float:
        return float(table["queue_bytes"].mean()) * 8 / 50e6

    alone, loaded = forward_run(False), forward_run(True)
    assert loaded.reverse_link is not None and alone.reverse_link is not None
    ack_wait = queue_delay(loaded, loaded.reverse_link)
    assert queue_delay(alone, alone.reverse_link) < 0.001 < ack_wait  # ACKs alone queue ~0
    # measured (1-s samples from 1 s to 4 s): 28.1 → 33.0 ms with ACKs waiting 7.0 ms on
    # average (the forward queue held 3.3 ms less: the reverse flow's ACKs and the
    # compressed forward ACKs change it). What the forward queue does not explain grows by
    # about what the ACKs waited: (33.0 − q_loaded) − (28.1 − q_alone) = 8.2 ms against
    # 7.0 ms. With three samples a CI run once gave 1.5 against 4.2 ms; with 20 samples
    # from 2 s to 6 s four runs gave 4.0/4.9, 4.2/4.5, 4.4/3.7, 6.5/6.7 ms (session 11).
    grew = (rtt(loaded) - queue_delay(loaded, loaded.link)) - (
        rtt(alone) - queue_delay(alone, alone.link)
    )
    assert grew > 0.5 * ack_wait, (grew, ack_wait)


def test_a_lone_reverse_short_flow_alone_on_the_kernel() -> None:
    # A run of short flows only (no long-lived connection), one 100 kB reno flow in the
    # reverse direction at 0.5 s on an idle 50 Mbit/s path with a 20 ms RTT: its data
    # crosses the b → a linkem queue. By hand as test_a_lone_short_flow_takes_the_slow_
    # start_time: 3 slow-start rounds, (3 + 0.5) RTT + 40 frames at 50 Mbit/s = 79.7 ms.
    rtt, rate, frame = 0.020, 50e6, 1514
    expect = 3.5 * rtt + 40 * frame * 8 / rate
    r = run(
        base(
            duration="2s",
            bottleneck={"rate": "50Mbit", "buffer": "1bdp"},
            flows=[
                {"cca": "reno", "rtt": "20ms", "size": "100KB", "start": "0.5s", "stop": "1s",
                 "direction": "reverse", "arrivals": {"process": "fixed", "rate": "1/s"}},
            ],
            measure={"interval": "100ms"},
        )
    )  # fmt: skip
    (row,) = r.short_flows.itertuples()
    assert row.completed and row.bytes == 100_000 and row.retransmits == 0
    assert abs(row.fct_s - expect) < rtt, (row.fct_s, expect)
    # the data went b → a: the reverse queue carried the 100 kB (+ headers), the forward
    # one only the ACKs and the handshake (pure ACKs: 66-byte frames, well under 20 kB)
    assert r.meta["kernel"]["bottleneck"] == "linkem"
    assert 100_000 < r.meta["reverse_link_totals"]["tx_bytes"] < 110_000
    assert r.meta["link_totals"]["tx_bytes"] < 20_000
    # no long-lived connection: the headline metrics are empty, the short flows are not
    assert len(r.flows) == 0
    met = r.metrics()
    assert met["n_flows"] == 0 and met["short_flows"]["all"]["completed"] == 1


def test_an_entry_with_a_list_of_rtts_runs_each_connection_at_its_own_rtt() -> None:
    # streams = 3 with rtt = [10, 40, 80] ms: one address, delay class and iperf3 pair per
    # connection (docs/kernel.md). Each sends 1 Mbit/s (app_rate) on a 50 Mbit/s link, so
    # no queue builds: what TCP measures is the emulated path. The SRTT of such a slow
    # sender sits a few ms above the path (delayed ACKs of its small bursts): the second
    # entry (one -P 2 client at 20 ms, as before this change) shows the same offset.
    r = run(
        base(
            duration="5s",
            bottleneck={"rate": "50Mbit", "buffer": "1bdp"},
            flows=[
                {"cca": "reno", "rtt": ["10ms", "40ms", "80ms"], "streams": 3,
                 "app_rate": "1Mbit"},
                {"cca": "cubic", "rtt": "20ms", "streams": 2, "app_rate": "1Mbit"},
            ],
            measure={"interval": "0.5s", "from": "1s"},
        )
    )  # fmt: skip
    fl = r.flows.set_index("flow")
    assert fl["rtt_s"].to_dict() == {0: 0.010, 1: 0.040, 2: 0.080, 3: 0.020, 4: 0.020}
    assert fl["group"].tolist() == [0, 0, 0, 1, 1]
    min_srtt = r.samples[r.samples["srtt_s"] > 0].groupby("flow")["srtt_s"].min()
    for f, want in fl["rtt_s"].items():
        # the smallest of iperf3's per-interval SRTT samples of each connection
        assert want - 0.0005 <= min_srtt[f] <= want + 0.004, (f, min_srtt[f])
        # each connection carried its 1 Mbit/s for 5 s (iperf3 sends 128 KiB blocks)
        assert 0.8 * 1e6 / 8 * 5 < fl.loc[f, "bytes"] < 1.1 * 1e6 / 8 * 5
    topo = r.meta["kernel"]["topology"]["groups"]
    assert [c["rtt_ns"] for c in topo[0]["connections"]] == [10_000_000, 40_000_000, 80_000_000]
    assert "connections" not in topo[1]  # identical connections: one -P 2 client
    assert set(r.meta["kernel"]["client_launch_s"]) == {"0.0", "0.1", "0.2", "1"}


def test_reverse_connections_and_different_starts_and_sizes_run_on_their_own() -> None:
    # a reverse entry with two RTTs (its data leaves r0's servers towards each connection's
    # own address, delayed by that address's class) and a forward entry whose connections
    # transfer 1 MB from 0 s and 2 MB from 1 s (-n, each client at its own start)
    r = run(
        base(
            duration="4s",
            bottleneck={"rate": "50Mbit", "buffer": "1bdp"},
            flows=[
                {"cca": "reno", "rtt": ["10ms", "40ms"], "streams": 2, "app_rate": "1Mbit",
                 "direction": "reverse"},
                {"cca": "cubic", "rtt": "20ms", "streams": 2, "size": ["1MB", "2MB"],
                 "start": ["0s", "1s"]},
            ],
            measure={"interval": "0.5s", "from": "1s"},
        )
    )  # fmt: skip
    fl = r.flows.set_index("flow")
    assert fl["rtt_s"].to_dict() == {0: 0.010, 1: 0.040, 2: 0.020, 3: 0.020}
    assert fl["start_s"].to_dict() == {0: 0.0, 1: 0.0, 2: 0.0, 3: 1.0}
    assert fl.loc[[2, 3], "size_bytes"].tolist() == [1e6, 2e6]
    assert fl.loc[[0, 1], "size_bytes"].isna().all()
    # iperf3 -n ends the test when the sender has written n bytes; the receiver's count
    # (what `bytes` is) can lag behind it (main's -P client shows the same), so: at most n
    assert (fl.loc[[2, 3], "bytes"] <= fl.loc[[2, 3], "size_bytes"]).all()
    assert (fl.loc[[2, 3], "bytes"] > 0).all()
    cut = bool((fl.loc[[2, 3], "bytes"] < fl.loc[[2, 3], "size_bytes"]).any())
    notes = r.meta["kernel"]["notes"]
    assert any(n.startswith("flows.1: ") and "sized" in n for n in notes) == cut
    assert fl["direction"].tolist() == ["reverse", "reverse", "forward", "forward"]
    # the reverse senders' SRTT (from the server's report), each connection on its own
    # RTT: never below it, and above it by at most what one iperf3 block (128 KiB, sent at
    # once by an app_rate connection) waits to cross the 50 Mbit/s bottleneck — 21 ms, so
    # the 10-ms connection stays below 40 ms (measured: min SRTT 11.6–11.7 ms and
    # 42.6–43.7 ms in three runs, 19:55 UTC; CI once saw 44.1 ms)
    block_drain = 131_072 * 8 / 50e6
    min_srtt = r.samples[r.samples["srtt_s"] > 0].groupby("flow")["srtt_s"].min()
    for f in (0, 1):
        assert fl.loc[f, "rtt_s"] - 0.0005 <= min_srtt[f] <= fl.loc[f, "rtt_s"] + block_drain
    launch = r.meta["kernel"]["client_launch_s"]
    assert set(launch) == {"0.0", "0.1", "1.0", "1.1"}
    assert launch["1.1"] - launch["1.0"] == pytest.approx(1.0, abs=0.15)


def test_a_size_is_each_connections_not_the_entrys() -> None:
    # streams = 2 with one size: each connection transfers 4 MB (its own -P 1 client); one
    # -P 2 client with -n would have stopped at 4 MB for both together
    r = run(
        base(
            duration="4s",
            bottleneck={"rate": "50Mbit", "buffer": "1bdp"},
            flows=[{"cca": "cubic", "rtt": "20ms", "streams": 2, "size": "4MB"}],
            measure={"interval": "0.5s", "from": "0s"},
        )
    )
    assert set(r.meta["kernel"]["client_launch_s"]) == {"0.0", "0.1"}
    fl = r.flows.set_index("flow")
    assert fl["size_bytes"].tolist() == [4e6, 4e6]
    # what the receivers counted before iperf3 ended each test (it stops counting with up
    # to a send buffer still in flight: 0.29 and 0.34 MB of 1 MB tests here): together more
    # than the one -P 2 test could have sent (4 MB in whole 128 KiB blocks: 4,063,232 B)
    assert fl["bytes"].sum() > 4_063_232 and (fl["bytes"] <= 4_063_232).all()
    # connections that end at different times: the one left alone gets the whole link for a
    # while, so the sum of their mean rates exceeds the link; what they delivered together
    # over the time they ran does not (the check was a false "invalid" on this run)
    good = check(r, "goodput.capacity")
    assert good["ok"] and good["value"] <= good["limit"] * 1.03, good["message"]


def test_short_flows_with_a_drawn_rtt_each_take_their_own_rtt() -> None:
    # fixed arrivals every 1/3 s from 0.3 s to 3.6 s: 10 flows, each alone on the idle
    # 50 Mbit/s path (the slowest, at 80 ms, ends after 3.5 · 80 ms + 10 ms < 1/3 s). Each
    # draws its RTT from uniform(10 ms, 80 ms) and binds source port 20000 + k, which linkem
    # delays by that draw. By hand per flow, at ITS rtt: a round trip of handshake, 3
    # slow-start rounds (10, 20, 40 segments of 70), half a round trip and 40 frames of 1514 B.
    sc = base(
        duration="4s",
        bottleneck={"rate": "50Mbit", "buffer": "1bdp"},
        flows=[
            {"cca": "reno", "rtt": {"dist": "uniform", "min": "10ms", "max": "80ms"},
             "size": "100KB", "start": "0.3s", "stop": "3.6s",
             "arrivals": {"process": "fixed", "rate": "3/s"}},
        ],
        measure={"interval": "100ms"},
    )  # fmt: skip
    r = run(sc)
    want = from_dict(sc).short_flow_schedule(0).rtt_ns / 1e9
    short = r.short_flows
    assert len(short) == len(want) == 10
    assert short["rtt_s"].tolist() == want.tolist()  # the simulator's draws, recorded
    assert len(set(want)) == 10 and 0.010 <= want.min() and want.max() <= 0.080
    assert short["completed"].all() and short["error"].isna().all()
    assert (short["bytes"] == 100_000).all() and (short["retransmits"] == 0).all()
    for rtt, fct in zip(short["rtt_s"], short["fct_s"], strict=True):
        expect = 3.5 * rtt + 40 * 1514 * 8 / 50e6
        assert abs(fct - expect) < rtt, (rtt, fct, expect)
    # the ideal FCT at each flow's own RTT: 1.5 RTT + 100 kB at 50 Mbit/s (16 ms)
    assert short["ideal_s"].to_numpy() == pytest.approx(1.5 * want + 0.016, rel=1e-12)
    (g,) = r.meta["kernel"]["topology"]["groups"]
    assert g["port_rtts"] == {"sport_base": 20000, "flows": 10} and "connections" not in g


def test_reverse_short_flows_each_take_their_own_rtt() -> None:
    # as the test above, reversed: 8 flows (one every 0.4 s from 0.3 s) send from the
    # receivers' side, each from source port 20000 + k in r0, to the one server in s0;
    # linkem keys the entry's port table on that far-end port. Each alone on the idle
    # 50 Mbit/s reverse link, at ITS rtt: 3.5 round trips + 40 frames of 1514 B.
    sc = base(
        duration="4s",
        bottleneck={"rate": "50Mbit", "buffer": "1bdp"},
        flows=[
            {"cca": "reno", "rtt": {"dist": "uniform", "min": "10ms", "max": "80ms"},
             "size": "100KB", "start": "0.3s", "stop": "3.5s", "direction": "reverse",
             "arrivals": {"process": "fixed", "rate": "2.5/s"}},
        ],
        measure={"interval": "100ms"},
    )  # fmt: skip
    r = run(sc)
    want = from_dict(sc).short_flow_schedule(0).rtt_ns / 1e9
    short = r.short_flows
    assert len(short) == len(want) == 8 and short["rtt_s"].tolist() == want.tolist()
    assert len(set(want)) == 8 and want.max() - want.min() > 0.02
    assert short["completed"].all() and (short["bytes"] == 100_000).all()
    for rtt, fct in zip(short["rtt_s"], short["fct_s"], strict=True):
        expect = 3.5 * rtt + 40 * 1514 * 8 / 50e6
        assert abs(fct - expect) < rtt, (rtt, fct, expect)
    (g,) = r.meta["kernel"]["topology"]["groups"]
    assert g["port_rtts"] == {"sport_base": 20000, "flows": 8}


def test_short_flows_with_a_list_of_rtts_each_take_their_own_rtt() -> None:
    # fixed arrivals every 0.5 s from 0.5 s, rtt = [10, 60] ms cycled: flows alternate. Each
    # binds to the address of its RTT (one address and delay class per distinct value).
    # 100 kB alone on an idle 50 Mbit/s path, by hand as in the lone-flow test above: a
    # round trip of handshake, 3 slow-start rounds, then half a round trip plus 40 frames.
    r = run(
        base(
            duration="3s",
            bottleneck={"rate": "50Mbit", "buffer": "1bdp"},
            flows=[
                {"cca": "reno", "rtt": ["10ms", "60ms"], "size": "100KB", "start": "0.5s",
                 "stop": "2.4s", "arrivals": {"process": "fixed", "rate": "2/s"}},
            ],
            measure={"interval": "100ms"},
        )
    )  # fmt: skip
    short = r.short_flows
    assert short["rtt_s"].tolist() == [0.010, 0.060, 0.010, 0.060]
    assert short["completed"].all()
    for rtt, fct in zip(short["rtt_s"], short["fct_s"], strict=True):
        expect = 3.5 * rtt + 40 * 1514 * 8 / 50e6
        assert abs(fct - expect) < rtt, (rtt, fct, expect)
    groups = r.meta["kernel"]["topology"]["groups"]
    assert [c["sender"] for c in groups[0]["connections"]] == ["10.1.0.10", "10.1.0.11"]


def test_a_capability_probe_is_recorded_so_a_cleanup_elsewhere_leaves_it_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `tcpfair doctor --cleanup` in another terminal while this process takes its first look
    # at the machine (capabilities.probe_qdiscs): the probe's throw-away namespace had no
    # record, was taken for a crashed run's leftover and deleted under the probe, whose
    # qdiscs then read as missing (the run refused: "tbf not available")
    from tcpfair.kernel import capabilities as cap

    real = subprocess.run
    seen: dict[str, Any] = {}

    def run(argv: list[str], *a: Any, **kw: Any) -> Any:
        if "qdisc" in argv and not seen:  # the namespace exists, no qdisc tried yet
            seen["ns"] = argv[argv.index("-n") + 1]
            seen["doctor"] = real(
                [str(Path(sys.executable).with_name("tcpfair")), "doctor", "--cleanup"],
                capture_output=True,
                text=True,
                timeout=120,
                env={**os.environ, "COLUMNS": "200"},  # one line per leftover
            ).stdout
            seen["still_there"] = seen["ns"] in list_namespaces()
        return real(argv, *a, **kw)

    monkeypatch.setattr(cap.subprocess, "run", run)
    got = cap.probe_qdiscs.__wrapped__()
    monkeypatch.undo()
    rid = seen["ns"].split("-")[1]
    assert f"leftover run {rid}: 1 namespace, 0 live processes" in seen["doctor"], seen["doctor"]
    assert f"owner pid {os.getpid()} running" in seen["doctor"]
    assert seen["still_there"], seen["doctor"]
    assert got == cap.probe_qdiscs()  # as an undisturbed probe found them (cached, earlier)
    assert got["tbf"] and got["pfifo"]  # the qdiscs the backend needs, there to be found
    assert not (STATE_DIR / f"{rid}.json").exists()  # the record goes with the namespace
