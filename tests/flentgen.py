"""A Flent data file as Flent 2.x writes it (data file format version 4; see Flent's
doc/data-format.rst and its ResultSet.serialise): ``tcp_nup`` with two upload streams.

Stream 1 runs at a constant 8 Mbit/s, stream 2 at 4 Mbit/s, sampled every 0.2 s from 0 to
5 s; Flent's first point (x = 0) is null, as in its files. Flent's own aggregates
(``TCP upload sum``/``avg``/``fairness``) and the ping series are there too and must not
become flows. Each stream's raw values carry ``tcp_rtt`` (ms) and ``tcp_cwnd`` (packets),
from Flent's ss runner, once per step, 0.1 s before the step's end.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

T0 = "2026-11-01T12:00:00.000000Z"
T0_UNIX = 1793534400.0  # the same instant
STEP = 0.2
N = 26  # x = 0, 0.2, …, 5.0


def tcp_nup(rates: tuple[float, ...] = (8.0, 4.0), rtt_ms: float = 20.0) -> dict[str, Any]:
    xs = [round(i * STEP, 10) for i in range(N)]
    results: dict[str, list[Any]] = {}
    raw: dict[str, list[dict[str, Any]]] = {}
    meta_series: dict[str, dict[str, Any]] = {}
    for k, rate in enumerate(rates, start=1):
        name = f"TCP upload::{k}"
        results[name] = [None] + [rate] * (N - 1)
        raw[name] = [
            {"t": T0_UNIX + x - 0.1, "val": rate, "dur": STEP, "tcp_rtt": rtt_ms, "tcp_cwnd": 10}
            for x in xs[1:]
        ]
        meta_series[name] = {
            "UNITS": "Mbits/s",
            "CONG_CONTROL": "cubic" if k == 1 else "bbr",
            "TCP_MSS": 1448,
            "MEAN_VALUE": rate,
        }
    results["TCP upload sum"] = [None] + [sum(rates)] * (N - 1)
    results["TCP upload avg"] = [None] + [sum(rates) / len(rates)] * (N - 1)
    results["TCP upload fairness"] = [None] + [0.9] * (N - 1)
    results["Ping (ms) ICMP"] = [None] + [21.0] * (N - 1)
    meta_series["TCP upload sum"] = {"UNITS": "Mbits/s"}
    meta_series["Ping (ms) ICMP"] = {"UNITS": "ms"}
    return {
        "version": 4,
        "x_values": xs,
        "results": results,
        "raw_values": raw,
        "metadata": {
            "NAME": "tcp_nup",
            "TITLE": "",
            "HOSTS": ["10.0.0.2"],
            "LENGTH": 5,
            "TOTAL_LENGTH": 5.0,
            "STEP_SIZE": STEP,
            "TIME": T0,
            "T0": T0,
            "FLENT_VERSION": "2.3.0",
            "IP_VERSION": 4,
            "SERIES_META": meta_series,
        },
    }


def write(path: Path, obj: dict[str, Any], compress: bool = True) -> Path:
    data = json.dumps(obj, indent=2, sort_keys=True).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    return path


if __name__ == "__main__":  # regenerate tests/fixtures/flent/tcp_nup-2.flent.gz
    write(Path(__file__).parent / "fixtures" / "flent" / "tcp_nup-2.flent.gz", tcp_nup())
