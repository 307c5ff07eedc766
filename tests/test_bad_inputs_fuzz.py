"""Bad-input corpus: what a mutation checker found (session 13).

Every built-in scenario and sweep was mutated key by key (wrong type, negative, zero, huge,
non-finite, unit typos, a key removed, misspelled or added; ``--set`` in malformed forms)
and each input run through the CLI's validation; the iperf3 example report likewise through
``tcpfair fairness``. Each case below broke the promise of ``badinput.py`` before its fix:
an internal error (``--set flows.².cca``, a report whose ``streams`` is a number), a value
silently taken for another (``flows.١`` read as ``flows.1``), several lines for one mistake
(a misspelled key, a bad key of ``[bottleneck.reverse.aqm]``, a bad key of a sweep's base
repeated for every point), or a line that did not say what is allowed (an unknown key) or
blamed an option the user never gave (``--from/--to``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from badinput import fails_cleanly

from tcpfair.sweep import point_label

ROOT = Path(__file__).resolve().parent.parent
P4 = ROOT / "examples" / "lab10-parallel-P4.json"  # iperf3 3.12 -P 4, 20 s, 1 s intervals

SCENARIO = """\
name = "t"
duration = "10s"
[bottleneck]
rate = "10Mbit"
buffer = "100pkt"
{bottleneck}
[[flows]]
cca = "reno"
{flow0}
[[flows]]
cca = "cubic"
rtt = "20ms"
[measure]
interval = "1s"
from = "2s"
"""


def write(tmp: Path, bottleneck: str = "", flow0: str = 'rtt = "20ms"') -> str:
    (tmp / "s.toml").write_text(SCENARIO.format(bottleneck=bottleneck, flow0=flow0))
    return "s.toml"


def run(tmp: Path, *sets: str, **parts: str) -> list[str]:
    args = ["run", write(tmp, **parts), "--no-plot", "-o", "out"]
    for s in sets:
        args += ["--set", s]
    return args


@pytest.mark.parametrize(
    ("sets", "parts", "mentions"),
    [
        # str.isdigit() takes '²' (int() refuses it: an internal error) and '١' (int() reads
        # it as 1: the override silently went to flows.1)
        (["flows.².cca=bbr"], {}, ["flows.²", "not an existing entry", "indices from 0"]),
        (["flows.١.cca=bbr"], {}, ["flows.١", "not an existing entry", "indices from 0"]),
        # an unknown key says which keys the table takes, and what it likely meant
        (
            ["bottleneck.speed=1"],
            {},
            ["bottleneck.speed: unknown key", "allowed: rate, buffer, aqm, loss, mtu"],
        ),
        (
            ["measure.form=1s"],
            {},
            ["measure.form: unknown key (did you mean 'from'?)", "allowed: interval, from, to"],
        ),
        # a misspelled required key: one line (was a second: "rtt: required key is missing")
        (
            [],
            {"flow0": 'rtts = "20ms"'},
            ["flows.0.rtts: unknown key (did you mean 'rtt'?)", "allowed: cca, rtt,"],
        ),
        # a misspelled burst with netem_root: one line (was also "netem_root: true needs
        # bottleneck.burst")
        (
            [],
            {"bottleneck": 'burts = "5000000B"\nnetem_root = true'},
            ["bottleneck.burts: unknown key (did you mean 'burst'?)"],
        ),
        # a burst that was refused is not missing: one line (was also "netem_root: true
        # needs bottleneck.burst")
        (
            [],
            {"bottleneck": 'burst = "1B"\nnetem_root = true'},
            ["bottleneck.burst", "allowed: from the mtu (1500B, one full packet)"],
        ),
        # [bottleneck.reverse]'s RED: one bad key was five lines, "kind: Input should be
        # 'droptail'" and min_th/max_th "unknown key" among them
        (
            [
                'bottleneck.reverse.aqm={kind="red", min_th="5pkt", max_th="10pkt", max_p=2}',
            ],
            {},
            [
                "bottleneck.reverse.aqm.max_p",
                "out of range; allowed: a number above 0 and at most 1",
                "(got 2)",
            ],
        ),
        (
            ['bottleneck.reverse.aqm={kind="red", min_th="5pkt", max_th="10pkt", maxp=0.2}'],
            {},
            [
                "bottleneck.reverse.aqm.maxp: unknown key (did you mean 'max_p'?)",
                "allowed: kind, min_th, max_th, max_p, wq, gentle",
            ],
        ),
        # a duration that ends before measure.from (no measure.to): was "(scenario):
        # measure.from (2s) must be before measure.to (1s)", a measure.to nobody wrote
        (
            ["duration=1s"],
            {},
            ["measure.from: 2s is not before the end of the run (duration = 1s)", "allowed:"],
        ),
        (["measure.to=11s"], {}, ["measure.to: 11s is after the end of the run (10s)", "allowed"]),
        # a key under a list entry that is a value: was an internal error (TypeError: 'int'
        # object does not support item assignment)
        (["flows=[1, 2]", "flows.0.cca=bbr"], {}, ["flows.0.cca", "'flows.0' is a value"]),
        # a distribution named by a table or a list: was an internal error (TypeError:
        # unhashable type)
        (
            [],
            {"flow0": "rtt = { dist = { a = 1 } }"},
            ["flows.0.rtt", "dist = 'uniform', 'normal'", "(got dist = {'a': 1})"],
        ),
        ([], {"flow0": "rtt = { dist = [1] }"}, ["flows.0.rtt", "(got dist = [1])"]),
        # an aqm table without a kind, or with an unknown one: was pydantic's "Unable to
        # extract tag using discriminator 'kind'", and a kind with a newline two lines
        (
            ["bottleneck.aqm={ min_th = '5pkt' }"],
            {},
            ["bottleneck.aqm: the table has no kind", 'allowed: kind = "droptail"'],
        ),
        (
            [],
            {"bottleneck": 'aqm = { kind = "re\\nd" }'},  # TOML's \n: a newline
            ["bottleneck.aqm: unknown kind 're\\nd'", 'kind = "red" with min_th and max_th'],
        ),
        # a pareto whose least value rounds to 0: accepted, then refused by the simulator
        # ("flows.0.size: must be positive", nothing allowed) once the run started
        (
            [],
            {"flow0": 'rtt = "20ms"\nsize = { dist = "pareto", mean = "1B", shape = 1.5 }'},
            ["flows.0.size: pareto mean 1B with shape 1.5", "allowed: a mean of at least 3B"],
        ),
        # with burst (tbf) a buffer below one packet dropped every packet: a run of zeros
        # and JFI nan, exit 0
        (
            ["bottleneck.buffer=1000B"],
            {"bottleneck": 'burst = "5000B"'},
            ["bottleneck.buffer: 1000B is less than one packet", "allowed: at least 1pkt"],
        ),
        # every measured flow outside the window: exit 0 with JFI nan and zeros
        (
            ["flows.0.stop=1s", "measure.flows=['r']"],
            {"flow0": 'rtt = "20ms"\nlabel = "r"'},
            [
                "flows.0.stop: the measured flows (measure.flows) are outside the measurement "
                "window (2s to 10s; this one stops at 1s)",
                "allowed: flows that send in the window",
            ],
        ),
        (
            ["flows.0.start=9s", "flows.1.start=9.5s", "measure.to=8s"],
            {},
            ["flows.0.start: every flow is outside the measurement window (2s to 8s", "allowed"],
        ),
        # a duration cut below measure.from + interval: named only measure.interval and a
        # window "(2s to 2.5s)" whose end nobody wrote
        (
            ["duration=2.5s"],
            {},
            [
                "measure.interval: longer than the measurement window (2s to 2.5s, the end of "
                "the run: duration)"
            ],
        ),
        # a parameter shorthand that is a string: three lines, one per union branch
        # ("flows.0.alpha.bool: Input should be a valid boolean", ".int", ".float")
        (
            ["flows.0.cca=vegas", "flows.0.alpha=hello"],
            {},
            ["flows.0.alpha: expected a number or true/false", "(got 'hello')"],
        ),
        # a refused stack with delack = true: also "delack … applies under stack = "ns2"
        # only" (the refused stack read as not ns2)
        (
            ['flows.0.stack="ns3"', "flows.0.delack=true"],
            {},
            ["flows.0.stack: unknown stack; allowed: linux, ns2 (got 'ns3')"],
        ),
    ],
    ids=[
        "set-superscript-index",
        "set-arabic-indic-index",
        "unknown-key-lists-allowed",
        "unknown-key-suggests",
        "misspelled-required-key-one-line",
        "misspelled-burst-one-line",
        "refused-burst-one-line",
        "reverse-red-bad-value-one-line",
        "reverse-red-unknown-key-one-line",
        "duration-before-measure-from",
        "measure-to-after-duration",
        "set-key-under-a-value-entry",
        "dist-is-a-table",
        "dist-is-a-list",
        "aqm-without-kind",
        "aqm-kind-with-newline",
        "pareto-rounds-to-zero",
        "burst-buffer-below-a-packet",
        "measured-flows-stop-before-the-window",
        "every-flow-starts-after-the-window",
        "duration-shorter-than-an-interval",
        "param-shorthand-a-string",
        "refused-stack-with-delack",
    ],
)
def test_scenario_mutations(
    sets: list[str], parts: dict[str, str], mentions: list[str], tmp_path: Path
) -> None:
    fails_cleanly(
        run(tmp_path, *sets, **parts), mentions=mentions, cwd=tmp_path, unchanged=[tmp_path]
    )


SWEEP = """\
name = "t"
repeats = 2
{top}
[base]
name = "t"
duration = "{duration}"
[base.bottleneck]
rate = "10Mbit"
buffer = "50pkt"
[[base.flows]]
cca = "reno"
rtt = "20ms"
start = "{start}"
{flow1}
[axes]
"flows.1.rtt" = ["20ms", "40ms", "80ms"]
"""


@pytest.mark.parametrize(
    ("fields", "mentions"),
    [
        # a bad key of the base fails every point the same way: it was one line per point
        ({"duration": "10 mins"}, ["all 3 points", "duration: unknown time unit 'mins'"]),
        ({"duration": "1s", "start": "2s"}, ["all 3 points", "flows.0.start: 2s is not before"]),
        # an axis under a key the base gives as a value: a line per point before, each
        # ending in that point's value (so not said once either)
        (
            {"flow1": ""},
            ["axes.flows.1.rtt", "'flows.1' is not an existing entry; there are 1"],
        ),
        # start_jitter beyond any run: was one line per run, 500 shown
        ({"top": 'start_jitter = "1e30s"'}, ["start_jitter", "allowed: at most 86400s"]),
        # start_jitter that can push a start past the end: was a line per unlucky repeat
        (
            {"top": 'start_jitter = "9s"', "start": "2s"},
            ["all 3 points", "start_jitter: 9s could move flows.0.start (2s)", "at most 8s"],
        ),
    ],
    ids=[
        "base-duration-typo",
        "base-start-after-end",
        "axis-without-a-place",
        "start-jitter-huge",
        "start-jitter-past-end",
    ],
)
def test_sweep_mutations(fields: dict[str, str], mentions: list[str], tmp_path: Path) -> None:
    second = '[[base.flows]]\ncca = "cubic"\nrtt = "20ms"'
    values = {"top": "", "duration": "10s", "start": "0s", "flow1": second, **fields}
    (tmp_path / "sw.toml").write_text(SWEEP.format(**values))
    fails_cleanly(
        ["sweep", "sw.toml", "--dry-run", "-o", "store"],
        mentions=mentions,
        cwd=tmp_path,
        unchanged=[tmp_path],
    )


def test_a_point_label_is_one_line() -> None:
    """An axis value with a newline made a point's label, and so its error, two lines."""
    assert point_label({"flows.1.cca": "a\nb", "flows.1.rtt": "25ms"}) == (
        "flows.1.cca='a\\nb', flows.1.rtt=25ms"
    )
    assert point_label({"flows.0.streams": 4}) == "flows.0.streams=4"


