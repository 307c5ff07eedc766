"""tcpfair.units: strict unit strings, checked against hand-converted values."""

from __future__ import annotations

import pytest

from tcpfair import units as u


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("100Mbit", 100_000_000),
        ("1.5Mbit", 1_500_000),
        ("10Gbit", 10_000_000_000),
        ("64kbit", 64_000),
        ("1bit", 1),
        ("2.5gbit", 2_500_000_000),
        ("100Mbps", 100_000_000),
        (" 1e3 kbit ", 1_000_000),
        ("1Tbit", 10**12),
    ],
)
def test_parse_rate(text: str, bps: int) -> None:
    assert u.parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("20ms", 20_000_000),
        ("300s", 300_000_000_000),
        ("1.5s", 1_500_000_000),
        ("250us", 250_000),
        ("250µs", 250_000),
        ("7ns", 7),
        ("2min", 120_000_000_000),
        ("0s", 0),
    ],
)
def test_parse_time(text: str, ns: int) -> None:
    assert u.parse_time(text) == ns


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("1500B", 1500),
        ("64KB", 64_000),
        ("64kB", 64_000),
        ("25MiB", 26_214_400),
        ("1KiB", 1024),
        ("2GB", 2_000_000_000),
        ("1GiB", 2**30),
    ],
)
def test_parse_size(text: str, n: int) -> None:
    assert u.parse_size(text) == n


@pytest.mark.parametrize(
    ("fn", "value", "message"),
    [
        (u.parse_rate, "100", "cannot read '100'; expected a rate with a unit"),
        (
            u.parse_rate,
            100,
            "expected a rate with a unit, e.g. '100Mbit', '1.5Mbit', '10Gbit' (units: bit, kbit, "
            "Mbit, Gbit, Tbit) as a string, got 100",
        ),
        (u.parse_rate, "100MB", "unknown rate unit 'MB' in '100MB'"),
        (u.parse_rate, "0Mbit", "rate '0Mbit' must be positive"),
        (u.parse_rate, "0.0001bit", "must be positive"),
        (u.parse_rate, "-5Mbit", "'-5Mbit' is negative; expected a rate"),
        (u.parse_rate, "1e400Mbit", "'1e400Mbit' is too large"),
        (u.parse_rate, True, "as a string, got True"),
        (u.parse_time, "20", "cannot read '20'; expected a time with a unit"),
        (u.parse_time, "20MS", "unknown time unit 'MS'"),
        (u.parse_time, "-1s", "'-1s' is negative"),
        (u.parse_time, "1e400s", "too large"),
        (u.parse_size, "64", "cannot read '64'"),
        (u.parse_size, "64kb", "unknown size unit 'kb'"),
        (u.parse_size, "0B", "size '0B' must be positive"),
        (u.parse_size, "-1KB", "'-1KB' is negative"),
        (u.parse_buffer, "1.5pkt", "packet count in '1.5pkt' must be a whole number"),
        (u.parse_buffer, "lots", "cannot read 'lots'; expected a size ('64KB'), a packet count"),
        (u.parse_buffer, "1e400bdp", "too large"),
    ],
)
def test_bad_values_name_the_value_and_what_is_allowed(
    fn: object, value: object, message: str
) -> None:
    with pytest.raises(u.UnitError) as e:
        fn(value)  # type: ignore[operator]
    assert message in str(e.value)
    assert isinstance(e.value, ValueError)


def test_zero_time_only_where_allowed() -> None:
    assert u.parse_time("0ms") == 0
    with pytest.raises(u.UnitError, match="time '0ms' must be positive"):
        u.parse_time("0ms", allow_zero=False)
    assert u.parse_size("0B", allow_zero=True) == 0


def test_buffers_and_their_resolution() -> None:
    assert u.parse_buffer("100pkt") == u.Buffer("pkt", 100)
    assert u.parse_buffer("64KB") == u.Buffer("bytes", 64_000)
    assert u.parse_buffer("0.2bdp") == u.Buffer("bdp", 0.2)
    assert u.parse_buffer("0B") == u.Buffer("bytes", 0)
    # BDP of 100 Mbit/s × 20 ms = 250 000 B; 0.2 BDP = 50 000 B
    assert u.Buffer("bdp", 1.0).resolve(100_000_000, 20e6, 1500) == (250_000, None)
    assert u.Buffer("bdp", 0.2).resolve(100_000_000, 20e6, 1500) == (50_000, None)
    # 10 Gbit/s × 20 ms = 25 MB (Lab 11's BDP)
    assert u.Buffer("bdp", 1.0).resolve(10_000_000_000, 20e6, 1500) == (25_000_000, None)
    # a non-zero buffer holds at least one packet; a zero one stays zero
    assert u.Buffer("bdp", 0.001).resolve(100_000_000, 20e6, 1500) == (1500, None)
    assert u.Buffer("bdp", 0.0).resolve(100_000_000, 20e6, 1500) == (0, None)
    assert u.Buffer("pkt", 100).resolve(100_000_000, 20e6, 1500) == (None, 100)
    assert u.Buffer("bytes", 64_000).resolve(100_000_000, 20e6, 1500) == (64_000, None)


def test_format_round_trips() -> None:
    for text in ("100Mbit", "10Gbit", "1.5Mbit", "64kbit"):
        assert u.parse_rate(u.format_rate(u.parse_rate(text))) == u.parse_rate(text)
    for text in ("20ms", "300s", "250us", "7ns"):
        assert u.parse_time(u.format_time(u.parse_time(text))) == u.parse_time(text)
    assert u.format_size(25_000_000) == "25MB" and u.format_size(1500) == "1.5KB"
