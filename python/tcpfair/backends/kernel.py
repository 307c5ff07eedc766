"""The kernel backend: real Linux TCP in network namespaces, delay/loss/AQM from linkem.

``KernelBackend().check(scenario)`` raises ``BackendError`` with one clear message per
problem before anything is created; ``run(scenario)`` builds the dumbbell
(``tcpfair.kernel.topology``), runs iperf3 on the scenario's schedule, validates the run
(``tcpfair.kernel.validate``) and returns the same ``RunResult`` as the simulator, with
``meta["grade"]`` (ok / warning / invalid), ``meta["valid"]`` (not invalid) and
``meta["checks"]`` telling whether the emulation met its accuracy limits.
See docs/kernel.md.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from ..importers.iperf3 import Iperf3Error, decode_iperf3_text, parse_iperf3
from ..kernel import capabilities as caps_mod
from ..kernel import shortflows as SF
from ..kernel import validate as V
from ..kernel.procs import CommandError
from ..kernel.runner import (
    KernelOptions,
    RawRun,
    client_units,
    execute,
    linkem_is_bottleneck,
    setup_latency_s,
)
from ..result import FLOW_COLUMNS, LINK_COLUMNS, SAMPLE_COLUMNS, RunResult
from ..spec import Scenario
from . import BackendError


class KernelBackend:
    name = "kernel"

    def __init__(self, options: KernelOptions | None = None):
        if options is None:
            try:
                options = KernelOptions.from_env()
            except ValueError as e:
                raise BackendError(f"kernel backend: {e}") from None
        self.options = options
        self._caps: caps_mod.Capabilities | None = None

    def capabilities(self) -> caps_mod.Capabilities:
        if self._caps is None:
            self._caps = caps_mod.detect(self.options.linkem, self.options.traffic)
        return self._caps

    def options_for(self, scenario: Scenario) -> KernelOptions:
        """The options a run of ``scenario`` uses: GSO/TSO/GRO on when its flows set
        ``gso = true`` (else as ``TCPFAIR_KERNEL_GSO`` says). Offloads belong to the hosts'
        interfaces, which every flow shares, so the flows must agree (``check``)."""
        if scenario.flows and all(f.gso for f in scenario.flows):
            return dataclasses.replace(self.options, gso=True)
        return self.options

    def check(self, scenario: Scenario) -> None:
        self.check_scenario(scenario)
        caps = self.capabilities()
        probs = caps_mod.machine_problems(caps)
        if not probs:
            probs = caps_mod.scenario_problems(scenario, caps, self.options_for(scenario).gso)
        if probs:
            # one line, however many problems (each names its key)
            raise BackendError("kernel backend: " + "; ".join(probs))

    def check_scenario(self, scenario: Scenario) -> None:
        """The checks that do not depend on the machine (a Dask sweep's client runs these;
        each worker checks its own machine before its first run)."""
        for i, f in enumerate(scenario.flows):
            if f.stack != "linux":
                raise BackendError(
                    f'kernel backend: flows.{i}.stack = "{f.stack}" runs only in the simulator '
                    '(--backend sim); the kernel backend runs Linux TCP (stack = "linux")'
                )
            if f.cca_params():
                raise BackendError(
                    f"kernel backend: flows.{i}.params: {f.cca} parameters "
                    f"({', '.join(f.cca_params())}) are module parameters in Linux "
                    "(/sys/module/tcp_*/parameters), shared by every connection of the "
                    "machine, so they cannot be set per flow; the kernel backend runs the "
                    "defaults only (use --backend sim)"
                )
        if scenario.bottleneck.netem_root:
            raise BackendError(
                "kernel backend: bottleneck.netem_root = true models the labs' netem qdisc at "
                "the root above the tbf, but the kernel backend delays in linkem after the "
                "tbf (no netem above it): drop netem_root or use --backend sim"
            )
        if scenario.bottleneck.burst is not None and linkem_is_bottleneck(scenario, self.options):
            raise BackendError(
                "kernel backend: bottleneck.burst is tbf's token bucket, but this run's "
                "bottleneck is linkem (RED, a reverse link or TCPFAIR_KERNEL_BOTTLENECK="
                "linkem), which has no bucket: drop bottleneck.burst or use drop-tail tbf"
            )
        gso = [f.gso for f in scenario.flows]
        if any(gso) and not all(gso):
            on, off = gso.index(True), gso.index(False)
            raise BackendError(
                f"kernel backend: flows.{on}.gso = true but flows.{off}.gso = false; GSO/TSO "
                "is set on the hosts' interfaces, which all flows share: set gso the same on "
                "every flow (mixed settings run only in the simulator, --backend sim)"
            )

    def run(self, scenario: Scenario, progress: bool = False) -> RunResult:
        self.check(scenario)
        opts = self.options_for(scenario)
        t0 = time.perf_counter()
        try:
            raw = execute(scenario, self.capabilities(), opts, progress)
        except (CommandError, RuntimeError) as e:
            raise BackendError(f"kernel backend: {e}") from None
        try:
            return to_result(scenario, raw, self.capabilities(), opts, time.perf_counter() - t0)
        except BaseException:
            if raw.capture is not None:  # no result: no capture left in the temp folder
                Path(raw.capture["path"]).unlink(missing_ok=True)
            raise


def _link_table(raw: RawRun) -> tuple[pd.DataFrame, dict[str, int]]:
    """Bottleneck samples: tc's tbf counters, or linkem's queue when linkem is the bottleneck."""
    rows: list[dict[str, Any]] = []
    totals: dict[str, int] = {}
    if raw.tbf is not None and raw.tc_samples:
        prev = raw.tc_samples[0][1]
        base = prev
        for t, s in raw.tc_samples[1:]:
            rows.append(
                {
                    "t_s": t,
                    "queue_bytes": s["backlog_bytes"],
                    "queue_pkts": s["backlog_pkts"],
                    "drops": s["drops"] - prev["drops"],
                    "tx_bytes": s["bytes"] - prev["bytes"],
                }
            )
            prev = s
        last = raw.tc_samples[-1][1]
        totals = {
            "tx_bytes": last["bytes"] - base["bytes"],
            "tx_pkts": last["packets"] - base["packets"],
            "drops": last["drops"] - base["drops"],
        }
    elif raw.queue is not None and raw.linkem_lines:
        rows, totals = _linkem_rows(raw, "a2b", acks=raw.rev_queue is not None)
    if raw.linkem_lines:
        totals["loss_drops"] = int(raw.linkem_lines[-1]["a2b"]["loss_drops"])
    return _link_frame(rows), totals


def _linkem_rows(
    raw: RawRun, key: str, acks: bool = False
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Samples and totals of one direction's linkem queue (``a2b`` forward, ``b2a``
    reverse) from its 100 ms cumulative counters. ``acks`` (runs with a reverse link, as
    the simulator): ``ack_drops``, the pure ACKs among the drops (queue, RED or loss)."""
    rows: list[dict[str, Any]] = []
    t_lk0 = raw.linkem_ready.get("t0_ns", 0) / 1e9 - raw.t0_wall
    prev_d = prev_tx = prev_ack = 0
    for d in raw.linkem_lines:
        a = d[key]
        t = t_lk0 + a.get("t_ns", d["t_ns"]) / 1e9
        drops = a["queue_drops"] + a["red_drops"]
        ack = int(a.get("ack_drops", 0))
        if t >= 0:
            rows.append(
                {
                    "t_s": t,
                    "queue_bytes": a["queue_bytes"],
                    "queue_pkts": a["queue_pkts"],
                    "drops": drops - prev_d,
                    "tx_bytes": a["tx_bytes"] - prev_tx,
                    **({"ack_drops": ack - prev_ack} if acks else {}),
                }
            )
        prev_d, prev_tx, prev_ack = drops, a["tx_bytes"], ack
    fa = raw.linkem_lines[-1][key]
    totals = {
        "tx_bytes": fa["tx_bytes"],
        "tx_pkts": fa["tx_pkts"],
        "drops": fa["queue_drops"] + fa["red_drops"],
        "red_drops": fa["red_drops"],
    }
    if acks:
        totals["ack_drops"] = int(fa.get("ack_drops", 0))
    return rows, totals