def test_iperf3_streams_not_a_list(tmp_path: Path) -> None:
    """intervals[0].streams = 5 was an internal error (TypeError: 'int' object is not
    iterable) in the UDP check, before the field reader that names the path."""
    report = json.loads(P4.read_text())
    report["intervals"][0]["streams"] = 5
    (tmp_path / "f.json").write_text(json.dumps(report))
    fails_cleanly(
        ["fairness", "f.json"],
        mentions=["f.json", "intervals[0].streams is 5; expected a list"],
        cwd=tmp_path,
        unchanged=[tmp_path],
    )


def test_default_window_that_misses_the_data_names_the_file_not_from_to(tmp_path: Path) -> None:
    """A report whose first interval has no streams: the default window (from 0) starts
    before the samples. The error said "--from/--to: …" to a user who gave neither."""
    report = json.loads(P4.read_text())
    report["intervals"][0]["streams"] = []
    (tmp_path / "f.json").write_text(json.dumps(report))
    line = fails_cleanly(
        ["fairness", "f.json"],
        mentions=["f.json: the default window 0", "starts before the data", "--from/--to"],
        cwd=tmp_path,
        unchanged=[tmp_path],
    )
    assert not line.startswith("error: --from/--to")


def test_a_plot_axis_given_as_a_table(tmp_path: Path) -> None:
    """[[plots]] x = { a = 1 } was an internal error (TypeError: unhashable type: 'dict')."""
    second = '[[base.flows]]\ncca = "cubic"\nrtt = "20ms"'
    text = SWEEP.format(top="", duration="10s", start="0s", flow1=second)
    text += '\n[[plots]]\nkind = "line"\nmetric = "jfi"\nx = { a = 1 }\n'
    (tmp_path / "sw.toml").write_text(text)
    fails_cleanly(
        ["sweep", "sw.toml", "--dry-run", "-o", "store"],
        mentions=["plots.0.x", "{'a': 1} is not an axis; axes: flows.1.rtt"],
        cwd=tmp_path,
        unchanged=[tmp_path],
    )


