"""Bad-input corpus: lists and distributions for rtt/start/size, and ``[measure] flows``
(issue 10 §2, §4). Each case must fail with one line naming the key, the value or the
parameter, and what is allowed, exit 2, and leave the working folder as it was. Before
this change a list or a table for ``rtt`` was refused as "Input should be a valid integer"
without saying what is allowed, and ``measure.flows`` was an unknown key."""

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
cca = "reno"
rtt = {rtt}
streams = 4
label = "bg"
{extra0}
[[flows]]
cca = "cubic"
rtt = "20ms"
label = "hs"
[measure]
interval = "1s"
{measure}
"""


def text(rtt: str = '"20ms"', extra0: str = "", measure: str = "") -> str:
    return BASE.format(rtt=rtt, extra0=extra0, measure=measure)


CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "rtt-empty-list": (text(rtt="[]"), ("flows.0.rtt", "1 to 4096 values")),
    "rtt-list-bare-number": (
        text(rtt='["20ms", "20"]'),
        ("flows.0.rtt", "list element 1", "'20'"),
    ),
    "rtt-list-out-of-range": (
        text(rtt='["61s"]'),
        ("flows.0.rtt", "list element 0", "at most 60s"),
    ),
    "rtt-list-nested": (
        text(rtt='[["20ms"]]'),
        ("flows.0.rtt", "list element 0", "a single value"),
    ),
    "rtt-unknown-dist": (
        text(rtt='{ dist = "gamma", mean = "20ms" }'),
        ("flows.0.rtt", "'gamma'", "'uniform', 'normal', 'lognormal', 'pareto'"),
    ),
    "rtt-table-without-dist": (
        text(rtt='{ min = "10ms", max = "20ms" }'),
        ("flows.0.rtt", "dist = None", "'uniform'"),
    ),
    "rtt-normal-missing-sd": (
        text(rtt='{ dist = "normal", mean = "20ms" }'),
        ("flows.0.rtt", "normal takes mean, sd, min, max", "missing: sd"),
    ),
    "rtt-uniform-unknown-param": (
        text(rtt='{ dist = "uniform", min = "1ms", max = "2ms", mean = "1ms" }'),
        ("flows.0.rtt", "uniform takes min, max", "unknown: mean"),
    ),
    "rtt-uniform-min-above-max": (
        text(rtt='{ dist = "uniform", min = "30ms", max = "20ms" }'),
        ("flows.0.rtt", "min < max", "30ms", "20ms"),
    ),
    "rtt-uniform-max-out-of-range": (
        text(rtt='{ dist = "uniform", min = "30ms", max = "2min" }'),
        ("flows.0.rtt", "uniform max", "'2min'", "at most 60s"),
    ),
    "rtt-normal-sd-zero": (
        text(rtt='{ dist = "normal", mean = "20ms", sd = "0ms" }'),
        ("flows.0.rtt", "normal sd ('0ms')", "must be positive"),
    ),
    "start-normal-sd-zero": (
        text(extra0='start = { dist = "normal", mean = "1s", sd = "0s" }'),
        ("flows.0.start", "sd > 0"),
    ),
    "rtt-normal-mean-below-min": (
        text(rtt='{ dist = "normal", mean = "20ms", sd = "5ms", min = "30ms" }'),
        ("flows.0.rtt", "mean 20ms", "[30ms, 60s]"),
    ),
    "rtt-normal-mean-bare-number": (
        text(rtt='{ dist = "normal", mean = 20, sd = "5ms" }'),
        ("flows.0.rtt", "normal mean (20)"),
    ),
    "rtt-lognormal-mean-zero": (
        text(rtt='{ dist = "lognormal", mean = "0ms", sd = "5ms" }'),
        ("flows.0.rtt", "lognormal mean ('0ms')"),
    ),
    "rtt-pareto-shape-one": (
        text(rtt='{ dist = "pareto", mean = "20ms", shape = 1 }'),
        ("flows.0.rtt", "pareto shape 1", "> 1"),
    ),
    "rtt-pareto-shape-string": (
        text(rtt='{ dist = "pareto", mean = "20ms", shape = "2" }'),
        ("flows.0.rtt", "pareto shape is a number", "'2'"),
    ),
    "rtt-pareto-shape-nan": (
        text(rtt='{ dist = "pareto", mean = "20ms", shape = nan }'),
        ("flows.0.rtt", "pareto shape is a number", "nan"),
    ),
    "rtt-pareto-shape-huge": (
        text(rtt='{ dist = "pareto", mean = "20ms", shape = 1e300 }'),
        ("flows.0.rtt", "out of range", "<= 100"),
    ),
    "rtt-pareto-min-not-a-parameter": (
        text(rtt='{ dist = "pareto", mean = "20ms", shape = 2, min = "1ms" }'),
        ("flows.0.rtt", "pareto takes mean, shape, max", "unknown: min"),
    ),
    "size-list-bits": (
        text(extra0='size = ["1MB", "1kb"]'),
        ("flows.0.size", "list element 1", "'1kb'"),
    ),
    "size-uniform-max-too-large": (
        text(extra0='size = { dist = "uniform", min = "1MB", max = "2e15B" }'),
        ("flows.0.size", "uniform max", "at most 1e15B"),
    ),
    "start-drawn-after-the-end": (
        text(extra0='start = { dist = "uniform", min = "5s", max = "30s" }'),
        ("flows.0.start", "drawn", "not before the end of the run"),
    ),
    "start-list-after-stop": (
        text(extra0='start = ["1s", "6s"]\nstop = "5s"'),
        ("flows.0.stop", "must be after start", "6s"),
    ),
    "measure-flows-unknown-label": (
        text(measure='flows = ["hs", "high-speed"]'),
        ("measure.flows", "'high-speed'", "allowed", "'bg', 'hs'"),
    ),
    "measure-flows-default-label-of-a-labelled-entry": (
        text(measure='flows = ["1:cubic"]'),
        ("measure.flows", "'1:cubic'", "'bg', 'hs'"),
    ),
    "measure-flows-empty": (
        text(measure="flows = []"),
        ("measure.flows", "a list of one or more [[flows]] labels", "[]"),
    ),
    "measure-flows-not-a-list": (
        text(measure='flows = "hs"'),
        ("measure.flows", "a list of one or more", "'hs'"),
    ),
    "measure-flows-number": (
        text(measure="flows = [1]"),
        ("measure.flows", "[[flows]] labels", "[1]"),
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_bad_distribution_or_group_input_fails_cleanly(case: str, tmp_path: Path) -> None:
    content, mentions = CASES[case]
    (tmp_path / "s.toml").write_text(content)
    fails_cleanly(
        ["run", "s.toml", "--no-plot", "-o", "out"],
        mentions=mentions,
        unchanged=[tmp_path],
        cwd=tmp_path,
    )


def test_bad_override_of_a_distribution_fails_cleanly(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(text())
    fails_cleanly(
        ["run", "s.toml", "--no-plot", "-o", "out", "--set", 'flows.0.rtt={dist="uniform"}'],
        mentions=("flows.0.rtt", "missing: min, max"),
        unchanged=[tmp_path],
        cwd=tmp_path,
    )


def test_kernel_backend_splits_entries_whose_connections_differ_up_to_a_limit() -> None:
    """An entry whose connections draw different values runs one connection per address
    and iperf3 pair (docs/kernel.md); more than MAX_SPLIT_CONNS of them are refused."""
    import tomllib

    from tcpfair.kernel.capabilities import _split_limit_problem, split_connections
    from tcpfair.kernel.topology import MAX_SPLIT_CONNS
    from tcpfair.spec import from_dict

    sc = from_dict(tomllib.loads(text(rtt='{ dist = "uniform", min = "10ms", max = "50ms" }')))
    assert split_connections(sc.entry_values(0)) == 4
    # one connection per entry, or identical connections: one client, as before
    assert split_connections(sc.entry_values(1)) == 0
    same = from_dict(tomllib.loads(text(rtt='["20ms", "20ms"]')))
    assert split_connections(same.entry_values(0)) == 0
    assert _split_limit_problem({0: MAX_SPLIT_CONNS, 1: 0}) == []
    probs = _split_limit_problem({0: MAX_SPLIT_CONNS, 1: 1})
    assert len(probs) == 1
    assert f"{MAX_SPLIT_CONNS + 1} connections" in probs[0]
    assert f"flows.0: {MAX_SPLIT_CONNS}, flows.1: 1" in probs[0]


def test_unknown_group_metric_names_the_available_ones(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tcpfair.cli import cli

    sweep = Path(__file__).parent / "fixtures" / "sweep-groups.toml"
    store = tmp_path / "mixg"
    assert CliRunner().invoke(cli, ["sweep", str(sweep), "-o", str(store)]).exit_code == 0
    fails_cleanly(
        ["results", str(store), "--plot", "mean:high-speed", "--x", "flows.0.streams"],
        mentions=("unknown metric 'mean:high-speed'", "mean:vegas", "ratio:vegas/reno"),
        unchanged=[store],
    )


def test_kernel_run_with_too_many_drawn_connections_is_refused_before_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    linkem = os.environ.get("TCPFAIR_LINKEM") or str(
        Path(__file__).resolve().parents[1] / "target" / "release" / "tcpfair-linkem"
    )
    if not Path(linkem).exists():
        pytest.skip("tcpfair-linkem is not built (the capability check would stop first)")
    monkeypatch.delenv("TCPFAIR_KERNEL_MAX_RATE", raising=False)
    (tmp_path / "s.toml").write_text(
        text(rtt='{ dist = "uniform", min = "10ms", max = "50ms" }')
        .replace('"100Mbit"', '"10Mbit"')
        .replace("streams = 4", "streams = 65")
    )
    fails_cleanly(
        ["run", "s.toml", "--backend", "kernel", "-o", "out"],
        mentions=("flows: 65 connections draw their own rtt/start/size", "at most 64 per run"),
        unchanged=[tmp_path],
        cwd=tmp_path,
        env={"TCPFAIR_LINKEM": linkem},
    )


CDF_CASES: dict[str, tuple[str | None, str, tuple[str, ...]]] = {
    # id: (web.csv content or None for no file, the size value, mentions)
    "cdf-file-missing": (None, '{ cdf = "web.csv" }', ("flows.0.size", "web.csv", "no such file")),
    "cdf-file-bare-number": (
        "10000, 0.5\n1MB, 1\n",
        '{ cdf = "web.csv" }',
        ("flows.0.size", "line 1", "'10000'"),
    ),
    "cdf-file-probability-above-one": (
        "10KB, 0.5\n1MB, 1.5\n",
        '{ cdf = "web.csv" }',
        ("flows.0.size", "line 2", "1.5", "allowed: 0 to 1"),
    ),
    "cdf-file-last-not-one": (
        "10KB, 0.5\n1MB, 0.9\n",
        '{ cdf = "web.csv" }',
        ("flows.0.size", "last cumulative probability must be 1", "0.9"),
    ),
    "cdf-file-values-decrease": (
        "1MB, 0.5\n10KB, 1\n",
        '{ cdf = "web.csv" }',
        ("flows.0.size", "line 2", "values must increase"),
    ),
    "cdf-file-three-columns": (
        "10KB, 0.5, x\n1MB, 1\n",
        '{ cdf = "web.csv" }',
        ("flows.0.size", "line 1", "a value and a cumulative probability"),
    ),
    "cdf-file-empty": ("# nothing\n", '{ cdf = "web.csv" }', ("flows.0.size", "1 to 10000 points")),
    "cdf-file-binary": ("\udcff", '{ cdf = "web.csv" }', ("flows.0.size", "not a text file")),
    "cdf-inline-probability-text": (
        None,
        '{ cdf = [["10KB", "half"], ["1MB", 1]] }',
        ("flows.0.size", "point 0", "'half' is not a number"),
    ),
    "cdf-with-another-key": (
        None,
        '{ cdf = [["1MB", 1]], max = "2MB" }',
        ("flows.0.size", "one key cdf", "unknown: max"),
    ),
    "cdf-not-a-file-or-list": (
        None,
        "{ cdf = 3 }",
        ("flows.0.size", "a file name or a list of [value, probability] pairs"),
    ),
}


@pytest.mark.parametrize("case", list(CDF_CASES), ids=list(CDF_CASES))
def test_bad_empirical_cdf_fails_cleanly(case: str, tmp_path: Path) -> None:
    content, size, mentions = CDF_CASES[case]
    if content is not None:
        (tmp_path / "web.csv").write_bytes(content.encode("utf-8", "surrogateescape"))
    (tmp_path / "s.toml").write_text(text(extra0=f"size = {size}"))
    fails_cleanly(
        ["run", "s.toml", "--no-plot", "-o", "out"],
        mentions=mentions,
        unchanged=[tmp_path],
        cwd=tmp_path,
    )