def _reverse_link_table(raw: RawRun) -> tuple[pd.DataFrame, dict[str, int]] | None:
    """The reverse bottleneck (linkem's b → a queue: reverse data and the forward flows'
    ACKs), when the run has one: samples and totals as for the forward link."""
    if raw.rev_queue is None or not raw.linkem_lines:
        return None
    rows, totals = _linkem_rows(raw, "b2a", acks=True)
    totals["loss_drops"] = int(raw.linkem_lines[-1]["b2a"]["loss_drops"])
    b = raw.linkem_lines[-1]["b2a"]
    totals["max_queue_bytes"] = max((r["queue_bytes"] for r in rows), default=0)
    totals["rx_pkts"] = int(b["rx_pkts"])
    return _link_frame(rows), totals


def _link_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    acks = ["ack_drops"] if rows and "ack_drops" in rows[0] else []
    link = pd.DataFrame(rows, columns=[*LINK_COLUMNS, *acks])
    if len(link):
        link = link.astype(
            {
                "t_s": float,
                "queue_bytes": np.int64,
                "queue_pkts": np.int64,
                "drops": np.int64,
                "tx_bytes": np.int64,
                **dict.fromkeys(acks, np.int64),
            }
        )
    return link


def _sorted_connected(obj: dict[str, Any], port_key: str) -> dict[str, Any]:
    """Copy of a report whose ``start.connected`` is ordered by the client's port, so that
    stream k is the same connection in the client's and the server's report."""
    out = dict(obj)
    start = dict(out.get("start") or {})
    conn = start.get("connected")
    if isinstance(conn, list):
        start["connected"] = sorted(
            conn, key=lambda c: c.get(port_key, 0) if isinstance(c, dict) else 0
        )
    out["start"] = start
    return out


