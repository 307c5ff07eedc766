"""Short flows on the kernel backend: tcpfair-traffic's JSON → the short-flows table.

The generator's client (crates/traffic/src/client.rs) records per flow the CLOCK_MONOTONIC
time it called ``connect()`` (its SYN leaves inside that call), its local port, the bytes
it sent and, from ``TCP_INFO`` before closing, retransmissions and timeouts. The server
(server.rs) records per connection the peer, the bytes read and when the last byte was
read. Every namespace shares CLOCK_MONOTONIC, so

    FCT = server's last-byte time − client's connect time

(SYN sent → last byte delivered to the receiving application, as the simulator defines
it). Client and server records are matched by the client's port, and among connections
that reused a port by time: the first server connection accepted after the client's
connect.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd

from ..shortflows import SHORT_COLUMNS, ideal_fct_s

#: the short-flows table's columns (tcpfair.shortflows, the simulator's too), then two the
#: kernel backend adds: how late the generator opened the flow, and what went wrong
KERNEL_COLUMNS = [*SHORT_COLUMNS, "start_late_s", "error"]


class TrafficOutputError(ValueError):
    """The generator's output could not be read."""


def load(text: str, key: str, what: str) -> list[dict[str, Any]]:
    """The list under ``key`` in one generator JSON document (``flows`` or ``conns``)."""
    if not text.strip():
        raise TrafficOutputError(f"{what} printed nothing")
    try:
        doc = json.loads(text)
        rows = doc[key]
    except (ValueError, KeyError, TypeError) as e:
        raise TrafficOutputError(f"{what}: unreadable output ({e})") from None
    if not isinstance(rows, list):
        raise TrafficOutputError(f"{what}: {key!r} is not a list")
    return rows


def match(
    client: list[dict[str, Any]], server: list[dict[str, Any]]
) -> list[dict[str, Any] | None]:
    """For each client record, the server connection that carried it (None: none did)."""
    by_port: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for c in sorted(server, key=lambda c: c["accept_ns"]):
        by_port[int(c["peer_port"])].append(c)
    out: list[dict[str, Any] | None] = [None] * len(client)
    order = sorted(
        (i for i, r in enumerate(client) if r.get("local_port") is not None),
        key=lambda i: client[i]["connect_ns"],
    )
    for i in order:
        r = client[i]
        queue = by_port.get(int(r["local_port"]), [])
        for k, c in enumerate(queue):
            if c["accept_ns"] >= r["connect_ns"]:
                out[i] = queue.pop(k)
                break
    return out


def table(
    group: int,
    label: str,
    client: list[dict[str, Any]],
    server: list[dict[str, Any]],
    t0_mono_ns: int,
    rtt_s: float | np.ndarray,
    rate_bps: float,
) -> pd.DataFrame:
    """One row per scheduled short flow of ``group`` (columns ``KERNEL_COLUMNS``; ``flow``
    numbers the rows from 0 — the caller renumbers across entries). ``fct_s`` is NaN for a
    flow that did not complete (all ``size`` bytes read and the client's close seen): such
    a flow is kept, with its ``error``, never dropped. ``rate_bps``: the rate of the
    bottleneck its data crosses (for ``ideal_s``). ``rtt_s``: one RTT, or each flow's by
    its ``id`` (the schedule's order)."""
    per_flow = np.broadcast_to(np.asarray(rtt_s, dtype=float), (len(client),))
    rows = []
    for r, c in zip(client, match(client, server), strict=True):
        size = int(r["size"])
        connect = r.get("connect_ns")
        delivered = int(c["bytes"]) if c else 0
        done = c is not None and bool(c.get("eof")) and delivered == size
        fct = (
            (c["last_byte_ns"] - connect) / 1e9 if c and done and connect is not None else math.nan
        )
        start_ns = connect - t0_mono_ns if connect is not None else int(r["start_ns"])
        late = (
            (connect - t0_mono_ns - int(r["start_ns"])) / 1e9 if connect is not None else math.nan
        )
        rows.append(
            {
                "flow": int(r["id"]),
                "group": group,
                "label": label,
                "cca": r.get("cca") or "",
                "start_s": start_ns / 1e9,
                "size_bytes": size,
                "rtt_s": float(per_flow[int(r["id"])]),
                "fct_s": fct,
                "completed": done and connect is not None,
                "bytes": delivered,
                "retransmits": _num(r.get("total_retrans")),
                "timeouts": _num(r.get("timeouts")),
                "start_late_s": late,
                "error": r.get("error") or (None if done else "not completed"),
            }
        )
    df = pd.DataFrame(rows, columns=[c for c in KERNEL_COLUMNS if c not in ("ideal_s", "slowdown")])
    size = df["size_bytes"].to_numpy(dtype=float)
    df["ideal_s"] = ideal_fct_s(size, df["rtt_s"].to_numpy(dtype=float), rate_bps)
    df["slowdown"] = df["fct_s"].to_numpy(dtype=float) / df["ideal_s"].to_numpy(dtype=float)
    return df[KERNEL_COLUMNS]


def _num(v: Any) -> float:
    return math.nan if v is None else float(v)
