"""The simulator backend: the Rust packet-level simulator through ``tcpfair._core``."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import __version__
from .._core import Simulation, congestion_controls, simulate
from ..columns import Columns, group_codes, group_sums
from ..registry import names
from ..result import RunResult
from ..shortflows import table as short_flow_table
from ..spec import MAX_SAMPLE_ROWS, Scenario, sample_rows
from . import BackendError

if TYPE_CHECKING:
    from rich.progress import Progress


class SimBackend:
    name = "sim"

    def check(self, scenario: Scenario) -> None:
        # from_dict refuses this already; a Scenario built another way (model_copy) must not
        # reach the simulator and fill the memory
        rows = sample_rows(scenario)[2]
        if rows > MAX_SAMPLE_ROWS:
            raise BackendError(
                f"measure.interval: the run would record {rows:,} samples; "
                f"allowed: at most {MAX_SAMPLE_ROWS:,}"
            )
        for i, f in enumerate(scenario.flows):
            # ns-2's agents (stack = "ns2") are their own list in the registry
            have = set(congestion_controls()) if f.stack == "linux" else set(names(f.stack))
            if f.cca not in have:
                raise BackendError(
                    f"flows.{i}.cca: the simulator does not implement {f.cca!r} yet; "
                    f"it has: {', '.join(sorted(have))}"
                )

    def run(self, scenario: Scenario, progress: bool = False) -> RunResult:
        self.check(scenario)
        t0 = time.perf_counter()
        try:
            cfg = scenario.sim_json()
            raw = _simulate_with_progress(cfg) if progress else simulate(cfg)
        except ValueError as e:
            raise BackendError(str(e)) from None
        wall = time.perf_counter() - t0
        return to_result(scenario, raw, wall)


#: Show a progress bar only for runs that take longer than this (wall seconds).
PROGRESS_AFTER_S = 1.0


def _simulate_with_progress(config_json: str, chunks: int = 200) -> dict[str, Any]:
    """Run in chunks of simulated time; after ``PROGRESS_AFTER_S`` of wall time show a
    transient progress bar on stderr (rich's progress module is loaded then: most runs
    never show one)."""
    sim = Simulation(config_json)
    _, end = sim.progress()
    step = max(end // chunks, 1)
    t0 = time.perf_counter()
    bar: Progress | None = None
    task = None
    t = 0
    try:
        while True:
            t = min(t + step, end)
            done = sim.advance(t)
            if bar is None and time.perf_counter() - t0 > PROGRESS_AFTER_S and not done:
                from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

                bar = Progress(
                    TextColumn("simulating"),
                    BarColumn(),
                    TextColumn("{task.completed:.0f}/{task.total:.0f} s simulated"),
                    TimeRemainingColumn(),
                    transient=True,
                )
                bar.start()
                task = bar.add_task("sim", total=end / 1e9)
            if bar is not None and task is not None:
                bar.update(task, completed=t / 1e9)
            if done:
                break
    finally:
        if bar is not None:
            bar.stop()
    return sim.finish()


def to_result(scenario: Scenario, raw: dict[str, Any], wall_s: float) -> RunResult:
    res = scenario.resolved()
    conns = res["flows"]
    fl = raw["flows"]
    s = raw["samples"]
    flow_ids = np.asarray(s["flow"], dtype=np.int64)
    srtt = np.asarray(s["srtt_ns"], dtype=np.float64) / 1e9
    ids = np.asarray(fl["id"], dtype=np.int64)
    flows = {
        "flow": ids,
        "group": _listed([c["group"] for c in conns], np.int64),
        "label": _listed([scenario.group_label(c["group"]) for c in conns], object),
        "cca": _listed([c["cca"] for c in conns], object),
        "rtt_s": _listed([c["rtt_ns"] / 1e9 for c in conns], np.float64),
        "start_s": _listed([c["start_ns"] / 1e9 for c in conns], np.float64),
        "bytes": np.asarray(fl["bytes_delivered"], dtype=np.int64),
        "retransmits": np.asarray(fl["retransmits"], dtype=np.int64),
        # mean of the sampled SRTTs of each flow (samples before the first RTT sample are 0)
        "mean_rtt_s": _mean_by_flow(srtt[srtt > 0], flow_ids[srtt > 0], ids),
        # per connection (a list or a distribution draws them); NaN: a bulk transfer
        "size_bytes": _listed(
            [np.nan if c["size_bytes"] is None else float(c["size_bytes"]) for c in conns],
            np.float64,
        ),
    }
    interval_s = res["measure"]["interval_ns"] / 1e9
    t_s = np.asarray(s["t_ns"], dtype=np.float64) / 1e9
    starts = (
        np.array([c["start_ns"] / 1e9 for c in conns])[flow_ids] if len(flow_ids) else np.zeros(0)
    )
    # The first sample of a flow may cover less than one interval (the flow started mid-interval).
    dt = np.minimum(interval_s, t_s - starts) if len(t_s) else np.zeros(0)
    prev_t = np.maximum(t_s - interval_s, 0.0)
    dt = np.where(starts > prev_t, t_s - starts, t_s - prev_t) if len(t_s) else dt
    nbytes = np.asarray(s["delivered_bytes"], dtype=np.int64)
    samples = Columns(
        {
            "flow": flow_ids,
            "t_s": t_s,
            "dt_s": dt,
            "bytes": nbytes,
            "throughput_bps": np.divide(nbytes * 8.0, dt, out=np.zeros(len(dt)), where=dt > 0),
            "cwnd_bytes": np.asarray(s["cwnd_bytes"], dtype=np.float64),
            "srtt_s": np.where(srtt > 0, srtt, np.nan),
            "retransmits": np.asarray(s["retransmits"], dtype=np.float64),
        }
    )
    rev = res["bottleneck"].get("reverse")
    if rev is not None:  # runs without a reverse bottleneck keep their columns as they were
        flows["direction"] = _listed([c.get("direction", "forward") for c in conns], object)
    link = _link_table(raw["link"])
    meta = {
        "backend": "sim",
        "versions": {"tcpfair": __version__},
        "scenario_hash": scenario.hash(),
        "seed": scenario.seed,
        "wall_time_s": wall_s,
        "capacity_bps": res["bottleneck"]["rate_bps"],
        "window": [res["measure"]["from_ns"] / 1e9, res["measure"]["to_ns"] / 1e9],
        "link_totals": {k: int(v) for k, v in raw["link_totals"].items()},
        "stats": {k: int(v) for k, v in raw["stats"].items()},
        # Per-connection counters the flows table has no column for.
        "sim_flows": {
            "bytes_sent": [int(v) for v in fl["bytes_sent"]],
            "bytes_retransmitted": [int(v) for v in fl["bytes_retransmitted"]],
            "bytes_delivered_window": [int(v) for v in fl["bytes_delivered_window"]],
            "timeouts": [int(v) for v in fl["timeouts"]],
            "completion_s": [None if v < 0 else int(v) / 1e9 for v in fl["completion_ns"]],
        },
        "valid": True,
        "checks": [],
    }
    n_entries = len(scenario.flows)
    b_rate = res["bottleneck"]["rate_bps"]
    short = short_flow_table(
        raw["short_flows"],
        [scenario.group_label(g) for g in range(n_entries)],
        [f.cca for f in scenario.flows],
        [
            rev["rate_bps"] if rev is not None and f.direction == "reverse" else b_rate
            for f in scenario.flows
        ],
    )
    if short is not None:
        meta["short_flow_slots"] = int(raw["short_flows"]["slots"])
    reverse_link = None
    if rev is not None:
        reverse_link = _link_table(raw["reverse_link"])
        meta["reverse_capacity_bps"] = rev["rate_bps"]
        meta["reverse_link_totals"] = {k: int(v) for k, v in raw["reverse_link_totals"].items()}
    return RunResult(
        flows=Columns(flows),
        samples=samples,
        link=link,
        meta=meta,
        scenario=res,
        reverse_link=reverse_link,
        short_flows=short,
    )


def _listed(values: list[Any], dtype: Any) -> np.ndarray:
    """A column built from a Python list, typed as a DataFrame built from the list types
    it: ``dtype``, or float64 when the list is empty (a run of short flows only has no
    connections; numpy's ``np.array([])``)."""
    return np.array(values, dtype=dtype if values else np.float64)


def _mean_by_flow(values: np.ndarray, flow: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Each flow's mean of ``values`` (its samples'), in the order of ``ids``; NaN for a
    flow without one (as pandas' ``groupby("flow").mean()``, to the bit)."""
    keys, code = group_codes(flow)
    total, count = group_sums(values, code, len(keys))
    out = np.full(len(ids), np.nan)
    where = {int(k): i for i, k in enumerate(keys)}
    for row, fid in enumerate(ids):
        if int(fid) in where:
            out[row] = total[where[int(fid)]] / count[where[int(fid)]]
    return out


def _link_table(lk: dict[str, Any]) -> Columns:
    """One bottleneck's samples; ``ack_drops`` where the run has a reverse bottleneck (the
    simulator reports it only then)."""
    cols = {
        "t_s": np.asarray(lk["t_ns"], dtype=np.float64) / 1e9,
        "queue_bytes": np.asarray(lk["queue_bytes"], dtype=np.int64),
        "queue_pkts": np.asarray(lk["queue_pkts"], dtype=np.int64),
        "drops": np.asarray(lk["drops"], dtype=np.int64),
        "tx_bytes": np.asarray(lk["tx_bytes"], dtype=np.int64),
    }
    if "ack_drops" in lk:
        cols["ack_drops"] = np.asarray(lk["ack_drops"], dtype=np.int64)
    return Columns(cols)
