"""Accuracy and capacity of the kernel backend on this machine (needs root).

    .venv/bin/python benches/kernel_bench.py [rtt|rate|loss|long|maxrate|wakeup|all]
                                             [--json out.json]
                                             [--rates 100,200,500]   (maxrate, Mbit/s)

Set TCPFAIR_KERNEL_GSO=on to measure with offloads on.

Prints markdown tables for docs/performance.md:

- rtt: idle RTT (SYN → RST probes, median of 15) vs configured, 10–400 ms, plus the
  spread of the probes;
- rate: wire rate (tc counters of the tbf) and goodput of one saturating flow;
- long: 100 Mbit/s, two flows at 400 ms RTT: emulator lateness and CPU;
- maxrate: two CUBIC flows at 20 ms over rising rates: lateness, CPU, utilization;
- wakeup: how late a timed sleep of 0.1, 1 and 10 ms wakes on this machine (timer slack
  1 ns and SCHED_FIFO 10, as linkem's threads): what linkem's early wake-up has to cover.
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import sys
import time
from typing import Any

import tcpfair
from tcpfair.backends import BackendError
from tcpfair.spec import from_dict


def run(d: dict[str, Any]) -> tcpfair.RunResult:
    return tcpfair.run(from_dict(d), backend="kernel")


def emu(r: tcpfair.RunResult) -> dict[str, Any]:
    e = r.meta["kernel"]["emulator"]
    cpu = r.meta["kernel"]["cpu"]
    return {
        "late_mean_us": e["late"]["mean_ns"] / 1e3,
        "late_max_us": e["late"]["max_ns"] / 1e3,
        "late_p99_us": e["late"]["p99_us"],
        "over_1ms": e["late"]["over_1ms"],
        "rx_lag_max_us": max(e["a2b"]["rx_lag_max_ns"], e["b2a"]["rx_lag_max_ns"]) / 1e3,
        "emu_cpu": cpu["emulator_core_frac"],
        "emu_thread_max": cpu["emulator_thread_max_frac"],
        "machine_busy": cpu["machine_busy_frac"],
        "valid": r.meta["valid"],
        "failed": [c["name"] for c in r.meta["checks"] if not c["ok"]],
    }


def bench_rtt() -> list[dict[str, Any]]:
    rtts = [10, 25, 50, 100, 200, 400]
    d = {
        "name": "rtt",
        "duration": "4s",
        "bottleneck": {"rate": "100Mbit", "buffer": "1MB"},
        "flows": [{"cca": "cubic", "rtt": f"{x}ms", "app_rate": "2Mbit"} for x in rtts],
        "measure": {"interval": "1s"},
    }
    r = run(d)
    out = []
    probes = r.meta["kernel"]["rtt_probes"]
    for g, x in enumerate(rtts):
        p = probes[str(g)]
        out.append(
            {
                "rtt_ms": x,
                "probe_median_ms": p["median_ns"] / 1e6,
                "probe_min_ms": p["min_ns"] / 1e6,
                "probe_max_ms": p["max_ns"] / 1e6,
                "error_ms": p["median_ns"] / 1e6 - x,
            }
        )
    return out


def bench_rate() -> list[dict[str, Any]]:
    out = []
    for rate in (10, 100, 200):
        d = {
            "name": "rate",
            "duration": "12s",
            "bottleneck": {"rate": f"{rate}Mbit", "buffer": "1bdp"},
            "flows": [{"cca": "cubic", "rtt": "20ms", "rmem": "16MB", "wmem": "16MB"}],
            "measure": {"interval": "1s", "from": "4s"},
        }
        r = run(d)
        lk = r.link.assign(dt=r.link["t_s"].diff())
        lk = lk[(lk["t_s"] > 4) & (lk["t_s"] <= 11)]
        wire = lk["tx_bytes"].sum() * 8 / lk["dt"].sum()
        good = r.metrics()["sum_bps"]
        out.append(
            {
                "rate_mbit": rate,
                "wire_mbit": wire / 1e6,
                "wire_error_pct": 100 * (wire / (rate * 1e6) - 1),
                "goodput_mbit": good / 1e6,
                "goodput_of_capacity_pct": 100 * good / r.meta["goodput_capacity_bps"],
                **emu(r),
            }
        )
    return out


def bench_loss() -> list[dict[str, Any]]:
    out = []
    for p in (0.001, 0.01):
        d = {
            "name": "loss",
            "duration": "15s",
            "seed": 7,
            "bottleneck": {"rate": "20Mbit", "buffer": "1bdp", "loss": p},
            "flows": [{"cca": "cubic", "rtt": "20ms"}, {"cca": "bbr", "rtt": "20ms"}],
            "measure": {"interval": "1s"},
        }
        r = run(d)
        a = r.meta["kernel"]["emulator"]["a2b"]
        n, lost = a["rx_pkts"], a["loss_drops"]
        sd = (p * (1 - p) / n) ** 0.5
        out.append(
            {
                "loss": p,
                "packets": n,
                "lost": lost,
                "measured": lost / n,
                "z": (lost / n - p) / sd,
                "retransmits": int(r.flows["retransmits"].sum()),
            }
        )
    return out


def bench_long() -> list[dict[str, Any]]:
    d = {
        "name": "long",
        "duration": "30s",
        "bottleneck": {"rate": "100Mbit", "buffer": "1bdp"},
        "flows": [
            {"cca": "cubic", "rtt": "400ms", "rmem": "32MB", "wmem": "32MB"},
            {"cca": "reno", "rtt": "400ms", "rmem": "32MB", "wmem": "32MB"},
        ],
        "measure": {"interval": "1s", "from": "10s"},
    }
    r = run(d)
    m = r.metrics()
    return [
        {"rate_mbit": 100, "rtt_ms": 400, "flows": 2, "utilization": m["utilization"], **emu(r)}
    ]


def bench_maxrate(rates: tuple[int, ...] = (100, 200, 500, 1000)) -> list[dict[str, Any]]:
    out = []
    for rate in rates:
        d = {
            "name": "maxrate",
            "duration": "10s",
            "bottleneck": {"rate": f"{rate}Mbit", "buffer": "1bdp"},
            "flows": [
                {"cca": "cubic", "rtt": "20ms", "rmem": "32MB", "wmem": "32MB"},
                {"cca": "cubic", "rtt": "20ms", "rmem": "32MB", "wmem": "32MB"},
            ],
            "measure": {"interval": "1s", "from": "3s"},
        }
        try:
            r = run(d)
        except BackendError as e:  # above TCPFAIR_KERNEL_MAX_RATE: say so, keep the rest
            print(f"maxrate {rate} Mbit/s skipped: {e}", file=sys.stderr)
            continue
        out.append({"rate_mbit": rate, "utilization": r.metrics()["utilization"], **emu(r)})
    return out


def bench_wakeup(n: int = 200) -> list[dict[str, Any]]:
    """Wake-up latency of `n` timed sleeps per length, measured as linkem's threads sleep:
    timer slack 1 ns, SCHED_FIFO priority 10 (both restored afterwards). Python adds a few µs."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(29, ctypes.c_ulong(1), 0, 0, 0)  # PR_SET_TIMERSLACK
    old = os.sched_getscheduler(0), os.sched_getparam(0)
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    out = []
    try:
        for sleep_s in (0.0001, 0.001, 0.01):
            late = []
            for _ in range(n):
                t = time.perf_counter_ns()
                time.sleep(sleep_s)
                late.append((time.perf_counter_ns() - t) / 1e3 - sleep_s * 1e6)
            late.sort()
            out.append(
                {
                    "sleep_ms": sleep_s * 1e3,
                    "late_median_us": statistics.median(late),
                    "late_p90_us": late[int(0.9 * n)],
                    "late_max_us": late[-1],
                }
            )
    finally:
        os.sched_setscheduler(0, *old)
        libc.prctl(29, ctypes.c_ulong(0), 0, 0, 0)  # back to the default slack
    return out


def table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = [
            (f"{v:.3f}" if abs(v) < 1e4 else f"{v:.4g}") if isinstance(v, float) else str(v)
            for v in r.values()
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    what = argv[0] if argv else "all"
    rates = (
        tuple(int(x) for x in argv[argv.index("--rates") + 1].split(","))
        if "--rates" in argv
        else None
    )
    benches = {
        "rtt": bench_rtt,
        "rate": bench_rate,
        "loss": bench_loss,
        "long": bench_long,
        "maxrate": (lambda: bench_maxrate(rates)) if rates else bench_maxrate,
        "wakeup": bench_wakeup,
    }
    results: dict[str, Any] = {"time": time.strftime("%Y-%m-%d %H:%M:%S")}
    for name, fn in benches.items():
        if what in (name, "all"):
            with open("/proc/loadavg") as f:
                load = f.read().split()[0]
            rows = fn()
            results[name] = rows
            print(f"\n### {name} (load average before: {load})\n\n{table(rows)}", flush=True)
            if "--json" in argv:  # after every bench, so a later failure loses nothing
                with open(argv[argv.index("--json") + 1], "w") as f:
                    json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