@pytest.mark.parametrize(
    ("duration", "mentions"),
    [
        # was "invalid scenario: measure.interval: longer than the measurement window (0ns
        # to 5ms) …": the key of a scenario the user never wrote, not the option
        ("5 ms", ["--duration '5 ms': out of range", "allowed: 1s", "to 86400s"]),
        ("1e30s", ["--duration '1e30s': out of range"]),
        ("abc", ["--duration 'abc': cannot read 'abc'", "expected a time with a unit"]),
    ],
    ids=["too-short", "too-long", "not-a-time"],
)
def test_bench_duration(duration: str, mentions: list[str], tmp_path: Path) -> None:
    fails_cleanly(
        ["bench", "--only", "A1", "--duration", duration],
        mentions=mentions,
        cwd=tmp_path,
        unchanged=[tmp_path],
    )


def test_one_bad_axis_value_is_said_once(tmp_path: Path) -> None:
    """'hello' among an axis's values failed each point it is in, a line per point (4 of
    the 8 here), each naming other axes' values that have nothing to do with it."""
    second = '[[base.flows]]\ncca = "cubic"\nrtt = "20ms"'
    text = SWEEP.format(top="", duration="10s", start="0s", flow1=second)
    text = text.replace('["20ms", "40ms", "80ms"]', '["20ms", "hello"]')
    text += '"flows.0.cca" = ["reno", "cubic", "bic", "vegas"]\n'
    (tmp_path / "sw.toml").write_text(text)
    fails_cleanly(
        ["sweep", "sw.toml", "--dry-run", "-o", "store"],
        mentions=["flows.1.rtt=hello (4 points): flows.1.rtt: cannot read 'hello'"],
        cwd=tmp_path,
        unchanged=[tmp_path],
    )