def _fold_short_tail(samples: pd.DataFrame) -> pd.DataFrame:
    """Merge each flow's last receiver interval into the one before when it is shorter
    than half of it. iperf3's server closes with a sliver (tens of ms) holding the bytes
    that were still in flight when the sender stopped; alone, it reads as a rate above the
    link's. Totals are unchanged."""
    parts = []
    for _, f in samples.groupby("flow", sort=False):
        f = f.sort_values("t_s")
        if len(f) >= 2 and f["dt_s"].iloc[-1] < 0.5 * f["dt_s"].iloc[-2]:
            last, prev = f.iloc[-1], f.iloc[-2]
            row = prev.copy()
            row["t_s"] = last["t_s"]
            row["dt_s"] = prev["dt_s"] + last["dt_s"]
            row["bytes"] = prev["bytes"] + last["bytes"]
            row["throughput_bps"] = row["bytes"] * 8 / row["dt_s"]
            f = pd.concat([f.iloc[:-2], row.to_frame().T.astype(f.dtypes.to_dict())])
        parts.append(f)
    return pd.concat(parts, ignore_index=True) if parts else samples


def parse_group(
    text: str, label: str, group: int, first_flow: int, offset_s: float, reverse: bool = False
) -> tuple[Any, pd.DataFrame]:
    """Tables of one iperf3 client report run with ``--get-server-output``.

    Flows come from the client's report (bytes = the receiver's count). Samples take the
    bytes and throughput of each interval from the *receiver* (goodput, what the
    bottleneck delivered) and cwnd, srtt and retransmissions from the sender's TCP_INFO,
    matched by stream and interval number. Without a server report the sender's intervals
    are used as they are. ``reverse`` (``iperf3 -R``): the server sent and the client
    received, so the roles of the two reports swap.
    """
    src = f"iperf3 client of flows.{group}"
    obj, _notes = decode_iperf3_text(text, src)
    client = _sorted_connected(obj, "local_port")
    tables = parse_iperf3(
        client, label=label, group=group, flow_offset=first_flow, time_offset_s=offset_s, source=src
    )
    server = obj.get("server_output_json")
    if not isinstance(server, dict):
        tables.info.setdefault("notes", []).append(
            "no server report: samples count bytes sent, not delivered"
        )
        return tables, tables.samples
    srv_tables = parse_iperf3(
        _sorted_connected(server, "remote_port"),
        label=label,
        group=group,
        flow_offset=first_flow,
        time_offset_s=offset_s,
        source=f"iperf3 server of flows.{group}",
    )
    srv = srv_tables.samples
    snd = tables.samples
    if reverse:
        srv, snd = snd, srv  # the client received, the server sent
        # the sender's own TCP_INFO (mean RTT) is in the server's report
        rtt = srv_tables.flows.set_index("flow")["mean_rtt_s"]
        tables.flows["mean_rtt_s"] = tables.flows["flow"].map(rtt).to_numpy(dtype=float)
    srv = _fold_short_tail(srv)
    srv = srv.assign(_k=srv.groupby("flow").cumcount())
    snd = snd.assign(_k=snd.groupby("flow").cumcount())[
        ["flow", "_k", "cwnd_bytes", "srtt_s", "retransmits"]
    ]
    n_srv, n_snd = srv.groupby("flow").size(), snd.groupby("flow").size()
    if (n_srv.sub(n_snd, fill_value=0).abs() > 1).any():
        # Matching by interval number is only right when both sides used the same -i.
        tables.info.setdefault("notes", []).append(
            f"sender and receiver reported different interval counts ({n_snd.max()} vs "
            f"{n_srv.max()}): cwnd/srtt/retransmits may be misaligned"
        )
    merged = srv.drop(columns=["cwnd_bytes", "srtt_s", "retransmits"]).merge(
        snd, on=["flow", "_k"], how="left"
    )
    return tables, merged.drop(columns=["_k"])


