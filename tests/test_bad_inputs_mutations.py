"""Bad-input corpus, generated: every key of a scenario that uses most features, mutated.

The hand-written cases (``test_bad_inputs_*.py``) pin the messages; this one pins what no
mutation may ever do (the session-13 mutation checker, reduced to what runs in seconds):
escape as an exception or an internal error, exit with anything but 0 (accepted) or 2
(refused), or print anything but ``error: …`` lines (one per problem). Each mutation is
one of a fixed list (wrong type, negative, zero, huge, non-finite, a unit typo, an empty
string, the key removed, misspelled or joined by an unknown sibling): no randomness.
"""

from __future__ import annotations

import copy
import json
import math
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tcpfair.cli import cli

SCENARIO = """\
name = "rich"
duration = "4s"
seed = 3
[bottleneck]
rate = "10Mbit"
buffer = "50pkt"
loss = 0.001
aqm = { kind = "red", min_th = "5pkt", max_th = "20pkt", max_p = 0.1, gentle = true }
[bottleneck.reverse]
rate = "5Mbit"
buffer = "30pkt"
[[flows]]
cca = "vegas"
rtt = "20ms"
stop = "3.5s"
streams = 2
alpha = 2
jitter = "100us"
label = "v"
cwnd_clamp = 100
rmem = "1MB"
[[flows]]
cca = "bbr"
rtt = { dist = "uniform", min = "10ms", max = "40ms" }
start = "100ms"
size = "2MB"
app_rate = "3Mbit"
direction = "reverse"
[[flows]]
cca = "reno"
stack = "ns2"
rtt = [ "30ms", "40ms" ]
delack = true
access_rate = "100Mbit"
[[flows]]
cca = "cubic"
rtt = "20ms"
arrivals = { process = "poisson", rate = "5/s" }
size = { dist = "pareto", mean = "50KB", shape = 1.5, max = "1MB" }
[measure]
interval = "500ms"
from = "1s"
flows = ["v"]
"""

MUTATIONS: list[tuple[str, Any]] = [
    ("str", "hello"),
    ("int", 7),
    ("float", 2.5),
    ("table", {"a": 1}),
    ("array", [1, 2]),
    ("empty-array", []),
    ("bool", True),
    ("negative", -5),
    ("zero", 0),
    ("huge", 1e30),
    ("2**64", 2**64),
    ("nan", math.nan),
    ("inf", math.inf),
    ("empty", ""),
    ("unit-typo", "10Mbitt"),
    ("negative-time", "-5ms"),
    ("zero-size", "0B"),
    ("huge-time", "1e30s"),
]


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else "inf"
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(x)}" for k, x in v.items()) + " }"
    return json.dumps(v)


def _paths(d: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else ()
    for k, v in items:
        yield (*prefix, k)
        yield from _paths(v, (*prefix, k))


def _mutations(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in _paths(data):
        key = ".".join(map(str, path))
        parent_path, last = path[:-1], path[-1]

        def parent(d: dict[str, Any], pp: tuple[Any, ...] = parent_path) -> Any:
            for p in pp:
                d = d[p]
            return d

        for name, value in MUTATIONS:
            d = copy.deepcopy(data)
            parent(d)[last] = copy.deepcopy(value)
            yield f"{key}={name}", d
        if isinstance(parent(data), dict):
            for name, edit in (
                ("removed", lambda p, k: p.pop(k)),
                ("unknown-sibling", lambda p, k: p.__setitem__("zzunknown", 1)),
                ("misspelled", lambda p, k: p.__setitem__(f"{k}s", p.pop(k))),
            ):
                d = copy.deepcopy(data)
                edit(parent(d), last)
                yield f"{key}={name}", d


class _Accepted(Exception):
    """Raised instead of running the simulation: validation (and the resolved form) passed."""


def _validated_only(self: Any, sc: Any, progress: bool = False) -> Any:
    sc.sim_json()  # what the simulator would be given: must build for every accepted input
    raise _Accepted


def test_no_mutation_escapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tcpfair.backends.sim.SimBackend.run", _validated_only)
    monkeypatch.chdir(tmp_path)
    data = tomllib.loads(SCENARIO)
    runner = CliRunner()
    case = tmp_path / "case.toml"
    seen = {"accepted": 0, "refused": 0}
    broken: list[str] = []
    for what, d in _mutations(data):
        case.write_text("".join(f"{json.dumps(k)} = {_toml(v)}\n" for k, v in d.items()))
        r = runner.invoke(cli, ["run", str(case), "--no-plot", "-o", "out"])
        if isinstance(r.exception, _Accepted):
            seen["accepted"] += 1
            continue
        lines = r.stderr.splitlines()
        ok = (
            r.exit_code == 2
            and (r.exception is None or isinstance(r.exception, SystemExit))
            and lines
            and lines[0].startswith("error: ")
            and "internal error" not in r.stderr
            and "Traceback" not in r.stderr
            # more lines only for several problems, each "  key: message"
            and all(ln.startswith("  ") and ": " in ln for ln in lines[1:])
        )
        if ok:
            seen["refused"] += 1
        else:
            broken.append(f"{what}: exit {r.exit_code}, {r.exception!r}: {r.stderr[-300:]}")
    assert not broken, f"{len(broken)} mutations broke the promise:\n" + "\n".join(broken[:20])
    # the mutations reach both sides (a list that stopped reaching one would pass vacuously)
    assert seen["accepted"] > 20 and seen["refused"] > 1000, seen