@pytest.mark.parametrize(
    ("args", "mentions"),
    [
        # a sweep given to run: was eight lines, each sweep key "unknown" and duration,
        # bottleneck "required"
        (
            ["run", str(ROOT / "scenarios/sweeps/cubic-fig8.toml"), "--no-plot", "-o", "out"],
            ["cubic-fig8.toml", "a sweep file (it has base/axes), not a scenario", "tcpfair sweep"],
        ),
        # a scenario given to sweep: was five lines, each scenario key "unknown"
        (
            ["sweep", str(ROOT / "scenarios/lab10-reno-vs-bbr.toml"), "--dry-run", "-o", "s"],
            ["a scenario file (it has duration, [bottleneck], [[flows]]), not a sweep"],
        ),
        # a repro reference given to run
        (
            ["run", str(ROOT / "scenarios/repro/vegas/reference.toml"), "--no-plot", "-o", "o"],
            ["a reference file of tcpfair repro", "not a scenario"],
        ),
    ],
    ids=["sweep-to-run", "scenario-to-sweep", "reference-to-run"],
)
def test_the_wrong_kind_of_file(args: list[str], mentions: list[str], tmp_path: Path) -> None:
    fails_cleanly(args, mentions=mentions, cwd=tmp_path, unchanged=[tmp_path])


def test_a_sweep_whose_base_is_a_sweep(tmp_path: Path) -> None:
    (tmp_path / "inner.toml").write_text((ROOT / "scenarios/sweeps/cubic-fig8.toml").read_text())
    (tmp_path / "sw.toml").write_text(
        'name = "t"\nbase = "inner.toml"\n[axes]\n"flows.0.rtt" = ["10ms"]\n'
    )
    fails_cleanly(
        ["sweep", "sw.toml", "--dry-run", "-o", "store"],
        mentions=["base: ", "inner.toml: a sweep file (it has base/axes), not a scenario"],
        cwd=tmp_path,
        unchanged=[tmp_path],
    )


def test_a_flent_series_meta_that_is_not_a_table_is_no_metadata(tmp_path: Path) -> None:
    """metadata.SERIES_META["TCP upload::1"] = "x" was an internal error (AttributeError:
    'str' object has no attribute 'get'). A SERIES_META that is not a table is already read
    as none; one series' entry now is too: the same report as with the entry removed."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from click.testing import CliRunner
    from flentgen import tcp_nup, write

    from tcpfair.cli import cli

    odd, none = tcp_nup(), tcp_nup()
    odd["metadata"]["SERIES_META"]["TCP upload::1"] = "x"
    del none["metadata"]["SERIES_META"]["TCP upload::1"]
    out = []
    for name, obj in (("odd", odd), ("none", none)):
        write(tmp_path / f"{name}.flent.gz", obj)
        r = CliRunner().invoke(
            cli, ["fairness", str(tmp_path / f"{name}.flent.gz"), "--format", "json"]
        )
        assert r.exit_code == 0, r.output
        report = json.loads(r.stdout)
        report.pop("files", None)
        out.append(json.dumps(report, sort_keys=True).replace("odd.flent.gz", "none.flent.gz"))
    assert out[0] == out[1]