def to_result(
    sc: Scenario, raw: RawRun, caps: caps_mod.Capabilities, opts: KernelOptions, wall_s: float
) -> RunResult:
    res = sc.resolved()
    topo = raw.topology
    flows_parts, sample_parts = [], []
    notes: list[str] = []
    split = any(g.conns for g in topo.groups)
    for key, g, conn in client_units([g for g in topo.groups if not g.short]):
        first = conn.flow if conn else g.first_flow
        rtt_ns = conn.rtt_ns if conn else g.rtt_ns
        where = f"flows.{g.index}" + (f" (connection {conn.k})" if conn else "")
        text = raw.reports.get(key, "")
        offset = raw.launch_s.get(key, 0.0) + setup_latency_s(rtt_ns / 1e9)
        try:
            tables, recv_samples = parse_group(
                text, sc.group_label(g.index), g.index, first, offset, g.reverse
            )
        except Iperf3Error as e:
            err = raw.client_stderr.get(key, "").strip()
            raise BackendError(
                f"kernel backend: {e}" + (f" (iperf3 said: {err})" if err else "")
            ) from None
        fl = tables.flows.copy()
        n, want = len(fl), 1 if conn else g.streams
        if n != want:
            notes.append(f"{where}: iperf3 reported {n} streams, {want} configured")
        fl["rtt_s"] = rtt_ns / 1e9
        fl["start_s"] = res["flows"][first]["start_ns"] / 1e9
        extra = []
        if sc.reverse_link() is not None:  # as the simulator: only with a reverse link
            fl["direction"] = g.direction
            extra.append("direction")
        if split:  # connections with their own sizes: each one's, as the simulator
            fl["size_bytes"] = [
                np.nan
                if res["flows"][int(f)]["size_bytes"] is None
                else float(res["flows"][int(f)]["size_bytes"])
                for f in fl["flow"]
            ]
            extra.append("size_bytes")
        flows_parts.append(fl[[*FLOW_COLUMNS, *extra]])
        samples_g = recv_samples[SAMPLE_COLUMNS]
        rf = res["flows"][first]
        if rf["size_bytes"] is not None or rf["stop_ns"] is not None:  # ends before the run
            samples_g = pad_to_run_end(
                samples_g, res["duration_ns"] / 1e9, res["measure"]["interval_ns"] / 1e9
            )
        sample_parts.append(samples_g)
        notes += [f"{where}: {x}" for x in tables.info.get("notes", [])]
    notes += _short_transfer_notes(res, flows_parts)
    for i, f in enumerate(sc.flows):
        if f.ack_jitter:
            notes.append(
                f"flows.{i}.ack_jitter: a simulator model of host ACK noise, not applied "
                "here (the real hosts and the emulator have their own)"
            )
    flows = (
        pd.concat(flows_parts, ignore_index=True)
        if flows_parts
        else pd.DataFrame(columns=FLOW_COLUMNS)
    )
    samples = (
        pd.concat(sample_parts, ignore_index=True)
        .sort_values(["t_s", "flow"], kind="stable")
        .reset_index(drop=True)
        if sample_parts
        else pd.DataFrame(columns=SAMPLE_COLUMNS)
    )
    link, totals = _link_table(raw)
    rev = _reverse_link_table(raw)
    short = short_flows_table(sc, raw)
    b = res["bottleneck"]
    capacity = float(b["rate_bps"])
    goodput_cap = V.goodput_capacity_bps(capacity, b["mtu_bytes"])
    meta: dict[str, Any] = {
        "backend": "kernel",
        "versions": {"tcpfair": __version__, "kernel": caps.kernel, "iperf3": caps.iperf3_version},
        "scenario_hash": sc.hash(),
        "seed": sc.seed,
        "host": caps_mod.host_info(),
        "wall_time_s": wall_s,
        "capacity_bps": capacity,
        "goodput_capacity_bps": goodput_cap,
        "window": [res["measure"]["from_ns"] / 1e9, res["measure"]["to_ns"] / 1e9],
        "link_totals": totals,
        "kernel": {
            "run_id": raw.run_id,
            # what the run executed: each tool's absolute path and version, the emulator's
            # path and where it was found (tcpfair.kernel.tools)
            "tools": caps.tools_meta(),
            "gso": opts.gso,
            "rt_priority": opts.rt_priority,
            "bottleneck_option": opts.bottleneck,
            "offloads": "gso/tso/gro " + ("on" if opts.gso else "off") + " on every veth",
            "bottleneck": "tbf" if raw.tbf else "linkem",
            "tbf": raw.tbf,
            "linkem_queue": raw.queue,
            "linkem_realtime": bool(raw.linkem_ready.get("realtime")),
            "topology": topo.as_dict(),
            "rtt_probes": {str(k): v for k, v in raw.rtt_probes.items()},
            "client_launch_s": {str(k): v for k, v in raw.launch_s.items()},
            "setup_s": raw.setup_s,
            "workdir": raw.workdir,
            "cpu": raw.cpu,
            "emulator": raw.linkem_lines[-1] if raw.linkem_lines else None,
            # per flow group, the hosts' own Tcp/TcpExt counters (non-zero ones), e.g.
            # sender TcpExt.TCPTimeouts, TCPLossProbes, TCPSackRecovery; receiver
            # TcpExt.DelayedACKs
            "tcp_counters": {str(g): c for g, c in sorted(raw.tcp_counters.items())},
            "notes": notes,
        },
    }
    rev_table = None
    if rev is not None:
        rev_table, meta["reverse_link_totals"] = rev
        meta["reverse_capacity_bps"] = float(res["bottleneck"]["reverse"]["rate_bps"])
        meta["kernel"]["linkem_rev_queue"] = raw.rev_queue
    result = RunResult(
        flows=flows, samples=samples, link=link, meta=meta, scenario=res, reverse_link=rev_table
    )
    _attach_short_flows(result, short)
    if raw.capture is not None:
        _attach_capture(result, raw, notes)
    checks = run_checks(sc, raw, result, goodput_cap, short)
    meta["checks"] = checks
    meta["grade"] = V.overall(checks)
    meta["valid"] = meta["grade"] != "invalid"
    return result


