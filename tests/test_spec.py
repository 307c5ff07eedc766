"""tcpfair.spec: strict validation with clear messages, --set overrides, resolution, hashing."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tcpfair.spec import SpecError, apply_overrides, from_dict, load_scenario

ROOT = Path(__file__).resolve().parent.parent


def base() -> dict[str, Any]:
    return {
        "name": "t",
        "duration": "30s",
        "seed": 1,
        "bottleneck": {"rate": "100Mbit", "buffer": "1bdp"},
        "flows": [{"cca": "reno", "rtt": "10ms"}, {"cca": "bbr", "rtt": "30ms"}],
        "measure": {"interval": "1s", "from": "5s", "to": "30s"},
    }


def with_(path: str, value: Any) -> dict[str, Any]:
    d = copy.deepcopy(base())
    cur: Any = d
    parts = path.split(".")
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    last = parts[-1]
    if isinstance(cur, list):
        cur[int(last)] = value
    else:
        cur[last] = value
    return d


def error_of(data: dict[str, Any]) -> str:
    with pytest.raises(SpecError) as e:
        from_dict(data)
    return str(e.value)


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_scenarios_validate(path: Path) -> None:
    sc = load_scenario(path)
    assert sc.resolved()["bottleneck"]["rate_bps"] > 0


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            "colour",
            "red",
            "colour: unknown key; allowed: name, duration, seed, bottleneck, flows, measure "
            "(got 'red')",
        ),
        ("bottleneck.speed", "1Gbit", "bottleneck.speed: unknown key; allowed: rate, buffer,"),
        ("flows.1.rtx", 3, "flows.1.rtx: unknown key (did you mean 'rtt'?); allowed: cca, rtt,"),
        (
            "bottleneck.rate",
            "100",
            "bottleneck.rate: cannot read '100'; expected a rate with a unit",
        ),
        ("bottleneck.rate", "100Mbyte", "bottleneck.rate: unknown rate unit 'Mbyte'"),
        ("bottleneck.rate", "0Mbit", "bottleneck.rate: rate '0Mbit' must be positive"),
        ("bottleneck.rate", "-10Mbit", "bottleneck.rate: '-10Mbit' is negative"),
        ("flows.0.rtt", "0ms", "flows.0.rtt: time '0ms' must be positive"),
        ("flows.0.rtt", 20, "flows.0.rtt: expected a time with a unit"),
        ("duration", "30", "duration: cannot read '30'"),
        ("bottleneck.buffer", "big", "bottleneck.buffer: cannot read 'big'"),
        (
            "bottleneck.loss",
            1.5,
            "bottleneck.loss: out of range; allowed: a number at least 0 and below 1 (got 1.5)",
        ),
        ("bottleneck.mtu", "100B", "mtu must be between 576B and 65536B"),
        (
            "flows.1.cca",
            "westwood",
            "flows.1.cca: unknown congestion control; allowed: reno, newreno, cubic, bic, highspeed, "
            "compound, vegas, bbr; under stack = \"ns2\" also sack (got 'westwood')",
        ),
        (
            "flows.0.streams",
            0,
            "flows.0.streams: out of range; allowed: a whole number from 1 to 1024 (got 0)",
        ),
        (
            "measure.to",
            "40s",
            "measure.to: 40s is after the end of the run (30s); allowed: at most the duration",
        ),
        ("measure.from", "30s", "measure.from: 30s must be before measure.to (30s); allowed:"),
        ("flows.1.start", "30s", "flows.1.start: 30s is not before the end of the run (30s)"),
    ],
)
def test_bad_values_name_key_value_and_what_is_allowed(path: str, value: Any, message: str) -> None:
    assert message in error_of(with_(path, value))


def test_missing_keys() -> None:
    d = base()
    del d["bottleneck"]["rate"]
    assert "bottleneck.rate: required key is missing" in error_of(d)
    d = base()
    d["flows"] = []
    assert "flows" in error_of(d)


def test_several_problems_are_listed_one_per_line() -> None:
    d = with_("flows.0.cca", "nope")
    d["bottleneck"]["rate"] = "fast"
    msg = error_of(d)
    lines = msg.splitlines()
    assert lines[0] == "invalid scenario:"
    assert any(ln.strip().startswith("bottleneck.rate:") for ln in lines[1:])
    assert any(ln.strip().startswith("flows.0.cca:") for ln in lines[1:])


def test_vegas_parameters_only_on_vegas() -> None:
    ok = from_dict(
        with_("flows.0", {"cca": "vegas", "rtt": "10ms", "alpha": 2, "beta": 4, "gamma": 1})
    )
    assert ok.flows[0].cca_params() == {"alpha": 2.0, "beta": 4.0, "gamma": 1.0}
    assert ok.resolved()["flows"][0]["cca_params"] == {"alpha": 2.0, "beta": 4.0, "gamma": 1.0}
    msg = error_of(with_("flows.0", {"cca": "reno", "rtt": "10ms", "alpha": 2}))
    assert (
        "flows.0.alpha: reno has no parameter 'alpha' under stack = \"linux\"; allowed: none "
        "(alpha is a parameter of compound, vegas) (got 2)" in msg
    )
    msg = error_of(with_("flows.1", {"cca": "bbr", "rtt": "10ms", "beta": 2}))
    assert "flows.1.beta: bbr has no parameter 'beta'" in msg
    msg = error_of(with_("flows.0", {"cca": "vegas", "rtt": "10ms", "alpha": 5, "beta": 2}))
    assert "flows.0.beta: vegas parameter beta: vegas needs alpha <= beta, got alpha = 5" in msg
    msg = error_of(with_("flows.0", {"cca": "vegas", "rtt": "10ms", "alpha": 1.5}))
    assert "flows.0.alpha" in msg and "1.5" in msg  # Linux takes whole packets


def test_params_table_reaches_the_simulator_as_cca_params() -> None:
    cubic = {"cca": "cubic", "rtt": "10ms"}
    sc = from_dict(with_("flows.0", {**cubic, "params": {"beta": 0.8, "hystart": False, "c": 1}}))
    assert sc.resolved()["flows"][0]["cca_params"] == {"beta": 0.8, "c": 1.0, "hystart": 0.0}
    # a flow without params resolves exactly as before (no key appears)
    plain = from_dict(with_("flows.0", cubic))
    assert plain.resolved()["flows"][0]["cca_params"] == {}
    assert sc.hash() != plain.hash()
    # the written form keeps the table and round-trips
    assert sc.to_dict()["flows"][0]["params"] == {"beta": 0.8, "hystart": False, "c": 1}
    assert from_dict(sc.to_dict()).hash() == sc.hash()
    # a shorthand and the table name the same parameter
    short = from_dict(with_("flows.0", {"cca": "vegas", "rtt": "10ms", "alpha": 1}))
    table = from_dict(with_("flows.0", {"cca": "vegas", "rtt": "10ms", "params": {"alpha": 1}}))
    assert short.resolved()["flows"] == table.resolved()["flows"]


@pytest.mark.parametrize(
    ("flow", "line"),
    [
        (
            {"cca": "cubic", "params": {"betta": 0.8}},
            "flows.0.params.betta: cubic has no parameter 'betta' under stack = \"linux\"; "
            "allowed: beta, c, fast_convergence, tcp_friendliness, hystart, hystart_detect, "
            "hystart_low_window, hystart_ack_delta_us, initial_ssthresh, gso_max_size "
            "(got 0.8)",
        ),
        (
            {"cca": "cubic", "params": {"beta": 1.5}},
            "flows.0.params.beta: cubic parameter beta: 1.5 is not allowed; allowed: a number "
            "from 0.05 to 0.95",
        ),
        (
            {"cca": "cubic", "params": {"hystart": 0}},
            "flows.0.params.hystart: cubic parameter hystart: not allowed; allowed: true or "
            "false (got 0)",
        ),
        (
            {"cca": "bic", "params": {"max_increment": 2.5}},
            "flows.0.params.max_increment: bic parameter max_increment: not allowed; allowed: "
            "a whole number from 1 to 1048576 (got 2.5)",
        ),
        (
            {"cca": "compound", "params": {"gamma_low": 40}},
            "flows.0.params.gamma_low: compound parameter gamma_low: compound needs gamma_low "
            "<= gamma_high, got gamma_low = 40 and gamma_high = 30",
        ),
        (
            {"cca": "highspeed", "params": {"high_decrease": "0.2"}},
            "flows.0.params.high_decrease: highspeed parameter high_decrease: not allowed; "
            "allowed: a number from 0.05 to 0.5 (got '0.2')",
        ),
        (
            {"cca": "vegas", "alpha": 1, "params": {"alpha": 2}},
            "flows.0.alpha: set either alpha or params.alpha, not both (got 1)",
        ),
        (
            {"cca": "vegas", "params": {"delta": 2}},
            "flows.0.params.delta: vegas has no parameter 'delta' under stack = \"linux\"; "
            "allowed: alpha, beta, gamma (delta is a parameter of vegas under stack = "
            '"ns2") (got 2)',
        ),
    ],
)
def test_bad_params_name_the_key_value_and_what_is_allowed(flow: dict[str, Any], line: str) -> None:
    msg = error_of(with_("flows.0", {"rtt": "10ms", **flow}))
    assert msg == f"invalid scenario: {line}"


def test_stop_after_start() -> None:
    msg = error_of(with_("flows.0", {"cca": "reno", "rtt": "10ms", "start": "5s", "stop": "5s"}))
    assert "flows.0: stop must be after start" in msg


def test_bdp_buffer_uses_the_mean_rtt() -> None:
    # flows at 10 ms and 30 ms: mean 20 ms; 100 Mbit/s × 20 ms = 250 000 B (Lab 11's rule)
    sc = from_dict(base())
    assert sc.mean_rtt_ns == 20_000_000
    assert sc.bdp_bytes == 250_000
    assert sc.resolved()["bottleneck"]["buffer_bytes"] == 250_000
    half = from_dict(with_("bottleneck.buffer", "0.5bdp"))
    assert half.resolved()["bottleneck"]["buffer_bytes"] == 125_000
    pkts = from_dict(with_("bottleneck.buffer", "100pkt")).resolved()["bottleneck"]
    assert (pkts["buffer_bytes"], pkts["buffer_pkts"]) == (None, 100)


def test_streams_expand_into_connections() -> None:
    sc = from_dict(with_("flows.0.streams", 3))
    conns = sc.resolved()["flows"]
    assert [c["group"] for c in conns] == [0, 0, 0, 1]
    assert [c["id"] for c in conns] == [0, 1, 2, 3]
    assert {c["cca"] for c in conns[:3]} == {"reno"}


# ---------------------------------------------------------------------------- --set


def test_set_overrides() -> None:
    d = apply_overrides(
        base(),
        [
            "flows.1.cca=cubic",
            "bottleneck.rate=1Gbit",
            "seed=7",
            "flows.0.streams=4",
            "measure.to = 20s",
        ],
    )
    sc = from_dict(d)
    assert sc.flows[1].cca == "cubic" and sc.bottleneck.rate == 1_000_000_000
    assert sc.seed == 7 and sc.flows[0].streams == 4 and sc.window_end == 20_000_000_000
    assert base()["flows"][1]["cca"] == "bbr"  # the input is not modified


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("flows.5.cca=cubic", "'flows.5' is not an existing entry; there are 2 (indices from 0)"),
        ("flows.-1.cca=cubic", "'flows.-1' is not an existing entry"),
        ("flows.2=x", "index out of range; there are 2 entries (indices from 0)"),
        ("duration.x=1", "'duration' is a value, not a table"),
        ("flows.1.cca", "expected key=value, e.g. flows.1.cca=cubic"),
        ("flows..cca=reno", "not a dotted key like 'flows.1.cca'"),
    ],
)
def test_bad_overrides(override: str, message: str) -> None:
    with pytest.raises(SpecError) as e:
        apply_overrides(base(), [override])
    assert message in str(e.value)


def test_override_that_makes_the_scenario_invalid_is_reported_with_its_key() -> None:
    d = apply_overrides(base(), ["flows.1.cca=westwood"])
    assert "flows.1.cca: unknown congestion control" in error_of(d)
    d = apply_overrides(base(), ["bottleneck.ratee=1Gbit"])
    assert "bottleneck.ratee: unknown key" in error_of(d)


def test_load_scenario_with_overrides_and_file_errors(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(
        'duration = "10s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "reno"\nrtt = "20ms"\n'
    )
    sc = load_scenario(f, ["flows.0.cca=cubic"])
    assert sc.flows[0].cca == "cubic"
    with pytest.raises(SpecError, match="no such file"):
        load_scenario(tmp_path / "missing.toml")
    f.write_text("duration = \n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_scenario(f)
    f.write_text(
        'duration = "10s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "cubik"\nrtt = "20ms"\n'
    )
    with pytest.raises(SpecError) as e:
        load_scenario(f)
    assert str(e.value).startswith(f"invalid scenario {f}: flows.0.cca: unknown congestion control")


# ---------------------------------------------------------------------------- hashing


def test_hash_is_stable_and_ignores_spelling_and_name() -> None:
    h = from_dict(base()).hash()
    assert h == from_dict(base()).hash()
    assert len(h) == 16 and int(h, 16) >= 0
    same = base()
    same["name"] = "other-name"
    same["bottleneck"]["rate"] = "0.1Gbit"
    same["flows"][0]["rtt"] = "0.01s"
    same["flows"][1]["rtt"] = "30000us"
    assert from_dict(same).hash() == h
    # to_dict → from_dict gives back the same run
    assert from_dict(from_dict(base()).to_dict()).hash() == h


def test_hash_is_pinned() -> None:
    # The hash names runs in results stores; this value changing means existing stores no
    # longer match their scenarios. Update it only together with a store format change.
    assert from_dict(base()).hash() == PINNED_HASH


@pytest.mark.parametrize(
    "override",
    [
        "seed=2",
        "flows.0.rtt=11ms",
        "flows.1.cca=cubic",
        "bottleneck.buffer=0.5bdp",
        "bottleneck.loss=0.001",
        "measure.from=6s",
        "flows.0.streams=2",
        "duration=31s",
        "bottleneck.mtu=9000B",
    ],
)
def test_hash_changes_with_every_parameter(override: str) -> None:
    assert from_dict(apply_overrides(base(), [override])).hash() != from_dict(base()).hash()


def test_with_seed() -> None:
    sc = from_dict(base())
    assert sc.with_seed(9).seed == 9 and sc.with_seed(9).hash() != sc.hash()


# Changed from 7f6d7a77f4e49d5d when flows gained `jitter` (resolved as `jitter_ns`, default
# 120 µs): the simulator runs differently, so stores made before must not match.
PINNED_HASH = "a6ae723eb8dfef3e"


@pytest.mark.parametrize(
    "path, value",
    [
        ("seed", True),
        ("flows.0.streams", True),
        ("flows.0.streams", "3"),
        ("flows.0.sack", 1),
        ("bottleneck.loss", "0.1"),
    ],
)
def test_no_silent_coercion_of_booleans_and_strings(path: str, value: Any) -> None:
    # TOML `streams = true` or `sack = 1` is a mistake, not a 1 or a True.
    msg = error_of(with_(path, value))
    assert path in msg and repr(value) in msg


def test_jitter_defaults_resolves_in_ns_and_round_trips() -> None:
    # The simulator's per-packet host delay: default one 1600-byte packet time at
    # 100 Mbit/s (1600·8 / 1e8 s = 128 µs, rounded to 120 µs), per connection in ns.
    sc = from_dict(with_("flows.1.jitter", "0.5ms"))
    assert [c["jitter_ns"] for c in sc.connections()] == [120_000, 500_000]
    assert from_dict(sc.to_dict()).hash() == sc.hash()
    assert from_dict(with_("flows.1.jitter", "0s")).connections()[1]["jitter_ns"] == 0


@pytest.mark.parametrize(
    ("value", "message"), [("2s", "at most 1s"), ("-1us", ""), (5, "with a unit")]
)
def test_bad_jitter_names_the_key(value: Any, message: str) -> None:
    e = error_of(with_("flows.0.jitter", value))
    assert "flows.0.jitter" in e and message in e


def test_ack_jitter_is_opt_in_and_keeps_old_hashes() -> None:
    # off by default and then absent from the resolved form: every scenario written before
    # the key existed keeps its content hash (PINNED_HASH above), so stored sweeps resume
    sc = from_dict(base())
    assert sc.hash() == PINNED_HASH
    assert all("ack_jitter_ns" not in c for c in sc.connections())
    on = from_dict(with_("flows.1.ack_jitter", "150us"))
    assert [c.get("ack_jitter_ns", 0) for c in on.connections()] == [0, 150_000]
    assert on.hash() != sc.hash() and from_dict(on.to_dict()).hash() == on.hash()
    e = error_of(with_("flows.0.ack_jitter", "3s"))
    assert "flows.0.ack_jitter" in e and "at most 1s" in e


# ------------------------------------------------------------------ bounds (issue 8)
@pytest.mark.parametrize(
    ("path", "edge", "beyond", "allowed"),
    [
        ("bottleneck.rate", "1Tbit", "1.000001Tbit", "allowed: 1kbit to 1Tbit"),
        ("bottleneck.rate", "1kbit", "999bit", "allowed: 1kbit to 1Tbit"),
        ("flows.0.rtt", "60s", "60.000001s", "allowed: at most 60s"),
        ("flows.0.wmem", "2147483647B", "2147483648B", "allowed: 4096B to 2147483647B"),
        ("flows.1.rmem", "4096B", "4095B", "allowed: 4096B to 2147483647B"),
        ("flows.0.size", "1000000000000000B", "1000000000000001B", "allowed: at most 1e15B"),
        ("bottleneck.buffer", "1000bdp", "1000.5bdp", "allowed: at most 1000bdp"),
        ("bottleneck.buffer", "1000000000pkt", "1000000001pkt", "allowed: at most 1e9pkt"),
        ("bottleneck.buffer", "1000GB", "1000000000001B", "allowed: at most 1e12B"),
        ("flows.0.cwnd_clamp", 2**32 - 1, 2**32, "allowed: a whole number from 2 to 4294967295"),
    ],
)
def test_every_quantity_has_a_bound_named_in_the_error(
    path: str, edge: Any, beyond: Any, allowed: str
) -> None:
    from_dict(with_(path, edge))  # the bound itself is allowed
    msg = error_of(with_(path, beyond))
    assert msg.startswith(f"invalid scenario: {path}: ") and allowed in msg
    assert f"(got {beyond!r})" in msg


def test_the_duration_bounds_every_time() -> None:
    d = with_("duration", "86400s")
    d["measure"] = {"interval": "1s"}
    assert from_dict(d).duration == 86_400 * 10**9
    assert "duration: out of range; allowed: at most 86400s (one day)" in error_of(
        with_("duration", "86401s")
    )
    assert "flows.1.stop: out of range" in error_of(with_("flows.1.stop", "1e20s"))


def test_a_bdp_buffer_is_bounded_once_resolved() -> None:
    # 1000 × 1 Gbit/s × mean RTT 10 s / 8 = 1.25e12 B > 1e12 B
    d = with_("bottleneck.buffer", "1000bdp")
    d["bottleneck"]["rate"] = "1Gbit"
    for f in d["flows"]:
        f["rtt"] = "10s"
    msg = error_of(d)
    assert "bottleneck.buffer: resolves to 1250000000000B" in msg and "(got '1000bdp')" in msg
    d["bottleneck"]["buffer"] = "800bdp"  # exactly 1e12 B
    assert from_dict(d).buffer_limits() == (10**12, None)


def test_the_number_of_sample_rows_is_bounded() -> None:
    # 30 s, 2 connections + the link: 3 rows per interval. 9001 ns: ceil(30e9 / 9001) =
    # 3,332,964 intervals, 9,998,892 rows; 9000 ns: 3,333,334 intervals, 10,000,002 rows
    from_dict(with_("measure.interval", "9001ns"))
    msg = error_of(with_("measure.interval", "9000ns"))
    assert "measure.interval: would record 10,000,002 samples (3,333,334 intervals" in msg
    assert "at most 10,000,000, so an interval of at least 9.001us" in msg


def test_the_interval_must_fit_in_the_window() -> None:
    d = with_("measure.interval", "25s")  # window 5–30 s: exactly one interval fits
    assert from_dict(d).measure.interval == 25 * 10**9
    msg = error_of(with_("measure.interval", "26s"))
    assert "measure.interval: longer than the measurement window (5s to 30s)" in msg


@pytest.mark.parametrize(
    ("buffer", "max_th", "ok"),
    [
        ("100pkt", "100pkt", True),
        ("100pkt", "101pkt", False),
        ("150000B", "150000B", True),
        ("150000B", "150001B", False),
        ("100pkt", "150KB", True),  # 100 MTU-sized packets = 150 000 B
        ("100pkt", "151KB", False),
        ("150KB", "100pkt", True),
        ("150KB", "101pkt", False),
    ],
)
def test_red_thresholds_lie_within_the_buffer(buffer: str, max_th: str, ok: bool) -> None:
    unit = "pkt" if max_th.endswith("pkt") else "B"
    d = with_("bottleneck.buffer", buffer)
    d["bottleneck"]["aqm"] = {"kind": "red", "min_th": f"1{unit}", "max_th": max_th}
    if ok:
        from_dict(d)
    else:
        msg = error_of(d)
        assert "bottleneck.aqm.max_th: above the buffer" in msg and f"(got {max_th!r})" in msg


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ("a\nb", "one line (it has '\\n')"),
        ("", "must not be empty"),
        ("x" * 101, "at most 100 characters, this one 101"),
    ],
)
def test_labels_are_one_printable_line(label: str, message: str) -> None:
    assert message in error_of(with_("flows.0.label", label))
    assert from_dict(with_("flows.0.label", "$x_{1$ — ünïcode")).flows[0].label


def test_binary_empty_and_directory_files(tmp_path: Path) -> None:
    (tmp_path / "bin.toml").write_bytes(b'name = "x"\n\xff')
    (tmp_path / "empty.toml").write_text(" \n")
    with pytest.raises(SpecError, match=r"bin.toml: \(file\): not a text file \(byte 11"):
        load_scenario(tmp_path / "bin.toml")
    with pytest.raises(SpecError, match="the file is empty"):
        load_scenario(tmp_path / "empty.toml")
    with pytest.raises(SpecError, match="is a directory; expected a TOML file"):
        load_scenario(tmp_path)
