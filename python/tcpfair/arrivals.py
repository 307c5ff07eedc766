"""Short flows: an arrival process on a ``[[flows]]`` entry (docs/scenario.md, "Short flows").

``arrivals = { process = "poisson", rate = "20/s" }`` opens a new connection of the entry
at each arrival between the entry's ``start`` and ``stop`` (default: the end of the run);
each transfers ``size`` bytes (one value, a list or a distribution, drawn per connection)
and closes. ``process = "fixed"`` spaces the arrivals exactly 1/rate apart.

The schedule (one start time, size and RTT per short flow) is drawn from the scenario's
seed: arrival times from numpy's ``PCG64(SeedSequence([seed, entry, 4]))`` (an independent
stream beside distributions.py's 1, 2, 3 for rtt, start, size), sizes and RTTs from the
entry's size and rtt streams (distributions.py ``rng_for``), the k-th draw to the k-th
arrival. The simulator and the kernel backend's traffic generator run the same schedule.

- ``poisson``: inter-arrival times independent, exponential with mean 1/rate; the first
  arrival is one inter-arrival after ``start``.
- ``fixed``: arrivals at ``start``, ``start + 1/rate``, ``start + 2/rate``, …

Times are rounded to whole nanoseconds; arrivals at or after ``stop`` are not made.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .distributions import KEY_CODES, Varied, rng_for

if TYPE_CHECKING:  # numpy loads when arrivals are drawn, not when a spec is read
    import numpy as np

__all__ = [
    "PROCESSES",
    "Arrivals",
    "Schedule",
    "parse_arrival_rate",
    "arrival_times",
    "MAX_RATE_PER_S",
    "MIN_RATE_PER_S",
    "MAX_ARRIVALS",
]

PROCESSES = ("poisson", "fixed")
#: Seconds per unit of ``rate`` (``"20/s"``, ``"1200/min"``, ``"3/h"``).
RATE_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}
#: At most 100,000 arrivals per second (10 µs apart on average): beyond what any
#: bottleneck this lab models carries as separate connections.
MAX_RATE_PER_S = 100_000.0
#: At least one arrival per day (a smaller rate makes no arrival in any allowed run).
MIN_RATE_PER_S = 1 / 86_400
#: The most short flows an entry may expect (rate × arrival window): each is a row of the
#: short-flows table and a few words of the simulator's schedule.
MAX_ARRIVALS = 2_000_000
#: The arrival-time stream's code in the seed sequence (after rtt 1, start 2, size 3).
ARRIVALS_CODE = 4

_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*/\s*([a-z]+)\s*$")


def parse_arrival_rate(v: Any) -> float:
    """Arrivals per second from ``"20/s"``, ``"1200/min"`` or ``"3/h"``."""
    allowed = (
        'a count per second, minute or hour, e.g. "20/s", "1200/min", "3/h"; allowed: '
        f'at least one a day ("{MIN_RATE_PER_S * 3600:.4g}/h") and at most '
        f"{MAX_RATE_PER_S:,.0f}/s"
    )
    if not isinstance(v, str):
        raise ValueError(f"rate is {allowed}")
    m = _RATE.match(v)
    if not m or m.group(2) not in RATE_UNITS:
        raise ValueError(f"cannot read {v!r} as a rate: {allowed}")
    rate = float(m.group(1)) / RATE_UNITS[m.group(2)]
    if not math.isfinite(rate) or not MIN_RATE_PER_S <= rate <= MAX_RATE_PER_S:
        raise ValueError(f"rate {v!r} out of range: {allowed}")
    return rate


@dataclass(frozen=True)
class Arrivals:
    """An entry's arrival process: ``process`` in PROCESSES, ``rate`` in arrivals/s."""

    process: str
    rate: float

    def canonical(self) -> dict[str, Any]:
        return {"process": self.process, "rate_per_s": self.rate}

    def written(self) -> dict[str, Any]:
        return {"process": self.process, "rate": f"{self.rate!r}/s"}


def parse_arrivals(v: Any) -> Arrivals:
    if isinstance(v, Arrivals):
        return v
    if not isinstance(v, dict):
        raise ValueError('expected a table, e.g. arrivals = { process = "poisson", rate = "20/s" }')
    unknown = sorted(set(v) - {"process", "rate"})
    missing = [k for k in ("process", "rate") if k not in v]
    if unknown or missing:
        raise ValueError(
            "arrivals takes process and rate"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
            + (f"; missing: {', '.join(missing)}" if missing else "")
        )
    if v["process"] not in PROCESSES:
        raise ValueError(
            f"process {v['process']!r} is not an arrival process; allowed: "
            + ", ".join(map(repr, PROCESSES))
        )
    return Arrivals(v["process"], parse_arrival_rate(v["rate"]))


def arrival_times(a: Arrivals, start_ns: int, stop_ns: int, seed: int, entry: int) -> np.ndarray:
    """Arrival times in [start, stop), ns, increasing (int64)."""
    import numpy as np

    mean_ns = 1e9 / a.rate
    if a.process == "fixed":
        n = math.ceil((stop_ns - start_ns) / mean_ns)
        t = start_ns + np.rint(np.arange(n) * mean_ns).astype(np.int64)
        out: np.ndarray = t[t < stop_ns]
        return out
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, entry, ARRIVALS_CODE])))
    expected = (stop_ns - start_ns) / mean_ns
    chunk = int(expected + 6 * math.sqrt(expected) + 16)
    parts: list[np.ndarray] = []
    last = float(start_ns)
    while last < stop_ns:  # almost always one chunk; more draws continue the same stream
        gaps = rng.exponential(mean_ns, chunk)
        t = last + np.cumsum(gaps)
        parts.append(t)
        last = float(t[-1])
    t = np.rint(np.concatenate(parts)).astype(np.int64)
    kept: np.ndarray = t[t < stop_ns]
    return kept


assert ARRIVALS_CODE not in KEY_CODES.values()


@dataclass(frozen=True)
class Schedule:
    """The short flows of one entry, in arrival order: start (ns), size (bytes), base RTT
    (ns) of each."""

    start_ns: np.ndarray
    size_bytes: np.ndarray
    rtt_ns: np.ndarray

    def __len__(self) -> int:
        return len(self.start_ns)

    def pairs(self) -> list[tuple[int, int]]:
        """(start ns, size bytes) of each short flow, in arrival order."""
        return list(zip(self.start_ns.tolist(), self.size_bytes.tolist(), strict=True))


def per_flow(v: int | Varied, n: int, seed: int, entry: int, key: str) -> np.ndarray:
    """``n`` values of ``rtt`` or ``size`` for an entry's short flows (the k-th draw of the
    key's stream to the k-th arrival; one value repeated)."""
    import numpy as np

    if isinstance(v, Varied):
        return np.asarray(v.draw(n, rng_for(seed, entry, key)), dtype=np.int64)
    return np.full(n, v, dtype=np.int64)


def schedule(
    a: Arrivals,
    start_ns: int,
    stop_ns: int,
    size: int | Varied,
    rtt: int | Varied,
    seed: int,
    entry: int,
) -> Schedule:
    t = arrival_times(a, start_ns, stop_ns, seed, entry)
    n = len(t)
    return Schedule(t, per_flow(size, n, seed, entry, "size"), per_flow(rtt, n, seed, entry, "rtt"))
