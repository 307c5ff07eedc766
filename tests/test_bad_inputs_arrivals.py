"""Bad-input corpus: short flows, ``arrivals = { process, rate }`` on a ``[[flows]]`` entry
(issue 10 §3). Each case fails with one line naming the key, the value and what is
allowed, exit 2, and leaves the working folder as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from badinput import fails_cleanly

BASE = """name = "t"
duration = "10s"
seed = 1
[bottleneck]
rate = "100Mbit"
buffer = "100pkt"
[[flows]]
cca = "cubic"
rtt = "20ms"
label = "long"
[[flows]]
cca = "reno"
rtt = "20ms"
label = "short"
{short}
[measure]
interval = "1s"
{measure}
"""

OK = 'size = "100KB"\narrivals = { process = "poisson", rate = "20/s" }'


def text(short: str = OK, measure: str = "") -> str:
    return BASE.format(short=short, measure=measure)


def arrivals(a: str, rest: str = 'size = "100KB"') -> str:
    return f"{rest}\narrivals = {a}"


CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "not-a-table": (text(arrivals('"poisson"')), ("flows.1.arrivals", "expected a table")),
    "unknown-process": (
        text(arrivals('{ process = "uniform", rate = "20/s" }')),
        ("flows.1.arrivals", "'uniform'", "allowed: 'poisson', 'fixed'"),
    ),
    "missing-rate": (
        text(arrivals('{ process = "poisson" }')),
        ("flows.1.arrivals", "missing: rate"),
    ),
    "unknown-key": (
        text(arrivals('{ process = "poisson", rate = "20/s", burst = 3 }')),
        ("flows.1.arrivals", "unknown: burst"),
    ),
    "rate-bare-number": (
        text(arrivals('{ process = "poisson", rate = 20 }')),
        ("flows.1.arrivals", "a count per second, minute or hour", '"20/s"'),
    ),
    "rate-unknown-unit": (
        text(arrivals('{ process = "poisson", rate = "20/day" }')),
        ("flows.1.arrivals", "'20/day'", '"1200/min"'),
    ),
    "rate-zero": (
        text(arrivals('{ process = "fixed", rate = "0/s" }')),
        ("flows.1.arrivals", "'0/s' out of range", "100,000/s"),
    ),
    "rate-absurd": (
        text(arrivals('{ process = "poisson", rate = "1e6/s" }')),
        ("flows.1.arrivals", "'1e6/s' out of range", "100,000/s"),
    ),
    "too-many-arrivals": (
        text(arrivals('{ process = "poisson", rate = "100000/s" }')).replace(
            'duration = "10s"', 'duration = "100s"'
        ),
        ("flows.1.arrivals.rate", "expects 10,000,000 short flows", "at most 2,000,000"),
    ),
    "no-size": (
        text(arrivals('{ process = "poisson", rate = "20/s" }', rest="")),
        ("flows.1", "arrivals needs size"),
    ),
    "streams": (
        text(OK + "\nstreams = 4"),
        ("flows.1", "streams = 4 with arrivals", "allowed: streams = 1"),
    ),
    "start-distribution": (
        text(OK + '\nstart = { dist = "uniform", min = "1s", max = "2s" }'),
        ("flows.1", "start with arrivals", "one value"),
    ),
    "app-rate": (
        text(OK + '\napp_rate = "1Mbit"'),
        ("flows.1", "app_rate is not supported with arrivals"),
    ),
    "ns2-stack": (
        text(OK + '\nstack = "ns2"'),
        ("flows.1.stack", 'not supported under stack "ns2"'),
    ),
    "stop-before-start": (
        text(OK + '\nstart = "5s"\nstop = "2s"'),
        ("flows.1", "stop must be after start"),
    ),
    "reverse-short-label-of-a-forward-entry": (
        text(OK + '\ndirection = "reverse"').replace('label = "short"', 'label = "long"'),
        ("flows.1.label", "'long'", "also labels flows.0", "allowed: one direction per label"),
    ),
    "short-direction-unknown": (
        text(OK + '\ndirection = "back"'),
        ("flows.1.direction", "'back'", "allowed: forward, reverse"),
    ),
    "reverse-short-reverse-rate-zero": (
        text(OK + '\ndirection = "reverse"').replace(
            "[[flows]]", '[bottleneck.reverse]\nrate = "0bit"\n[[flows]]', 1
        ),
        ("bottleneck.reverse.rate", "0"),
    ),
    "measure-short-label": (
        text(measure='flows = ["short"]'),
        ("measure.flows", "'short' labels only short flows", "allowed", "'long'"),
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_bad_arrivals_fail_cleanly(case: str, tmp_path: Path) -> None:
    scenario, mentions = CASES[case]
    (tmp_path / "s.toml").write_text(scenario)
    fails_cleanly(
        ["run", "s.toml", "--no-plot", "-o", "out"],
        mentions=mentions,
        unchanged=[tmp_path],
        cwd=tmp_path,
    )


def test_bad_arrival_rate_override_fails_cleanly(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(text())
    fails_cleanly(
        ["run", "s.toml", "--no-plot", "-o", "out", "--set", "flows.1.arrivals.rate=fast"],
        mentions=("flows.1.arrivals", "'fast'", '"20/s"'),
        unchanged=[tmp_path],
        cwd=tmp_path,
    )