def pad_to_run_end(samples: pd.DataFrame, end_s: float, interval_s: float) -> pd.DataFrame:
    """A sized (or stopped) connection's samples, continued with empty intervals to the end
    of the run.

    Its iperf3 test (``-n``, or ``-t`` to its ``stop``) ends with the transfer, and so do its
    samples; the simulator's go on to the end of the run with zero-byte intervals. A flow's
    throughput is its bytes over the time its samples cover, so without this a finished
    transfer counted at its sending rate on the kernel (the headline sum and utilization
    could pass the link: 118.6 % in docs/kernel.md's example) and at its average over the
    window on the simulator. The rows added carry no cwnd or RTT (the connection is closed)
    and no retransmission."""
    added: list[dict[str, Any]] = []
    for flow, t_last in samples.groupby("flow")["t_s"].max().items():
        t = float(t_last)
        while end_s - t >= 0.5 * interval_s:  # a shorter remainder stays unsampled, as a
            dt = min(interval_s, end_s - t)  # window may pass the data by half an interval
            t += dt
            added.append(
                {
                    "flow": flow,
                    "t_s": t,
                    "dt_s": dt,
                    "bytes": 0,
                    "throughput_bps": 0.0,
                    "cwnd_bytes": np.nan,
                    "srtt_s": np.nan,
                    "retransmits": 0,
                }
            )
    if not added:
        return samples
    pad = pd.DataFrame(added, columns=samples.columns).astype(samples.dtypes.to_dict())
    return pd.concat([samples, pad], ignore_index=True)


