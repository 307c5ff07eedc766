"""Bad-input corpus: the reverse direction (issue 10 §1): ``direction`` on a flow entry and
the ``[bottleneck.reverse]`` table. Each case must fail with one line naming the key, the
value and what is allowed, exit 2, and leave the working folder as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from badinput import fails_cleanly

BASE = """name = "t"
duration = "2s"
[bottleneck]
rate = "10Mbit"
buffer = "20pkt"
{bottleneck}
{reverse}
[[flows]]
cca = "reno"
rtt = "20ms"
[[flows]]
cca = "cubic"
rtt = "20ms"
{extra1}
"""


def text(extra1: str = "", reverse: str = "", bottleneck: str = "") -> str:
    return BASE.format(extra1=extra1, reverse=reverse, bottleneck=bottleneck)


RED = 'aqm = { kind = "red", min_th = "5pkt", max_th = "%s" }'

CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "direction-unknown": (
        text(extra1='direction = "backward"'),
        ("flows.1.direction", "'backward'", "allowed: forward, reverse"),
    ),
    "direction-not-a-string": (
        text(extra1="direction = true"),
        ("flows.1.direction", "True", "allowed: forward, reverse"),
    ),
    "direction-capitalised": (
        text(extra1='direction = "Reverse"'),
        ("flows.1.direction", "'Reverse'", "allowed: forward, reverse"),
    ),
    "reverse-not-a-table": (
        text(bottleneck='reverse = "10Mbit"'),
        ("bottleneck.reverse", "not a table; allowed: a table of keys (rate,", "'10Mbit'"),
    ),
    "reverse-unknown-key": (
        text(reverse='[bottleneck.reverse]\nmtu = "1000B"'),
        ("bottleneck.reverse.mtu", "unknown key", "'1000B'"),
    ),
    "reverse-rate-without-unit": (
        text(reverse="[bottleneck.reverse]\nrate = 5"),
        ("bottleneck.reverse.rate", "5", "Mbit"),
    ),
    "reverse-rate-out-of-range": (
        text(reverse='[bottleneck.reverse]\nrate = "2Tbit"'),
        ("bottleneck.reverse.rate", "'2Tbit'", "1kbit to 1Tbit"),
    ),
    "reverse-buffer-bad-unit": (
        text(reverse='[bottleneck.reverse]\nbuffer = "10 apples"'),
        ("bottleneck.reverse.buffer", "'10 apples'"),
    ),
    "reverse-buffer-too-large": (
        text(reverse='[bottleneck.reverse]\nbuffer = "2000bdp"'),
        ("bottleneck.reverse.buffer", "'2000bdp'", "at most 1000bdp"),
    ),
    "reverse-loss-one": (
        text(reverse="[bottleneck.reverse]\nloss = 1.0"),
        (
            "bottleneck.reverse.loss",
            "1.0",
            "out of range; allowed: a number at least 0 and below 1",
        ),
    ),
    "reverse-aqm-red-without-thresholds": (
        text(reverse='[bottleneck.reverse]\naqm = "red"'),
        ("bottleneck.reverse.aqm", "'red'", "min_th"),
    ),
    "reverse-aqm-unknown": (
        text(reverse='[bottleneck.reverse]\naqm = "codel"'),
        ("bottleneck.reverse.aqm", "'codel'", "'droptail'"),
    ),
    "reverse-red-above-its-buffer": (
        text(reverse="[bottleneck.reverse]\n" + RED % "30pkt"),
        ("bottleneck.reverse.aqm.max_th", "'30pkt'", "reverse bottleneck's buffer"),
    ),
    # the forward RED (inherited by the reverse link) fits the forward buffer but not the
    # smaller reverse one: named by the key it comes from
    "inherited-red-above-the-reverse-buffer": (
        text(bottleneck=RED % "15pkt", reverse='[bottleneck.reverse]\nbuffer = "10pkt"'),
        ("bottleneck.aqm.max_th", "'15pkt'", "above the reverse buffer (10pkt)"),
    ),
    # 2 connections + 2 links, 1e7 rows at most: 2.5e6 intervals of 2 s → at least 800ns
    "sample-rows-count-both-links": (
        text(extra1='direction = "reverse"').replace('duration = "2s"', 'duration = "2s"\n')
        + '[measure]\ninterval = "500ns"\n',
        ("measure.interval", "16,000,000 samples", "+ the two links", "at least 800ns"),
    ),
    "label-across-directions": (
        text(extra1='direction = "reverse"\nlabel = "bg"').replace(
            'cca = "reno"\nrtt = "20ms"', 'cca = "reno"\nrtt = "20ms"\nlabel = "bg"'
        ),
        ("flows.1.label", "'bg'", "also labels flows.0", "one direction per label"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_reverse_input_fails_cleanly(case: str, tmp_path: Path) -> None:
    content, mentions = CASES[case]
    (tmp_path / "s.toml").write_text(content)
    fails_cleanly(
        ["run", "s.toml", "--no-plot", "-o", "out"],
        mentions=mentions,
        unchanged=[tmp_path],
        cwd=tmp_path,
    )


def test_bad_direction_override_fails_cleanly(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(text())
    fails_cleanly(
        ["run", "s.toml", "--no-plot", "-o", "out", "--set", "flows.0.direction=up"],
        mentions=("flows.0.direction", "'up'", "allowed: forward, reverse"),
        unchanged=[tmp_path],
        cwd=tmp_path,
    )
