"""Strict parsing of the unit strings used in scenario files.

Rates are bits per second (SI prefixes: ``100Mbit`` = 100·10⁶ bit/s), times are integer
nanoseconds, sizes are bytes (``KB`` = 1000 B, ``KiB`` = 1024 B). Units are matched exactly
as spelled: a byte rate (``MBps``, ``MB/s``) or tc's ambiguous ``mbps`` (bytes/s to tc,
bits/s to others) is refused with the equivalent in bits, never silently read as bits. A bare
number is an error: the unit is part of the value. Every function raises ``UnitError`` with
a message that says what is allowed; ``tcpfair.spec`` adds the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "UnitError",
    "Buffer",
    "parse_rate",
    "parse_time",
    "parse_size",
    "parse_buffer",
    "format_rate",
    "format_time",
    "format_size",
]


class UnitError(ValueError):
    """A value whose unit is missing, unknown, or whose magnitude is impossible."""


_NUMBER = r"(?P<num>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)"
_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>[A-Za-zµ/]+)\s*$")

#: Rate units, exactly as spelled (bits per second). ``…bit`` means bits in every tool's
#: reading, so its prefix may be either case (tc writes ``mbit``); ``…bps`` is accepted only
#: with a capital prefix (``Mbps``): tc reads ``kbps``/``mbps``/``gbps`` as *bytes* per second.
_RATE_UNITS: dict[str, int] = {
    "bit": 1,
    "kbit": 10**3,
    "Kbit": 10**3,
    "mbit": 10**6,
    "Mbit": 10**6,
    "gbit": 10**9,
    "Gbit": 10**9,
    "tbit": 10**12,
    "Tbit": 10**12,
    "bps": 1,
    "Kbps": 10**3,
    "Mbps": 10**6,
    "Gbps": 10**9,
    "Tbps": 10**12,
}
_RATE_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
#: Byte-rate spellings: refused with the equivalent in bits (never silently read as bits).
_BYTE_RATE = re.compile(r"^(?P<p>[kKmMgGtT]?)(?:B/s|Bps|byte/s|bytes/s)$")
#: Ambiguous lower-case ``…bps``: tc reads them as bytes per second, most other tools as bits.
_TC_BYTE_RATE = re.compile(r"^(?P<p>[kmgt])bps$")
_TIME_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9}
_SIZE_UNITS = {
    "B": 1,
    "KB": 10**3,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}

RATE_HELP = (
    "a rate with a unit, e.g. '100Mbit', '1.5Mbit', '10Gbit' (units: bit, kbit, Mbit, Gbit, Tbit)"
)
TIME_HELP = "a time with a unit, e.g. '20ms', '300s' (units: ns, us, ms, s, min)"
SIZE_HELP = (
    "a size with a unit, e.g. '1500B', '64KB', '25MiB' (units: B, KB, MB, GB, KiB, MiB, GiB)"
)
BUFFER_HELP = "a size ('64KB'), a packet count ('100pkt') or a multiple of the BDP ('0.2bdp')"


def _split(value: object, what: str) -> tuple[float, str]:
    if isinstance(value, bool) or not isinstance(value, str):
        raise UnitError(f"expected {what} as a string, got {value!r}")
    m = _RE.match(value)
    if not m:
        if _RE.match(value.strip().lstrip("-")) and value.strip().startswith("-"):
            raise UnitError(f"{value!r} is negative; expected {what}")
        raise UnitError(f"cannot read {value!r}; expected {what}")
    num = float(m.group("num"))
    if not math.isfinite(num):
        raise UnitError(f"{value!r} is too large; expected {what}")
    return num, m.group("unit")


def parse_rate(value: object) -> int:
    """``'100Mbit'`` → 100_000_000 (bit/s). Zero and bare numbers are errors."""
    num, unit = _split(value, RATE_HELP)
    mult = _RATE_UNITS.get(unit)
    if mult is None:
        raise UnitError(_rate_unit_problem(num, unit, value))
    bps = round(num * mult)
    if bps <= 0:
        raise UnitError(f"rate {value!r} must be positive")
    return bps


def _rate_unit_problem(num: float, unit: str, value: object) -> str:
    """Why ``unit`` is not a rate unit, with the equivalent in bits where it is a byte rate."""
    m = _BYTE_RATE.match(unit)
    if m:
        bits = format_rate(num * _RATE_PREFIX[m.group("p").lower()] * 8, 9)
        return (
            f"{value!r} is a rate in bytes per second; rates are written in bits: "
            f"'{bits}' is the same rate (units: bit, kbit, Mbit, Gbit, Tbit)"
        )
    m = _TC_BYTE_RATE.match(unit)
    if m:
        p = m.group("p")
        bits = format_rate(num * _RATE_PREFIX[p], 9)
        bytes_ = format_rate(num * _RATE_PREFIX[p] * 8, 9)
        return (
            f"{unit!r} in {value!r} is ambiguous: tc reads it as bytes per second ({bytes_}), "
            f"other tools as bits ({bits}); write '{bits}' or '{bytes_}'"
        )
    return f"unknown rate unit {unit!r} in {value!r}; expected {RATE_HELP}"


def parse_time(value: object, *, allow_zero: bool = True) -> int:
    """``'20ms'`` → 20_000_000 (ns)."""
    num, unit = _split(value, TIME_HELP)
    mult = _TIME_UNITS.get(unit)
    if mult is None:
        raise UnitError(f"unknown time unit {unit!r} in {value!r}; expected {TIME_HELP}")
    ns = round(num * mult)
    if ns == 0 and not allow_zero:
        raise UnitError(f"time {value!r} must be positive")
    return ns


def parse_size(value: object, *, allow_zero: bool = False) -> int:
    """``'64KB'`` → 64000, ``'25MiB'`` → 26214400 (bytes)."""
    num, unit = _split(value, SIZE_HELP)
    mult = _SIZE_UNITS.get(unit)
    if mult is None:
        if unit.endswith("b") and unit[:-1] in ("", "k", "K", "m", "M", "g", "G", "Ki", "Mi", "Gi"):
            raise UnitError(
                f"unknown size unit {unit!r} in {value!r}: a lower-case 'b' means bits, and "
                f"sizes are bytes; expected {SIZE_HELP}"
            )
        raise UnitError(f"unknown size unit {unit!r} in {value!r}; expected {SIZE_HELP}")
    n = round(num * mult)
    if n == 0 and not allow_zero:
        raise UnitError(f"size {value!r} must be positive")
    return n


@dataclass(frozen=True)
class Buffer:
    """A bottleneck buffer as written: bytes, packets, or a multiple of the BDP."""

    kind: Literal["bytes", "pkt", "bdp"]
    value: float

    def resolve(self, rate_bps: int, rtt_ns: float, mtu: int) -> tuple[int | None, int | None]:
        """(buffer_bytes, buffer_pkts); BDP = rate × rtt, at least one MTU for a non-zero buffer."""
        if self.kind == "pkt":
            return None, int(self.value)
        if self.kind == "bytes":
            return int(self.value), None
        n = round(self.value * rate_bps / 8 * rtt_ns / 1e9)
        if self.value > 0:
            n = max(n, mtu)
        return n, None


def parse_buffer(value: object) -> Buffer:
    if isinstance(value, str):
        m = _RE.match(value)
        if m and m.group("unit").lower() in ("pkt", "pkts", "p"):
            num = float(m.group("num"))
            if num != int(num):
                raise UnitError(f"packet count in {value!r} must be a whole number")
            return Buffer("pkt", int(num))
        if m and m.group("unit").lower() == "bdp":
            if not math.isfinite(float(m.group("num"))):
                raise UnitError(f"{value!r} is too large; expected {BUFFER_HELP}")
            return Buffer("bdp", float(m.group("num")))
    try:
        return Buffer("bytes", parse_size(value, allow_zero=True))
    except UnitError:
        raise UnitError(f"cannot read {value!r}; expected {BUFFER_HELP}") from None


def format_rate(bps: float, digits: int = 4) -> str:
    for unit, mult in (("Gbit", 1e9), ("Mbit", 1e6), ("kbit", 1e3)):
        if abs(bps) >= mult:
            return f"{bps / mult:.{digits}g}{unit}"
    return f"{bps:.{digits}g}bit"


def format_time(ns: float) -> str:
    for unit, mult in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= mult:
            return f"{ns / mult:.6g}{unit}"
    return f"{ns:.6g}ns"


def format_size(n: float) -> str:
    for unit, mult in (("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= mult:
            return f"{n / mult:.4g}{unit}"
    return f"{n:.0f}B"