def _short_transfer_notes(res: dict[str, Any], parts: list[pd.DataFrame]) -> list[str]:
    """A note per entry with a ``size`` whose receivers counted less than it: iperf3 ``-n``
    ends the test once the sender has *written* the size (rounded up to whole 128 KiB
    blocks) into its socket, and the server stops counting then, with the rest in flight."""
    short: dict[int, list[tuple[int, int]]] = {}
    for fl in parts:
        for fid, got in zip(fl["flow"], fl["bytes"], strict=True):
            rec = res["flows"][int(fid)]
            size = rec["size_bytes"]
            if size is not None and int(got) < int(size):
                short.setdefault(int(rec["group"]), []).append((int(got), int(size)))

    def span(values: list[int]) -> str:
        lo, hi = min(values), max(values)
        return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"

    return [
        f"flows.{g}: {len(v)} sized connection(s) delivered {span([x for x, _ in v])} "
        f"of their {span([s for _, s in v])} bytes before iperf3 ended the test (it stops "
        "counting once the sender has written the size into its socket); `bytes` is what the receivers had by then. For transfer "
        "sizes and completion times use `arrivals` (tcpfair-traffic counts to the last byte)"
        for g, v in sorted(short.items())
    ]


def short_flows_table(sc: Scenario, raw: RawRun) -> pd.DataFrame | None:
    """Every short flow of the run (tcpfair.kernel.shortflows), None without any."""
    parts = []
    for g in raw.topology.groups:
        if not g.short:
            continue
        try:
            client = SF.load(
                raw.traffic_client.get(g.index, ""),
                "flows",
                f"the generator client of flows.{g.index}",
            )
            server = SF.load(
                raw.traffic_server.get(g.index, ""),
                "conns",
                f"the generator server of flows.{g.index}",
            )
        except SF.TrafficOutputError as e:
            raise BackendError(f"kernel backend: {e}") from None
        rev = g.reverse and sc.reverse_link()
        rate = rev.rate_bps if rev else sc.bottleneck.rate
        label = sc.group_label(g.index)
        # each flow's own RTT (the simulator's draws; one value unless the entry has a list)
        rtts = sc.short_flow_schedule(g.index).rtt_ns / 1e9
        parts.append(SF.table(g.index, label, client, server, raw.t0_mono_ns, rtts, rate))
    if not parts:
        return None
    out = pd.concat(parts, ignore_index=True)
    out["flow"] = np.arange(len(out), dtype=np.int64)  # row number, as in the simulator's
    return out


def _attach_short_flows(result: RunResult, short: pd.DataFrame | None) -> None:
    """The short flows go into the result's ``short_flows`` table (as the simulator's)."""
    if short is not None:
        result.short_flows = short


def _attach_capture(result: RunResult, raw: RawRun, notes: list[str]) -> None:
    """``--capture``: the pcap goes into the run directory as ``capture.pcap``; ``meta``
    says where it was taken and its clock (``t0_unix_s`` is the run's t = 0:
    ``load_capture(path, t_zero=…)`` puts its flows on the run's time axis)."""
    cap = raw.capture
    assert cap is not None
    result.attachments["capture.pcap"] = cap["path"]
    result.meta["capture"] = {
        "file": "capture.pcap",
        "where": "receivers' router (rx), interface em: after the bottleneck and the delay",
        "t0_unix_s": raw.t0_wall,
        "packets": cap["packets"],
        "kernel_drops": cap["kernel_drops"],
    }
    if cap["kernel_drops"]:
        notes.append(
            f"capture: the kernel dropped {cap['kernel_drops']} packets the capture could "
            "not keep up with; throughputs read from capture.pcap are low"
        )


