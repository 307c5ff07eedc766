"""Bad-input corpus: scenarios, units, iperf3 files, windows and labels (issue 8, "Bad input").

Each case is a command a hostile or careless user could type: a quantity far out of range,
a unit that means something else (``400MBps`` is bytes per second), a binary or empty file,
an iperf3 report with a field of the wrong type, a window outside the capture. Every one
must fail with one line naming the file or key, the value and what is allowed, exit 2, and
leave the working folder as it was. On main before this fix, many printed a traceback
(OverflowError, UnicodeDecodeError, IntCastingNaN, RecursionError), a Rust message without
the key, or exited 0 with silently wrong numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from badinput import fails_cleanly

ROOT = Path(__file__).resolve().parent.parent
P4 = ROOT / "examples" / "lab10-parallel-P4.json"  # iperf3 3.12 -P 4, 20 s, 1 s intervals


class Raw(str):
    """A TOML value written as it is (``nan``, ``inf``, a table)."""


BASE: dict[str, dict[str, Any]] = {
    "": {"name": "t", "duration": "10s", "seed": 1},
    "bottleneck": {"rate": "100Mbit", "buffer": "100pkt"},
    "flows0": {"cca": "reno", "rtt": "20ms"},
    "flows1": {"cca": "cubic", "rtt": "20ms"},
    "measure": {"interval": "1s", "from": "2s"},
}


def _toml_value(v: Any) -> str:
    if isinstance(v, Raw):
        return str(v)
    return json.dumps(v)  # strings, ints, floats and booleans read the same in TOML


def scenario_text(changes: dict[str, Any]) -> str:
    """The base scenario with ``changes`` ({"bottleneck.rate": "1e300Mbit", …}) applied."""
    sections = {k: dict(v) for k, v in BASE.items()}
    for key, value in changes.items():
        section, _, name = key.rpartition(".")
        sections[section.replace(".", "")][name] = value
    out: list[str] = []
    for section, values in sections.items():
        header = {"": "", "flows0": "[[flows]]", "flows1": "[[flows]]"}.get(section)
        out.append(f"[{section}]" if header is None else header)
        out += [f"{k} = {_toml_value(v)}" for k, v in values.items()]
    return "\n".join(out) + "\n"


Setup = Callable[[Path], list[str]]


@dataclass(frozen=True)
class Case:
    """``setup(work)`` writes the input into ``work`` and returns the command's arguments;
    every string of ``mentions`` must be in the error line."""

    setup: Setup
    mentions: tuple[str, ...]


def scenario(changes: dict[str, Any], *extra: str) -> Setup:
    def setup(work: Path) -> list[str]:
        (work / "s.toml").write_text(scenario_text(changes))
        return ["run", "s.toml", "--no-plot", "-o", "out", *extra]

    return setup


def file_bytes(data: bytes) -> Setup:
    def setup(work: Path) -> list[str]:
        (work / "s.toml").write_bytes(data)
        return ["run", "s.toml", "--no-plot", "-o", "out"]

    return setup


def run_args(*args: str) -> Setup:
    def setup(work: Path) -> list[str]:
        (work / "s.toml").write_text(scenario_text({}))
        (work / "d.toml").mkdir()
        return ["run", *args, "--no-plot", "-o", "out"]

    return setup


def iperf3(edit: Callable[[dict[str, Any]], Any] | None = None, text: str | None = None) -> Setup:
    """The shipped -P 4 capture with one field changed (or replaced by ``text``)."""

    def setup(work: Path) -> list[str]:
        report = json.loads(P4.read_text())
        if edit is not None:
            edit(report)
        (work / "f.json").write_text(text if text is not None else json.dumps(report))
        return ["fairness", "f.json"]

    return setup


def at(*path: str | int, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(report: dict[str, Any]) -> None:
        cur: Any = report
        for p in path[:-1]:
            cur = cur[p]
        cur[path[-1]] = value

    return edit


def fairness(*args: str) -> Setup:
    def setup(work: Path) -> list[str]:
        return ["fairness", str(P4), *args]

    return setup


_P4_TEXT = P4.read_text()

CASES: dict[str, Case] = {
    # ------------------------------------------------------------ scenario quantities
    "rate-1e300Mbit": Case(
        scenario({"bottleneck.rate": "1e300Mbit"}), ("bottleneck.rate", "1Tbit")
    ),
    "rate-below-1kbit": Case(scenario({"bottleneck.rate": "100bit"}), ("bottleneck.rate", "1kbit")),
    "rate-nan": Case(scenario({"bottleneck.rate": "nanMbit"}), ("bottleneck.rate", "cannot read")),
    "rate-inf": Case(scenario({"bottleneck.rate": "infMbit"}), ("bottleneck.rate", "Mbit")),
    "rate-1e400": Case(
        scenario({"bottleneck.rate": "1e400Mbit"}), ("bottleneck.rate", "too large")
    ),
    "buffer-1e300bdp": Case(scenario({"bottleneck.buffer": "1e300bdp"}), ("buffer", "1000bdp")),
    "buffer-1e30pkt": Case(scenario({"bottleneck.buffer": "1e30pkt"}), ("buffer", "1e9pkt")),
    "buffer-1e30B": Case(scenario({"bottleneck.buffer": "1e30B"}), ("buffer", "1e12B")),
    "buffer-bdp-resolves-above-1TB": Case(
        scenario(
            {
                "bottleneck.rate": "1Gbit",
                "bottleneck.buffer": "1000bdp",
                "flows.0.rtt": "10s",
                "flows.1.rtt": "10s",
            }
        ),
        ("bottleneck.buffer", "1000bdp", "1250000000000B", "1e12B"),
    ),
    "rtt-1e15s": Case(scenario({"flows.0.rtt": "1e15s"}), ("flows.0.rtt", "60s")),
    "rtt-a-number": Case(scenario({"flows.0.rtt": 20}), ("flows.0.rtt", "with a unit")),
    "rtt-a-boolean": Case(scenario({"flows.0.rtt": True}), ("flows.0.rtt", "as a string")),
    "rtt-nan": Case(scenario({"flows.1.rtt": Raw("nan")}), ("flows.1.rtt", "as a string")),
    "wmem-1e30B": Case(scenario({"flows.0.wmem": "1e30B"}), ("flows.0.wmem", "2147483647B")),
    "rmem-100B": Case(scenario({"flows.1.rmem": "100B"}), ("flows.1.rmem", "4096B")),
    "size-1e20B": Case(scenario({"flows.0.size": "1e20B"}), ("flows.0.size", "1e15B")),
    "duration-1e10s": Case(scenario({"duration": "1e10s"}), ("duration", "86400s")),
    "duration-1e400s": Case(scenario({"duration": "1e400s"}), ("duration", "too large")),
    "start-1e30s": Case(scenario({"flows.1.start": "1e30s"}), ("flows.1.start", "86400s")),
    "mtu-1e30B": Case(scenario({"bottleneck.mtu": "1e30B"}), ("bottleneck.mtu", "65536B")),
    "burst-below-the-mtu": Case(
        scenario({"bottleneck.burst": "1000B"}), ("bottleneck.burst", "1000B", "1500B")
    ),
    "burst-1e30B": Case(
        scenario({"bottleneck.burst": "1e30B"}), ("bottleneck.burst", "1000000000B")
    ),
    "netem_root-without-burst": Case(
        scenario({"bottleneck.netem_root": True}),
        ("bottleneck.netem_root", "needs bottleneck.burst"),
    ),
    "netem_root-a-string": Case(
        scenario({"bottleneck.burst": "5000000B", "bottleneck.netem_root": "yes"}),
        ("bottleneck.netem_root", "yes"),
    ),
    "netem_latency-without-netem_root": Case(
        scenario({"bottleneck.burst": "5000000B", "bottleneck.netem_latency": "50us"}),
        ("bottleneck.netem_latency", "50us", "netem_root = true"),
    ),
    "netem_latency-2s": Case(
        scenario(
            {
                "bottleneck.burst": "5000000B",
                "bottleneck.netem_root": True,
                "bottleneck.netem_latency": "2s",
            }
        ),
        ("bottleneck.netem_latency", "2000 ms", "0 to 1000 ms"),
    ),
    "netem_root-with-a-reverse-link": Case(
        scenario(
            {
                "bottleneck.burst": "5000000B",
                "bottleneck.netem_root": True,
                "bottleneck.reverse": Raw('{ rate = "100Mbit" }'),
            }
        ),
        ("bottleneck.netem_root", "forward link only"),
    ),
    "cwnd_clamp-2^40": Case(scenario({"flows.0.cwnd_clamp": 2**40}), ("cwnd_clamp", "4294967295")),
    "streams-1e6": Case(scenario({"flows.0.streams": 10**6}), ("flows.0.streams", "1024")),
    "vegas-alpha-1e9": Case(
        scenario({"flows.0.cca": "vegas", "flows.0.alpha": 10**9}), ("flows.0.alpha", "1000000")
    ),
    # ------------------------------------------------------------ params (the registry's)
    "params-unknown-name": Case(
        scenario({"flows.1.params": Raw("{ betta = 0.8 }")}),
        ("flows.1.params.betta", "0.8", "allowed: beta, c, fast_convergence"),
    ),
    "params-beta-1.5": Case(
        scenario({"flows.1.params": Raw("{ beta = 1.5 }")}),
        ("flows.1.params.beta", "1.5", "a number from 0.05 to 0.95"),
    ),
    "params-beta-nan": Case(
        scenario({"flows.1.params": Raw("{ beta = nan }")}),
        ("flows.1.params.beta", "NaN is not allowed", "a number from 0.05 to 0.95"),
    ),
    "params-hystart-a-string": Case(
        scenario({"flows.1.params": Raw('{ hystart = "off" }')}),
        ("flows.1.params.hystart", "'off'", "true or false"),
    ),
    "params-on-reno": Case(
        scenario({"flows.0.params": Raw("{ beta = 0.5 }")}),
        ("flows.0.params.beta", "reno has no parameter", "allowed: none"),
    ),
    "params-not-a-table": Case(
        scenario({"flows.1.params": "beta=0.8"}), ("flows.1.params", "beta=0.8", "table of keys")
    ),
    "params-compound-gamma-range-crossed": Case(
        scenario({"flows.1.cca": "compound", "flows.1.params": Raw("{ gamma_low = 40 }")}),
        ("flows.1.params.gamma_low", "40", "gamma_low <= gamma_high"),
    ),
    "params-and-shorthand": Case(
        scenario(
            {"flows.0.cca": "vegas", "flows.0.alpha": 1, "flows.0.params": Raw("{ alpha = 2 }")}
        ),
        ("flows.0.alpha", "params.alpha", "not both"),
    ),
    "params-ns2-window_init-0": Case(
        scenario(
            {
                "flows.0.stack": "ns2",
                "flows.0.cca": "vegas",
                "flows.0.params": Raw("{ window_init = 0 }"),
            }
        ),
        ("flows.0.params.window_init", "0", "a whole number from 1 to 64"),
    ),
    "params-window_init-under-linux": Case(
        scenario({"flows.0.cca": "vegas", "flows.0.params": Raw("{ window_init = 1 }")}),
        ("flows.0.params.window_init", 'stack = "linux"', "a parameter of vegas under"),
    ),
    "access_rate-under-linux": Case(
        scenario({"flows.0.access_rate": "10Mbit"}),
        ("flows.0.access_rate", "10Mbit", 'stack = "ns2" only'),
    ),
    "access_rate-0": Case(
        scenario({"flows.0.stack": "ns2", "flows.0.cca": "vegas", "flows.0.access_rate": "0bit"}),
        ("flows.0.access_rate", "0bit"),
    ),
    "loss-nan": Case(
        scenario({"bottleneck.loss": Raw("nan")}),
        (
            "bottleneck.loss",
            "not a finite number; allowed: a number at least 0 and below 1",
            "(got nan)",
        ),
    ),
    "loss-inf": Case(
        scenario({"bottleneck.loss": Raw("inf")}),
        (
            "bottleneck.loss",
            "not a finite number; allowed: a number at least 0 and below 1",
            "(got inf)",
        ),
    ),
    "seed-negative": Case(
        scenario({"seed": -1}),
        ("seed", "out of range; allowed: a whole number from 0 to 9223372036854775807", "(got -1)"),
    ),
    "jitter-2s": Case(scenario({"flows.0.jitter": "2s"}), ("flows.0.jitter", "at most 1s")),
    # ------------------------------------------------------------ sampling and the window
    "interval-1ns": Case(
        scenario({"measure.interval": "1ns"}), ("measure.interval", "10,000,000", "3.001us")
    ),
    "interval-longer-than-the-run": Case(
        scenario({"measure.interval": "60s"}), ("measure.interval", "longer than the measurement")
    ),
    "window-shorter-than-an-interval": Case(
        scenario({"measure.from": "9.5s", "measure.to": "10s"}),
        ("measure.interval", "no interval would lie in it"),
    ),
    # ------------------------------------------------------------ RED vs the buffer
    "red-max_th-above-buffer-pkt": Case(
        scenario({"bottleneck.aqm": Raw('{kind = "red", min_th = "10pkt", max_th = "108pkt"}')}),
        ("bottleneck.aqm.max_th", "108pkt", "100pkt"),
    ),
    "red-max_th-above-buffer-bytes": Case(
        scenario({"bottleneck.aqm": Raw('{kind = "red", min_th = "15KB", max_th = "200KB"}')}),
        ("bottleneck.aqm.max_th", "200KB", "150000B"),
    ),
    "red-min_th-above-max_th": Case(
        scenario({"bottleneck.aqm": Raw('{kind = "red", min_th = "50pkt", max_th = "40pkt"}')}),
        ("bottleneck.aqm", "min_th < max_th"),
    ),
    # ------------------------------------------------------------ units that mean something else
    "rate-400MBps-bytes": Case(
        scenario({"bottleneck.rate": "400MBps"}), ("bottleneck.rate", "bytes per second", "3.2Gbit")
    ),
    "rate-1GBps-bytes": Case(
        scenario({"bottleneck.rate": "1GBps"}), ("bottleneck.rate", "bytes per second", "8Gbit")
    ),
    "rate-MB/s-bytes": Case(
        scenario({"bottleneck.rate": "12.5MB/s"}), ("bottleneck.rate", "'100Mbit' is the same")
    ),
    "rate-mbps-tc-bytes": Case(
        scenario({"bottleneck.rate": "100mbps"}), ("bottleneck.rate", "ambiguous", "800Mbit")
    ),
    "app_rate-kbps-tc-bytes": Case(
        scenario({"flows.0.app_rate": "64kbps"}), ("flows.0.app_rate", "ambiguous", "64kbit")
    ),
    "rate-MBit": Case(scenario({"bottleneck.rate": "100MBit"}), ("bottleneck.rate", "'MBit'")),
    "wmem-kb-bits": Case(scenario({"flows.0.wmem": "640kb"}), ("flows.0.wmem", "means bits")),
    "rtt-MS": Case(scenario({"flows.0.rtt": "20MS"}), ("flows.0.rtt", "unknown time unit")),
    "capacity-400MBps": Case(
        fairness("--capacity", "400MBps"), ("--capacity", "bytes per second", "3.2Gbit")
    ),
    "capacity-1e300Mbit": Case(
        fairness("--capacity", "1e300Mbit"), ("--capacity 1e300Mbit", "1kbit to 1Tbit")
    ),
    "capacity-nan": Case(fairness("--capacity", "nan"), ("--capacity", "cannot read 'nan'")),
    # ------------------------------------------------------------ labels
    "label-newline": Case(scenario({"flows.0.label": "a\nb"}), ("flows.0.label", "one line")),
    "label-empty": Case(scenario({"flows.1.label": ""}), ("flows.1.label", "not be empty")),
    "label-too-long": Case(scenario({"flows.0.label": "x" * 101}), ("flows.0.label", "100")),
    "label-a-megabyte-shown-cut": Case(
        scenario({"flows.0.label": "x" * 10**6}), ("flows.0.label", "(1000002 chars)")
    ),
    "fairness-label-control-char": Case(fairness("--label", "a\tb"), ("--label", "one line")),
    # ------------------------------------------------------------ the scenario file itself
    "file-binary": Case(file_bytes(b'name = "x"\n\xff\xfe\x00'), ("s.toml", "not UTF-8")),
    "file-empty": Case(file_bytes(b""), ("s.toml", "empty")),
    "file-toml-syntax": Case(file_bytes(b"duration = \n"), ("s.toml", "not valid TOML")),
    "file-dev-zero": Case(run_args("/dev/zero"), ("/dev/zero", "larger than 16 MiB")),
    "file-a-directory": Case(run_args("d.toml"), ("d.toml", "is a directory")),
    "file-missing": Case(run_args("nope.toml"), ("nope.toml", "no such file")),
    # ------------------------------------------------------------ --set
    "set-rate-bytes": Case(
        run_args("s.toml", "--set", "bottleneck.rate=400MBps"), ("bottleneck.rate", "3.2Gbit")
    ),
    "set-interval-1ns": Case(
        run_args("s.toml", "--set", "measure.interval=1ns"), ("measure.interval", "10,000,000")
    ),
    "set-rtt-inf": Case(run_args("s.toml", "--set", "flows.0.rtt=inf"), ("flows.0.rtt", "inf")),
    "set-buffer-1e300bdp": Case(
        run_args("s.toml", "--set", "bottleneck.buffer=1e300bdp"), ("bottleneck.buffer", "1000bdp")
    ),
    "set-no-equals": Case(run_args("s.toml", "--set", "bottleneck.rate"), ("--set", "key=value")),
    "set-flow-index-out-of-range": Case(
        run_args("s.toml", "--set", "flows.5.cca=reno"), ("flows.5.cca", "there are 2")
    ),
    # ------------------------------------------------------------ iperf3 files
    "iperf3-bytes-1e400": Case(
        iperf3(text=_P4_TEXT.replace('"bytes":\t3476648', '"bytes": 1e400', 1)),
        ("f.json", "intervals[0].streams[0].bytes", "inf"),
    ),
    "iperf3-bytes-1e30": Case(
        iperf3(at("intervals", 0, "streams", 0, "bytes", value=1e30)),
        ("f.json", "intervals[0].streams[0].bytes", "1e18"),
    ),
    "iperf3-bytes-negative": Case(
        iperf3(at("intervals", 3, "streams", 1, "bytes", value=-5)),
        ("f.json", "intervals[3].streams[1].bytes is -5"),
    ),
    "iperf3-bytes-a-string": Case(
        iperf3(at("intervals", 2, "streams", 0, "bytes", value="4388888")),
        ("f.json", "intervals[2].streams[0].bytes", "a number"),
    ),
    "iperf3-bytes-NaN": Case(
        iperf3(text=_P4_TEXT.replace('"bytes":\t3476648', '"bytes": NaN', 1)),
        ("f.json", "intervals[0].streams[0].bytes is nan"),
    ),
    "iperf3-seconds-negative": Case(
        iperf3(at("intervals", 1, "streams", 0, "seconds", value=-1.0)),
        ("f.json", "intervals[1].streams[0].seconds is -1.0"),
    ),
    "iperf3-end-missing": Case(
        iperf3(lambda r: r["intervals"][4]["streams"][2].pop("end")),
        ("f.json", "intervals[4].streams[2].end is missing"),
    ),
    "iperf3-socket-a-string": Case(
        iperf3(at("intervals", 1, "streams", 0, "socket", value="5")),
        ("f.json", "intervals[1].streams[0].socket", "integer"),
    ),
    "iperf3-retransmits-a-string": Case(
        iperf3(at("intervals", 0, "streams", 0, "retransmits", value="x")),
        ("f.json", "intervals[0].streams[0].retransmits"),
    ),
    "iperf3-connected-an-int": Case(
        iperf3(at("start", "connected", value=5)), ("f.json", "start.connected is 5", "a list")
    ),
    "iperf3-connected-entry-a-string": Case(
        iperf3(at("start", "connected", 0, value="abc")),
        ("f.json", "start.connected[0]", "an object"),
    ),
    "iperf3-end-streams-an-int": Case(
        iperf3(at("end", "streams", value=5)), ("f.json", "end.streams is 5", "a list")
    ),
    "iperf3-end-a-list": Case(iperf3(at("end", value=[1])), ("f.json", "end is [1]")),
    "iperf3-end-receiver-bytes-negative": Case(
        iperf3(at("end", "streams", 0, "receiver", "bytes", value=-5)),
        ("f.json", "end.streams[0].receiver.bytes"),
    ),
    "iperf3-interval-not-an-object": Case(
        iperf3(at("intervals", 0, value=3)), ("f.json", "intervals[0] is 3")
    ),
    "iperf3-streams-an-object": Case(
        iperf3(at("intervals", 0, "streams", value={})), ("f.json", "intervals[0].streams is {}")
    ),
    "iperf3-timestamp-1e300": Case(
        iperf3(at("start", "timestamp", "timesecs", value=1e300)),
        ("f.json", "start.timestamp.timesecs", "1e11"),
    ),
    "iperf3-timestamp-a-string": Case(
        iperf3(at("start", "timestamp", "timemillisecs", value="abc")),
        ("f.json", "start.timestamp.timemillisecs", "a number"),
    ),
    "iperf3-nested-100k-deep": Case(
        iperf3(text='{"a":' * 100_000 + "1" + "}" * 100_000), ("f.json", "nested too deeply")
    ),
    # ------------------------------------------------------------ windows
    "fairness-to-beyond-the-capture": Case(
        fairness("--from", "2", "--to", "200"), ("--to", "2–200", "ends after the data", "20.0001")
    ),
    "fairness-from-after-the-capture": Case(
        fairness("--from", "500"), ("--from", "starts after the data ends")
    ),
    "fairness-window-holds-no-interval": Case(
        fairness("--from", "3.1", "--to", "3.2"), ("3.1–3.2", "holds no sampling interval")
    ),
    "fairness-from-nan": Case(fairness("--from", "nan"), ("--from nan", "seconds")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_fails_cleanly(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    work = tmp_path / "work"
    work.mkdir()
    args = case.setup(work)
    fails_cleanly(args, mentions=case.mentions, unchanged=[work], cwd=work)


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 40
