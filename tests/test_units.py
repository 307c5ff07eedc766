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


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("1Kbit", 1_000),
        ("1mbit", 10**6),  # tc's spelling: bits in every tool's reading
        ("1Gbps", 10**9),
        ("1Kbps", 1_000),
        ("1Tbps", 10**12),
        ("1bps", 1),
    ],
)
def test_bit_rate_spellings(text: str, bps: int) -> None:
    assert u.parse_rate(text) == bps


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # bytes per second: never read as bits; the hint gives the same rate in bits (×8)
        ("400MBps", "'400MBps' is a rate in bytes per second; rates are written in bits: "),
        ("400MBps", "'3.2Gbit' is the same rate"),
        ("1GBps", "'8Gbit' is the same rate"),
        ("12.5MB/s", "'100Mbit' is the same rate"),
        ("1kB/s", "'8kbit' is the same rate"),
        ("3Bps", "'24bit' is the same rate"),
        # tc reads mbps/kbps/gbps as bytes per second, other tools as bits: refused
        ("100mbps", "'mbps' in '100mbps' is ambiguous: tc reads it as bytes per second (800Mbit)"),
        ("64kbps", "other tools as bits (64kbit); write '64kbit' or '512kbit'"),
        ("1gbps", "ambiguous"),
        ("1MBit", "unknown rate unit 'MBit'"),
        ("1MBIT", "unknown rate unit 'MBIT'"),
        ("1mBps", "bytes per second"),
    ],
)
def test_rates_that_mean_something_else_are_refused(text: str, message: str) -> None:
    with pytest.raises(u.UnitError) as e:
        u.parse_rate(text)
    assert message in str(e.value)


@pytest.mark.parametrize("text", ["64kb", "1Mb", "10b", "1Gb", "2Kib"])
def test_sizes_in_bits_are_refused_with_a_hint(text: str) -> None:
    with pytest.raises(u.UnitError, match="a lower-case 'b' means bits, and sizes are bytes"):
        u.parse_size(text)


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (u.parse_rate, "nanMbit"),
        (u.parse_rate, "infMbit"),
        (u.parse_rate, "1e999Mbit"),
        (u.parse_time, "NaNs"),
        (u.parse_time, "inf s"),
        (u.parse_size, "-infB"),
        (u.parse_buffer, "nanbdp"),
    ],
)
def test_nan_and_inf_strings_are_refused(parse: object, text: str) -> None:
    with pytest.raises(u.UnitError):
        parse(text)  # type: ignore[operator]