def run_checks(
    sc: Scenario,
    raw: RawRun,
    result: RunResult,
    goodput_cap: float,
    short: pd.DataFrame | None = None,
) -> list[V.Check]:
    topo = raw.topology
    checks = V.rtt_checks({g.index: g.rtt_ns / 1e9 for g in topo.groups}, raw.rtt_probes)
    final = raw.linkem_lines[-1] if raw.linkem_lines and raw.linkem_lines[-1].get("final") else None
    min_rtt_s = min(topo.rtts_ns()) / 1e9
    rev = sc.reverse_link()
    fwd_drain = _drain_s(*sc.buffer_limits(), sc.bottleneck.mtu, sc.bottleneck.rate)
    if rev is None:
        checks += V.lateness_checks(final, fwd_drain, min_rtt_s)
    else:  # each direction has its own queue: graded on its own, with its own drain time
        checks += V.lateness_checks(V.direction_final(final, "a2b"), fwd_drain, min_rtt_s)
        checks += V.lateness_checks(
            V.direction_final(final, "b2a"),
            _drain_s(rev.buffer_bytes, rev.buffer_pkts, rev.mtu_bytes, rev.rate_bps),
            min_rtt_s,
            prefix="emulator.reverse",
            what="emulator (reverse direction)",
        )
    direction = {
        g.first_flow + k: g.direction for g in topo.groups if not g.short for k in range(g.streams)
    }  # a split entry's connections keep their entry's consecutive ids
    by_dir = {
        d: _aggregate_goodput_bps(result, {f for f, x in direction.items() if x == d})
        for d in ("forward", "reverse")
    }
    checks.append(V.goodput_check(by_dir["forward"], goodput_cap))
    lk = result.link
    if len(lk):
        c = V.rate_check(
            lk["t_s"].tolist(),
            lk["queue_bytes"].tolist(),
            lk["tx_bytes"].tolist(),
            sc.bottleneck.rate,
        )
        if c is not None:
            checks.append(c)
    if rev is not None:
        cap = V.goodput_capacity_bps(rev.rate_bps, rev.mtu_bytes)
        checks.append(
            V.goodput_check(by_dir["reverse"], cap, "goodput.capacity.reverse", "reverse ")
        )
    for key, p, name in (
        ("a2b", sc.bottleneck.loss, "loss.rate"),
        ("b2a", rev.loss if rev else 0.0, "loss.rate.reverse"),
    ):
        if p > 0 and final:
            a = final[key]
            offered = a["rx_pkts"] - (a["queue_drops"] + a["red_drops"])
            checks.append(V.loss_check(p, int(a["loss_drops"]), int(offered), name))
    cpu = raw.cpu
    checks += V.cpu_checks(
        cpu.get("emulator_thread_max_frac"), cpu.get("machine_busy_frac"), int(cpu.get("n_cpus", 1))
    )
    for g in topo.groups:
        if g.index not in raw.exit_s:
            what = "the short-flow generator's client" if g.short else "the iperf3 client"
            checks.append(
                V.check(
                    f"{'traffic' if g.short else 'iperf3'}.flows.{g.index}",
                    False,
                    None,
                    None,
                    f"flows.{g.index}: {what} did not finish in time and was stopped",
                )
            )
        if g.short and short is not None:
            checks += V.short_flow_checks(g.index, short[short["group"] == g.index])
    return checks


def _aggregate_goodput_bps(result: RunResult, flows: set[int]) -> float:
    """What these connections delivered together in the window, over the span their
    samples cover: the rate one link carried. (The sum of their mean rates is not bounded
    by the link when they end at different times — sized connections, each with its own
    client — since one that ran alone for a while has a mean above its share.)"""
    ws = result.window_samples()
    ws = ws[ws["flow"].isin(list(flows))]
    if ws.empty:
        return 0.0
    span = float(ws["t_s"].max() - (ws["t_s"] - ws["dt_s"]).min())
    return float(ws["bytes"].sum()) * 8 / span if span > 0 else 0.0


def _drain_s(buf_bytes: int | None, buf_pkts: int | None, mtu: int, rate_bps: int) -> float | None:
    """Time a full buffer takes to drain at the rate (a buffer in packets: MTU frames)."""
    if buf_pkts is not None:
        buf_bytes = buf_pkts * (mtu + 14)
    return buf_bytes * 8 / rate_bps if buf_bytes else None
