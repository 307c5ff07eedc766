"""``tcpfair fairness``: outputs checked against the raw iperf3 JSON, and every bad input."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcpfair.cli import cli

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
FX = Path(__file__).parent / "fixtures" / "iperf3"
P4 = EX / "lab10-parallel-P4.json"
RENO, BBR = EX / "reno-vs-bbr" / "reno.json", EX / "reno-vs-bbr" / "bbr.json"


def run(*args: str | Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["fairness", *map(str, args)])
    return r.exit_code, r.stdout, r.stderr


def jain_by_hand(x: list[float]) -> float:
    s = sum(x)
    return s * s / (len(x) * sum(v * v for v in x))


def window_rates(path: Path, lo: float, hi: float) -> list[float]:
    """Per-stream Σ bytes·8 / Σ seconds over the intervals whose midpoint is in [lo, hi]."""
    rep = json.loads(path.read_text())
    order = [c["socket"] for c in rep["start"]["connected"]]
    bits = dict.fromkeys(order, 0.0)
    secs = dict.fromkeys(order, 0.0)
    for iv in rep["intervals"]:
        for s in iv["streams"]:
            mid = (s["start"] + s["end"]) / 2
            if not s["omitted"] and lo <= mid <= hi:
                bits[s["socket"]] += 8 * s["bytes"]
                secs[s["socket"]] += s["seconds"]
    return [bits[k] / secs[k] for k in order]


# ---------------------------------------------------------------------------- outputs


def test_table_on_the_shipped_example() -> None:
    code, out, err = run(P4)
    assert code == 0, err
    assert "JFI" in out and "min/max" in out and "sum" in out
    for k in (1, 2, 3, 4):
        assert f"lab10-parallel-P4.json[{k}]" in out
    assert "cubic" in out
    jfi = jain_by_hand(window_rates(P4, 0, 1e9))
    assert f"JFI {jfi:.4f}" in out


def test_json_whole_run_matches_raw_figures() -> None:
    code, out, err = run(P4, "--format", "json")
    assert code == 0, err
    rep = json.loads(out)
    rates = window_rates(P4, 0, 1e9)
    assert [r["throughput_bps"] for r in rep["rows"]] == pytest.approx(rates, rel=1e-12)
    assert rep["jfi"] == pytest.approx(jain_by_hand(rates), rel=1e-12)
    assert rep["min_max_ratio"] == pytest.approx(min(rates) / max(rates), rel=1e-12)
    assert rep["sum_bps"] == pytest.approx(sum(rates), rel=1e-12)
    raw = json.loads(P4.read_text())
    assert [r["bytes_run"] for r in rep["rows"]] == [
        s["receiver"]["bytes"] for s in raw["end"]["streams"]
    ]
    # the window is the whole capture: its bytes are the sums of the interval reports
    order = [c["socket"] for c in raw["start"]["connected"]]
    assert [r["window_bytes"] for r in rep["rows"]] == [
        sum(s["bytes"] for iv in raw["intervals"] for s in iv["streams"] if s["socket"] == k)
        for k in order
    ]
    assert [r["retransmits"] for r in rep["rows"]] == [
        s["sender"]["retransmits"] for s in raw["end"]["streams"]
    ]
    assert rep["iperf3_versions"] == "3.12"


def test_window_from_to_like_the_testbed_study() -> None:
    code, out, err = run(
        RENO, BBR, "--from", "5", "--to", "15", "--format", "json", "--per-interval"
    )
    assert code == 0, err
    rep = json.loads(out)
    assert rep["window"] == [5.0, 15.0]
    rates = window_rates(RENO, 5, 15) + window_rates(BBR, 5, 15)
    assert [r["throughput_bps"] for r in rep["rows"]] == pytest.approx(rates, rel=1e-12)
    assert rep["jfi"] == pytest.approx(jain_by_hand(rates), rel=1e-12)
    assert [r["cca"] for r in rep["rows"]] == ["reno", "bbr"]
    # 1 s samples from 5 to 15 s: the ten intervals (5,6] … (14,15]
    per = rep["per_interval"]
    assert [round(p["t_s"]) for p in per] == list(range(6, 16))
    for p in per:
        assert p["jfi"] == pytest.approx(
            jain_by_hand(list(p["throughput_bps"].values())), rel=1e-12
        )
    assert rep["jfi_per_interval_mean"] == pytest.approx(
        sum(p["jfi"] for p in per) / len(per), rel=1e-12
    )


def test_csv_flows_and_per_interval() -> None:
    code, out, err = run(RENO, BBR, "--format", "csv", "--label", "reno", "--label", "bbr")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["label"] for r in rows] == ["reno", "bbr", "all"]
    rates = window_rates(RENO, 0, 1e9) + window_rates(BBR, 0, 1e9)
    assert float(rows[-1]["jfi"]) == pytest.approx(jain_by_hand(rates), rel=1e-12)
    assert float(rows[-1]["throughput_bps"]) == pytest.approx(sum(rates), rel=1e-12)
    code, out, err = run(RENO, BBR, "--format", "csv", "--per-interval", "--from", "0", "--to", "3")
    assert code == 0, err
    per = list(csv.DictReader(io.StringIO(out)))
    assert list(per[0]) == ["t_s", "jfi", "reno.json_bps", "bbr.json_bps"]
    assert len(per) == 3
    for r in per:
        x = [float(r["reno.json_bps"]), float(r["bbr.json_bps"])]
        assert float(r["jfi"]) == pytest.approx(jain_by_hand(x), rel=1e-12)


def test_by_group_sums_parallel_streams() -> None:
    code, out, err = run(P4, RENO, "--by", "group", "--format", "json")
    assert code == 0, err
    rep = json.loads(out)
    assert [r["label"] for r in rep["rows"]] == ["lab10-parallel-P4.json", "reno.json"]
    assert rep["rows"][0]["streams"] == 4
    p4 = sum(window_rates(P4, 0, 1e9))
    assert rep["rows"][0]["throughput_bps"] == pytest.approx(p4, rel=1e-12)


def test_capacity_gives_utilization() -> None:
    code, out, err = run(RENO, BBR, "--capacity", "100Mbit", "--format", "json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["utilization"] == pytest.approx(rep["sum_bps"] / 100e6, rel=1e-12)
    code, out, _ = run(RENO, BBR, "--capacity", "100Mbit")
    assert "utilization" in out


def test_plot_is_written(tmp_path: Path) -> None:
    fig = tmp_path / "sub" / "thr.png"
    fig.parent.mkdir()  # a missing folder is an error (tests/test_bad_inputs_outputs.py)
    code, out, err = run(RENO, BBR, "--plot", fig, "--per-interval")
    assert code == 0, err
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "JFI per interval" in out and "figure:" in out


def test_notes_go_to_stderr_not_into_machine_output() -> None:
    code, out, err = run(FX / "twice-3.12.json", "--format", "json")
    assert code == 0
    json.loads(out)  # stdout stays clean JSON
    assert "note: " in err and "used the last complete one" in err


# ---------------------------------------------------------------------------- bad input


def _one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.mark.parametrize(
    ("name", "needles"),
    [
        (
            "error-refused-3.12.json",
            ("error-refused-3.12.json", "iperf3 reported an error", "Connection refused"),
        ),
        ("truncated-3.12.json", ("truncated-3.12.json", "truncated JSON")),
        ("udp-3.12.json", ("udp-3.12.json", "UDP test")),
    ],
)
def test_bad_captured_files(name: str, needles: tuple[str, ...]) -> None:
    code, out, err = run(FX / name)
    _one_line_error(code, err, *needles)
    assert out == ""


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("")
    code, _, err = run(P4, empty)
    _one_line_error(code, err, str(empty), "the file is empty")
    code, _, err = run(tmp_path / "missing.json")
    _one_line_error(code, err, "missing.json", "no such file")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--from", "10", "--to", "5"], ("--from 10 is not before --to 5",)),
        (["--from", "-1"], ("--from -1", "seconds ≥ 0")),
        (["--from", "500"], ("--from/--to: window 500–", "starts after the data ends", "cover 0–")),
        (["--label", "a", "--label", "b"], ("2 --label for 1 files",)),
        (["--plot", "out.jpgx"], ("--plot out.jpgx", "unknown figure type '.jpgx'")),
        (["--capacity", "100"], ("--capacity", "'100'")),
        (["--capacity", "0Mbit"], ("--capacity",)),
    ],
)
def test_bad_options(args: list[str], needles: tuple[str, ...]) -> None:
    code, _, err = run(P4, *args)
    _one_line_error(code, err, *needles)


def test_usage_errors_exit_2() -> None:
    r = CliRunner().invoke(cli, ["fairness"])
    assert r.exit_code == 2 and "Missing argument" in r.stderr
    r = CliRunner().invoke(cli, ["fairness", str(P4), "--format", "xml"])
    assert r.exit_code == 2 and "'xml' is not one of" in r.stderr


def test_command_and_python_api_agree() -> None:
    import tcpfair

    code, out, err = run(RENO, BBR, "--from", "2", "--to", "18", "--format", "json")
    assert code == 0, err
    rep = json.loads(out)
    met = tcpfair.load_iperf3([RENO, BBR]).metrics((2, 18))
    assert rep["jfi"] == met["jfi"]
    assert rep["min_max_ratio"] == met["min_max_ratio"]
    assert rep["sum_bps"] == met["sum_bps"]
    assert rep["jfi_per_interval_mean"] == pytest.approx(met["jfi_per_interval_mean"], rel=1e-12)


def test_labels_are_drawn_as_plain_text(tmp_path: Path) -> None:
    # "$x_{1$" is a mathtext syntax error: parsed as math, saving the figure raised
    fig = tmp_path / "thr.png"
    code, out, err = run(RENO, BBR, "--label", "$x_{1$", "--label", "_b", "--plot", fig)
    assert code == 0, err
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "$x_{1$" in out
    from tcpfair.plots import legend_text

    # matplotlib leaves labels that start with "_" out of the legend
    assert not legend_text("_b").startswith("_") and legend_text("_b").endswith("_b")


def test_csv_kind_column_tells_rows_from_the_summary() -> None:
    """One table: ``kind`` is "flow" (or "group") for each row and "all" for the summary,
    whose per-flow columns are empty and whose index columns are filled (issue 12)."""
    code, out, err = run(RENO, BBR, "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0])[:2] == ["kind", "flow"]
    assert [r["kind"] for r in rows] == ["flow", "flow", "all"]
    assert all(r["jfi"] == "" for r in rows if r["kind"] == "flow")
    assert rows[-1]["jfi"] != "" and rows[-1]["mean_rtt_s"] == ""
    code, out, err = run(P4, RENO, "--format", "csv", "--by", "group")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0])[:2] == ["kind", "group"]
    assert [r["kind"] for r in rows] == ["group", "group", "all"]


def test_command_list_names_every_input_kind() -> None:
    """`tcpfair --help` (its one-line summaries are kept apart from the commands, so the
    list starts fast) names the three kinds of file the command reads, as its own help
    does; it once said "from iperf3 -J files" only."""
    listing = CliRunner().invoke(cli, ["--help"]).output
    words = " ".join(listing.split())  # the summary may wrap onto a second line
    line = words.split(" fairness ", 1)[1].split(" sweep ", 1)[0]
    own = CliRunner().invoke(cli, ["fairness", "--help"]).output
    for kind in ("iperf3", "capture", "Flent"):
        assert kind in own and kind in line, (kind, line)
